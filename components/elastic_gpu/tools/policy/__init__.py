"""The elastic-gpu CrossGuard rules, importable without starting a policy server.

`policy/__main__.py` builds the `PolicyPack` from `ALL_POLICIES`; tests and the
offline gate (`python -m elastic_gpu policy`) call the validators directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from elastic_gpu.tools.policy.cost_rules import cost_allocation_tags, gpu_monthly_cost_ceiling
from elastic_gpu.tools.policy.fallback_rules import (
    spot_gpu_pool_fallback_promise,
    spot_gpu_pool_fallback_promise_advisory,
)
from elastic_gpu.tools.policy.karpenter_rules import karpenter_fallback_ordered, karpenter_gpu_node_pool
from elastic_gpu.tools.policy.pack_parts import Policy, pack_clouds
from elastic_gpu.tools.policy.preflight_rules import account_preflight
from elastic_gpu.tools.policy.reservation_rules import gpu_pool_uses_its_reservations, reservation_used
from elastic_gpu.tools.policy.scaling_rules import (
    autoscaler_owned_size_ignored,
    gpu_pool_max_size_cap,
    spot_gpu_pool_on_demand_fallback,
    spot_gpu_pool_scales_to_zero,
    spot_pool_is_spot,
)
from elastic_gpu.tools.policy.scheduling_rules import (
    cluster_autoscaler_off_spot_and_gpu,
    controllers_schedulable,
    device_plugin_tolerates_gpu_taints,
    gpu_pool_noschedule_taint,
)
from elastic_gpu.tools.policy.scope import scoped
from elastic_gpu.tools.policy.security_rules import no_public_node_ips
from elastic_gpu.tools.policy.version_rules import (
    kubernetes_version_not_end_of_life,
    kubernetes_version_standard_support,
)

PACK_NAME = "elastic-gpu"

#: The cloud-neutral rules, in the order of the Rules table of policy/README.md (its `#`; #7 is three policies,
#: two of them EKS's); each cloud's `policies` part places its own rules after one of these (aws/pack).
NEUTRAL_POLICIES: list[Policy] = [
    gpu_pool_noschedule_taint,  # 1
    spot_gpu_pool_scales_to_zero,  # 2
    spot_pool_is_spot,  # 3
    device_plugin_tolerates_gpu_taints,  # 5
    autoscaler_owned_size_ignored,  # 6
    no_public_node_ips,  # 7
    cluster_autoscaler_off_spot_and_gpu,  # 8
    controllers_schedulable,  # 8: and it can run at all
    gpu_monthly_cost_ceiling,  # 9
    cost_allocation_tags,  # 10
    spot_gpu_pool_on_demand_fallback,  # 11
    gpu_pool_max_size_cap,  # 12
    kubernetes_version_standard_support,  # 13
    kubernetes_version_not_end_of_life,  # 13
    spot_gpu_pool_fallback_promise,  # 15
    spot_gpu_pool_fallback_promise_advisory,  # 15 where the figure is documentation or a proxy
    karpenter_gpu_node_pool,  # a GPU NodePool has limits, the GPU taint, consolidation
    karpenter_fallback_ordered,  # spot NodePool weighs more than its on-demand fallback
    gpu_pool_uses_its_reservations,  # a pool does not skip a reservation meant for it (advisory)
    reservation_used,  # every reservation named is used, and before spot (advisory)
    account_preflight,  # the account has what the stack needs (advisory)
]


def assemble(neutral: Sequence[Policy], placed: Iterable[tuple[str | None, Policy]]) -> list[Policy]:
    """The neutral rules, each followed by the clouds' rules placed after it (in the order given); then those
    placed after none (None). A place that names no neutral rule is a mistake in a cloud's folder."""
    after: dict[str | None, list[Policy]] = {}
    for name, policy in placed:
        after.setdefault(name, []).append(policy)
    if unknown := sorted(str(n) for n in set(after) - {p.name for p in neutral} - {None}):
        raise ValueError(f"policies placed after an unknown policy: {', '.join(unknown)}")
    return [q for p in neutral for q in (p, *after.get(p.name, ()))] + after.get(None, [])


@cache
def _pack() -> tuple[list[Policy], dict[str, Policy]]:
    # Assembled on first use, not on import: a cloud's rules import policy_rules' helpers (this package).
    placed = (pair for cloud in pack_clouds() for pair in cloud.pack().policies)
    policies = [scoped(p) for p in assemble(NEUTRAL_POLICIES, placed)]
    return policies, {p.name: p for p in policies}


def __getattr__(name: str) -> Any:
    """`ALL_POLICIES`: every rule, the clouds' (in CLOUDS order) in their places, each judging only the resources
    elastic-gpu's components declare, plus `includeResources`, minus `exemptResources` (tools/policy/scope.py);
    `POLICIES_BY_NAME`: the same by name."""
    if name == "ALL_POLICIES":
        return _pack()[0]
    if name == "POLICIES_BY_NAME":
        return _pack()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ALL_POLICIES", "NEUTRAL_POLICIES", "PACK_NAME", "POLICIES_BY_NAME", "assemble"]
