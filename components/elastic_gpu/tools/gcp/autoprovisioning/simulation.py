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
GPUs per node, shared by every priority of that GPU type (`shared_cap`). Each is made from the
priority's `NodeGroupView` (elastic_gpu/tools/gcp/reader.py).
"""

from __future__ import annotations

from elastic_gpu.gcp.config_rules import machine_family
from elastic_gpu.scheduling import (
    EPHEMERAL_STORAGE,
    GKE_COMPUTE_CLASS_KEY,
    GKE_GPU_TAINT,
    GPU_RESOURCE,
    gke_compute_class_taint,
)
from elastic_gpu.tools.gcp.node_reserve import GKE_RESERVE_SOURCE, gke_reserve
from elastic_gpu.tools.node_group_view import NodeGroupView
from elastic_gpu.tools.simulation.fit import NodeTemplate

GIB = 2**30
GKE_SPOT_LABEL = "cloud.google.com/gke-spot"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


def auto_created_template(view: NodeGroupView) -> NodeTemplate | None:
    """The group GKE would create for one priority (`view`, largest machine type first); None when the
    catalog knows none of its machine types."""
    rows = [row for t in view.instance_types if (row := view.gpu_row(t))]
    if not rows:
        return None
    largest = rows[0]
    accelerator, count = view.accelerators[0] if view.accelerators else (str(largest.accelerator), largest.gpus)
    name = view.compute_class or view.pool
    labels = view.labels | {
        GKE_COMPUTE_CLASS_KEY: name,
        GKE_ACCELERATOR_LABEL: accelerator,
        "cloud.google.com/machine-family": machine_family(largest.name),
    }
    if view.spot:
        labels[GKE_SPOT_LABEL] = "true"
    # GKE taints the nodes it creates for the GPU and for the class (the class toleration the pods carry).
    taints = set(view.taints) | {GKE_GPU_TAINT, gke_compute_class_taint(name)}
    allocatable = {
        "cpu": float(largest.vcpus),
        "memory": float(largest.memory_gib * GIB),
        GPU_RESOURCE: float(count * view.gpu_sharing),
    }
    if view.disk_bytes:
        allocatable[EPHEMERAL_STORAGE] = view.disk_bytes
    return NodeTemplate(
        name=view.name,
        resource=view.resource,
        autoscaler_name=view.name,
        pool=view.pool,
        capacity="spot" if view.spot else "on-demand",
        instance_type=largest.name,
        labels=labels,
        taints=sorted(taints),
        allocatable=allocatable,
        min_size=0,
        max_size=view.max_size or 0,
        region=view.region,
        accelerators=[(accelerator, count)],
        compute_class=name,
        # GKE picks per pod among them, the smallest that fits: smallest first.
        instance_types=[row.name for row in sorted(rows, key=lambda row: (row.vcpus, row.memory_gib))],
        shared_cap=view.shared_cap,
        cap_held=view.cap_held,
        reserved=gke_reserve(allocatable),
        reserved_source=GKE_RESERVE_SOURCE,
        template_reserves=True,
    )
