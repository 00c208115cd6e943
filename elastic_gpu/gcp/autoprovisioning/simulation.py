"""The groups GKE's autoscaler would auto-create for each ComputeClass, as node templates.

GKE's cluster autoscaler is the upstream one with node pool auto-creation added (GKE docs:
"Node pool auto-creation is an extension of the GKE cluster autoscaler"); upstream's scale-up
orchestrator creates a node group for an option that does not exist yet and then scales it
(kubernetes/autoscaler core/scaleup/orchestrator/orchestrator.go `CreateNodeGroup`, async when
AsyncNodeGroupsEnabled). Its GCE provider's node-group creation is GKE's own and not in the
upstream source, so the time to create a node pool is not modelled; nor is the node's boot
("approximately 80 to 120 seconds" for an auto-provisioned node, GKE how-to/capacity-provisioning).

Each priority of a ComputeClass with `nodePoolAutoCreation.enabled` is one group the autoscaler
tries in the class's order: a stockout backs it off (the same backoff as any node group, 5 min
first) and the next priority is asked in the same loop. Its template: the largest eligible
machine type (so a pod that fits any of them fits), the priority's GPU, node labels and taints,
GKE's GPU taint and the class label and taint (GKE taints auto-created nodes for the class
toleration the pods carry). Its size: the cluster's resource limit for its GPU type over the
GPUs per node, shared by every priority of that GPU type (`limit_group`).
"""

from __future__ import annotations

from typing import Any

from elastic_gpu.gcp import GKE_CLUSTER
from elastic_gpu.gcp.autoprovisioning.spec import auto_creates, class_labels, priority_group, priority_machine_types
from elastic_gpu.gcp.config_rules import machine_family
from elastic_gpu.gcp.reader import gce_region
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.scheduling import (
    EPHEMERAL_STORAGE,
    GKE_COMPUTE_CLASS_KEY,
    GKE_GPU_TAINT,
    GPU_RESOURCE,
    POOL_LABEL,
    Taint,
    gke_compute_class_taint,
)
from elastic_gpu.tools.offline.runner import CapturedResource, Preview
from elastic_gpu.tools.simulation.fit import NodeTemplate

COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
GIB = 2**30
GKE_SPOT_LABEL = "cloud.google.com/gke-spot"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


def gpu_limits(preview: Preview) -> dict[str, int]:
    """The GKE cluster's node auto-provisioning limit per resource type (`nvidia-l4`: 18)."""
    for c in preview.of_type(GKE_CLUSTER):
        scaling = c.inputs.get("clusterAutoscaling") or {}
        if scaling.get("enabled"):
            return {lim["resourceType"]: int(lim["maximum"]) for lim in scaling.get("resourceLimits") or []}
    return {}


def _region(preview: Preview, r: CapturedResource) -> str | None:
    for c in preview.of_type(GKE_CLUSTER):
        location = c.inputs.get("location")
        if isinstance(location, str) and location:
            return gce_region(location)
    region = preview.provider_inputs(r).get("region")
    return region if isinstance(region, str) else None


def _template(
    r: CapturedResource,
    name: str,
    i: int,
    spec: dict[str, Any],
    priority: dict[str, Any],
    limits: dict[str, int],
    region: str | None,
) -> NodeTemplate | None:
    types = priority_machine_types(priority)
    rows = [row for t in types if (row := gpu_instance_type("gcp", t))]
    if not rows:
        return None
    largest = max(rows, key=lambda row: (row.vcpus, row.memory_gib))
    gpu = priority.get("gpu") or {}
    count = int(gpu.get("count", largest.gpus))
    shared = int((gpu.get("gpuSharing") or {}).get("maxSharedClientsPerGPU") or 1)
    accelerator = str(gpu.get("type", largest.accelerator))
    spot = bool(priority.get("spot"))
    labels = class_labels(spec, priority) | {
        GKE_COMPUTE_CLASS_KEY: name,
        GKE_ACCELERATOR_LABEL: accelerator,
        "cloud.google.com/machine-family": machine_family(largest.name),
    }
    if spot:
        labels[GKE_SPOT_LABEL] = "true"
    taints = {GKE_GPU_TAINT, gke_compute_class_taint(name)}
    taints |= {Taint(t["key"], t.get("value", ""), t["effect"]) for t in priority.get("taints") or []}
    allocatable = {
        "cpu": float(largest.vcpus),
        "memory": float(largest.memory_gib * GIB),
        GPU_RESOURCE: float(count * shared),
    }
    disk = (priority.get("storage") or {}).get("bootDiskSize")
    if disk:
        allocatable[EPHEMERAL_STORAGE] = float(disk) * 1e9
    group = priority_group(name, i)
    from elastic_gpu.gcp.node_templates import GKE_RESERVE_SOURCE, gke_reserve

    return NodeTemplate(
        group=group,
        resource=f"{r.name}[{i}]",
        autoscaler_name=group,
        pool=labels.get(POOL_LABEL, name),
        capacity="spot" if spot else "on-demand",
        instance_type=largest.name,
        labels=labels,
        taints=sorted(taints),
        allocatable=allocatable,
        min_size=0,
        max_size=limits.get(accelerator, 0) // max(count, 1),
        region=region,
        accelerators=[(accelerator, count)],
        compute_class=name,
        eligible=[row.name for row in rows],
        limit_group=accelerator,
        reserved=gke_reserve(allocatable),
        reserved_source=GKE_RESERVE_SOURCE,
        template_reserves=True,
    )


def templates(preview: Preview) -> list[NodeTemplate]:
    """One template per priority of every ComputeClass that auto-creates node pools."""
    limits = gpu_limits(preview)
    out = []
    for r in preview.of_type(COMPUTE_CLASS):
        spec = r.inputs.get("spec") or {}
        if not auto_creates(spec):
            continue
        name = (r.inputs.get("metadata") or {}).get("name", r.name)
        for i, priority in enumerate(spec.get("priorities") or []):
            if (t := _template(r, name, i, spec, priority, limits, _region(preview, r))) is not None:
                out.append(t)
    return out
