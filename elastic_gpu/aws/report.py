"""EKS node groups as rows of the preview's Pools table (merged by elastic_gpu/tools/offline/report.py)."""

from __future__ import annotations

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.aws.preview import subnet_zones
from elastic_gpu.scheduling import POOL_LABEL
from elastic_gpu.tools.offline.report import PoolRows, PoolSummary, known_input
from elastic_gpu.tools.offline.runner import CapturedResource, Preview


def _eks_node_group(r: CapturedResource, preview: Preview) -> PoolSummary:
    subnets = subnet_zones(preview.resources)
    subnet_ids = known_input(r.inputs.get("subnetIds"), [])
    zones = sorted(
        subnets.get(s, "?") if isinstance(s, str) else "?" for s in (subnet_ids if isinstance(subnet_ids, list) else [])
    )
    scaling = known_input(r.inputs.get("scalingConfig"), {})
    return PoolSummary(
        pool=known_input(r.inputs.get("labels"), {}).get(POOL_LABEL, r.name),
        # Without nodeGroupName, EKS auto-names the group from the resource name.
        node_group=str(known_input(r.inputs.get("nodeGroupName"), r.name)),
        capacity="spot" if r.inputs.get("capacityType") == "SPOT" else "on-demand",
        instance_types=list(r.inputs.get("instanceTypes", [])),
        min_size=known_input(scaling.get("minSize"), 0),
        max_size=known_input(scaling.get("maxSize"), 0),
        zones=zones,
        taints=[f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in r.inputs.get("taints", [])],
    )


POOL_ROWS: dict[str, PoolRows] = {EKS_NODE_GROUP: lambda r, p: [_eks_node_group(r, p)]}
