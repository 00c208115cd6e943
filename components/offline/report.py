"""Human and machine reports of a captured preview: resource tree, pools, outputs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from components.offline.runner import SECRET_MASK, CapturedResource, Preview
from components.scheduling import POOL_LABEL


@dataclass
class PoolSummary:
    pool: str
    node_group: str
    capacity: str  # "spot" | "on-demand"
    instance_types: list[str]
    min_size: int
    max_size: int
    zones: list[str]
    taints: list[str]


def _eks_node_group(r: CapturedResource, preview: Preview) -> PoolSummary:
    subnets = preview.by_id()
    zones = sorted(
        subnets[s].inputs.get("availabilityZone", "?") if s in subnets else "?" for s in r.inputs["subnetIds"]
    )
    scaling = r.inputs["scalingConfig"]
    return PoolSummary(
        pool=r.inputs.get("labels", {}).get(POOL_LABEL, r.name),
        node_group=r.inputs["nodeGroupName"],
        capacity="spot" if r.inputs.get("capacityType") == "SPOT" else "on-demand",
        instance_types=list(r.inputs.get("instanceTypes", [])),
        min_size=scaling["minSize"],
        max_size=scaling["maxSize"],
        zones=zones,
        taints=[f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in r.inputs.get("taints", [])],
    )


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


def _aks_agent_pool(r: CapturedResource, preview: Preview) -> PoolSummary:
    return PoolSummary(
        pool=r.inputs.get("nodeLabels", {}).get(POOL_LABEL, r.name),
        node_group=r.inputs["agentPoolName"],
        capacity="spot" if r.inputs.get("scaleSetPriority") == "Spot" else "on-demand",
        instance_types=[r.inputs["vmSize"]],
        min_size=r.inputs["minCount"],
        max_size=r.inputs["maxCount"],
        zones=sorted(r.inputs.get("availabilityZones", [])),
        taints=list(r.inputs.get("nodeTaints", [])),
    )


#: Per provider type: how a captured node group reads as a pool row. Each cloud adds its own.
POOL_EXTRACTORS: dict[str, Callable[[CapturedResource, Preview], PoolSummary]] = {
    "aws:eks/nodeGroup:NodeGroup": _eks_node_group,
    "gcp:container/nodePool:NodePool": _gke_node_pool,
    "azure-native:containerservice:AgentPool": _aks_agent_pool,
}


def pool_summaries(preview: Preview) -> list[PoolSummary]:
    rows = [POOL_EXTRACTORS[r.type](r, preview) for r in preview.resources if r.type in POOL_EXTRACTORS]
    return sorted(rows, key=lambda p: (p.pool, p.node_group))


def to_json(preview: Preview) -> dict[str, Any]:
    return preview.to_json() | {"pools": [asdict(p) for p in pool_summaries(preview)]}


def render_text(preview: Preview) -> str:
    lines = [f"elastic-gpu offline preview: stack {preview.stack} (mock engine; nothing is deployed)", ""]
    lines.append(f"Resources ({len(preview.resources)}):")
    kids: dict[str | None, list[CapturedResource]] = {}
    for r in preview.resources:
        kids.setdefault(r.parent, []).append(r)

    def walk(parent: str | None, indent: str) -> None:
        items = sorted(kids.get(parent, []), key=lambda r: (r.type, r.name))
        for i, r in enumerate(items):
            last = i == len(items) - 1
            branch = "" if parent is None else ("└─ " if last else "├─ ")
            flags = [
                f
                for f, on in (
                    ("protected", r.protect),
                    ("ignores " + ",".join(r.ignore_changes), bool(r.ignore_changes)),
                )
                if on
            ]
            suffix = f"  [{'; '.join(flags)}]" if flags else ""
            lines.append(f"  {indent}{branch}{r.type}  {r.name}{suffix}")
            walk(r.urn, indent + ("" if parent is None else ("   " if last else "│  ")))

    walk(None, "")
    lines += ["", "Pools:"]
    header = ("POOL", "NODE GROUP", "CAPACITY", "MIN", "MAX", "ZONES", "INSTANCE TYPES", "TAINTS")
    rows = [
        (
            p.pool,
            p.node_group,
            p.capacity,
            str(p.min_size),
            str(p.max_size),
            ",".join(p.zones),
            ",".join(p.instance_types),
            ",".join(p.taints) or "-",
        )
        for p in pool_summaries(preview)
    ]
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=False)]
    for row in (header, *rows):
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    lines += ["", "Outputs:"]
    for key, out in sorted(preview.outputs.items()):
        lines.append(f"  {key}: {SECRET_MASK if out.secret else out.value}")
    return "\n".join(lines)
