"""GKE node pools as `PoolView`s, and where they bill (elastic_gpu/pool_view.py merges the readers)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from elastic_gpu.gcp import GKE_CLUSTER, GKE_COMPUTE_CLASS, GKE_NODE_POOL
from elastic_gpu.pool_view import PoolView, StackResource, int_or_none, intends_spot, known, provider_prop, taint
from elastic_gpu.scheduling import GKE_GPU_TAINT, POOL_LABEL

#: GCE machine families with built-in GPUs (A2, A3, A4, G2).
_GCE_GPU_MACHINE = re.compile(r"^(a2|a3|a4|g2)-")
#: A GCE zone is its region plus "-<letter>" (us-central1-c); a regional location is the region.
_GCE_ZONE = re.compile(r"^(?P<region>[a-z]+-[a-z]+[0-9]+)-[a-z]$")


def gce_region(location: str) -> str:
    """us-central1-c -> us-central1; a region stays as it is."""
    match = _GCE_ZONE.match(location)
    return match["region"] if match else location


def _gke(name: str, p: Mapping[str, Any]) -> Iterator[PoolView]:
    node = p.get("nodeConfig") or {}
    machine = node.get("machineType") or ""
    accelerators = [(a.get("type", ""), int_or_none(a.get("count")) or 1) for a in node.get("guestAccelerators") or []]
    gpu = bool(accelerators) or bool(_GCE_GPU_MACHINE.match(machine))
    autoscaling = p.get("autoscaling")
    labels = dict(node.get("labels") or {})
    label = p.get("name") or name
    if autoscaling:
        lo = autoscaling.get("totalMinNodeCount", autoscaling.get("minNodeCount"))
        hi = autoscaling.get("totalMaxNodeCount", autoscaling.get("maxNodeCount"))
    else:
        lo = hi = p.get("nodeCount", p.get("initialNodeCount"))
    yield PoolView(
        cloud="gcp",
        label=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=gpu,
        spot=bool(node.get("spot")),
        intends_spot=intends_spot(labels, label) or bool(node.get("preemptible")),
        instance_types=[machine] if machine else [],
        min_size=int_or_none(lo),
        max_size=int_or_none(hi),
        pinned_size_path="nodeCount" if autoscaling and p.get("nodeCount") is not None else None,
        autoscaled=bool(autoscaling),
        taints=[taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in node.get("taints") or []],
        implicit_taints=[GKE_GPU_TAINT] if gpu else [],
        accelerators=accelerators,
        labels=labels,
        flex_start=bool(node.get("flexStart")),
    )


def _region(resource: StackResource, stack: Iterable[StackResource]) -> str | None:
    """The node pool's `location` (a zone maps to its region), else the provider's `region`."""
    location = known(resource.props, "location") or provider_prop(resource, "region")
    return gce_region(location) if location else None


def _compute_class(name: str, p: Mapping[str, Any]) -> Iterator[PoolView]:
    """An auto-creating ComputeClass's priorities as pools (elastic_gpu/gcp/autoprovisioning/pools.py)."""
    from elastic_gpu.gcp.autoprovisioning.pools import compute_class_pools

    yield from compute_class_pools(name, p)


def _compute_class_region(resource: StackResource, stack: Iterable[StackResource]) -> str | None:
    """The nodes of its auto-created pools bill where the cluster is."""
    locations = {known(r.props, "location") for r in stack if r.resource_type == GKE_CLUSTER} - {None}
    return gce_region(locations.pop()) if len(locations) == 1 else None


#: Resource type -> the pools it declares.
POOL_READERS = {GKE_NODE_POOL: _gke, GKE_COMPUTE_CLASS: _compute_class}
#: Resource type -> the region its nodes bill in.
REGION_READERS = {GKE_NODE_POOL: _region, GKE_COMPUTE_CLASS: _compute_class_region}


def apply_cluster_limits(pools: list[PoolView], stack: Iterable[StackResource]) -> None:
    """The auto-created pools' shared cap: the cluster's resource limit of their GPU type (autoprovisioning)."""
    from elastic_gpu.gcp.autoprovisioning.pools import apply_cluster_limits as apply

    apply(pools, stack)
