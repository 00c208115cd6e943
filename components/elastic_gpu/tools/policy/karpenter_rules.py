"""Karpenter NodePools (karpenter.sh/v1, on EKS and under AKS node auto-provisioning): a GPU NodePool
has limits, the GPU taint and consolidation on, and a pool's spot NodePool outweighs a separate on-demand
fallback NodePool. One NodePool allowing both capacity types is Karpenter's own fallback (spot first) and
needs no weights. The NodePool spec is Karpenter core's, whatever the provider; only nodeClassRef differs."""

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

from elastic_gpu.scheduling import GPU_NODE_LABEL, GPU_RESOURCE, GPU_TAINT, POOL_LABEL

NODE_POOL_TYPE = "kubernetes:karpenter.sh/v1:NodePool"
CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"


def _template(props: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(template metadata labels, template spec) of a NodePool's props."""
    template = (props.get("spec") or {}).get("template") or {}
    return dict((template.get("metadata") or {}).get("labels") or {}), dict(template.get("spec") or {})


def _name(props: Mapping[str, Any], fallback: str) -> str:
    return (props.get("metadata") or {}).get("name") or fallback


def is_gpu_node_pool(props: Mapping[str, Any]) -> bool:
    """Our GPU label, or the GPU taint: what makes a NodePool one for GPU pods."""
    labels, spec = _template(props)
    taints = spec.get("taints") or []
    return labels.get(GPU_NODE_LABEL) == "true" or any(t.get("key") == GPU_RESOURCE for t in taints)


def capacity_types(props: Mapping[str, Any]) -> set[str]:
    """The capacity types a NodePool allows (both when it does not say)."""
    _, spec = _template(props)
    for req in spec.get("requirements") or []:
        if req.get("key") == CAPACITY_TYPE_KEY and req.get("operator") == "In":
            return set(req.get("values") or [])
    return {"spot", "on-demand"}


def validate_gpu_node_pool(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != NODE_POOL_TYPE or not is_gpu_node_pool(args.props or {}):
        return
    props = args.props or {}
    name = _name(props, args.name)
    spec = props.get("spec") or {}
    limits = spec.get("limits") or {}
    if "nodes" not in limits and GPU_RESOURCE not in limits:
        report(
            f"GPU NodePool '{name}' has no limits.nodes or limits.{GPU_RESOURCE}: Karpenter may launch GPU nodes "
            "without bound. Set spec.limits from the pool's maxSize.",
            None,
        )
    _, template = _template(props)
    taints = {(t.get("key"), t.get("effect")) for t in template.get("taints") or []}
    if (GPU_TAINT.key, GPU_TAINT.effect) not in taints:
        report(
            f"GPU NodePool '{name}' does not taint its nodes {GPU_TAINT}: CPU pods would land on GPU nodes and keep "
            "them from consolidating. Add the taint to spec.template.spec.taints.",
            None,
        )
    disruption = spec.get("disruption") or {}
    if disruption.get("consolidateAfter", "0s") == "Never":
        report(
            f"GPU NodePool '{name}' never consolidates (consolidateAfter: Never): idle GPU nodes keep billing. "
            "Set spec.disruption.consolidateAfter to a duration such as 10m.",
            None,
        )


karpenter_gpu_node_pool = ResourceValidationPolicy(
    name="karpenter-gpu-node-pool",
    description=(
        "A Karpenter NodePool for GPU nodes sets limits (nodes or nvidia.com/gpu), taints its nodes "
        "nvidia.com/gpu:NoSchedule and consolidates (consolidateAfter is not Never)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_gpu_node_pool,
)


def validate_fallback_ordered(args: StackValidationArgs, report: ReportViolation) -> None:
    """Per pool (our pool label): every spot-only NodePool weighs more than every on-demand-only NodePool. A
    NodePool allowing both capacity types tries spot first by itself, whatever its weight."""
    pools: dict[str, list[tuple[str, int, set[str]]]] = {}
    for r in args.resources:
        if r.resource_type != NODE_POOL_TYPE or not is_gpu_node_pool(r.props or {}):
            continue
        labels, _ = _template(r.props)
        pool = labels.get(POOL_LABEL)
        if pool:
            weight = int((r.props.get("spec") or {}).get("weight") or 0)
            pools.setdefault(pool, []).append((_name(r.props, r.name), weight, capacity_types(r.props)))
    for pool, node_pools in sorted(pools.items()):
        spot = [(n, w) for n, w, caps in node_pools if caps == {"spot"}]
        on_demand = [(n, w) for n, w, caps in node_pools if caps == {"on-demand"}]
        for s_name, s_weight in spot:
            for o_name, o_weight in on_demand:
                if o_weight >= s_weight:
                    report(
                        f"Pool '{pool}': on-demand NodePool '{o_name}' (weight {o_weight}) is not below spot "
                        f"NodePool '{s_name}' (weight {s_weight}); Karpenter tries the higher weight first, so "
                        "on-demand would be bought while spot is available. Give the spot NodePool the higher weight, "
                        "or use one NodePool allowing both capacity types (Karpenter tries spot first).",
                        None,
                    )


karpenter_fallback_ordered = StackValidationPolicy(
    name="karpenter-fallback-ordered",
    description=(
        "A GPU pool's spot NodePool has a higher weight than a separate on-demand fallback NodePool "
        f"(pools grouped by the {POOL_LABEL} label, capacity by karpenter.sh/capacity-type); a NodePool "
        "allowing both capacity types tries spot first by itself."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_fallback_ordered,
)
