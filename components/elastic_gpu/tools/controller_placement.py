"""Can the controllers that start GPU nodes run at all? The cluster-autoscaler Deployment and the Karpenter
controller are ordinary pods: a nodeSelector, a required node affinity or a taint that no node pool of the
cluster satisfies leaves them Pending forever, and then no GPU node ever starts while every other check is green.

Read from the stack's resources (the same `StackResource`s the policy pack and the offline preview see):
each controller's pod (nodeSelector, required node affinity, tolerations) is matched with the scheduler's
filters (elastic_gpu.tools.simulation.fit) against every node pool the stack declares
(elastic_gpu/tools/node_group_view.py: its declared labels, the labels its service adds, its taints) and against
the node groups a user names (the policy's `nodeGroups` config: nodes declared outside this program). The policy
`controllers-schedulable` reports a controller that fits none; `simulate` reports it instead of figures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from elastic_gpu.scheduling import Taint
from elastic_gpu.tools.clouds import all_clouds, get_cloud
from elastic_gpu.tools.engine_props import has_unknown, plain_props
from elastic_gpu.tools.node_group_reading import as_stack, stack_pools
from elastic_gpu.tools.node_group_view import NodeGroupView, StackResource
from elastic_gpu.tools.simulation.fit import NodeTemplate, misfit
from elastic_gpu.tools.simulation.pod import PodShape, pod_shape

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
#: The image every cluster-autoscaler build carries in its name (registry.k8s.io/autoscaling/cluster-autoscaler).
AUTOSCALER_IMAGE = "cluster-autoscaler"
#: The Karpenter chart's name (oci://public.ecr.aws/karpenter/karpenter and its mirrors): the last path segment.
KARPENTER_CHART = "karpenter"
#: The chart's own scheduling defaults, which a release's `values` merge over (aws/karpenter-provider-aws
#: charts/karpenter/values.yaml: nodeSelector, affinity, tolerations): it never runs on a node Karpenter made.
KARPENTER_CHART_DEFAULTS: dict[str, Any] = {
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]}
                ]
            }
        }
    },
    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
}
#: Labels the kubelet puts on every node whose values depend on the machine (Kubernetes "Well-Known Labels,
#: Annotations and Taints"): a selector on them is not judged from the stack (an unknown value, not a mismatch).
#: node.kubernetes.io/instance-type is judged where the pool's instance types are known.
UNJUDGED_NODE_LABELS = frozenset(
    {
        "kubernetes.io/os",
        "kubernetes.io/arch",
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
    }
)
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


@dataclass
class Controller:
    """A pod that starts nodes: what it is, the resource that declares it, and its scheduling constraints."""

    kind: str  # "cluster autoscaler" | "Karpenter controller"
    name: str
    urn: str
    pod: PodShape

    def describe(self) -> str:
        parts = [f"nodeSelector {', '.join(f'{k}={v}' for k, v in sorted(self.pod.node_selector.items()))}"]
        if not self.pod.node_selector:
            parts = ["no nodeSelector"]
        for term in self.pod.affinity_terms:
            parts.append(
                "required affinity "
                + " and ".join(
                    f"{r.key} {r.operator} {list(r.values)}" if r.values else f"{r.key} {r.operator}" for r in term
                )
            )
        tolerated = [t.key or "*" for t in self.pod.tolerations]
        parts.append(f"tolerations {', '.join(tolerated)}" if tolerated else "no tolerations")
        return "; ".join(parts)


@dataclass(frozen=True)
class NamedNodeGroup:
    """A node group the stack does not declare (an existing cluster's system nodes), named by the user."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...] = ()


def controllers(resources: Iterable[StackResource]) -> list[Controller]:
    """The cluster-autoscaler Deployments and Karpenter Helm releases of the stack (one whose scheduling
    inputs are not known yet, during a real preview, is left out)."""
    found = []
    for r in resources:
        if r.resource_type not in (DEPLOYMENT, HELM_RELEASE):
            continue
        props = plain_props(r.props or {})
        if has_unknown(props):
            continue
        urn = getattr(r, "urn", "") or ""
        if r.resource_type == DEPLOYMENT:
            spec = ((props.get("spec") or {}).get("template") or {}).get("spec") or {}
            if any(AUTOSCALER_IMAGE in str(c.get("image", "")) for c in spec.get("containers") or []):
                pod = pod_shape({"kind": "Deployment", **props})
                found.append(Controller("cluster autoscaler", r.name, urn, pod))
        elif (
            r.resource_type == HELM_RELEASE
            and str(props.get("chart", "")).rstrip("/").split("/")[-1] == KARPENTER_CHART
        ):
            values = props.get("values") or {}
            spec = {
                "nodeSelector": {**KARPENTER_CHART_DEFAULTS["nodeSelector"], **(values.get("nodeSelector") or {})},
                "affinity": values.get("affinity") or KARPENTER_CHART_DEFAULTS["affinity"],
                "tolerations": values.get("tolerations", KARPENTER_CHART_DEFAULTS["tolerations"]),
            }
            pod = pod_shape({"kind": "Pod", "metadata": {"name": r.name}, "spec": spec})
            found.append(Controller("Karpenter controller", r.name, urn, pod))
    return found


def _judged(pod: PodShape, instance_types_known: bool) -> PodShape:
    """The pod's constraints on labels the stack can answer (UNJUDGED_NODE_LABELS dropped), no requests."""
    unjudged = UNJUDGED_NODE_LABELS | (set() if instance_types_known else {INSTANCE_TYPE_LABEL})
    return dataclasses.replace(
        pod,
        requests={},
        node_selector={k: v for k, v in pod.node_selector.items() if k not in unjudged},
        affinity_terms=[[r for r in term if r.key not in unjudged] for term in pod.affinity_terms],
    )


def _templates(pool: NodeGroupView) -> list[NodeTemplate]:
    """A node of the pool per instance type (the kubelet's instance-type label), with every label it carries."""
    labels = {**pool.labels, **pool.implicit_labels}
    return [
        NodeTemplate(
            name=pool.name,
            resource=pool.name,
            autoscaler_name=pool.name,
            pool=pool.pool,
            capacity="spot" if pool.spot else "on-demand",
            instance_type=t,
            labels={**labels, INSTANCE_TYPE_LABEL: t} if t else labels,
            taints=pool.all_taints,
            allocatable={},
            min_size=pool.min_size or 0,
            max_size=pool.max_size or 0,
        )
        for t in (pool.instance_types or [""])
    ]


def fits_pool(controller: Controller, pool: NodeGroupView) -> bool:
    pod = _judged(controller.pod, bool(pool.instance_types))
    return any(misfit(pod, node) is None for node in _templates(pool))


def fits_named(controller: Controller, group: NamedNodeGroup) -> bool:
    node = NodeTemplate(
        group.name,
        group.name,
        group.name,
        group.name,
        "on-demand",
        "",
        dict(group.labels),
        list(group.taints),
        {},
        0,
        0,
    )
    return misfit(_judged(controller.pod, False), node) is None


def unschedulable(
    resources: Iterable[StackResource], named: Iterable[NamedNodeGroup] = (), *, judge_elsewhere: bool = True
) -> list[tuple[Controller, str]]:
    """Each controller that fits no node pool the stack declares nor a named node group, with why.

    A stack that declares no node pool without GPUs keeps its controllers' nodes elsewhere (an existing
    cluster's system nodes): without named node groups, a controller that requires a label the kubelet does not
    put on every node (UNJUDGED_NODE_LABELS) fits no node known to have it, and its advice says how to label the
    cluster's own nodes on its cloud. `judge_elsewhere=False` (the simulation, which has no policy config to
    describe those nodes) leaves that case to the gate.
    """
    resources = as_stack(resources)  # the stack's node groups as every other rule reads them (Stack.derived)
    pools = stack_pools(resources)
    named = list(named)
    # No node pool without GPUs declared nor named: the controllers run on the cluster's own nodes, which only a
    # selector on labels no node carries unless given them can miss (an unknown node has the kubelet's labels).
    elsewhere = not named and all(p.gpu for p in pools)
    out = []
    for c in controllers(resources):
        if any(fits_pool(c, p) for p in pools) or any(fits_named(c, g) for g in named):
            continue
        if elsewhere:
            if judge_elsewhere and (required := _required_labels(c)):
                out.append((c, _unlabelled_message(c, required, _cloud_of(pools))))
            continue
        tried = [
            *(f"{p.name} (labels {_labels(p)}; taints {_taints(p.all_taints)})" for p in pools if not p.gpu),
            *(f"{g.name} (named; labels {dict(g.labels)}; taints {_taints(list(g.taints))})" for g in named),
        ]
        if gpu := sum(p.gpu for p in pools):
            tried.append(f"and {gpu} GPU pool(s)")
        out.append(
            (
                c,
                f"The {c.kind} '{c.name}' ({c.describe()}) fits no node pool: it stays Pending and no GPU node "
                f"ever starts. Pools: {'; '.join(tried)}. Give it the labels (and tolerations) of nodes it can run "
                "on (ClusterAutoscalerArgs.general_pool or node_selector); if those nodes are declared outside this "
                "program, name them in the policy config controllers-schedulable.nodeGroups "
                "([{name, labels, taints}]).",
            )
        )
    return out


def _required_labels(controller: Controller) -> dict[str, list[str]]:
    """The node labels the controller requires that the kubelet does not put on every node: its nodeSelector and
    its required affinity's `In` terms (one term: several are alternatives), judged labels only."""
    pod = _judged(controller.pod, False)
    required = {k: [v] for k, v in pod.node_selector.items()}
    terms = [t for t in pod.affinity_terms if t]
    if len(terms) == 1:
        for r in terms[0]:
            if r.operator == "In" and r.values:
                required.setdefault(r.key, list(r.values))
    return required


def _cloud_of(pools: list[NodeGroupView]) -> str | None:
    clouds = {p.cloud for p in pools}
    return clouds.pop() if len(clouds) == 1 else None


def _unlabelled_message(controller: Controller, required: dict[str, list[str]], cloud: str | None) -> str:
    labels = ",".join(f"{k}={v[0]}" for k, v in sorted(required.items()))
    clouds = [get_cloud(cloud)] if cloud else all_clouds()
    howto = [c.facts.node_label_howto for c in clouds if c.facts.node_label_howto]
    text = "; ".join(h.format(labels=labels, labels_spaced=labels.replace(",", " ")) for h in howto)
    return (
        f"The {controller.kind} '{controller.name}' ({controller.describe()}) needs nodes labelled {labels}, and no "
        "node pool the program declares nor any node group the policy config describes carries them: it stays "
        "Pending, no GPU node ever starts, and `pulumi up` times out waiting for it. Label the cluster's own "
        f"non-GPU nodes ({text}) and name them in the policy config controllers-schedulable.nodeGroups "
        "([{name, labels, taints}]), or select labels they already carry (e.g. eks.amazonaws.com/nodegroup=<group> "
        "on EKS managed nodes, kubernetes.azure.com/agentpool=<pool> on AKS, cloud.google.com/gke-nodepool=<pool> "
        "on GKE)."
    )


def _labels(pool: NodeGroupView) -> str:
    labels = {**pool.labels, **pool.implicit_labels}
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "none"


def _taints(taints: list[Taint]) -> str:
    return ", ".join(str(t) for t in taints) or "none"
