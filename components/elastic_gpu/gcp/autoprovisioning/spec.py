"""Reading a ComputeClass spec (no SDK imports: the policy pack, the simulation and the builders share it)."""

from __future__ import annotations

import re
from typing import Any

from elastic_gpu.gcp.config_rules import machine_family
from elastic_gpu.gpu_catalog import GpuInstanceType, gpu_instance_types
from elastic_gpu.scheduling import LABEL_PREFIX


def takes_gpu(row: GpuInstanceType, model: str, count: int) -> bool:
    """The machine type can carry `count` GPUs of `model` (N1 attaches 1/2/4/8, the others fix the count)."""
    return row.gpu == model and (row.gpus == count if not row.gpu_counts else count in row.gpu_counts)


def eligible_machine_types(model: str, count: int, family: str | None = None) -> list[str]:
    """The catalog's GCE machine types that can carry `count` x `model` (in `family` when given)."""
    return [
        t.name
        for t in gpu_instance_types("gcp")
        if takes_gpu(t, model, count) and (family is None or machine_family(t.name) == family)
    ]


def priority_group(compute_class: str, index: int) -> str:
    """The name a priority's auto-created group goes by in the reports: `<class>[<i>]`."""
    return f"{compute_class}[{index}]"


def auto_creates(spec: dict[str, Any]) -> bool:
    """The ComputeClass lets GKE create node pools (nodePoolAutoCreation.enabled)."""
    return bool((spec.get("nodePoolAutoCreation") or {}).get("enabled"))


def class_labels(spec: dict[str, Any], priority: dict[str, Any]) -> dict[str, str]:
    """The node labels a priority's nodes get: the class's nodePoolConfig.nodeLabels, then the priority's own
    `nodeLabels` (a field of GKE's CRD that the ComputeClass reference does not list; this library writes
    none, a user's class may)."""
    return dict((spec.get("nodePoolConfig") or {}).get("nodeLabels") or {}) | dict(priority.get("nodeLabels") or {})


def class_reservations(priority: dict[str, Any]) -> tuple[str, ...]:
    """The reservations a priority's nodes consume (`reservations.affinity: Specific`), as a node pool's
    reservationAffinity names them (`projects/<project>/reservations/<name>` for one of another project)."""
    res = priority.get("reservations") or {}
    if res.get("affinity") != "Specific":
        return ()
    return tuple(
        f"projects/{r['project']}/reservations/{r['name']}" if r.get("project") else r["name"]
        for r in res.get("specific") or []
        if r.get("name")
    )


def priority_machine_types(priority: dict[str, Any]) -> list[str]:
    """The catalog machine types a priority lets GKE create: its machineType, or its family's that carry its GPU."""
    if priority.get("machineType"):
        return [priority["machineType"]]
    gpu = priority.get("gpu") or {}
    model = next((t.gpu for t in gpu_instance_types("gcp") if t.accelerator == gpu.get("type")), None)
    if model is None or not priority.get("machineFamily"):
        return []
    return eligible_machine_types(model, int(gpu.get("count", 1)), priority["machineFamily"])


#: From this GKE version on, a ComputeClass with nodePoolAutoCreation gets node pools without cluster-level node
#: auto-provisioning, on any release channel: "In GKE version 1.33.3-gke.1136000 and later, use ComputeClasses to
#: enable node pool auto-creation without using cluster-level node auto-provisioning" (GKE "About node pool
#: auto-creation", Enablement methods, docs.cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning,
#: last updated 2026-04-10); "If your cluster is running a version earlier than GKE version 1.33.3-gke.1136000, you
#: must also enable cluster-level node auto-provisioning" (".../concepts/about-custom-compute-classes", Node pool
#: auto-creation and ComputeClasses, last updated 2026-04-13). Neither names a release channel; the Rapid channel
#: that copies of the how-to page ("Configure node pool auto-creation", Requirements) still list was the launch
#: requirement, while 1.33.3 was on Rapid only: its current Chinese copy (hl=zh-CN) names the version alone, and
#: every version GKE offers today (gcp/versions.py) is above it on every channel. (Read 2026-12-02.)
AUTO_CREATION_WITHOUT_NAP = "1.33.3-gke.1136000"
_GKE_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:-gke\.(\d+))?")


def gke_version_key(version: str) -> tuple[int, int, int, int] | None:
    """`1.33.3-gke.1136000` as (1, 33, 3, 1136000); a minor or patch alone as its lowest build (a floor)."""
    m = _GKE_VERSION.match(version)
    if m is None:
        return None
    return (int(m[1]), int(m[2]), int(m[3] or 0), int(m[4] or 0))


def version_floor(min_version: str | None) -> str:
    """The lowest version a cluster may run: its declared floor, else (a new cluster whose version is not known
    at preview) the oldest minor GKE's calendar offers today (gcp/versions.py): GKE creates no cluster below it."""
    from elastic_gpu.gcp.versions import KUBERNETES_SUPPORT

    return min_version or min((r.minor for r in KUBERNETES_SUPPORT), key=lambda m: gke_version_key(m) or (0,))


def auto_creation_needs_nap(min_version: str | None) -> bool:
    """A cluster whose version may be below AUTO_CREATION_WITHOUT_NAP (judged by its floor, the lowest it may run:
    `version_floor`; an unreadable version counts as below) needs cluster-level node auto-provisioning for a
    ComputeClass to get node pools at all. From it on, GKE creates them without, on any channel; then nothing in the
    cluster caps them (see `NO_CAP_WITHOUT_NAP`)."""
    min_version = version_floor(min_version)
    key = gke_version_key(min_version) if min_version else None
    threshold = gke_version_key(AUTO_CREATION_WITHOUT_NAP)
    return key is None or threshold is None or key < threshold


def cluster_auto_provisioning(setting: bool | None, min_version: str | None) -> bool:
    """Whether a cluster under provisioner auto-provisioning turns node auto-provisioning on: as `setting` says
    (the stack file's `cluster.nodeAutoProvisioning`), else (None) only where its version floor needs it for a
    ComputeClass to get node pools at all (`auto_creation_needs_nap`). Off, GKE creates no node pool for a Pod
    that selects no class, and no cluster-wide resource limit caps the classes' pools (`NO_CAP_WITHOUT_NAP`)."""
    return setting if setting is not None else auto_creation_needs_nap(min_version)


#: A ComputeClass's annotation with the nodes its pool plans (maxSize plus its on-demand fallback's), written by
#: SpotGpuPool: GKE reads no such field (a ComputeClass has no node limit), so it is the plan the tools price and
#: simulate, and a cap only where node auto-provisioning's limits hold it.
PLANNED_NODES_ANNOTATION = f"{LABEL_PREFIX}/planned-nodes"


#: Why node auto-provisioning is the only cap GKE applies to the node pools it creates for ComputeClasses. "These
#: cluster-level resource limits are required only if you enable node auto-provisioning in the cluster" and "GKE
#: doesn't create new nodes or node pools if the operation would exceed one of these resource limits"
#: (concepts/node-auto-provisioning,
#: Cluster-level resource limits with node auto-provisioning); a ComputeClass has no field that bounds its nodes
#: (ComputeClass CRD, tests/data/crds and datreeio/CRDs-catalog 77e49833: autoscalingPolicy holds consolidation
#: settings only; the reference's `buffers[].limits` bound spare capacity, not the pools); and the provider sends
#: limits with auto-provisioning off but "resource_limits don't work when node auto-provisioning is disabled"
#: (terraform-provider-google, resource_container_cluster.go expandClusterAutoscaling). What GKE offers instead is
#: project-wide: "Use a different method, such as quota adjustments, to control resource usage" (same page), the
#: region's GPU quota (gcp/quotas.py), which every cluster and VM of the project shares.
NO_CAP_WITHOUT_NAP = (
    "without node auto-provisioning GKE caps a ComputeClass's auto-created node pools nowhere (a ComputeClass has no "
    "node or resource limit; the cluster's resource limits apply only with node auto-provisioning on), so the pool's "
    "maxSize holds nowhere; GKE's own alternative is the project's regional GPU quota, shared by every cluster and VM "
    "of the project"
)
