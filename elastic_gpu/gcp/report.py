"""GKE node pools and auto-creating ComputeClasses as rows of the preview's Pools table (merged by
elastic_gpu/tools/offline/report.py)."""

from __future__ import annotations

from elastic_gpu.gcp import GKE_CLUSTER, GKE_COMPUTE_CLASS, GKE_NODE_POOL
from elastic_gpu.scheduling import POOL_LABEL
from elastic_gpu.tools.offline.report import PoolRows, PoolSummary
from elastic_gpu.tools.offline.runner import CapturedResource, Preview
from elastic_gpu.tools.offline.stack_resources import stack_resources


def _gke_node_pool(r: CapturedResource, preview: Preview) -> PoolSummary:
    node_config = r.inputs.get("nodeConfig", {})
    scaling = r.inputs.get("autoscaling", {})
    accelerators = [f"{a['count']}x{a['type']}" for a in node_config.get("guestAccelerators", [])]
    return PoolSummary(
        pool=node_config.get("labels", {}).get(POOL_LABEL, r.name),
        node_group=r.inputs.get("name", r.name),
        capacity="spot" if node_config.get("spot") else "on-demand",
        instance_types=[node_config.get("machineType", "?"), *accelerators],
        min_size=scaling.get("totalMinNodeCount", 0),
        max_size=scaling.get("totalMaxNodeCount", 0),
        zones=sorted(r.inputs.get("nodeLocations", [])),
        taints=[f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in node_config.get("taints", [])],
    )


def _gke_compute_class(r: CapturedResource, preview: Preview) -> list[PoolSummary]:
    """A ComputeClass that auto-creates node pools: a row per priority, sized by the cluster's GPU limit."""
    from elastic_gpu.gcp.autoprovisioning.pools import apply_cluster_limits, compute_class_pools

    views = list(compute_class_pools(r.name, r.inputs))
    apply_cluster_limits(views, stack_resources(preview))
    clusters = [c for c in preview.resources if c.type == GKE_CLUSTER]
    zones = next(
        (
            list(z)
            for c in clusters
            if (z := (c.inputs.get("clusterAutoscaling") or {}).get("autoProvisioningLocations"))
        ),
        [],
    )
    return [
        PoolSummary(
            pool=v.pool,
            node_group=v.label,
            capacity="spot" if v.spot else "on-demand",
            # Priced as its largest machine type (the first); the cost table says how many there are.
            instance_types=[v.instance_types[0], *(f"{n}x{a}" for a, n in v.accelerators)],
            min_size=v.min_size or 0,
            max_size=v.max_size or 0,
            zones=sorted(zones),
            taints=[str(t) for t in v.taints],
        )
        for v in views
    ]


POOL_ROWS: dict[str, PoolRows] = {
    GKE_NODE_POOL: lambda r, p: [_gke_node_pool(r, p)],
    GKE_COMPUTE_CLASS: _gke_compute_class,
}
