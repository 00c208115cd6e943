"""A cloud-neutral view of node pools, read from provider props (wire names, camelCase).

The policy rules, the preview's cost table and the `cost` command read pools through
this view, so "what is a GPU pool", "is it spot", "what are its sizes, taints and
region" are answered once for EKS, AKS and GKE. Props are what the engine hands the
analyzer (the resource's inputs); a missing key means "not set by the program".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

from pulumi_policy.proxy import UnknownValueError

from elastic_gpu.clouds import all_clouds, get_cloud
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.karpenter_core import CAPACITY_TYPE_KEY, INSTANCE_TYPE_KEY, NODE_POOL_KEY
from elastic_gpu.provider import ClusterLimits
from elastic_gpu.scheduling import (
    CAPACITY_LABEL,
    CAPACITY_SPOT,
    GPU_RESOURCE,
    KUBERNETES_TAINT_EFFECT,
    POOL_LABEL,
    Taint,
)

#: A Karpenter NodePool (karpenter.sh/v1, the same API on every cloud that runs Karpenter): its cloud is its
#: node class's API group (CloudFacts.karpenter_node_class_group); each such cloud's reader reads its own NodePools.
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
KARPENTER_NODE_CLASS_CLOUDS = {group: c.name for c in all_clouds() if (group := c.facts.karpenter_node_class_group)}


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
    #: labels the service puts on every node of the pool by itself (EKS's eks.amazonaws.com/nodegroup ...)
    implicit_labels: dict[str, str] = field(default_factory=dict)
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
    #: spot first and on-demand when spot runs out, within this one pool (a Karpenter NodePool allowing both
    #: capacity types): its own fallback; `spot` stays False, so a price at max size is on-demand's
    spot_first: bool = False

    @property
    def all_taints(self) -> list[Taint]:
        return self.taints + self.implicit_taints


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


def karpenter_pool_view(name: str, p: Mapping[str, Any], type_key: str = INSTANCE_TYPE_KEY) -> PoolView | None:
    """A NodePool as a pool: its capacity type, its instance types (the `In` values of `type_key`, the label
    its provider names them by), `limits.nodes` as its max (min 0: Karpenter makes nodes only for pending
    pods); None for a node class of a cloud not listed."""
    spec = p.get("spec") or {}
    template = spec.get("template") or {}
    tspec = template.get("spec") or {}
    cloud = KARPENTER_NODE_CLASS_CLOUDS.get((tspec.get("nodeClassRef") or {}).get("group") or "")
    if cloud is None:
        return None
    reqs = {r.get("key"): r for r in tspec.get("requirements") or [] if r.get("operator") == "In"}
    types = list((reqs.get(type_key) or {}).get("values") or [])
    capacity = (reqs.get(CAPACITY_TYPE_KEY) or {}).get("values") or []
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    taints = [taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in tspec.get("taints") or []]
    label = (p.get("metadata") or {}).get("name") or name
    nodes = (spec.get("limits") or {}).get("nodes")
    return PoolView(
        cloud=cloud,
        label=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=any(gpu_instance_type(cloud, t) for t in types) or any(t.key == GPU_RESOURCE for t in taints),
        spot=list(capacity) == ["spot"],
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
    )


PoolReader = Callable[[str, Mapping[str, Any]], Iterator["PoolView"]]


@cache
def pool_readers() -> dict[str, list[PoolReader]]:
    """Resource type -> the readers of the pools it declares: every cloud's POOL_READERS (a type several
    clouds use, such as a Karpenter NodePool, has a reader per cloud, each reading its own)."""
    readers: dict[str, list[PoolReader]] = {}
    for c in all_clouds():
        for t, reader in c.reader().pools.items():
            readers.setdefault(t, []).append(reader)
    return readers


def pools_of(resource_type: str, name: str, props: Mapping[str, Any]) -> Iterator[PoolView]:
    """The node pools a resource declares (a ManagedCluster may declare several inline)."""
    for reader in pool_readers().get(resource_type, []):
        yield from reader(name, props)


def gpu_pools_of(resource_type: str, name: str, props: Mapping[str, Any]) -> list[PoolView]:
    return [p for p in pools_of(resource_type, name, props) if p.gpu]


# --- region: where a pool bills, from the resources alone (a policy sees no stack config) ---


class StackResource(Protocol):
    """What stack_pools reads of a resource: pulumi_policy's PolicyResource has these."""

    resource_type: str
    name: str
    props: Mapping[str, Any]
    provider: Any  #: PolicyProviderResource (with `.props`) or None


def known(props: Mapping[str, Any] | None, key: str) -> Any:
    """props[key], or None when missing or not known yet (during a real preview)."""
    try:
        value = (props or {}).get(key)
    except UnknownValueError:
        return None
    return value if isinstance(value, str) and value else None


#: A value the engine does not know yet (a real `pulumi preview`), in `plain_props`' result.
UNKNOWN = object()


def plain_props(value: Any) -> Any:
    """The engine's props (its Mapping and Sequence proxies) as plain dicts and lists; a value not known yet
    becomes UNKNOWN (the proxies raise UnknownValueError at it)."""
    if isinstance(value, Mapping):
        out = {}
        for key in value:
            try:
                out[key] = plain_props(value[key])
            except UnknownValueError:
                out[key] = UNKNOWN
        return out
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        items = []
        for i in range(len(value)):
            try:
                items.append(plain_props(value[i]))
            except UnknownValueError:
                items.append(UNKNOWN)
        return items
    return value


def has_unknown(value: Any) -> bool:
    """Whether `plain_props`' result holds a value not known yet."""
    if value is UNKNOWN:
        return True
    if isinstance(value, dict):
        return any(has_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(has_unknown(v) for v in value)
    return False


def provider_prop(resource: StackResource, key: str) -> str | None:
    provider = resource.provider
    return known(getattr(provider, "props", None), key) if provider is not None else None


RegionReader = Callable[[StackResource, Iterable[StackResource]], "str | None"]


@cache
def _region_readers() -> dict[str, list[RegionReader]]:
    readers: dict[str, list[RegionReader]] = {}
    for c in all_clouds():
        for t, reader in c.reader().regions.items():
            readers.setdefault(t, []).append(reader)
    return readers


def region_of(resource: StackResource, stack: Iterable[StackResource]) -> str | None:
    """The region a pool resource's nodes bill in (its cloud's REGION_READERS, the first that knows);
    None when the resources do not say."""
    stack = list(stack)
    regions = (reader(resource, stack) for reader in _region_readers().get(resource.resource_type, []))
    return next((r for r in regions if r is not None), None)


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
        # A cap its pools share, read from the stack (GKE auto-provisioning: the cluster's resource limits).
        cloud = get_cloud(pools[0].cloud)
        if isinstance(cloud, ClusterLimits):
            cloud.apply_cluster_limits(pools, stack)
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
