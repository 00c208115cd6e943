"""`simulate` for Karpenter NodePools: which NodePools a pod reaches, in weight order, and the timings of
`model` in place of the cluster-autoscaler's backoff machine (components/simulation/run.py asks the
stack's cloud for this through `elastic_gpu.aws.provisioning`)."""

from __future__ import annotations

import math
from typing import Any

from elastic_gpu.aws.karpenter.nodes import CAPACITY_TYPE_KEY, INSTANCE_TYPE_KEY, ZONE_KEY
from elastic_gpu.cost import Overrides, node_price
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.offline.runner import CapturedResource, Preview
from elastic_gpu.pool_view import KARPENTER_NODE_CLASS_CLOUDS, KARPENTER_NODE_POOL
from elastic_gpu.prices import HOURS_PER_MONTH
from elastic_gpu.scheduling import EPHEMERAL_STORAGE, GPU_RESOURCE, KUBERNETES_TAINT_EFFECT, POOL_LABEL, Taint
from elastic_gpu.simulation.fit import NodeTemplate, misfit
from elastic_gpu.simulation.pod import PodShape, quantity

GIB = 2**30
NODE_CLASS_TYPE = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def _duration_seconds(text: str) -> int:
    """A NodePool duration (`^(([0-9]+(s|m|h))+|Never)$`) in seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    total, number = 0, ""
    for ch in text:
        if ch.isdigit():
            number += ch
        else:
            total, number = total + int(number) * units[ch], ""
    return total


def _requirements(spec: dict[str, Any]) -> dict[str, list[str]]:
    reqs = (spec.get("template") or {}).get("spec", {}).get("requirements") or []
    return {r["key"]: list(r.get("values") or []) for r in reqs if r.get("operator") == "In"}


def root_volume(preview: Preview, node_class: str) -> float | None:
    """Bytes of the root volume the EC2NodeClass gives its nodes: their ephemeral storage."""
    for r in preview.of_type(NODE_CLASS_TYPE):
        if (r.inputs.get("metadata") or {}).get("name") == node_class:
            for device in (r.inputs.get("spec") or {}).get("blockDeviceMappings") or []:
                if device.get("rootVolume") and (size := (device.get("ebs") or {}).get("volumeSize")):
                    return quantity(str(size))
    return None


def node_pool_template(preview: Preview, r: CapturedResource, region: str | None) -> NodeTemplate | None:
    """A NodePool as one template: the labels and taints its nodes get, the biggest eligible type's
    resources (the pod fits when some eligible type holds it) and its node class's root volume as
    ephemeral storage, `limits.nodes` as its max."""
    spec = r.inputs.get("spec") or {}
    tmpl = spec.get("template") or {}
    ref = (tmpl.get("spec") or {}).get("nodeClassRef") or {}
    if KARPENTER_NODE_CLASS_CLOUDS.get(ref.get("group")) != "aws":
        return None
    reqs = _requirements(spec)
    rows = [row for t in reqs.get(INSTANCE_TYPE_KEY, []) if (row := gpu_instance_type("aws", t)) is not None]
    biggest = max(rows, key=lambda row: (row.gpus, row.vcpus, row.memory_gib), default=None)
    allocatable = (
        {"cpu": float(biggest.vcpus), "memory": float(biggest.memory_gib * GIB), GPU_RESOURCE: float(biggest.gpus)}
        if biggest
        else {"cpu": math.inf, "memory": math.inf}
    )
    if (disk := root_volume(preview, ref.get("name") or "")) is not None:
        allocatable[EPHEMERAL_STORAGE] = disk
    capacity = reqs.get(CAPACITY_TYPE_KEY, ["on-demand"])
    labels = dict((tmpl.get("metadata") or {}).get("labels") or {}) | {CAPACITY_TYPE_KEY: capacity[0]}
    taints = [
        Taint(t["key"], t.get("value") or "", KUBERNETES_TAINT_EFFECT.get(t["effect"], t["effect"]))  # type: ignore[arg-type]
        for t in (tmpl.get("spec") or {}).get("taints") or []
    ]
    name = (r.inputs.get("metadata") or {}).get("name") or r.name
    return NodeTemplate(
        group=name,
        resource=r.name,
        autoscaler_name=name,
        pool=labels.get(POOL_LABEL, name),
        capacity="spot" if capacity == ["spot"] else "on-demand",
        instance_type=rows[0].name if rows else "?",
        labels=labels,
        taints=sorted(taints),
        allocatable=allocatable,
        min_size=0,
        max_size=int((spec.get("limits") or {}).get("nodes") or 0),
        zones=reqs.get(ZONE_KEY, []),
        region=region,
    )


def weight_order(preview: Preview) -> list[tuple[CapturedResource, int]]:
    """NodePools as the scheduler tries them: weight first, then name descending
    (kubernetes-sigs/karpenter pkg/utils/nodepool/nodepool.go:161 OrderByWeight)."""
    pools = [(r, int((r.inputs.get("spec") or {}).get("weight") or 0)) for r in preview.of_type(KARPENTER_NODE_POOL)]
    by_name = sorted(pools, key=lambda p: (p[0].inputs.get("metadata") or {}).get("name") or p[0].name, reverse=True)
    return sorted(by_name, key=lambda p: -p[1])


def eligible_types(preview: Preview, resources: list[str]) -> list[str]:
    types: dict[str, None] = {}
    for r in preview.of_type(KARPENTER_NODE_POOL):
        if r.name in resources:
            types |= dict.fromkeys(_requirements(r.inputs.get("spec") or {}).get(INSTANCE_TYPE_KEY, []))
    return list(types)


def worst_case(
    node_pools: list[NodeTemplate], preview: Preview, overrides: Overrides | None
) -> tuple[int, float | None, list[str]]:
    """Every NodePool at its limits.nodes, each node the priciest eligible type on its capacity type."""
    nodes, total, notes = 0, 0.0, []
    for t in node_pools:
        hourlies = []
        for it in eligible_types(preview, [t.resource]):
            price = node_price("aws", t.region, it, [], overrides)
            hourly = price.hourly(t.capacity == "spot")
            if hourly is None:
                hourly = price.on_demand  # spot never costs more: an upper bound
            if hourly is None:
                return nodes + t.max_size, None, [f"{t.group}: no price for {it} in {t.region}"]
            hourlies.append(hourly)
        nodes += t.max_size
        total += t.max_size * max(hourlies, default=0.0) * HOURS_PER_MONTH
        notes.append(f"{t.group}: {t.max_size} nodes (limits.nodes), each priced as its priciest eligible type")
    return nodes, total, notes


def templates(preview: Preview, region: str | None) -> list[NodeTemplate]:
    return [t for r, _ in weight_order(preview) if (t := node_pool_template(preview, r, region)) is not None]


def reached(pod: PodShape, preview: Preview, region: str | None) -> tuple[list[NodeTemplate], list[NodeTemplate]]:
    """(every NodePool in weight order, those the pod fits)."""
    every = templates(preview, region)
    return every, [t for t in every if misfit(pod, t) is None]


def consolidate_after_seconds(preview: Preview, resource: str) -> int | None:
    for r in preview.of_type(KARPENTER_NODE_POOL):
        if r.name == resource:
            value = ((r.inputs.get("spec") or {}).get("disruption") or {}).get("consolidateAfter")
            return None if value in (None, "Never") else _duration_seconds(value)
    return None
