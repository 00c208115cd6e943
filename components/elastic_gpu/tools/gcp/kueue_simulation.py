"""Would Kueue admit this workload through a ProvisioningRequest? The only way a queued-provisioning
node pool gets nodes (GKE node pool `queuedProvisioning`: "nodes can be only obtained through queuing
via the Cluster Autoscaler ProvisioningRequest API"); a plain pending pod never scales it.

Modelled from Kueue v0.19 (kubernetes-sigs/kueue, the pinned release line) over the captured objects:
- the workload names a LocalQueue with the label `kueue.x-k8s.io/queue-name`, in its own namespace;
- the LocalQueue's ClusterQueue exists, selects namespaces (apis/kueue/v1beta2/clusterqueue_types.go:
  a null namespaceSelector admits from no namespace, `{}` from all), and every flavor it names exists;
- the ClusterQueue's admission checks include one run by Kueue's ProvisioningRequest controller whose
  ProvisioningRequestConfig has GKE's class `queued-provisioning.gke.io`;
- the workload's total requests (each pod's requests x the pods admitted together) fit the nominal
  quota of one flavor of the resource group covering them; a requested resource no group covers is
  "unavailable in ClusterQueue" (pkg/scheduler/flavorassigner/flavorassigner.go). Borrowing, cohorts,
  quota already in use and quotaCheckStrategy are not modelled: the check is for an empty queue.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from elastic_gpu.gcp.kueue_api import PROVISIONING_CLASS, PROVISIONING_CONTROLLER, QUEUE_NAME_LABEL
from elastic_gpu.tools.offline.runner import CapturedResource, Preview
from elastic_gpu.tools.simulation.pod import PodShape, parse_quantity

KUEUE_TYPE_PREFIX = "kubernetes:kueue.x-k8s.io/"


def _objects(preview: Preview, kind: str) -> list[CapturedResource]:
    return [r for r in preview.resources if r.type.startswith(KUEUE_TYPE_PREFIX) and r.type.endswith(f":{kind}")]


def _named(preview: Preview, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
    for r in _objects(preview, kind):
        meta = r.inputs.get("metadata") or {}
        if meta.get("name") == name and (namespace is None or (meta.get("namespace") or "default") == namespace):
            return r.inputs
    return None


def _spec(obj: dict[str, Any] | None) -> dict[str, Any]:
    return (obj or {}).get("spec") or {}


def _check_names(cq_spec: dict[str, Any]) -> list[str]:
    """v1beta2 names a ClusterQueue's checks in admissionChecksStrategy (the API the library declares)."""
    return [c.get("name", "") for c in (cq_spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []]


def _provisions_queued_nodes(preview: Preview, check_name: str) -> bool:
    check = _spec(_named(preview, "AdmissionCheck", check_name))
    if check.get("controllerName") != PROVISIONING_CONTROLLER:
        return False
    params = check.get("parameters") or {}
    if params.get("kind") != "ProvisioningRequestConfig":
        return False
    config = _spec(_named(preview, "ProvisioningRequestConfig", params.get("name", "")))
    return config.get("provisioningClassName") == PROVISIONING_CLASS


def _text(value: Decimal | int) -> str:
    return f"{Decimal(value).normalize():f}"


def _quota_problem(pod: PodShape, cq_name: str, cq_spec: dict[str, Any]) -> str | None:
    wanted = {r: Decimal(str(v)) * pod.count for r, v in sorted(pod.requests.items()) if v}
    groups = cq_spec.get("resourceGroups") or []
    for resource in wanted:
        if not any(resource in (g.get("coveredResources") or []) for g in groups):
            return f"requests {resource}, which ClusterQueue {cq_name} does not cover (Kueue: unavailable)"
    for group in groups:
        asked = {r: q for r, q in wanted.items() if r in (group.get("coveredResources") or [])}
        if not asked:
            continue
        short: list[str] = []
        for flavor in group.get("flavors") or []:
            quota = {q.get("name"): parse_quantity(q.get("nominalQuota", 0)) for q in flavor.get("resources") or []}
            short = [f"{r} {_text(asked[r])} > {_text(quota.get(r, 0))}" for r in asked if asked[r] > quota.get(r, 0)]
            if not short:
                break
        if short:
            return (
                f"requests exceed ClusterQueue {cq_name}'s nominal quota for {pod.count} pod(s): "
                + ", ".join(short)
                + " (Kueue keeps the Job suspended)"
            )
    return None


def admission_problem(preview: Preview, pod: PodShape) -> str | None:
    """Why Kueue would never admit this workload through a queued-provisioning ProvisioningRequest,
    or None when it would (its quota fits an empty ClusterQueue)."""
    queue = pod.labels.get(QUEUE_NAME_LABEL)
    if not queue:
        return (
            f"no {QUEUE_NAME_LABEL} label: GKE creates queued-provisioning nodes only through a "
            "ProvisioningRequest (Kueue makes one for a queued Job), never for a plain pending pod"
        )
    local = _named(preview, "LocalQueue", queue, pod.namespace)
    if local is None:
        return f"no LocalQueue {queue!r} in namespace {pod.namespace!r}"
    cq_name = _spec(local).get("clusterQueue", "")
    cq = _named(preview, "ClusterQueue", cq_name)
    if cq is None:
        return f"LocalQueue {queue!r} points to ClusterQueue {cq_name!r}, which is not declared"
    cq_spec = _spec(cq)
    if cq_spec.get("namespaceSelector") is None:
        return f"ClusterQueue {cq_name} has no namespaceSelector: Kueue admits from no namespace"
    flavors = {f.get("name") for g in cq_spec.get("resourceGroups") or [] for f in g.get("flavors") or []}
    missing = sorted(f for f in flavors if _named(preview, "ResourceFlavor", f) is None)
    if missing:
        return f"ClusterQueue {cq_name} names ResourceFlavor(s) {', '.join(missing)}, not declared (inactive)"
    if not any(_provisions_queued_nodes(preview, c) for c in _check_names(cq_spec)):
        return (
            f"ClusterQueue {cq_name} has no ProvisioningRequest admission check of class {PROVISIONING_CLASS}: "
            "Kueue would admit the Job without asking GKE for queued-provisioning nodes"
        )
    return _quota_problem(pod, cq_name, cq_spec)


def admission_path(preview: Preview, pod: PodShape) -> str:
    """The way a queued workload gets its nodes, by the objects' names (for a workload Kueue admits)."""
    queue = pod.labels.get(QUEUE_NAME_LABEL, "")
    local = _named(preview, "LocalQueue", queue, pod.namespace)
    cq_name = _spec(local).get("clusterQueue", "")
    checks = [
        c for c in _check_names(_spec(_named(preview, "ClusterQueue", cq_name))) if _provisions_queued_nodes(preview, c)
    ]
    return (
        f"Kueue (LocalQueue {pod.namespace}/{queue} -> ClusterQueue {cq_name} -> AdmissionCheck "
        f"{', '.join(checks) or '?'}) has GKE's ProvisioningRequest ({PROVISIONING_CLASS}, flex-start/DWS) "
        "provisioned and"
    )
