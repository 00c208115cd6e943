"""Would the pod fit a node of this template? The scheduler's filters the autoscaler runs on a
template node: TaintToleration, NodeAffinity (nodeSelector and required affinity), NodeResourcesFit."""

from __future__ import annotations

from dataclasses import dataclass, field

from elastic_gpu.scheduling import Taint
from elastic_gpu.simulation.pod import PodShape, Requirement, Toleration


@dataclass
class NodeTemplate:
    """One node group's node as its autoscaler imagines it when the group is empty."""

    group: str  #: the node group's name as the preview shows it (node group / agent pool / node pool)
    resource: str  #: the Pulumi resource name that declares it
    autoscaler_name: str  #: the name the autoscaler (and the priority expander) knows it by
    pool: str  #: our pool label (or the group name)
    capacity: str  #: "spot" | "on-demand"
    instance_type: str
    labels: dict[str, str]
    taints: list[Taint]
    allocatable: dict[str, float]
    min_size: int
    max_size: int
    zones: list[str] = field(default_factory=list)
    region: str | None = None
    accelerators: list[tuple[str, int]] = field(default_factory=list)
    #: the GKE ComputeClass it serves, if any
    compute_class: str | None = None
    #: GKE queued provisioning: nodes come only through a ProvisioningRequest (Kueue), never for a pending pod
    queued: bool = False
    #: the instance types the provisioner may launch for this group; default: [instance_type]
    eligible: list[str] = field(default_factory=list)
    #: groups with the same key share one cap (GKE auto-provisioning: the cluster's limit of their GPU
    #: type): their max_size is that cap, counted once in a worst case
    limit_group: str | None = None

    @property
    def instance_types(self) -> list[str]:
        return self.eligible or [self.instance_type]


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """core/v1 Toleration.ToleratesTaint: empty effect matches all; empty key with Exists matches all."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    return toleration.operator in ("Equal", "") and toleration.value == taint.value


def _matches(req: Requirement, labels: dict[str, str]) -> bool:
    value = labels.get(req.key)
    if req.operator == "In":
        return value is not None and value in req.values
    if req.operator == "NotIn":
        return value is None or value not in req.values
    if req.operator == "Exists":
        return value is not None
    if req.operator == "DoesNotExist":
        return value is None
    if req.operator in ("Gt", "Lt") and value is not None and req.values:
        try:
            left, right = int(value), int(req.values[0])
        except ValueError:
            return False
        return left > right if req.operator == "Gt" else left < right
    return False


def misfit(pod: PodShape, node: NodeTemplate) -> str | None:
    """Why the pod cannot run on a node of this template, or None when it fits."""
    for taint in node.taints:
        # PreferNoSchedule only scores; NoSchedule and NoExecute filter.
        if taint.effect != "PreferNoSchedule" and not any(tolerates(t, taint) for t in pod.tolerations):
            return f"untolerated taint {taint}"
    for key, value in pod.node_selector.items():
        if node.labels.get(key) != value:
            return f"nodeSelector {key}={value} (node has {node.labels.get(key)!r})"
    if pod.affinity_terms and not any(all(_matches(r, node.labels) for r in term) for term in pod.affinity_terms):
        return "required node affinity"
    for resource, wanted in sorted(pod.requests.items()):
        have = node.allocatable.get(resource, 0.0)
        if wanted > have:
            return f"insufficient {resource} (wants {wanted:g}, template has {have:g})"
    return None
