"""Reserved capacity the stack leaves unused (gpu-pool-uses-its-reservations, reservation-used).

A reservation (an EC2 capacity reservation or Capacity Block, an Azure capacity reservation group, a GCP
reservation) is paid whether a node runs in it or not. A GPU pool that goes to spot or on-demand while one it could
use sits idle pays twice; a reservation no group consumes, or one the autoscaler asks only after spot, is money
spent for nothing while spot has capacity.

What a group consumes is read from its node-group view (elastic_gpu/tools/node_group_view.py): `capacity_types` holding
"reserved" and the `reservations` it names, as each cloud's reader gives them. What the stack means to use comes
from the stack file's `gpuPools[].reservations`, which the offline gate puts in the rules' `reservations` config
(tools/offline/policy_run.py `with_stack_reservations`, as it puts the stack's `prices` in the cost rule's); what
the account holds, from `accountReservations` (under `pulumi preview --policy-pack`, or a gate given them). Where
the stack has a reserved group, its rank comes from the simulation (elastic_gpu/tools/simulation: the
expander's order under the cluster-autoscaler, weight and Karpenter's reserved-first choice under Karpenter).

Both rules are advisory. What they judge is money, not a promise a workload relies on; and whether a reservation
is usable at all rests on facts the stack does not hold (its state and window, other instances consuming an open
reservation, a GCP `any` affinity or an EC2 open reservation taken without being named), read only at a real
preview. Where the rank comes from the simulation, its figure rests on documentation or a proxy on AKS and GKE,
and a policy is mandatory only on source-level evidence (DESIGN.md, Evidence).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs, StackValidationPolicy

from elastic_gpu.karpenter_core import RESERVED
from elastic_gpu.tools.node_group_reading import stack_pools
from elastic_gpu.tools.node_group_view import NodeGroupView
from elastic_gpu.tools.policy._base import config, schema

#: The rules' config entries the offline gate fills from the stack file (`gpuPools[].reservations`).
RESERVATIONS_KEY = "reservations"
ACCOUNT_KEY = "accountReservations"

_SCHEMA = schema(
    reservations={
        "type": "object",
        "default": {},
        "additionalProperties": {
            "type": "object",
            "properties": {"ids": {"type": "array", "items": {"type": "string"}}, "tags": {"type": "object"}},
        },
        "description": "The reservations each GPU pool's stack config names ({pool: {ids, tags}}, the stack file's "
        "`gpuPools[].reservations`): the offline gate fills it from the stack's config; under `pulumi preview "
        "--policy-pack` give the same map here.",
    },
    accountReservations={
        "type": "array",
        "default": [],
        "items": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "instanceType": {"type": "string"},
                "zone": {"type": "string"},
                "count": {"type": "integer", "minimum": 0},
            },
            "required": ["id", "instanceType"],
        },
        "description": "Reservations the account holds (id, instanceType, zone, count), as the cloud describes "
        "them: one of a GPU pool's types, in one of its zones, that no group uses is reported.",
    },
)


def consumes(view: NodeGroupView) -> bool:
    """The group launches into reservations (its capacity types allow "reserved")."""
    return RESERVED in view.capacity_types


def _consumed(views: Iterable[NodeGroupView]) -> set[str]:
    return {r for v in views if consumes(v) for r in v.reservations}


def _by_pool(views: Iterable[NodeGroupView]) -> dict[str, list[NodeGroupView]]:
    pools: dict[str, list[NodeGroupView]] = {}
    for v in views:
        pools.setdefault(v.pool, []).append(v)
    return pools


def _named(entry: Mapping[str, Any]) -> list[str]:
    """A pool's stack-config reservations as its groups name them: ids, and tags as `tag:k=v` selector terms."""
    return [*(entry.get("ids") or []), *(f"tag:{k}={v}" for k, v in (entry.get("tags") or {}).items())]


def validate_pool_uses_reservations(args: StackValidationArgs, report: ReportViolation) -> None:
    cfg = config(args, _SCHEMA)
    views = stack_pools(args.resources, gpu_only=True)
    pools = _by_pool(views)
    consumed = _consumed(views)
    for pool, entry in sorted((cfg.get(RESERVATIONS_KEY) or {}).items()):
        named = _named(entry or {})
        if pool not in pools or not named:
            continue
        if not any(consumes(v) for v in pools[pool]):
            report(
                f"GPU pool '{pool}': its stack config names reservation(s) {', '.join(named)} "
                "(gpuPools[].reservations), but no node group of the pool launches into them: its pods go to spot "
                "and on-demand while the reservation is paid. Fix: use a provisioner that declares the reserved "
                "tier, or remove the reservations from the pool.",
                None,
            )
    for held in cfg.get(ACCOUNT_KEY) or []:
        rid, instance_type, zone = held.get("id", ""), held.get("instanceType", ""), held.get("zone")
        if rid in consumed:
            continue
        for pool, members in sorted(pools.items()):
            fits = [
                v for v in members if instance_type in v.instance_types and (not zone or not v.zones or zone in v.zones)
            ]
            # A group of the pool that launches into reservations it does not name (a tag selector the reader
            # leaves unresolved) may be using this one: not judged.
            if fits and not any(consumes(v) and not v.reservations for v in fits):
                where = f" in {zone}" if zone else ""
                count = f", {held['count']} instance(s)" if held.get("count") is not None else ""
                report(
                    f"GPU pool '{pool}' ({instance_type}{where}) skips reservation {rid} ({instance_type}{where}"
                    f"{count}), which the account holds and no node group uses: the pool buys spot or on-demand "
                    f"nodes of the type it has paid for. Fix: add {rid} to gpuPools[].reservations.ids of "
                    f"'{pool}' (with reservations.nodes at most its count).",
                    None,
                )


def _ranked_after_spot(args: StackValidationArgs) -> list[tuple[str, str, str]]:
    """(pool, reserved group, spot group before it) where the simulation asks a spot group first."""
    from elastic_gpu.errors import ConfigError
    from elastic_gpu.tools.policy.fallback_rules import preview_of
    from elastic_gpu.tools.simulation.run import simulate

    try:
        outcomes = simulate(preview_of(args.resources))
    except ConfigError:  # no autoscaler to rank the groups: nothing to judge here
        return []
    out = []
    for o in outcomes:
        order = [g for tier in o.tiers for g in tier]
        for i, g in enumerate(order):
            spot = next((s for s in order[:i] if s.capacity == "spot"), None)
            if g.capacity == RESERVED and spot is not None:
                out.append((o.pool or "-", g.name, spot.name))
    return out


def validate_reservation_used(args: StackValidationArgs, report: ReportViolation) -> None:
    cfg = config(args, _SCHEMA)
    views = stack_pools(args.resources, gpu_only=True)
    pools = _by_pool(views)
    consumed = _consumed(views)
    for v in views:
        idle = [r for r in v.reservations if r not in consumed]
        if idle:
            report(
                f"Node group '{v.name}' (pool '{v.pool}') names reservation(s) {', '.join(idle)} but does not allow "
                f"the reserved capacity type (it allows {', '.join(v.capacity_types) or 'none'}), and no other "
                "group launches into them: the reservation is paid and unused. Fix: give the pool's "
                "gpuPools[].reservations a reserved tier (reservations.nodes), or drop the reservation.",
                None,
            )
    for pool, entry in sorted((cfg.get(RESERVATIONS_KEY) or {}).items()):
        if pool not in pools and (named := _named(entry or {})):
            report(
                f"The stack config names reservation(s) {', '.join(named)} for GPU pool '{pool}', which the stack "
                "does not declare: no group uses them. Fix: name the pool as in gpuPools[].name, or drop them.",
                None,
            )
    if any(consumes(v) for v in views):
        for pool, reserved, spot in _ranked_after_spot(args):
            report(
                f"GPU pool '{pool}': reserved group '{reserved}' is asked only after spot group '{spot}' (the "
                "autoscaler's expander order, or the NodePools' weights): while spot has capacity the reservation "
                "sits idle and spot is bought on top. Fix: rank the reserved group first (the priority expander's "
                "highest level, the ComputeClass's first priority, the highest NodePool weight).",
                None,
            )


gpu_pool_uses_its_reservations = StackValidationPolicy(
    name="gpu-pool-uses-its-reservations",
    description=(
        "A GPU pool uses the reservations meant for it: those its stack config names (gpuPools[].reservations) "
        "have a node group of the pool that launches into them, and a reservation the account holds for one of a "
        "pool's instance types in one of its zones is used by some group. Advisory: skipping one costs money, not "
        "a promise, and whether a reservation is usable (its state, window, other consumers) is known only to the "
        "cloud at a real preview."
    ),
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=validate_pool_uses_reservations,
    config_schema=_SCHEMA,
)

reservation_used = StackValidationPolicy(
    name="reservation-used",
    description=(
        "Every reservation the stack names is used, and used first: a node group that names a reservation allows "
        "the reserved capacity type, the stack config names reservations only for pools the stack declares, and "
        "no reserved group is asked after a spot group of its pool (the simulation's order: priority expander, "
        "ComputeClass priorities, NodePool weights). Advisory: an idle reservation costs money, not a promise, "
        "and the order's timing rests on documentation or a proxy on AKS and GKE."
    ),
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=validate_reservation_used,
    config_schema=_SCHEMA,
)
