"""AKS's reader: agent pools (standalone, and inline in a ManagedCluster) and node auto-provisioning
NodePools (an AKSNodeClass's) as `NodeGroupView`s, each read once here for every tool (policy, cost, the
preview's Pools table, the simulation, diff)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_MANAGED_CLUSTER
from elastic_gpu.azure.node_provisioning.objects import SKU_NAME_KEY
from elastic_gpu.azure.node_template import resources_from_tags
from elastic_gpu.gpu_catalog import gpu_instance_type, gpu_spec_of
from elastic_gpu.scheduling import AKS_SPOT_TAINT, POOL_LABEL
from elastic_gpu.tools.engine_props import known, read_known
from elastic_gpu.tools.node_group_reading import stack_derived
from elastic_gpu.tools.node_group_view import (
    KARPENTER_NODE_POOL,
    NodeGroupView,
    StackResource,
    int_or_none,
    intends_spot,
    karpenter_node_pool,
    parse_taint_string,
    provider_prop,
)

#: Azure N-series (NC, ND, NV) are the GPU sizes.
_AZURE_GPU_SIZE = re.compile(r"^Standard_N[CDV]", re.IGNORECASE)
GIB = 2**30
#: maxPods when the agent pool does not set it, by the cluster's network plugin (AKS docs, AKSNodeClass and
#: Azure CNI: overlay 250, Azure CNI with node subnet 30, otherwise 110).
AKS_DEFAULT_MAX_PODS = {("azure", "overlay"): 250, ("azure", None): 30}
AKS_OTHER_MAX_PODS = 110


def default_max_pods(cluster: Mapping[str, Any]) -> int:
    network = read_known(cluster, "networkProfile", {})
    key = (network.get("networkPlugin"), network.get("networkPluginMode"))
    return AKS_DEFAULT_MAX_PODS.get(key, AKS_OTHER_MAX_PODS)


def _agent_pool(
    p: Mapping[str, Any],
    *,
    resource: str,
    declared_name: str,
    region: str | None,
    cluster_max_pods: int,
    path: str = "",
) -> NodeGroupView:
    size = p.get("vmSize") or ""
    spot = p.get("scaleSetPriority") == "Spot"
    autoscaled = bool(p.get("enableAutoScaling"))
    labels = dict(p.get("nodeLabels") or {})
    gpu_spec = gpu_spec_of(labels)
    label = p.get("agentPoolName") or p.get("name") or resource
    count = int_or_none(p.get("count"))
    taints = list(p.get("nodeTaints") or [])
    disk = read_known(p, "osDiskSizeGB")
    # The reserved tier: Regular VMs of a capacity reservation group (azure/reservations.py).
    group = read_known(p, "capacityReservationGroupID")
    return NodeGroupView(
        cloud="azure",
        name=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=bool(gpu_instance_type("azure", size, gpu_spec) or _AZURE_GPU_SIZE.match(size)),
        gpu_spec=gpu_spec,
        spot=spot,
        intends_spot=intends_spot(labels, label),
        instance_types=[size] if size else [],
        min_size=int_or_none(p.get("minCount")) if autoscaled else count,
        max_size=int_or_none(p.get("maxCount")) if autoscaled else count,
        pinned_size_path=f"{path}count" if autoscaled and count is not None else None,
        autoscaled=autoscaled,
        taints=[parse_taint_string(t) for t in taints],
        implicit_taints=[AKS_SPOT_TAINT] if spot else [],
        eviction_policy=p.get("scaleSetEvictionPolicy"),
        labels=labels,
        region=region,
        resource=resource,
        declared_name=declared_name,
        zones=list(read_known(p, "availabilityZones", [])),
        shown_taints=taints,
        capacity_types=["reserved" if group else "spot" if spot else "on-demand"],
        reservations=(str(group),) if group else (),
        disk_bytes=float(disk) * GIB if isinstance(disk, int | float) and disk else None,
        # The scale set's node-template resources tags (copied from the agent pool's).
        template_resources=resources_from_tags(read_known(p, "tags", {})),
        max_pods=int(read_known(p, "maxPods") or cluster_max_pods),
    )


def _cluster_region(resource: StackResource) -> str | None:
    return known(resource.props, "location") or provider_prop(resource, "location")


def _agent_pool_region(resource: StackResource, stack: Sequence[StackResource]) -> str | None:
    """The agent pool's cluster `location`: the one cluster it depends on (its `resourceName` is that cluster's
    name output), else the one its `resourceName` names or the stack's only location, else the provider's."""
    props = resource.props
    depended = [d for d in resource.dependencies if d.resource_type == AKS_MANAGED_CLUSTER]
    if len(depended) == 1 and (cluster_location := known(depended[0].props, "location")):
        return str(cluster_location)
    clusters = stack_derived(stack, _located_clusters)
    name = known(props, "resourceName")
    named = [c for c in clusters if name and name in (known(c.props, "resourceName"), known(c.props, "name"))]
    locations: set[str | None] = {known(c.props, "location") for c in named or clusters}
    if len(locations) == 1:
        return locations.pop()
    location: str | None = known(props, "location")
    return location or provider_prop(resource, "location")


def _located_clusters(stack: Sequence[StackResource]) -> list[StackResource]:
    return [r for r in stack if r.resource_type == AKS_MANAGED_CLUSTER and known(r.props, "location")]


def _karpenter_region(stack: Sequence[StackResource]) -> str | None:
    """A Kubernetes object: its nodes bill where the stack's one AKS cluster is."""
    locations = {known(r.props, "location") for r in stack if r.resource_type == AKS_MANAGED_CLUSTER} - {None}
    return locations.pop() if len(locations) == 1 else None


def _stack_max_pods(stack: Sequence[StackResource] | None) -> int:
    """maxPods of a pool that sets none: its cluster network plugin's default (the stack's first cluster)."""
    return stack_derived(stack, _first_cluster_max_pods) if stack is not None else AKS_OTHER_MAX_PODS


def _first_cluster_max_pods(stack: Sequence[StackResource]) -> int:
    cluster = next((r for r in stack if r.resource_type == AKS_MANAGED_CLUSTER), None)
    return default_max_pods(cluster.props) if cluster is not None else AKS_OTHER_MAX_PODS


def read_node_groups(resource: StackResource, stack: Sequence[StackResource] | None = None) -> list[NodeGroupView]:
    """The node groups an AKS resource declares: an agent pool, a ManagedCluster's inline agent pools
    (agentPoolProfiles), or a node auto-provisioning NodePool (its node class an AKSNodeClass, its sizes by
    SKU name); `stack` (when given) places them (region)."""
    kind, name, p = resource.resource_type, resource.name, resource.props
    if kind == AKS_AGENT_POOL:
        region = None if stack is None else _agent_pool_region(resource, stack)
        return [
            _agent_pool(p, resource=name, declared_name=name, region=region, cluster_max_pods=_stack_max_pods(stack))
        ]
    if kind == AKS_MANAGED_CLUSTER:
        region = None if stack is None else _cluster_region(resource)
        max_pods = _stack_max_pods(stack) if stack else default_max_pods(p)
        return [
            _agent_pool(
                profile,
                resource=f"{name}[{i}]",
                declared_name=profile.get("name", name),
                region=region,
                cluster_max_pods=max_pods,
                path=f"agentPoolProfiles[{i}].",
            )
            for i, profile in enumerate(p.get("agentPoolProfiles") or [])
        ]
    if kind == KARPENTER_NODE_POOL:
        view = karpenter_node_pool(resource, "azure", SKU_NAME_KEY)
        if view is None:
            return []
        return [view if stack is None else replace(view, region=stack_derived(stack, _karpenter_region))]
    return []
