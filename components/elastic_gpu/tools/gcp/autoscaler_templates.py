"""GKE in the simulation: each node pool's scale-from-zero template, made from its `NodeGroupView`
(elastic_gpu/tools/simulation merges every cloud's; GKE's managed autoscaler's clocks are in
elastic_gpu/tools/gcp/autoscaler_timing.py).

- GKE (cloudprovider/gce templates.go): the machine type, the accelerators (x shared clients with
  gpuSharingConfig), node labels and taints plus GKE's own (node-pool and accelerator labels,
  the GPU taint, the queued-provisioning taint), ephemeral-storage from the boot disk. A
  queued-provisioning pool is marked `queued`: only a ProvisioningRequest scales it (`admission_problem`,
  tools/gcp/kueue_simulation.py).
"""

from __future__ import annotations

from elastic_gpu.gcp import GKE_COMPUTE_CLASS
from elastic_gpu.gcp.autoprovisioning.spec import priority_group
from elastic_gpu.scheduling import (
    EPHEMERAL_STORAGE,
    GKE_COMPUTE_CLASS_KEY,
    GKE_GPU_TAINT,
    GKE_QUEUED_TAINT,
    GPU_RESOURCE,
)
from elastic_gpu.tools.gcp.kueue_simulation import admission_path as admission_path  # the simulation asks for it here
from elastic_gpu.tools.gcp.kueue_simulation import (
    admission_problem as admission_problem,  # the simulation asks for it here
)
from elastic_gpu.tools.gcp.node_reserve import GKE_RESERVE_SOURCE, gke_reserve
from elastic_gpu.tools.node_group_view import AUTO_CREATED_GROUP, AUTOSCALED_GROUP, NodeGroupView
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.fit import NodeTemplate
from elastic_gpu.tools.simulation.pod import PodShape
from elastic_gpu.tools.simulation.templates import (
    shape,
)

GKE_NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
GKE_SPOT_LABEL = "cloud.google.com/gke-spot"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


def _node_pool_template(view: NodeGroupView) -> NodeTemplate:
    name = view.name
    machine = view.instance_types[0] if view.instance_types else "?"
    allocatable = shape("gcp", machine, view.gpu_spec)
    allocatable.pop(GPU_RESOURCE, None)
    labels = dict(view.labels) | {GKE_NODEPOOL_LABEL: name}
    taints = set(view.taints)
    for accelerator, count in view.accelerators:
        allocatable[GPU_RESOURCE] = allocatable.get(GPU_RESOURCE, 0.0) + count * view.gpu_sharing
        labels[GKE_ACCELERATOR_LABEL] = accelerator
        taints.add(GKE_GPU_TAINT)  # GKE taints GPU nodes itself
    if view.spot:
        labels[GKE_SPOT_LABEL] = "true"
    if view.queued:
        taints.add(GKE_QUEUED_TAINT)  # GKE taints queued-provisioning nodes itself
    if view.disk_bytes:
        allocatable[EPHEMERAL_STORAGE] = view.disk_bytes
    return NodeTemplate(
        name=name,
        resource=view.resource,
        autoscaler_name=name,
        pool=view.pool,
        capacity="spot" if view.spot else "on-demand",
        instance_type=machine,
        labels=labels,
        taints=sorted(taints),
        allocatable=allocatable,
        # A pool without autoscaling is no group the autoscaler grows: no room in its template.
        min_size=(view.min_size or 0) if view.autoscaled else 0,
        max_size=(view.max_size or 0) if view.autoscaled else 0,
        zones=list(view.zones),
        region=view.region,
        accelerators=list(view.accelerators),
        compute_class=view.compute_class,
        queued=view.queued,
        reserved=gke_reserve(allocatable),
        reserved_source=GKE_RESERVE_SOURCE,
        template_reserves=True,
    )


def node_templates(preview: Preview, views: list[NodeGroupView]) -> list[NodeTemplate]:
    """The node pools' templates, then the groups GKE would auto-create for each ComputeClass priority."""
    from elastic_gpu.tools.gcp.autoprovisioning.simulation import auto_created_template

    node_pools = [_node_pool_template(v) for v in views if v.kind == AUTOSCALED_GROUP]
    auto_created = [t for v in views if v.kind == AUTO_CREATED_GROUP and (t := auto_created_template(v))]
    return node_pools + auto_created


def group_order(preview: Preview, pod: PodShape) -> list[str]:
    """The groups the pod's ComputeClass (its node selector) ranks, first to last; none without one."""
    wanted = pod.node_selector.get(GKE_COMPUTE_CLASS_KEY)
    if not wanted:
        return []
    for r in preview.of_type(GKE_COMPUTE_CLASS):
        if (r.inputs.get("metadata") or {}).get("name") == wanted:
            # A priority names node pools, or (node pool auto-creation) is itself the group GKE creates.
            return [
                n
                for i, prio in enumerate((r.inputs.get("spec") or {}).get("priorities") or [])
                for n in prio.get("nodepools") or [priority_group(wanted, i)]
            ]
    return ["<no such ComputeClass>"]
