"""A ComputeClass that auto-creates node pools, as the cloud-neutral pool view (cost, policy).

One `PoolView` per priority: its capacity, its GPU, the machine types it lets GKE create (the largest
first, so a pool priced as its first type is priced as the upper bound), min 0, and as max the
cluster's resource limit of its GPU type over the GPUs per node (`apply_cluster_limits`, read from the
GKE cluster in the same stack), shared by every priority of that GPU type (`cap_group`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from elastic_gpu.gcp import GKE_CLUSTER
from elastic_gpu.gcp.autoprovisioning.spec import auto_creates, class_labels, priority_group, priority_machine_types
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.pool_view import PoolView, StackResource, known
from elastic_gpu.scheduling import GKE_GPU_TAINT, POOL_LABEL, Taint


def compute_class_pools(name: str, props: Mapping[str, Any]) -> Iterator[PoolView]:
    spec = props.get("spec") or {}
    if not auto_creates(spec):
        return
    class_name = (props.get("metadata") or {}).get("name") or name
    for i, priority in enumerate(spec.get("priorities") or []):
        gpu = priority.get("gpu") or {}
        types = priority_machine_types(priority)
        rows = sorted(
            (row for t in types if (row := gpu_instance_type("gcp", t))), key=lambda r: (-r.vcpus, -r.memory_gib)
        )
        labels = class_labels(spec, priority)
        accelerator = gpu.get("type")
        yield PoolView(
            cloud="gcp",
            label=priority_group(class_name, i),
            pool=labels.get(POOL_LABEL, class_name),
            gpu=bool(gpu),
            spot=bool(priority.get("spot")),
            intends_spot=bool(priority.get("spot")),
            instance_types=[r.name for r in rows] or types,
            min_size=0,
            max_size=None,
            pinned_size_path=None,
            autoscaled=True,
            # GKE taints the GPU nodes it creates for a priority's `gpu` (rule gke-compute-class-gpu-taint
            # checks every priority has one), as it does for node pools with accelerators.
            taints=[Taint(t["key"], t.get("value", ""), t["effect"]) for t in priority.get("taints") or []]
            + ([GKE_GPU_TAINT] if gpu else []),
            implicit_taints=[GKE_GPU_TAINT] if gpu else [],
            accelerators=[(accelerator, int(gpu.get("count", 1)))] if accelerator else [],
            labels=labels,
            cap_group=accelerator,
        )


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


def apply_cluster_limits(pools: list[PoolView], stack: Iterable[StackResource]) -> None:
    """Each auto-created pool's max: its GPU type's cluster limit over its GPUs per node (0 without a limit)."""
    limits = cluster_limits(stack)
    for p in pools:
        if p.cap_group is not None and p.accelerators:
            p.max_size = limits.get(p.cap_group, 0) // max(p.accelerators[0][1], 1)
