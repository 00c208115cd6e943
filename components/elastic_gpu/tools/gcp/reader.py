"""GKE's reader: node pools and the node pools a ComputeClass lets GKE create (node pool auto-creation) as
`NodeGroupView`s, each read once here for every tool (policy, cost, the preview's Pools table, the
simulation, diff).

An auto-creating ComputeClass is one view per priority: its capacity, its GPU, the machine types it lets GKE
create (the largest first, so a pool priced as its first type is priced as the upper bound), min 0, and as
max the cluster's resource limit of its GPU type over the GPUs per node (read from the GKE cluster in the
same stack), shared by every priority of that GPU type (`shared_cap`). On a cluster without node
auto-provisioning the max is the nodes the pool plans (the class's planned-nodes annotation), shared by the
class's priorities and held by nothing in the cluster (`cap_held` False).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from elastic_gpu.gcp import GKE_CLUSTER, GKE_COMPUTE_CLASS, GKE_NODE_POOL
from elastic_gpu.gcp.autoprovisioning.spec import (
    PLANNED_NODES_ANNOTATION,
    auto_creates,
    class_labels,
    class_reservations,
    priority_group,
    priority_machine_types,
)
from elastic_gpu.gcp.node_spec import SPECIFIC_RESERVATION
from elastic_gpu.gpu_catalog import gpu_instance_type, gpu_spec_of
from elastic_gpu.scheduling import GKE_COMPUTE_CLASS_KEY, GKE_GPU_TAINT, POOL_LABEL, Taint
from elastic_gpu.tools.engine_props import known, read_known
from elastic_gpu.tools.node_group_reading import stack_derived
from elastic_gpu.tools.node_group_view import (
    AUTO_CREATED_GROUP,
    NodeGroupView,
    StackResource,
    int_or_none,
    intends_spot,
    provider_prop,
    taint,
)

#: GCE machine families with built-in GPUs (A2, A3, A4, G2).
_GCE_GPU_MACHINE = re.compile(r"^(a2|a3|a4|g2)-")
#: A GCE zone is its region plus "-<letter>" (us-central1-c); a regional location is the region.
_GCE_ZONE = re.compile(r"^(?P<region>[a-z]+-[a-z]+[0-9]+)-[a-z]$")


def gce_region(location: str) -> str:
    """us-central1-c -> us-central1; a region stays as it is."""
    match = _GCE_ZONE.match(location)
    return match["region"] if match else location


def _node_pool(resource: StackResource, stack: Sequence[StackResource] | None) -> NodeGroupView:
    p = resource.props
    node = p.get("nodeConfig") or {}
    machine = node.get("machineType") or ""
    declared_accelerators = node.get("guestAccelerators") or []
    accelerators = [(a.get("type", ""), int_or_none(a.get("count")) or 1) for a in declared_accelerators]
    gpu = bool(accelerators) or bool(_GCE_GPU_MACHINE.match(machine))
    autoscaling = p.get("autoscaling")
    labels = dict(node.get("labels") or {})
    label = p.get("name") or resource.name
    if autoscaling:
        lo = autoscaling.get("totalMinNodeCount", autoscaling.get("minNodeCount"))
        hi = autoscaling.get("totalMaxNodeCount", autoscaling.get("maxNodeCount"))
    else:
        lo = hi = p.get("nodeCount", p.get("initialNodeCount"))
    declared_taints = node.get("taints") or []
    sharing = read_known(node, "guestAccelerators", [{}])[:1] or [{}]
    disk = read_known(node, "diskSizeGb")
    affinity = read_known(node, "reservationAffinity", {}) or {}
    reserved = (
        tuple(read_known(affinity, "values", []) or [])
        if affinity.get("consumeReservationType") == SPECIFIC_RESERVATION
        else ()
    )
    return NodeGroupView(
        cloud="gcp",
        name=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=gpu,
        spot=bool(node.get("spot")),
        intends_spot=intends_spot(labels, label) or bool(node.get("preemptible")),
        instance_types=[machine] if machine else [],
        min_size=int_or_none(lo),
        max_size=int_or_none(hi),
        pinned_size_path="nodeCount" if autoscaling and p.get("nodeCount") is not None else None,
        autoscaled=bool(autoscaling),
        taints=[taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in declared_taints],
        implicit_taints=[GKE_GPU_TAINT] if gpu else [],
        accelerators=accelerators,
        labels=labels,
        gpu_spec=gpu_spec_of(labels),
        flex_start=bool(node.get("flexStart")),
        region=None if stack is None else _node_pool_region(resource),
        resource=resource.name,
        declared_name=resource.name,
        zones=list(read_known(p, "nodeLocations", [])),
        # The GKE API's own spelling (NO_SCHEDULE), as the program wrote it.
        shown_taints=[f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in declared_taints],
        # A node pool with SPECIFIC_RESERVATION affinity runs on its reservations only (gcp/reservations.py).
        capacity_types=["reserved"] if reserved else ["spot" if node.get("spot") else "on-demand"],
        reservations=reserved,
        queued=bool((read_known(p, "queuedProvisioning", {})).get("enabled")),
        compute_class=labels.get(GKE_COMPUTE_CLASS_KEY),
        disk_bytes=float(disk) * 1e9 if isinstance(disk, int | float) and disk else None,
        gpu_sharing=int((sharing[0].get("gpuSharingConfig") or {}).get("maxSharedClientsPerGpu") or 1),
    )


def _node_pool_region(resource: StackResource) -> str | None:
    """The node pool's `location` (a zone maps to its region), else the provider's `region`."""
    location = known(resource.props, "location") or provider_prop(resource, "region")
    return gce_region(location) if location else None


def _compute_class_region(stack: Sequence[StackResource]) -> str | None:
    """The nodes of its auto-created pools bill where the cluster is."""
    locations = {known(r.props, "location") for r in stack if r.resource_type == GKE_CLUSTER} - {None}
    return gce_region(locations.pop()) if len(locations) == 1 else None


def _auto_provisioning_zones(stack: Sequence[StackResource]) -> list[str]:
    """Where GKE creates node pools: the cluster's autoProvisioningLocations."""
    for r in stack:
        if r.resource_type == GKE_CLUSTER:
            zones = read_known(r.props, "clusterAutoscaling", {}).get("autoProvisioningLocations")
            if zones:
                return list(zones)
    return []


def _declares_cluster(stack: Iterable[StackResource]) -> bool:
    return any(r.resource_type == GKE_CLUSTER for r in stack)


def cluster_limits(stack: Iterable[StackResource]) -> dict[str, int]:
    """The GKE cluster's node auto-provisioning limits per resource type; {} when off or unknown."""
    for r in stack:
        if r.resource_type != GKE_CLUSTER:
            continue
        scaling = (r.props or {}).get("clusterAutoscaling") or {}
        if scaling.get("enabled"):
            return {
                str(lim.get("resourceType")): int(lim.get("maximum") or 0)
                for lim in scaling.get("resourceLimits") or []
                if known(lim, "resourceType")
            }
    return {}


def _planned_nodes(metadata: dict[str, Any]) -> int | None:
    """The nodes a ComputeClass's pool plans (its PLANNED_NODES_ANNOTATION), None when it has none."""
    planned = read_known(metadata.get("annotations") or {}, PLANNED_NODES_ANNOTATION)
    return int(planned) if isinstance(planned, str) and planned.isdigit() else None


def _compute_class(resource: StackResource, stack: Sequence[StackResource] | None) -> list[NodeGroupView]:
    """An auto-creating ComputeClass's priorities, each the node pools GKE would create for it: sized by the
    cluster's node auto-provisioning limits when it has them, else by the nodes the pool plans, which GKE does not
    hold (`cap_held` False)."""
    props = resource.props
    spec = props.get("spec") or {}
    if not auto_creates(spec):
        return []
    metadata = props.get("metadata") or {}
    class_name = metadata.get("name") or resource.name
    # Each derived once per stack (node_group_reading.Stack), not once per ComputeClass.
    limits = stack_derived(stack, cluster_limits) if stack else None
    region = None if stack is None else stack_derived(stack, _compute_class_region)
    class_zones = read_known(read_known(read_known(spec, "priorityDefaults", {}), "location", {}), "zones", None)
    zones = (
        list(class_zones)
        if isinstance(class_zones, list)
        else list(stack_derived(stack, _auto_provisioning_zones))
        if stack is not None
        else []
    )
    # Without node auto-provisioning (no limits in a stack that declares the cluster) nothing caps the priorities:
    # they share the pool's plan.
    planned = _planned_nodes(metadata) if stack is not None and not limits and _declares_cluster(stack) else None
    out = []
    for i, priority in enumerate(spec.get("priorities") or []):
        gpu = priority.get("gpu") or {}
        types = priority_machine_types(priority)
        labels = class_labels(spec, priority)
        gpu_spec = gpu_spec_of(labels)
        rows = sorted(
            (row for t in types if (row := gpu_instance_type("gcp", t, gpu_spec))),
            key=lambda r: (-r.vcpus, -r.memory_gib),
        )
        accelerator = gpu.get("type")
        accelerators = [(accelerator, int(gpu.get("count", 1)))] if accelerator else []
        # GKE taints the GPU nodes it creates for a priority's `gpu` (rule gke-compute-class-gpu-taint
        # checks every priority has one), as it does for node pools with accelerators.
        taints = [Taint(t["key"], t.get("value", ""), t["effect"]) for t in priority.get("taints") or []] + (
            [GKE_GPU_TAINT] if gpu else []
        )
        disk = read_known(read_known(priority, "storage", {}), "bootDiskSize")
        reserved = class_reservations(priority)
        max_size = None
        if planned is not None:
            max_size = planned
        elif limits is not None and accelerator is not None and accelerators:
            # Its GPU type's cluster limit over its GPUs per node (0 without a limit).
            max_size = limits.get(accelerator, 0) // max(accelerators[0][1], 1)
        out.append(
            NodeGroupView(
                cloud="gcp",
                name=priority_group(class_name, i),
                pool=labels.get(POOL_LABEL, class_name),
                gpu=bool(gpu),
                spot=bool(priority.get("spot")),
                intends_spot=bool(priority.get("spot")),
                instance_types=[r.name for r in rows] or types,
                min_size=0,
                max_size=max_size,
                pinned_size_path=None,
                autoscaled=True,
                taints=taints,
                implicit_taints=[GKE_GPU_TAINT] if gpu else [],
                accelerators=accelerators,
                labels=labels,
                gpu_spec=gpu_spec,
                shared_cap=class_name if planned is not None else accelerator,
                cap_held=planned is None,
                region=region,
                kind=AUTO_CREATED_GROUP,
                resource=f"{resource.name}[{i}]",
                declared_name=class_name,
                zones=zones,
                shown_taints=[str(t) for t in taints],
                capacity_types=["reserved"] if reserved else ["spot" if priority.get("spot") else "on-demand"],
                reservations=reserved,
                compute_class=class_name,
                disk_bytes=float(disk) * 1e9 if disk else None,
                gpu_sharing=int(read_known(read_known(gpu, "gpuSharing", {}), "maxSharedClientsPerGPU", 1)),
            )
        )
    return out


def read_node_groups(resource: StackResource, stack: Sequence[StackResource] | None = None) -> list[NodeGroupView]:
    """The node groups a GKE resource declares: a node pool, or the priorities of a ComputeClass that
    auto-creates node pools; `stack` (when given) places them (region, zones) and sizes the auto-created
    ones (the cluster's auto-provisioning limits)."""
    if resource.resource_type == GKE_NODE_POOL:
        return [_node_pool(resource, stack)]
    if resource.resource_type == GKE_COMPUTE_CLASS:
        return _compute_class(resource, stack)
    return []
