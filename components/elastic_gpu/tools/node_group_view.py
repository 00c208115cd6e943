"""One node group as every tool sees it: `NodeGroupView`, read once from a resource's props (wire names,
camelCase) by its cloud's reader (elastic_gpu/<cloud>/reader.py, `read_node_groups`).

The policy rules, the preview's Pools and Cost tables, the `cost` command, the simulation's node templates
and `diff` read node groups only through this view, so "what is a GPU pool", "is it spot", "what are its
sizes, taints, zones and region" are answered once for EKS, AKS and GKE. Props are what the engine hands
the analyzer (the resource's inputs); a missing key means "not set by the program".

The view and what its readers share (taints, a Karpenter NodePool, a stack's resource) are here; reading a
resource's or a stack's node groups, each once, is tools/node_group_reading.py; the engine's props and their
values not known yet, tools/engine_props.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from elastic_gpu.gpu_catalog import GpuInstanceType, GpuSpec, gpu_instance_type, gpu_spec_of
from elastic_gpu.karpenter_core import (
    CAPACITY_TYPE_KEY,
    INSTANCE_TYPE_KEY,
    NODE_POOL_KEY,
    RESERVED,
    SPOT_FIRST,
    ZONE_KEY,
)
from elastic_gpu.scheduling import (
    CAPACITY_LABEL,
    CAPACITY_SPOT,
    GPU_RESOURCE,
    KUBERNETES_TAINT_EFFECT,
    POOL_LABEL,
    Taint,
)
from elastic_gpu.tools.clouds import all_clouds
from elastic_gpu.tools.engine_props import known, read_known

#: A Karpenter NodePool (karpenter.sh/v1, the same API on every cloud that runs Karpenter): its cloud is
#: its node class's API group (CloudFacts.karpenter_node_class_group); each such cloud's reader reads its own NodePools.
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
KARPENTER_NODE_CLASS_CLOUDS = {group: c.name for c in all_clouds() if (group := c.facts.karpenter_node_class_group)}

#: `NodeGroupView.kind`: a scaling group the cluster-autoscaler (or the cloud's managed autoscaler) sizes:
#: an EKS managed node group, an AKS agent pool, a GKE node pool.
AUTOSCALED_GROUP = "node-group"
#: `NodeGroupView.kind`: a Karpenter NodePool (EKS Karpenter, AKS node auto-provisioning).
KARPENTER_GROUP = "karpenter-node-pool"
#: `NodeGroupView.kind`: a priority of a GKE ComputeClass whose node pools GKE creates itself.
AUTO_CREATED_GROUP = "auto-created"


@dataclass(frozen=True)
class NodeGroupView:
    """One node group (scaling group, NodePool, or auto-created class priority) as every tool reads it.

    Lists and dicts are the reader's own copies: treat them as read-only. Facts that need other resources
    (region, zones placed by subnets, a cap shared through the cluster) are set only when the reader is
    given the stack; a resource policy reads the props alone.
    """

    cloud: str  #: "aws" | "azure" | "gcp"
    #: the group's name as its cloud and autoscaler know it: the node group / agent pool / node pool name, the
    #: NodePool's metadata.name, or `<ComputeClass>[<priority>]` for an auto-created priority
    name: str
    pool: str  #: our pool label when set, else `name`
    gpu: bool  #: its nodes carry GPUs (by instance type, AMI, accelerators or a GPU taint)
    spot: bool  #: every node is spot (a NodePool allowing both capacity types is not: see `spot_first`)
    #: the program says the pool is meant to be spot (our capacity label, or "spot" in its name)
    intends_spot: bool
    #: the instance types it may launch, in the resource's order (an auto-created priority: largest first)
    instance_types: list[str]
    min_size: int | None  #: None when not set (or not known yet)
    #: None when not set; an auto-created priority's is the cluster's limit of its GPU over its GPUs per node, or
    #: without node auto-provisioning the nodes its pool plans (see `cap_held`)
    max_size: int | None
    #: the desired/count property path, when the program sets one the autoscaler owns
    pinned_size_path: str | None
    autoscaled: bool  #: an autoscaler (or provisioner) sizes it
    #: taints declared in the props, in Kubernetes spelling
    taints: list[Taint] = field(default_factory=list)
    #: taints the cloud adds by itself (AKS spot taint, GKE GPU taint)
    implicit_taints: list[Taint] = field(default_factory=list)
    #: labels the service puts on every node of the pool by itself (EKS's eks.amazonaws.com/nodegroup ...)
    implicit_labels: dict[str, str] = field(default_factory=dict)
    eviction_policy: str | None = None  #: AKS spot pools: Delete or Deallocate
    accelerators: list[tuple[str, int]] = field(default_factory=list)  #: GKE (type, count per node)
    labels: dict[str, str] = field(default_factory=dict)  #: node labels the program declares
    #: where the nodes bill (for prices); None when unknown or read without the stack
    region: str | None = None
    #: GKE flex-start nodes (nodeConfig.flexStart): billed at Dynamic Workload Scheduler prices
    flex_start: bool = False
    #: groups with the same key share one cap, their max_size (GKE auto-provisioning: the cluster's resource
    #: limit of their GPU type): a stack's worst case counts it once
    shared_cap: str | None = None
    #: its provisioner holds it to max_size; False for the priorities of a GKE ComputeClass on a cluster without
    #: node auto-provisioning, whose max_size is the nodes the pool plans (its class's planned-nodes annotation)
    #: and which only the project's regional GPU quota bounds
    cap_held: bool = True
    #: any of its instance types may be launched (a Karpenter NodePool): priced as the most expensive, not
    #: as the first (an autoscaler's node template)
    any_type: bool = False
    #: spot first and on-demand when spot runs out, within this one group (a Karpenter NodePool allowing both
    #: capacity types): its own fallback; `spot` stays False, so a price at max size is on-demand's
    spot_first: bool = False
    #: AUTOSCALED_GROUP, KARPENTER_GROUP or AUTO_CREATED_GROUP
    kind: str = AUTOSCALED_GROUP
    #: the Pulumi resource that declares it (`<cluster>[<i>]` for an AKS inline profile, `<ComputeClass
    #: resource>[<i>]` for an auto-created priority)
    resource: str = ""
    #: the name the program gave what declares it (the Pulumi resource's; an inline profile's `name`; the
    #: NodePool's or ComputeClass's metadata.name): the preview's Pools table names an unlabelled group by it
    declared_name: str = ""
    #: the zones its nodes may land in, in the resource's order ("?" for an EKS subnet the stack does not place)
    zones: list[str] = field(default_factory=list)
    #: its taints as the resource spells them (EKS and GKE node pools: NO_SCHEDULE), as the Pools table shows them
    shown_taints: list[str] = field(default_factory=list)
    #: the capacity types it allows, in the order its provisioner tries them ("reserved" before "spot" before
    #: "on-demand")
    capacity_types: list[str] = field(default_factory=list)
    #: the reservations its nodes come from (capacity type "reserved"), as the resource names them (EC2 `cr-...`
    #: ids or `tag:k=v` selector terms, an Azure capacity reservation group id, GCP reservation names); empty when
    #: it uses none
    reservations: tuple[str, ...] = ()
    #: GKE queued provisioning: nodes come only through a ProvisioningRequest (Kueue), never for a pending pod
    queued: bool = False
    #: the GKE ComputeClass it serves (its nodes' cloud.google.com/compute-class label), if any
    compute_class: str | None = None
    #: bytes of disk each node gets (its ephemeral storage; a Karpenter NodePool's comes from its node class)
    disk_bytes: float | None = None
    #: the node-template resources its tags declare (cluster-autoscaler's `node-template/resources/<name>`:
    #: EKS node group tags, AKS agent pool tags copied to the scale set), resource -> quantity
    template_resources: dict[str, str] = field(default_factory=dict)
    #: pods per node (AKS: the pool's maxPods, else the cluster network plugin's default); None when unknown
    max_pods: int | None = None
    #: clients sharing each GPU (GKE GPU time-sharing): a node advertises its GPUs times this
    gpu_sharing: int = 1
    #: the node class its nodes are made from (a Karpenter NodePool's nodeClassRef name)
    node_class: str | None = None
    #: the provisioner tries NodePools of higher weight first (a Karpenter NodePool's spec.weight)
    weight: int = 0
    #: how long an empty node stays before it is removed (a Karpenter NodePool's consolidateAfter, Go
    #: duration; "Never" or None: not removed by emptiness)
    consolidate_after: str | None = None
    #: the GPU of its instance types the catalog lacks, as its labels carry it (gpu_catalog.GPU_SPEC_LABEL: the
    #: pool's gpuSpec, given or described by the cloud at preview); None when it carries none
    gpu_spec: GpuSpec | None = None

    @property
    def all_taints(self) -> list[Taint]:
        return self.taints + self.implicit_taints

    def gpu_row(self, instance_type: str) -> GpuInstanceType | None:
        """The GPU row of one of its types: the catalog's, else its own gpu_spec's (None: no GPU we know)."""
        return gpu_instance_type(self.cloud, instance_type, self.gpu_spec)


def taint(key: str, value: str | None, effect: str) -> Taint:
    return Taint(key=key, value=value or "", effect=KUBERNETES_TAINT_EFFECT.get(effect, effect))  # type: ignore[arg-type]


def parse_taint_string(text: str) -> Taint:
    """`key=value:Effect` (AKS nodeTaints) -> Taint."""
    kv, _, effect = text.partition(":")
    key, _, value = kv.partition("=")
    return taint(key, value, effect)


def int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def intends_spot(labels: Mapping[str, str], label: str) -> bool:
    return labels.get(CAPACITY_LABEL) == CAPACITY_SPOT or "spot" in re.split(r"[-_.]", label.lower())


class StackResource(Protocol):
    """What a reader reads of a resource: pulumi_policy's PolicyResource has these (the offline runner's
    also carry `id` and `custom`)."""

    @property
    def resource_type(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def props(self) -> Mapping[str, Any]: ...
    @property
    def provider(self) -> Any:  #: PolicyProviderResource (with `.props`) or None
        ...
    @property
    def dependencies(self) -> Sequence[Any]:  #: the resources it depends on (PolicyResource's, alike)
        ...


def karpenter_node_pool(resource: StackResource, cloud: str, type_key: str = INSTANCE_TYPE_KEY) -> NodeGroupView | None:
    """A Karpenter NodePool as a node group, when its node class is `cloud`'s: its capacity types, its
    instance types (the `In` values of `type_key`, the label its provider names them by), `limits.nodes` as
    its max (min 0: Karpenter makes nodes only for pending pods); None for another cloud's node class."""
    p = resource.props
    spec = p.get("spec") or {}
    template = spec.get("template") or {}
    tspec = template.get("spec") or {}
    ref = tspec.get("nodeClassRef") or {}
    if KARPENTER_NODE_CLASS_CLOUDS.get(ref.get("group") or "") != cloud:
        return None
    reqs = {r.get("key"): r for r in tspec.get("requirements") or [] if r.get("operator") == "In"}
    types = list((reqs.get(type_key) or {}).get("values") or [])
    capacity = list((reqs.get(CAPACITY_TYPE_KEY) or {}).get("values") or [])
    allowed = capacity or list(SPOT_FIRST)
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    taints = [taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in tspec.get("taints") or []]
    label = (p.get("metadata") or {}).get("name") or resource.name
    nodes = (spec.get("limits") or {}).get("nodes")
    gpu_spec = gpu_spec_of(labels)
    return NodeGroupView(
        cloud=cloud,
        name=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=any(gpu_instance_type(cloud, t, gpu_spec) for t in types) or any(t.key == GPU_RESOURCE for t in taints),
        gpu_spec=gpu_spec,
        spot=capacity == ["spot"],
        intends_spot=intends_spot(labels, label),
        instance_types=types,
        min_size=0,
        max_size=int(nodes) if isinstance(nodes, str) and nodes.isdigit() else int_or_none(nodes),
        pinned_size_path=None,
        autoscaled=True,
        taints=taints,
        labels=labels,
        # Karpenter labels each node with its NodePool and capacity type (pkg/apis/v1/labels.go)
        implicit_labels={NODE_POOL_KEY: label, **({CAPACITY_TYPE_KEY: capacity[0]} if len(capacity) == 1 else {})},
        any_type=True,
        spot_first="spot" in capacity and "on-demand" in capacity,
        kind=KARPENTER_GROUP,
        resource=resource.name,
        declared_name=label,
        zones=list(read_known(reqs.get(ZONE_KEY) or {}, "values", [])),
        shown_taints=[str(t) for t in taints],
        # reserved before spot before on-demand: Karpenter's own order (karpenter-provider-aws v1.14.1
        # pkg/providers/instance/instance.go getCapacityType: "Prioritization is as follows: reserved, spot, on-demand")
        capacity_types=[c for c in (RESERVED, *SPOT_FIRST) if c in allowed] or allowed[:1],
        node_class=read_known(ref, "name"),
        weight=int(read_known(spec, "weight", 0)),
        consolidate_after=read_known(read_known(spec, "disruption", {}), "consolidateAfter"),
    )


@dataclass(frozen=True)
class Resource:
    """A resource as a reader takes it when no stack is at hand (a resource policy's args)."""

    resource_type: str
    name: str
    props: Mapping[str, Any]
    provider: Any = None
    dependencies: Sequence[Any] = ()


def provider_prop(resource: StackResource, key: str) -> str | None:
    provider = resource.provider
    return known(getattr(provider, "props", None), key) if provider is not None else None


def worst_case_nodes(pools: Iterable[NodeGroupView]) -> int:
    """The pools' max sizes added up, a cap several pools share (shared_cap) counted once."""
    shared: dict[str, int] = {}
    total = 0
    for p in pools:
        if p.shared_cap is None:
            total += p.max_size or 0
        else:
            shared[p.shared_cap] = max(shared.get(p.shared_cap, 0), p.max_size or 0)
    return total + sum(shared.values())
