"""Would the pod fit a node of this template? The scheduler's filters the autoscaler runs on a
template node: TaintToleration, NodeAffinity (nodeSelector and required affinity), NodeResourcesFit.

Resources are checked twice. The autoscaler's template (what it decides on) holds the DaemonSet pods
that would run on a new node and a kube-proxy pod (simulator/node_info_utils.go:137-179
podsExpectedOnFreshNode; cloudprovider/utils.go:37,75 BuildKubeProxy, 100m CPU), and subtracts the
node's reservations only where its provider does (GCE: templates.go:69-135; AWS and Azure set
allocatable = capacity, aws_manager.go:291-292, azure_template.go:276-277). The node that comes
subtracts them anyway (kube-reserved and eviction as its image applies them): a pod that fits the
template but not that is scaled up for and never scheduled, and one within a few percent of it is
reported "fits only if" (`near_fit`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from elastic_gpu.scheduling import Taint
from elastic_gpu.tools.simulation.pod import PodShape, Requirement, Toleration


@dataclass
class NodeTemplate:
    """One node group's node as its autoscaler imagines it when the group is empty: made from the group's
    `NodeGroupView` (elastic_gpu/tools/node_group_view.py) and what the simulation adds (the instance type's
    resources, the node's reserve, the DaemonSets a new node runs)."""

    name: str  #: the node group's name as the preview shows it (NodeGroupView.name)
    resource: str  #: the Pulumi resource name that declares it
    autoscaler_name: str  #: the name the autoscaler (and the priority expander) knows it by
    pool: str  #: our pool label (or the group name)
    capacity: str  #: "spot" | "on-demand" | "reserved" (a reserved tier's group: backoff.RESERVED)
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
    #: the instance types it may launch (NodeGroupView.instance_types as its provisioner picks among them: GKE
    #: auto-creation per pod, smallest first); default [instance_type], the one type the autoscaler's template has
    instance_types: list[str] = field(default_factory=list)
    #: groups with the same key share one cap (NodeGroupView.shared_cap; a Karpenter NodePool split by
    #: capacity type shares its limits.nodes): their max_size is that cap, counted once in a worst case
    shared_cap: str | None = None
    #: its provisioner holds it to max_size (NodeGroupView.cap_held)
    cap_held: bool = True
    #: what the node itself keeps from `allocatable` (kube-reserved, eviction threshold, kernel), per
    #: resource, and where the figures come from
    reserved: dict[str, float] = field(default_factory=dict)
    reserved_source: str = ""
    #: does the autoscaler's template subtract `reserved` too (GCE), or only the node (AWS, Azure)?
    template_reserves: bool = False
    #: requests of the pods every new node runs: the stack's DaemonSets that would run there, kube-proxy
    daemon_requests: dict[str, float] = field(default_factory=dict)

    @property
    def shown_region(self) -> str:
        """Its region in a note: one the program leaves unknown until deployment is said so."""
        return self.region or "a region unknown until deployment"

    def __post_init__(self) -> None:
        if not self.instance_types:
            self.instance_types = [self.instance_type]


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
        have = free(node, real=False).get(resource, 0.0)
        if wanted > have:
            return (
                f"insufficient {resource} (wants {_q(resource, wanted)}, the autoscaler's template has "
                f"{_q(resource, have)}{_after(node, False)})"
            )
    real = free(node, real=True)
    for resource, wanted in sorted(pod.requests.items()):
        have = real.get(resource, 0.0)
        if wanted > have:
            return (
                f"fits the autoscaler's template but not the node: {resource} wants {_q(resource, wanted)}, "
                f"the node has {_q(resource, have)}{_after(node, True)}"
            )
    return None


#: A pod that leaves less than this share of a node's cpu or memory fits only if the node's
#: reservations and DaemonSets are no larger than modelled.
NEAR_FIT = 0.05


def free(node: NodeTemplate, *, real: bool) -> dict[str, float]:
    """What a pod can request on a new node: the autoscaler's template (real False), or the node."""
    out = dict(node.allocatable)
    for resource, value in node.daemon_requests.items():
        out[resource] = out.get(resource, 0.0) - value
    if real or node.template_reserves:
        for resource, value in node.reserved.items():
            out[resource] = out.get(resource, 0.0) - value
    return out


def near_fit(pod: PodShape, node: NodeTemplate) -> str | None:
    """ "fits only if ..." when the pod fits the node with less than NEAR_FIT of its cpu or memory left."""
    real = free(node, real=True)
    for resource in ("cpu", "memory"):
        wanted, have, total = pod.requests.get(resource, 0.0), real.get(resource, 0.0), node.allocatable.get(resource)
        if wanted and total and not math.isinf(total) and 0 <= have - wanted < NEAR_FIT * total:
            return (
                f"{node.name}: fits only if the node keeps no more than modelled ({resource}: the pod wants "
                f"{_q(resource, wanted)} of {_q(resource, have)} left{_after(node, True)})"
            )
    return None


def _q(resource: str, value: float) -> str:
    if resource == "cpu":
        return f"{value * 1000:.0f}m"
    if resource in ("memory", "ephemeral-storage"):
        return f"{value / 2**20:.0f}Mi"
    return f"{value:g}"


def _after(node: NodeTemplate, real: bool) -> str:
    parts = []
    if node.daemon_requests:
        parts.append("DaemonSets and kube-proxy")
    if node.reserved and (real or node.template_reserves):
        parts.append(f"the node's reserve ({node.reserved_source})" if node.reserved_source else "the node's reserve")
    return f" after {' and '.join(parts)}" if parts else ""
