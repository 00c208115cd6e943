"""AKS agent pools (standalone and inline in a ManagedCluster) as `PoolView`s, and where they bill
(elastic_gpu/pool_view.py merges the readers)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_MANAGED_CLUSTER
from elastic_gpu.azure.node_provisioning.objects import SKU_NAME_KEY
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.pool_view import (
    KARPENTER_NODE_POOL,
    PoolView,
    StackResource,
    int_or_none,
    intends_spot,
    karpenter_pool_view,
    known,
    parse_taint_string,
    provider_prop,
)
from elastic_gpu.scheduling import AKS_SPOT_TAINT, POOL_LABEL

#: Azure N-series (NC, ND, NV) are the GPU sizes.
_AZURE_GPU_SIZE = re.compile(r"^Standard_N[CDV]", re.IGNORECASE)


def _aks(name: str, p: Mapping[str, Any], path: str = "") -> PoolView:
    size = p.get("vmSize") or ""
    spot = p.get("scaleSetPriority") == "Spot"
    autoscaled = bool(p.get("enableAutoScaling"))
    labels = dict(p.get("nodeLabels") or {})
    label = p.get("agentPoolName") or p.get("name") or name
    count = int_or_none(p.get("count"))
    return PoolView(
        cloud="azure",
        label=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=bool(gpu_instance_type("azure", size) or _AZURE_GPU_SIZE.match(size)),
        spot=spot,
        intends_spot=intends_spot(labels, label),
        instance_types=[size] if size else [],
        min_size=int_or_none(p.get("minCount")) if autoscaled else count,
        max_size=int_or_none(p.get("maxCount")) if autoscaled else count,
        pinned_size_path=f"{path}count" if autoscaled and count is not None else None,
        autoscaled=autoscaled,
        taints=[parse_taint_string(t) for t in p.get("nodeTaints") or []],
        implicit_taints=[AKS_SPOT_TAINT] if spot else [],
        eviction_policy=p.get("scaleSetEvictionPolicy"),
        labels=labels,
    )


def _agent_pool(name: str, p: Mapping[str, Any]) -> Iterator[PoolView]:
    yield _aks(name, p)


def _managed_cluster(name: str, p: Mapping[str, Any]) -> Iterator[PoolView]:
    """A ManagedCluster declares its inline agent pools (agentPoolProfiles)."""
    for i, profile in enumerate(p.get("agentPoolProfiles") or []):
        yield _aks(f"{name}[{i}]", profile, path=f"agentPoolProfiles[{i}].")


def _cluster_region(resource: StackResource, stack: Iterable[StackResource]) -> str | None:
    return known(resource.props, "location") or provider_prop(resource, "location")


def _agent_pool_region(resource: StackResource, stack: Iterable[StackResource]) -> str | None:
    """The agent pool's cluster `location` (matched by `resourceName` when several clusters are declared),
    else the provider's."""
    props = resource.props
    clusters = [r for r in stack if r.resource_type == AKS_MANAGED_CLUSTER and known(r.props, "location")]
    name = known(props, "resourceName")
    named = [c for c in clusters if name and name in (known(c.props, "resourceName"), known(c.props, "name"))]
    locations = {known(c.props, "location") for c in named or clusters}
    if len(locations) == 1:
        return locations.pop()
    return known(props, "location") or provider_prop(resource, "location")


def _karpenter(name: str, p: Mapping[str, Any]) -> Iterator[PoolView]:
    """A node auto-provisioning NodePool (its node class an AKSNodeClass), its sizes by SKU name."""
    pool = karpenter_pool_view(name, p, SKU_NAME_KEY)
    if pool is not None and pool.cloud == "azure":
        yield pool


def _karpenter_region(resource: StackResource, stack: Iterable[StackResource]) -> str | None:
    """A Kubernetes object: its nodes bill where the stack's one AKS cluster is."""
    locations = {known(r.props, "location") for r in stack if r.resource_type == AKS_MANAGED_CLUSTER} - {None}
    return locations.pop() if len(locations) == 1 else None


#: Resource type -> the pools it declares.
POOL_READERS = {AKS_AGENT_POOL: _agent_pool, AKS_MANAGED_CLUSTER: _managed_cluster, KARPENTER_NODE_POOL: _karpenter}
#: Resource type -> the region its nodes bill in.
REGION_READERS = {
    AKS_MANAGED_CLUSTER: _cluster_region,
    AKS_AGENT_POOL: _agent_pool_region,
    KARPENTER_NODE_POOL: _karpenter_region,
}
