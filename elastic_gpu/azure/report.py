"""AKS agent pools (and the pools a ManagedCluster declares inline) as rows of the preview's Pools table
(merged by elastic_gpu/tools/offline/report.py)."""

from __future__ import annotations

from typing import Any

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_MANAGED_CLUSTER
from elastic_gpu.scheduling import POOL_LABEL
from elastic_gpu.tools.offline.report import PoolRows, PoolSummary
from elastic_gpu.tools.offline.runner import CapturedResource, Preview


def _aks_pool(inputs: dict[str, Any], name: str) -> PoolSummary:
    count = inputs.get("count")
    return PoolSummary(
        pool=inputs.get("nodeLabels", {}).get(POOL_LABEL, name),
        node_group=inputs.get("agentPoolName", name),
        capacity="spot" if inputs.get("scaleSetPriority") == "Spot" else "on-demand",
        instance_types=[inputs["vmSize"]],
        min_size=inputs.get("minCount", count),
        max_size=inputs.get("maxCount", count),
        zones=sorted(inputs.get("availabilityZones", [])),
        taints=list(inputs.get("nodeTaints", [])),
    )


def _aks_agent_pool(r: CapturedResource, preview: Preview) -> list[PoolSummary]:
    return [_aks_pool(r.inputs, r.name)]


def _aks_cluster_pools(r: CapturedResource, preview: Preview) -> list[PoolSummary]:
    """The pools a ManagedCluster declares inline (the System pool)."""
    return [_aks_pool(p, p.get("name", r.name)) for p in r.inputs.get("agentPoolProfiles", [])]


POOL_ROWS: dict[str, PoolRows] = {AKS_AGENT_POOL: _aks_agent_pool, AKS_MANAGED_CLUSTER: _aks_cluster_pools}
