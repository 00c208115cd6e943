"""spot-gpu-pool-fallback-promise: a spot GPU pool keeps its promise of a time to the on-demand fallback.

The figure is the simulation's (elastic_gpu/tools/simulation: the autoscaler's backoff machine over the
stack's declared groups), read from the same resources the policy engine hands over; the promise
is the pool's `maxMinutesToFallback`, recorded on its SpotGpuPool component.

The promise is enforced (mandatory) only where the figure's evidence is `source`: upstream code that
runs as is (the cluster-autoscaler this library deploys on EKS, Karpenter). Where it rests on a managed
service's documentation (AKS, node auto-provisioning) or on upstream code standing in for a closed build
(GKE), the advisory twin reports it, naming the evidence and what to measure on the cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pulumi_policy import (
    EnforcementLevel,
    PolicyResource,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from elastic_gpu.errors import ConfigError
from elastic_gpu.karpenter_core import RESERVED
from elastic_gpu.spot_gpu_pool import TYPE_TOKEN as SPOT_GPU_POOL
from elastic_gpu.tools.engine_props import strict_props
from elastic_gpu.tools.offline.runner import CapturedResource, Preview
from elastic_gpu.tools.simulation.backoff import GPU_NODE_READY, Group, Machine
from elastic_gpu.tools.simulation.fit import NodeTemplate
from elastic_gpu.tools.simulation.run import (
    PoolOutcome,
    machine_groups,
    pool_promises,
    simulate,
    to_fallback,
    worst_minutes,
)
from elastic_gpu.tools.simulation.timings import AutoscalerTiming, NoAutoscaler, autoscaler_settings
from elastic_gpu.workload import CONTRACT_INPUT


def preview_of(resources: Sequence[PolicyResource]) -> Preview:
    """The policy engine's resources as the simulator's captured ones. A value not known yet (a real preview)
    raises UnknownValueError where the simulation reads it, as the engine's proxy does: the rule then cannot
    judge and says so (validate_fallback_promise), while an unknown it never reads (a cluster's SSH key, a
    secret) does not stop it."""
    captured = [
        CapturedResource(
            type=r.resource_type,
            name=r.name,
            urn=r.urn,
            id=None,
            parent=r.parent.urn if r.parent is not None else None,
            custom=True,
            inputs=strict_props(r.props or {}),
            depends_on=[d.urn for d in r.dependencies or ()],
        )
        for r in resources
    ]
    return Preview(project="", stack="", resources=captured, outputs={}, config={})


def _worst(groups: list[Group], machine: Machine) -> float | None:
    return worst_minutes(to_fallback(groups, machine))


def _keeps(groups: list[Group], machine: Machine, promise: float) -> bool:
    worst = _worst(groups, machine)
    return worst is not None and worst <= promise


def fixes(outcome: PoolOutcome, settings: AutoscalerTiming) -> list[str]:
    """The knobs that would keep the promise, each worked through the same machine."""
    promise = outcome.max_minutes_to_fallback or 0.0
    machine = settings.machine
    order = [g for tier in outcome.tiers for g in tier]
    spot = [g for g in order if g.capacity == "spot"]
    groups = machine_groups(outcome.tiers)
    out = []

    def with_spot(keep: list[NodeTemplate]) -> list[Group]:
        names = {g.resource for g in keep}
        return [g for g in groups if not g.spot or g.name in names]

    keep = next((k for k in range(len(spot) - 1, 0, -1) if _keeps(with_spot(spot[:k]), machine, promise)), None)
    if keep is not None:
        out.append(f"at most {keep} spot node group(s) instead of {len(spot)} (fewer zones or instanceTypes)")
    types = list(dict.fromkeys(g.instance_type for g in spot))
    zonal = len({z for g in spot for z in g.zones}) > 1 and all(len(g.zones) == 1 for g in spot)
    if zonal:
        one_per_type = [next(g for g in spot if g.instance_type == t) for t in types]
        if _keeps(with_spot(one_per_type), machine, promise):
            out.append(f"perZone: false ({len(one_per_type)} spot node group(s) across the zones)")
    if len(types) > 1:
        one_size = [g for g in spot if g.instance_type == types[0]]
        if _keeps(with_spot(one_size), machine, promise):
            out.append(f"a single instance type ({types[0]}; one node group per type)")
    if machine.timeout_bound:
        provision = int(settings.max_node_provision)
        # Never below a GPU node's time to be Ready: the autoscaler would time out the healthy node it asked for.
        floor = -(-GPU_NODE_READY.seconds // 60)
        shorter = next(
            (
                p
                for p in range(provision - 1, floor - 1, -1)
                if _keeps(
                    groups, replace(machine, attempt=(p * 60 + machine.scan + 1, p * 60 + 2 * machine.scan)), promise
                )
            ),
            None,
        )
        if shorter is not None:
            out.append(
                f"autoscaler.maxNodeProvisionTime: {shorter}m (a failed spot group is seen only then; no less "
                f"than {floor}m, a GPU node's time to be Ready, or the autoscaler times out healthy nodes)"
            )
    return out


#: What a user can measure on their cluster to know the figure where the code is not the one that runs.
MEASURE = (
    "measure it on the cluster: the time from a pending GPU pod's creation to the autoscaler's scale-up "
    "event on the fallback group (kubectl get events --field-selector reason=TriggeredScaleUp), with the "
    "spot group out of capacity"
)


def on_demand_before_spot(outcome: PoolOutcome) -> list[str]:
    """The on-demand groups the autoscaler may ask before (or with: one tier is a draw) a spot group of the pool,
    by the cloud's names; empty when every spot group ranks first. A reserved group before spot is the pool's
    reserved tier, as meant (reservation_rules judges its rank)."""
    spot_tiers = [i for i, tier in enumerate(outcome.tiers) if any(g.capacity == "spot" for g in tier)]
    if not spot_tiers:
        return []
    return [
        g.name for tier in outcome.tiers[: spot_tiers[-1] + 1] for g in tier if g.capacity not in ("spot", RESERVED)
    ]


def _evidence_note(o: PoolOutcome, enforced: bool) -> str:
    if enforced or o.evidence is None:
        return ""
    return f" The figure's evidence is {o.evidence.kind} ({o.evidence.reference}), not code that runs as is: {MEASURE}."


def validate_fallback_promise(args: StackValidationArgs, report: ReportViolation) -> None:
    """Mandatory: the pools whose figure rests on source code that runs as is."""
    _validate(args, report, enforced=True)


def validate_fallback_promise_advisory(args: StackValidationArgs, report: ReportViolation) -> None:
    """Advisory: the pools whose figure rests on documentation or a proxy."""
    _validate(args, report, enforced=False)


#: The last stack the two rules simulated: (its resources, the preview, the settings and outcomes or the error).
#: Both rules judge the same simulation, so a gate simulates once. The offline gate hands both rules the same
#: resource list (an identity match, never a stale one: the entry holds the list); the Pulumi engine builds each
#: policy its own copy of the stack (pulumi_policy policy.py, AnalyzeStack), so the second rule finds the first
#: one's simulation by equal captured resources: the simulation reads nothing else (its preview has no project,
#: stack or config; a pool's GPU spec is a label of its node groups).
_LAST: list[tuple[object, Preview, tuple[AutoscalerTiming, list[PoolOutcome]] | Exception]] = []


def _simulated(
    resources: Sequence[PolicyResource],
) -> tuple[Preview, tuple[AutoscalerTiming, list[PoolOutcome]] | Exception]:
    if _LAST and _LAST[0][0] is resources:
        return _LAST[0][1], _LAST[0][2]
    preview = preview_of(resources)
    if _LAST:
        _, last, last_result = _LAST[0]
        if last.resources == preview.resources:
            _LAST[:] = [(resources, last, last_result)]
            return last, last_result
    result: tuple[AutoscalerTiming, list[PoolOutcome]] | Exception
    try:
        result = (autoscaler_settings(preview), simulate(preview))
    except (ConfigError, ValueError, UnknownValueError) as exc:  # NoAutoscaler is a ValueError
        result = exc
    _LAST[:] = [(resources, preview, result)]
    return preview, result


def _validate(args: StackValidationArgs, report: ReportViolation, *, enforced: bool) -> None:
    preview, result = _simulated(args.resources)
    if isinstance(result, UnknownValueError):
        # A value the simulation reads is known only after deployment: say so as CrossGuard does (the
        # engine turns this error into an advisory "can't run policy ... during preview"), not silence;
        # `pulumi up` runs the rule again with the values known.
        raise UnknownValueError(result.unknown_type_sentinel, result.props)
    urns = {
        r.inputs[CONTRACT_INPUT]["pool"]: r.urn
        for r in preview.of_type(SPOT_GPU_POOL)
        if isinstance(r.inputs.get(CONTRACT_INPUT), dict)
    }
    promised = pool_promises(preview)
    if isinstance(result, NoAutoscaler):
        return  # no cluster the simulator knows: nothing to promise about
    if isinstance(result, Exception):
        exc = result
        # A promise the rule cannot check is not kept: say so on every pool that makes one (once: mandatory).
        if not enforced:
            return
        why = "; ".join(exc.problems) if isinstance(exc, ConfigError) else str(exc)
        for pool in sorted(promised):
            report(
                f"Spot GPU pool '{pool}' promises its on-demand fallback within {promised[pool]:g} min "
                f"(maxMinutesToFallback), but the time to fallback cannot be computed: {why}. Fix the setting named.",
                urns.get(pool),
            )
        return
    settings, outcomes = result
    for o in outcomes:
        if (o.evidence is not None and o.evidence.kind == "source") != enforced:
            continue
        if (early := on_demand_before_spot(o)) and o.pool in promised:
            report(
                f"Spot GPU pool '{o.pool}' falls back to on-demand, but the autoscaler may ask its on-demand group(s) "
                f"{', '.join(early)} while spot has capacity: they rank with its spot group(s) under the expander "
                f"{' then '.join(settings.expanders) or 'default'} (from the {settings.source}). Fix: "
                "make `priority` the autoscaler's first expander, which ranks every spot group first (AKS: the "
                "cluster's autoScalerProfile.expander; `az aks update --cluster-autoscaler-profile "
                "expander=priority`).",
                urns.get(o.pool),
            )
            continue
        if not o.breaks_promise:
            continue
        worst = worst_minutes(o.minutes_to_fallback)
        got = (
            "never (the spot groups take turns leaving their backoff)"
            if worst is None
            else f"{worst:g} min after the pod's creation"
        )
        spot = len([g for tier in o.tiers for g in tier if g.capacity == "spot"])
        knobs = fixes(o, settings) or ["fewer spot node groups"]
        evidence = _evidence_note(o, enforced)
        report(
            f"Spot GPU pool '{o.pool}' promises its on-demand fallback within {o.max_minutes_to_fallback:g} min "
            f"(maxMinutesToFallback), but with all {spot} spot node group(s) out of capacity the autoscaler asks it "
            f"{got} at worst ({o.timing_source}). Fix: {'; or '.join(knobs)}; or raise "
            f"maxMinutesToFallback.{evidence}",
            urns.get(o.pool),
        )


spot_gpu_pool_fallback_promise = StackValidationPolicy(
    name="spot-gpu-pool-fallback-promise",
    description=(
        "Every spot GPU pool with an on-demand fallback reaches it, every spot group out of capacity, within its "
        "maxMinutesToFallback (the simulation of the autoscaler's backoff), where the figure rests on code that "
        "runs as is (EKS's cluster-autoscaler, Karpenter). Fix: fewer spot node groups, "
        "perZone: false, a single VM size or a shorter maxNodeProvisionTime on AKS, or a larger promise."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_fallback_promise,
)

spot_gpu_pool_fallback_promise_advisory = StackValidationPolicy(
    name="spot-gpu-pool-fallback-promise-advisory",
    description=(
        "spot-gpu-pool-fallback-promise where the simulated figure rests on a managed service's documentation "
        "(AKS, node auto-provisioning) or on upstream code standing in for a closed build (GKE): reported, not "
        "enforced, with the evidence named and what to measure on the cluster."
    ),
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=validate_fallback_promise_advisory,
)
