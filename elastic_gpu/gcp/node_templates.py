"""GKE in the simulation: each node pool's scale-from-zero template, and GKE's managed autoscaler
(upstream defaults as upper bounds) (elastic_gpu/tools/simulation merges every cloud's).

- GKE (cloudprovider/gce templates.go): the machine type, the accelerators (x shared clients with
  gpuSharingConfig), node labels and taints plus GKE's own (node-pool and accelerator labels,
  the GPU taint, the queued-provisioning taint), ephemeral-storage from the boot disk. A
  queued-provisioning pool is marked `queued`: only a ProvisioningRequest scales it (`admission_problem`,
  gcp/kueue_simulation.py).
"""

from __future__ import annotations

from elastic_gpu.gcp import GKE_CLUSTER, GKE_COMPUTE_CLASS, GKE_NODE_POOL
from elastic_gpu.gcp.autoprovisioning.spec import priority_group
from elastic_gpu.gcp.kueue_simulation import admission_path as admission_path  # the simulation asks for it here
from elastic_gpu.gcp.kueue_simulation import admission_problem as admission_problem  # the simulation asks for it here
from elastic_gpu.gcp.reader import gce_region
from elastic_gpu.scheduling import (
    EPHEMERAL_STORAGE,
    GKE_COMPUTE_CLASS_KEY,
    GKE_GPU_TAINT,
    GKE_QUEUED_TAINT,
    GPU_RESOURCE,
    POOL_LABEL,
)
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.backoff import GCE_MIG_INSTANCES_REFRESH
from elastic_gpu.tools.simulation.fit import NodeTemplate
from elastic_gpu.tools.simulation.pod import PodShape
from elastic_gpu.tools.simulation.templates import (
    EVICTION_HARD_MEMORY,
    GIB,
    MIB,
    provider_region,
    shape,
    template_taint,
    tiered_cpu_reserve,
)
from elastic_gpu.tools.simulation.timings import (
    CA_DEFAULT_MAX_NODE_PROVISION_TIME,
    CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD,
    CA_DEFAULT_SCALE_DOWN_UNNEEDED,
    CA_DEFAULT_SCAN_INTERVAL,
    AutoscalerSettings,
    Evidence,
    early_failure,
    minutes,
    seconds,
)

GKE_NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
GKE_SPOT_LABEL = "cloud.google.com/gke-spot"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
#: GKE runs its own, closed build of the cluster autoscaler: the upstream GCE provider's clocks stand in
#: for it. What Google documents is the order: a ComputeClass's priorities in turn, the next one tried
#: immediately, with no waiting period, when a priority hits ZONE_RESOURCE_POOL_EXHAUSTED or QUOTA_EXCEEDED
#: (GKE docs, "Troubleshoot custom ComputeClass issues"; "About custom ComputeClasses"), with no time given.
GKE_EVIDENCE = Evidence(
    "proxy",
    "upstream kubernetes/autoscaler cluster-autoscaler-1.33.6 cloudprovider/gce (MIG instance errors read "
    "back at the next loop) standing in for GKE's closed build; documented: ComputeClass priorities in order, "
    "the next one tried immediately on a stockout (GKE docs, Troubleshoot custom ComputeClass issues)",
)


#: A queued-provisioning pool's nodes: what GKE documents (no time is given for the wait).
QUEUED_EVIDENCE = Evidence(
    "docs",
    "GKE docs, queued provisioning with flex-start (nodes only through a ProvisioningRequest, which waits "
    "for capacity); Kueue v0.19 ProvisioningRequest admission check",
)
GKE_RESERVE_SOURCE = "GKE kube-reserved, kernel reserve and 100Mi eviction (cloudprovider/gce templates.go:69-135)"


def gke_reserve(allocatable: dict[str, float]) -> dict[str, float]:
    """What the GCE template subtracts and a GKE node keeps (kubernetes/autoscaler cluster-autoscaler-1.33.6
    cloudprovider/gce templates.go:69-135 BuildCapacity/CalculateAllocatable): the kernel's memory
    (gce_reserved.go:90-129, COS), kube-reserved as GKE sets it in kube-env (GKE docs, "Plan node sizes":
    memory 255 MiB under 1 GiB, else 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of
    the next 112, 2% above; CPU by tiers) and the 100Mi hard eviction (gce_reserved.go:48)."""
    cpu, memory = allocatable.get("cpu", 0.0), allocatable.get("memory", 0.0)
    if cpu == float("inf") or memory == float("inf"):
        return {}
    kernel = memory / 64 + 16 * MIB + (64 * MIB if memory > 3 * GIB else 0) + (8 * MIB if memory <= 8 * GIB else 0)
    kernel += min(0.00175 * memory, 248 * MIB)
    if memory < GIB:
        kube = 255 * MIB
    else:
        kube, rest = 0.0, memory
        for size, share in ((4 * GIB, 0.25), (4 * GIB, 0.2), (8 * GIB, 0.1), (112 * GIB, 0.06), (float("inf"), 0.02)):
            part = min(rest, size)
            kube += part * share
            rest -= part
            if rest <= 0:
                break
    return {"cpu": tiered_cpu_reserve(cpu), "memory": kernel + kube + EVICTION_HARD_MEMORY}


def node_templates(preview: Preview) -> list[NodeTemplate]:
    out = []
    for np in preview.of_type(GKE_NODE_POOL):
        p = np.inputs
        node = p.get("nodeConfig") or {}
        name = p.get("name", np.name)
        machine = node.get("machineType", "?")
        allocatable = shape("gcp", machine)
        allocatable.pop(GPU_RESOURCE, None)
        labels = dict(node.get("labels") or {}) | {GKE_NODEPOOL_LABEL: name}
        taints = {
            template_taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in node.get("taints") or []
        }
        accelerators = []
        for acc in node.get("guestAccelerators") or []:
            count = int(acc.get("count", 0))
            accelerators.append((acc.get("type", ""), count))
            shared = (acc.get("gpuSharingConfig") or {}).get("maxSharedClientsPerGpu") or 1
            allocatable[GPU_RESOURCE] = allocatable.get(GPU_RESOURCE, 0.0) + count * int(shared)
            labels[GKE_ACCELERATOR_LABEL] = acc.get("type", "")
            taints.add(GKE_GPU_TAINT)  # GKE taints GPU nodes itself
        if node.get("spot"):
            labels[GKE_SPOT_LABEL] = "true"
        queued = bool((p.get("queuedProvisioning") or {}).get("enabled"))
        if queued:
            taints.add(GKE_QUEUED_TAINT)  # GKE taints queued-provisioning nodes itself
        if node.get("diskSizeGb"):
            allocatable[EPHEMERAL_STORAGE] = float(node["diskSizeGb"]) * 1e9
        scaling = p.get("autoscaling") or {}
        location = p.get("location") or ""
        out.append(
            NodeTemplate(
                group=name,
                resource=np.name,
                autoscaler_name=name,
                pool=labels.get(POOL_LABEL, name),
                capacity="spot" if node.get("spot") else "on-demand",
                instance_type=machine,
                labels=labels,
                taints=sorted(taints),
                allocatable=allocatable,
                min_size=int(scaling.get("totalMinNodeCount", scaling.get("minNodeCount", 0)) or 0),
                max_size=int(scaling.get("totalMaxNodeCount", scaling.get("maxNodeCount", 0)) or 0),
                zones=list(p.get("nodeLocations") or []),
                region=gce_region(location) if isinstance(location, str) and location else provider_region(preview, np),
                accelerators=accelerators,
                compute_class=labels.get(GKE_COMPUTE_CLASS_KEY),
                queued=queued,
                reserved=gke_reserve(allocatable),
                reserved_source=GKE_RESERVE_SOURCE,
                template_reserves=True,
            )
        )
    from elastic_gpu.gcp.autoprovisioning.simulation import templates as auto_created

    return out + auto_created(preview)


def autoscaler_settings(preview: Preview) -> AutoscalerSettings | None:
    """GKE's managed autoscaler, when the preview has a GKE cluster."""
    if not preview.of_type(GKE_CLUSTER):
        return None
    return AutoscalerSettings(
        cloud="gcp",
        # GKE's managed autoscaler has no priority expander: a ComputeClass ranks pools instead;
        # it does not document its expander, least-waste is what is modelled here.
        expanders=("least-waste",),
        priorities={},
        # GKE does not expose its scale-down timers; the upstream defaults are an upper bound
        # (the OPTIMIZE_UTILIZATION profile removes unneeded nodes sooner).
        scale_down_unneeded=minutes(CA_DEFAULT_SCALE_DOWN_UNNEEDED),
        scale_down_delay_after_add=minutes(CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD),
        max_node_provision=minutes(CA_DEFAULT_MAX_NODE_PROVISION_TIME),
        # GKE runs its own build of the autoscaler; modelled by the upstream GCE provider.
        machine=early_failure(
            seconds(CA_DEFAULT_SCAN_INTERVAL),
            seconds(CA_DEFAULT_MAX_NODE_PROVISION_TIME),
            GCE_MIG_INSTANCES_REFRESH.seconds,
            "GKE: a stockout (ZONE_RESOURCE_POOL_EXHAUSTED) is an instance error on the MIG, "
            "read back at the next loop while the group scales up",
        ),
        source="GKE managed autoscaler (upstream defaults as upper bounds)",
        evidence=GKE_EVIDENCE,
    )


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
