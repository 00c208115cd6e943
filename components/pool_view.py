"""A cloud-neutral view of node pools, read from provider props (wire names, camelCase).

The policy rules, the preview's cost table and the `cost` command read pools through
this view, so "what is a GPU pool", "is it spot", "what are its sizes, taints and
region" are answered once for EKS, AKS and GKE. Props are what the engine hands the
analyzer (the resource's inputs); a missing key means "not set by the program".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pulumi_policy.proxy import UnknownValueError

from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.scheduling import (
    AKS_SPOT_TAINT,
    CAPACITY_LABEL,
    CAPACITY_SPOT,
    GKE_GPU_TAINT,
    GPU_RESOURCE,
    KUBERNETES_TAINT_EFFECT,
    POOL_LABEL,
    Taint,
)

EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AKS_AGENT_POOL = "azure-native:containerservice:AgentPool"
AKS_MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
#: A Karpenter NodePool (karpenter.sh/v1): its cloud is its node class's API group.
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
KARPENTER_NODE_CLASS_CLOUDS = {"karpenter.k8s.aws": "aws"}
POOL_TYPES = (
    EKS_NODE_GROUP,
    AKS_AGENT_POOL,
    AKS_MANAGED_CLUSTER,
    GKE_NODE_POOL,
    GKE_COMPUTE_CLASS,
    KARPENTER_NODE_POOL,
)

#: EKS AMI types that ship the NVIDIA driver (AL2_x86_64_GPU, AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA ...).
_EKS_GPU_AMI = re.compile(r"(_GPU|_NVIDIA)$")
#: EC2 accelerated families not (yet) in the catalog: g4dn, g5, g6, g6e, p3, p4d, p5 ...
_EC2_GPU_FAMILY = re.compile(r"^(g\d|p\d)[a-z]*\.")
#: Azure N-series (NC, ND, NV) are the GPU sizes.
_AZURE_GPU_SIZE = re.compile(r"^Standard_N[CDV]", re.IGNORECASE)
#: GCE machine families with built-in GPUs (A2, A3, A4, G2).
_GCE_GPU_MACHINE = re.compile(r"^(a2|a3|a4|g2)-")


@dataclass
class PoolView:
    """One node pool as the rules see it."""

    cloud: str  # "aws" | "azure" | "gcp"
    label: str  # a name for messages: the node group / agent pool / node pool name
    pool: str  # our pool label when set, else the label
    gpu: bool
    spot: bool
    #: the program says the pool is meant to be spot (our capacity label, or "spot" in its name)
    intends_spot: bool
    instance_types: list[str]
    min_size: int | None
    max_size: int | None
    #: the desired/count property path, when the program sets one the autoscaler owns
    pinned_size_path: str | None
    autoscaled: bool
    #: taints declared in the props, in Kubernetes spelling
    taints: list[Taint] = field(default_factory=list)
    #: taints the cloud adds by itself (AKS spot taint, GKE GPU taint)
    implicit_taints: list[Taint] = field(default_factory=list)
    eviction_policy: str | None = None
    accelerators: list[tuple[str, int]] = field(default_factory=list)  # GKE (type, count)
    labels: dict[str, str] = field(default_factory=dict)
    #: where the nodes bill (for prices); set by `resource_pools` / `stack_pools`, None when unknown
    region: str | None = None
    #: GKE flex-start nodes (nodeConfig.flexStart): billed at Dynamic Workload Scheduler prices
    flex_start: bool = False
    #: pools with the same key share one cap, their max_size (GKE auto-provisioning: the cluster's
    #: resource limit of their GPU type): a stack's worst case counts it once
    cap_group: str | None = None
    #: any of its instance types may be launched (a Karpenter NodePool): priced as the most expensive, not
    #: as the first (an autoscaler's node template)
    any_type: bool = False

    @property
    def all_taints(self) -> list[Taint]:
        return self.taints + self.implicit_taints


def _taint(key: str, value: str | None, effect: str) -> Taint:
    return Taint(key=key, value=value or "", effect=KUBERNETES_TAINT_EFFECT.get(effect, effect))  # type: ignore[arg-type]


def parse_taint_string(text: str) -> Taint:
    """`key=value:Effect` (AKS nodeTaints) -> Taint."""
    kv, _, effect = text.partition(":")
    key, _, value = kv.partition("=")
    return _taint(key, value, effect)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def _eks(name: str, p: Mapping[str, Any]) -> PoolView:
    types = list(p.get("instanceTypes") or [])
    gpu = bool(_EKS_GPU_AMI.search(p.get("amiType") or "")) or any(
        gpu_instance_type("aws", t) or _EC2_GPU_FAMILY.match(t) for t in types
    )
    scaling = p.get("scalingConfig") or {}
    labels = dict(p.get("labels") or {})
    label = p.get("nodeGroupName") or name
    return PoolView(
        cloud="aws",
        label=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=gpu,
        spot=p.get("capacityType") == "SPOT",
        intends_spot=_intends_spot(labels, label),
        instance_types=types,
        min_size=_int(scaling.get("minSize")),
        max_size=_int(scaling.get("maxSize")),
        pinned_size_path="scalingConfig.desiredSize" if scaling.get("desiredSize") is not None else None,
        autoscaled=True,
        taints=[_taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in p.get("taints") or []],
        labels=labels,
    )


def _aks(name: str, p: Mapping[str, Any], path: str = "") -> PoolView:
    size = p.get("vmSize") or ""
    spot = p.get("scaleSetPriority") == "Spot"
    autoscaled = bool(p.get("enableAutoScaling"))
    labels = dict(p.get("nodeLabels") or {})
    label = p.get("agentPoolName") or p.get("name") or name
    count = _int(p.get("count"))
    return PoolView(
        cloud="azure",
        label=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=bool(gpu_instance_type("azure", size) or _AZURE_GPU_SIZE.match(size)),
        spot=spot,
        intends_spot=_intends_spot(labels, label),
        instance_types=[size] if size else [],
        min_size=_int(p.get("minCount")) if autoscaled else count,
        max_size=_int(p.get("maxCount")) if autoscaled else count,
        pinned_size_path=f"{path}count" if autoscaled and count is not None else None,
        autoscaled=autoscaled,
        taints=[parse_taint_string(t) for t in p.get("nodeTaints") or []],
        implicit_taints=[AKS_SPOT_TAINT] if spot else [],
        eviction_policy=p.get("scaleSetEvictionPolicy"),
        labels=labels,
    )


def _gke(name: str, p: Mapping[str, Any]) -> PoolView:
    node = p.get("nodeConfig") or {}
    machine = node.get("machineType") or ""
    accelerators = [(a.get("type", ""), _int(a.get("count")) or 1) for a in node.get("guestAccelerators") or []]
    gpu = bool(accelerators) or bool(_GCE_GPU_MACHINE.match(machine))
    autoscaling = p.get("autoscaling")
    labels = dict(node.get("labels") or {})
    label = p.get("name") or name
    if autoscaling:
        lo = autoscaling.get("totalMinNodeCount", autoscaling.get("minNodeCount"))
        hi = autoscaling.get("totalMaxNodeCount", autoscaling.get("maxNodeCount"))
    else:
        lo = hi = p.get("nodeCount", p.get("initialNodeCount"))
    return PoolView(
        cloud="gcp",
        label=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=gpu,
        spot=bool(node.get("spot")),
        intends_spot=_intends_spot(labels, label) or bool(node.get("preemptible")),
        instance_types=[machine] if machine else [],
        min_size=_int(lo),
        max_size=_int(hi),
        pinned_size_path="nodeCount" if autoscaling and p.get("nodeCount") is not None else None,
        autoscaled=bool(autoscaling),
        taints=[_taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in node.get("taints") or []],
        implicit_taints=[GKE_GPU_TAINT] if gpu else [],
        accelerators=accelerators,
        labels=labels,
        flex_start=bool(node.get("flexStart")),
    )


def _karpenter(name: str, p: Mapping[str, Any]) -> PoolView | None:
    """A NodePool as a pool: its capacity type, its instance types, `limits.nodes` as its max (min 0:
    Karpenter makes nodes only for pending pods); None for a node class of a cloud not listed."""
    spec = p.get("spec") or {}
    template = spec.get("template") or {}
    tspec = template.get("spec") or {}
    cloud = KARPENTER_NODE_CLASS_CLOUDS.get((tspec.get("nodeClassRef") or {}).get("group") or "")
    if cloud is None:
        return None
    reqs = {r.get("key"): r for r in tspec.get("requirements") or [] if r.get("operator") == "In"}
    types = list((reqs.get("node.kubernetes.io/instance-type") or {}).get("values") or [])
    capacity = (reqs.get("karpenter.sh/capacity-type") or {}).get("values") or []
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    taints = [_taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in tspec.get("taints") or []]
    label = (p.get("metadata") or {}).get("name") or name
    nodes = (spec.get("limits") or {}).get("nodes")
    return PoolView(
        cloud=cloud,
        label=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=any(gpu_instance_type(cloud, t) for t in types) or any(t.key == GPU_RESOURCE for t in taints),
        spot=list(capacity) == ["spot"],
        intends_spot=_intends_spot(labels, label),
        instance_types=types,
        min_size=0,
        max_size=int(nodes) if isinstance(nodes, str) and nodes.isdigit() else _int(nodes),
        pinned_size_path=None,
        autoscaled=True,
        taints=taints,
        labels=labels,
        any_type=True,
    )


def _intends_spot(labels: Mapping[str, str], label: str) -> bool:
    return labels.get(CAPACITY_LABEL) == CAPACITY_SPOT or "spot" in re.split(r"[-_.]", label.lower())


def pools_of(resource_type: str, name: str, props: Mapping[str, Any]) -> Iterator[PoolView]:
    """The node pools a resource declares (a ManagedCluster may declare several inline)."""
    if resource_type == EKS_NODE_GROUP:
        yield _eks(name, props)
    elif resource_type == AKS_AGENT_POOL:
        yield _aks(name, props)
    elif resource_type == AKS_MANAGED_CLUSTER:
        for i, profile in enumerate(props.get("agentPoolProfiles") or []):
            yield _aks(f"{name}[{i}]", profile, path=f"agentPoolProfiles[{i}].")
    elif resource_type == GKE_NODE_POOL:
        yield _gke(name, props)
    elif resource_type == GKE_COMPUTE_CLASS:
        from elastic_gpu.gcp.autoprovisioning.pools import compute_class_pools

        yield from compute_class_pools(name, props)
    elif resource_type == KARPENTER_NODE_POOL and (pool := _karpenter(name, props)) is not None:
        yield pool


def gpu_pools_of(resource_type: str, name: str, props: Mapping[str, Any]) -> list[PoolView]:
    return [p for p in pools_of(resource_type, name, props) if p.gpu]


# --- region: where a pool bills, from the resources alone (a policy sees no stack config) ---


class StackResource(Protocol):
    """What stack_pools reads of a resource: pulumi_policy's PolicyResource has these."""

    resource_type: str
    name: str
    props: Mapping[str, Any]
    provider: Any  #: PolicyProviderResource (with `.props`) or None


#: A GCE zone is its region plus "-<letter>" (us-central1-c); a regional location is the region.
_GCE_ZONE = re.compile(r"^(?P<region>[a-z]+-[a-z]+[0-9]+)-[a-z]$")


def _known(props: Mapping[str, Any] | None, key: str) -> Any:
    """props[key], or None when missing or not known yet (during a real preview)."""
    try:
        value = (props or {}).get(key)
    except UnknownValueError:
        return None
    return value if isinstance(value, str) and value else None


def _provider_prop(resource: StackResource, key: str) -> str | None:
    provider = resource.provider
    return _known(getattr(provider, "props", None), key) if provider is not None else None


def gce_region(location: str) -> str:
    """us-central1-c -> us-central1; a region stays as it is."""
    match = _GCE_ZONE.match(location)
    return match["region"] if match else location


def region_of(resource: StackResource, stack: Iterable[StackResource]) -> str | None:
    """The region a pool resource's nodes bill in; None when the resources do not say.

    EKS: the AWS provider's `region`. AKS: the agent pool's cluster `location` (matched by
    `resourceName` when several clusters are declared), else the provider's. GKE: the node
    pool's `location` (a zone maps to its region), else the provider's `region`.
    """
    kind, props = resource.resource_type, resource.props
    if kind == EKS_NODE_GROUP:
        return _provider_prop(resource, "region")
    if kind == AKS_MANAGED_CLUSTER:
        return _known(props, "location") or _provider_prop(resource, "location")
    if kind == AKS_AGENT_POOL:
        clusters = [r for r in stack if r.resource_type == AKS_MANAGED_CLUSTER and _known(r.props, "location")]
        name = _known(props, "resourceName")
        named = [c for c in clusters if name and name in (_known(c.props, "resourceName"), _known(c.props, "name"))]
        locations = {_known(c.props, "location") for c in named or clusters}
        if len(locations) == 1:
            return locations.pop()
        return _known(props, "location") or _provider_prop(resource, "location")
    if kind == GKE_NODE_POOL:
        location = _known(props, "location") or _provider_prop(resource, "region")
        return gce_region(location) if location else None
    if kind == GKE_COMPUTE_CLASS:  # the nodes of its auto-created pools bill where the cluster is
        locations = {_known(r.props, "location") for r in stack if r.resource_type == GKE_CLUSTER} - {None}
        return gce_region(locations.pop()) if len(locations) == 1 else None  # type: ignore[arg-type]
    if kind == KARPENTER_NODE_POOL:
        # A Kubernetes object: its nodes bill where its cloud's resources of the stack are (EKS: the AWS
        # provider's region, read off any AWS resource).
        regions = {_provider_prop(r, "region") for r in stack if r.resource_type.startswith("aws:")} - {None}
        return regions.pop() if len(regions) == 1 else None
    return None


def resource_pools(
    resource: StackResource, stack: Iterable[StackResource] = (), *, gpu_only: bool = False
) -> list[PoolView]:
    """The pools ``resource`` declares, each with its region (read against ``stack``).

    None when a prop they need is not known yet (a real preview): in a stack policy one
    unknown value would otherwise abort the whole policy; the resource policies check the
    resource once its values are known.
    """
    try:
        pools = [
            p for p in pools_of(resource.resource_type, resource.name, resource.props or {}) if p.gpu or not gpu_only
        ]
    except UnknownValueError:
        return []
    stack = list(stack)
    region = region_of(resource, stack) if pools else None
    for pool in pools:
        pool.region = region
    if stack and any(p.cap_group for p in pools):
        from elastic_gpu.gcp.autoprovisioning.pools import apply_cluster_limits

        apply_cluster_limits(pools, stack)
    return pools


def stack_pools(stack: Iterable[StackResource], *, gpu_only: bool = False) -> list[PoolView]:
    """Every pool the stack's resources declare, each with its region."""
    resources = list(stack)
    return [pool for r in resources for pool in resource_pools(r, resources, gpu_only=gpu_only)]


def worst_case_nodes(pools: Iterable[PoolView]) -> int:
    """The pools' max sizes added up, a cap several pools share (cap_group) counted once."""
    shared: dict[str, int] = {}
    total = 0
    for p in pools:
        if p.cap_group is None:
            total += p.max_size or 0
        else:
            shared[p.cap_group] = max(shared.get(p.cap_group, 0), p.max_size or 0)
    return total + sum(shared.values())
