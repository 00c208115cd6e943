"""GPU taints, device-plugin tolerations, where the cluster autoscaler runs, and that the autoscaler and the
Karpenter controller can run at all (gpu-pool-noschedule-taint, device-plugin-tolerates-gpu-taints,
cluster-autoscaler-off-spot-and-gpu, controllers-schedulable)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from elastic_gpu.scheduling import (
    AKS_SPOT_TAINT,
    CAPACITY_LABEL,
    CAPACITY_ON_DEMAND,
    GPU_TAINT,
    NODE_CLASS_GENERAL,
    NODE_CLASS_LABEL,
    Taint,
)
from elastic_gpu.tools.controller_placement import NamedNodeGroup, unschedulable
from elastic_gpu.tools.node_group_reading import gpu_pools_of
from elastic_gpu.tools.policy._base import config, known_gpu_pools, props_of, schema

# --- 1. gpu-pool-noschedule-taint ------------------------------------------------------------

_TAINT_SCHEMA = schema(
    taintKeys={
        "type": "array",
        "items": {"type": "string"},
        "default": [GPU_TAINT.key],
        "description": "Taint keys that count as the GPU taint (any one, with effect NoSchedule).",
    }
)


def validate_gpu_taint(args: ResourceValidationArgs, report: ReportViolation) -> None:
    keys = set(config(args, _TAINT_SCHEMA)["taintKeys"])
    for pool in gpu_pools_of(args.resource_type, args.name, args.props):
        if not any(t.key in keys and t.effect == "NoSchedule" for t in pool.taints):
            have = ", ".join(str(t) for t in pool.taints) or "none"
            report(
                f"GPU pool '{pool.name}' has no NoSchedule GPU taint (taints: {have}), so CPU pods can land on "
                f"its expensive nodes and keep them from scaling to zero. Add the taint {GPU_TAINT} to the pool.",
                None,
            )


gpu_pool_noschedule_taint = ResourceValidationPolicy(
    name="gpu-pool-noschedule-taint",
    description=(
        f"Every GPU node pool carries a NoSchedule GPU taint ({GPU_TAINT}) so CPU pods never land on GPU nodes. "
        "Fix: add the taint to the node group / agent pool / node pool (SpotGpuPool does it for you)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=_TAINT_SCHEMA,
    validate=validate_gpu_taint,
)

# --- 5. device-plugin-tolerates-gpu-taints ---------------------------------------------------


def is_device_plugin(resource_type: str, props: Mapping[str, Any]) -> bool:
    if resource_type != "kubernetes:apps/v1:DaemonSet":
        return False
    spec = ((props.get("spec") or {}).get("template") or {}).get("spec") or {}
    images = [c.get("image", "") for c in spec.get("containers") or []]
    name = (props.get("metadata") or {}).get("name", "")
    return any("k8s-device-plugin" in i for i in images) or "nvidia-device-plugin" in name


def tolerates(tolerations: list[Mapping[str, Any]], taint: Taint) -> bool:
    """Kubernetes' matching: empty key + Exists matches all; empty effect matches every effect."""
    for t in tolerations:
        key, op, effect = t.get("key", ""), t.get("operator", "Equal"), t.get("effect", "")
        if effect and effect != taint.effect:
            continue
        if not key and op == "Exists":
            return True
        if key == taint.key and (op == "Exists" or t.get("value", "") == taint.value):
            return True
    return False


def validate_device_plugin_tolerations(args: StackValidationArgs, report: ReportViolation) -> None:
    taints: dict[Taint, list[str]] = {}
    for r in args.resources:
        for pool in known_gpu_pools(r, args.resources):
            for t in pool.all_taints:
                if t.effect in ("NoSchedule", "NoExecute"):
                    taints.setdefault(t, []).append(pool.name)
    for r in args.resources:
        props = props_of(r)
        if not is_device_plugin(r.resource_type, props):
            continue
        pod = ((props.get("spec") or {}).get("template") or {}).get("spec") or {}
        tolerations = list(pod.get("tolerations") or [])
        for taint, pools in sorted(taints.items()):
            if not tolerates(tolerations, taint):
                report(
                    f"The NVIDIA device plugin '{r.name}' does not tolerate the taint {taint} of GPU pool(s) "
                    f"{', '.join(sorted(set(pools)))}: it will not run there and the nodes never advertise "
                    f"nvidia.com/gpu. Add the toleration {{key: {taint.key}, operator: Exists, effect: "
                    f"{taint.effect}}} (NvidiaDevicePlugin derives them from the pools' taints).",
                    r.urn,
                )


device_plugin_tolerates_gpu_taints = StackValidationPolicy(
    name="device-plugin-tolerates-gpu-taints",
    description=(
        "The NVIDIA device plugin DaemonSet tolerates every NoSchedule/NoExecute taint of every GPU pool in the "
        "stack (including the AKS spot taint and GKE's GPU taint). Fix: derive its tolerations from the pools' "
        "taints, e.g. elastic_gpu.scheduling.tolerations_for."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_device_plugin_tolerations,
)

# --- 8. cluster-autoscaler-off-spot-and-gpu --------------------------------------------------

_CA_SCHEMA = schema(
    onDemandSelectors={
        "type": "object",
        "default": {CAPACITY_LABEL: CAPACITY_ON_DEMAND, "eks.amazonaws.com/capacityType": "ON_DEMAND"},
        "description": "Node labels (any one) that pin a pod to on-demand, non-GPU nodes.",
    },
    generalSelectors={
        "type": "object",
        "default": {NODE_CLASS_LABEL: NODE_CLASS_GENERAL},
        "description": "Node labels (any one) that pin a pod to the general (non-GPU) pool.",
    },
)

_FORBIDDEN_TOLERATIONS = (GPU_TAINT, AKS_SPOT_TAINT)


def _required_labels(pod: Mapping[str, Any]) -> dict[str, set[str]]:
    """Label values a pod requires: nodeSelector plus required node affinity `In` terms (all terms)."""
    req: dict[str, set[str]] = {k: {v} for k, v in (pod.get("nodeSelector") or {}).items()}
    affinity = ((pod.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = affinity.get("nodeSelectorTerms") or []
    for term in terms[:1] if len(terms) == 1 else []:
        for e in term.get("matchExpressions") or []:
            if e.get("operator") == "In":
                req.setdefault(e["key"], set()).update(e.get("values") or [])
    return req


def validate_autoscaler_placement(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != "kubernetes:apps/v1:Deployment":
        return
    pod = ((args.props.get("spec") or {}).get("template") or {}).get("spec") or {}
    images = [c.get("image", "") for c in pod.get("containers") or []]
    if not any("cluster-autoscaler" in i for i in images):
        return
    cfg = config(args, _CA_SCHEMA)
    required = _required_labels(pod)

    def pinned(selectors: Mapping[str, str]) -> bool:
        return any(required.get(k) == {v} for k, v in selectors.items())

    if not pinned(cfg["onDemandSelectors"]):
        report(
            f"The cluster autoscaler '{args.name}' can be scheduled onto spot nodes: a reclaimed spot node takes the "
            f"autoscaler down with it. Pin it with a nodeSelector such as {CAPACITY_LABEL}={CAPACITY_ON_DEMAND}.",
            None,
        )
    # GPU pools carry the NoSchedule GPU taint (gpu-pool-noschedule-taint): a pod that does not tolerate it
    # stays off them even when pinned only to the cluster's own on-demand nodes (an existing cluster's system
    # nodes).
    if not pinned(cfg["generalSelectors"]) and tolerates(list(pod.get("tolerations") or []), GPU_TAINT):
        report(
            f"The cluster autoscaler '{args.name}' can be scheduled onto GPU nodes, keeping them from scaling to "
            f"zero. Pin it with a nodeSelector {NODE_CLASS_LABEL}={NODE_CLASS_GENERAL}.",
            None,
        )
    for t in _FORBIDDEN_TOLERATIONS:
        if tolerates(list(pod.get("tolerations") or []), t):
            report(
                f"The cluster autoscaler '{args.name}' tolerates {t}, so it may run on GPU or spot nodes. "
                "Remove that toleration.",
                None,
            )


cluster_autoscaler_off_spot_and_gpu = ResourceValidationPolicy(
    name="cluster-autoscaler-off-spot-and-gpu",
    description=(
        "The cluster-autoscaler Deployment (where it runs as a workload) is pinned to on-demand nodes "
        "(onDemandSelectors) and tolerates neither the GPU taint nor the spot taint, so it stays off spot and "
        "GPU nodes. Fix: give it a nodeSelector for on-demand nodes, e.g. the general pool's "
        f"({CAPACITY_LABEL}={CAPACITY_ON_DEMAND}, {NODE_CLASS_LABEL}={NODE_CLASS_GENERAL})."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=_CA_SCHEMA,
    validate=validate_autoscaler_placement,
)

# --- controllers-schedulable -----------------------------------------------------------------

_PLACEMENT_SCHEMA = schema(
    nodeGroups={
        "type": "array",
        "default": [],
        "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "taints": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "key": {"type": "string"},
                            "value": {"type": "string"},
                            "effect": {"type": "string"},
                        },
                        "required": ["key", "effect"],
                    },
                },
            },
            "required": ["name", "labels"],
        },
        "description": "Node groups the stack does not declare (an existing cluster's own nodes) that the "
        "cluster autoscaler or the Karpenter controller may run on: name, labels and taints of their nodes.",
    }
)


def named_node_groups(entries: list[Mapping[str, Any]]) -> list[NamedNodeGroup]:
    return [
        NamedNodeGroup(
            name=str(e["name"]),
            labels={str(k): str(v) for k, v in (e.get("labels") or {}).items()},
            taints=tuple(Taint(t["key"], t.get("value", ""), t["effect"]) for t in e.get("taints") or []),
        )
        for e in entries
    ]


def validate_controllers_schedulable(args: StackValidationArgs, report: ReportViolation) -> None:
    named = named_node_groups(config(args, _PLACEMENT_SCHEMA)["nodeGroups"])
    for controller, message in unschedulable(args.resources, named):
        report(message, controller.urn or None)


controllers_schedulable = StackValidationPolicy(
    name="controllers-schedulable",
    description=(
        "The cluster-autoscaler Deployment and the Karpenter controller fit a node pool the stack declares (its "
        "labels, the labels its service adds, its taints) or a node group named in `nodeGroups`: otherwise they "
        "stay Pending and no GPU node ever starts. Fix: pin them to nodes that exist (general_pool, or the labels "
        "of the cluster's own nodes), or name those nodes in this policy's config."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=_PLACEMENT_SCHEMA,
    validate=validate_controllers_schedulable,
)
