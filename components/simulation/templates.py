"""Each node group's scale-from-zero node template, built from the captured resources the way
that cloud's autoscaler builds it (never from the stack config): every cloud's `node_templates`
(components/<cloud>/node_templates.py, which says how its autoscaler builds them), in cloud order.

Capacity is what the template holds; the kubelet's reservations are left out (the shipped
workloads request far less than a node). A CPU type the GPU catalog does not know has no
vCPU/memory figure here, so those do not limit it (GPU pods are kept off it by the GPU request).
"""

from __future__ import annotations

import math

from elastic_gpu.clouds import all_clouds
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.offline.runner import CapturedResource, Preview
from elastic_gpu.scheduling import GPU_RESOURCE, KUBERNETES_TAINT_EFFECT, Taint
from elastic_gpu.simulation.fit import NodeTemplate

GIB = 2**30
ZONE_LABEL = "topology.kubernetes.io/zone"


def shape(cloud: str, instance_type: str) -> dict[str, float]:
    row = gpu_instance_type(cloud, instance_type)
    if row is None:
        return {"cpu": math.inf, "memory": math.inf}
    return {"cpu": float(row.vcpus), "memory": float(row.memory_gib * GIB), GPU_RESOURCE: float(row.gpus)}


def template_taint(key: str, value: str | None, effect: str) -> Taint:
    return Taint(key, value or "", KUBERNETES_TAINT_EFFECT.get(effect, effect))  # type: ignore[arg-type]


def provider_region(preview: Preview, r: CapturedResource) -> str | None:
    """The region `r`'s provider is pinned to: its explicit provider's, else the stack config's
    (`aws:region`, `gcp:region`), which is what the engine's default provider uses."""
    region = preview.provider_inputs(r).get("region")
    return region if isinstance(region, str) and region else None


def node_templates(preview: Preview) -> list[NodeTemplate]:
    return [t for cloud in all_clouds() for t in cloud.node_templates.node_templates(preview)]
