"""The simulation: for each GPU pool's own workload (or a given pod), which groups it reaches,
in which order, how long until the fallback, until the pool is back to zero, and the worst case."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

from elastic_gpu.errors import ConfigError
from elastic_gpu.karpenter_core import RESERVED
from elastic_gpu.prices import HOURS_PER_MONTH
from elastic_gpu.scheduling import GPU_RESOURCE
from elastic_gpu.spot_gpu_pool import PROMISE_INPUT
from elastic_gpu.spot_gpu_pool import TYPE_TOKEN as SPOT_GPU_POOL
from elastic_gpu.tools.clouds import CloudTools, get_cloud
from elastic_gpu.tools.cost import Overrides, node_price, smallest_fit
from elastic_gpu.tools.offline.price_overrides import price_overrides
from elastic_gpu.tools.offline.runner import Preview, reads_preview
from elastic_gpu.tools.simulation.backoff import (
    CONSTANTS,
    MAX_SIZE_SKIP,
    POD_WAIT,
    SPOT_RETURNS_AFTER,
    Group,
    Machine,
    Span,
    first_node_after_return,
    span,
)
from elastic_gpu.tools.simulation.expanders import Tier, rank
from elastic_gpu.tools.simulation.fit import NodeTemplate, misfit, near_fit
from elastic_gpu.tools.simulation.pod import PodShape, pod_shape
from elastic_gpu.tools.simulation.templates import node_templates
from elastic_gpu.tools.simulation.timings import AutoscalerTiming, Evidence, NoAutoscaler, autoscaler_settings
from elastic_gpu.workload import CONTRACT_INPUT, WorkloadContract, job_manifest

SCENARIO_ALL_OUT = "all spot groups out of capacity"
SCENARIO_ONE_ZONE = "one zone has spot capacity"
#: a scenario's name where the autoscaler is not zone-aware (AKS): the zone's shortage can fail a
#: multi-zone group whole
SCENARIO_ZONAL_SHORTAGE = "one zone has spot capacity (not zone-aware)"
SCENARIO_RETURNS = f"spot comes back after {SPOT_RETURNS_AFTER // 60} min"
#: where no spot group is in a zone (regional pools): the spot groups have capacity
SCENARIO_SPOT_HAS_CAPACITY = "spot has capacity"
#: A pool with a reserved tier: its reservation has room, so its reserved group is asked and delivers (a reserved
#: node in its window is provisioned like an on-demand node of its type: no spot exhaustion, no backoff). Every
#: other scenario of such a pool is "the reservation is full": its reserved groups are at their max size, which
#: the autoscaler skips as it skips a group in backoff (backoff.MAX_SIZE_SKIP), and the spot and on-demand
#: figures are those of the pool without them.
SCENARIO_RESERVED_ROOM = "the reservation has room"
#: The unkind case: the reserved group is asked but its launch fails (a Capacity Block outside its window, a
#: reservation taken by other instances): it fails and is backed off like a spot group without capacity, then
#: spot (with capacity) is asked.
SCENARIO_RESERVED_FAILS = "reserved launch fails, spot has capacity"


@dataclass(frozen=True)
class Minutes:
    """Minutes from the pending pod's creation, best and worst; ``max`` None: some run never gets there."""

    min: float
    max: float | None

    @classmethod
    def of(cls, s: Span) -> Minutes:
        return cls(round(s.best / 60, 2), None if s.worst is None else round(s.worst / 60, 2))

    def to_json(self) -> dict[str, float | str]:
        return {"min": self.min, "max": "never" if self.max is None else self.max}

    def __str__(self) -> str:
        if self.max is None:
            return f"{self.min:g} min to never"
        return f"{self.min:g} min" if self.max == self.min else f"{self.min:g} to {self.max:g} min"


#: a figure: minutes (best, worst), "never", or None where it does not apply (no fallback)
Figure = Minutes | Literal["never"] | None


def _figure_json(f: Figure) -> Any:
    return f.to_json() if isinstance(f, Minutes) else f


def _figure_text(f: Figure) -> str:
    return "-" if f is None else str(f)


def worst_minutes(f: Figure) -> float | None:
    """The figure's worst case in minutes; None for never (or no figure)."""
    return f.max if isinstance(f, Minutes) else None


@dataclass(frozen=True)
class PathStep:
    """One tier of a pool's path (reserved, spot, on-demand): the first group of that capacity the pod reaches,
    the minutes until it is asked in the scenario that takes the pod there, and what the figure rests on."""

    capacity: str
    group: str  #: the cloud's name of the group (as `preview` shows it)
    scenario: str  #: the scenario in which this tier is where the pod's node comes from
    minutes: Figure
    evidence: str  #: the class and reference of the timing model (the pool's `evidence`)
    #: the upstream rule the step rests on besides the timing model (a full reservation skipped; Karpenter's
    #: reserved-first choice), file and line at the tag; "" when none
    rule: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity,
            "group": self.group,
            "scenario": self.scenario,
            "minutes": _figure_json(self.minutes),
            "evidence": self.evidence,
            "rule": self.rule,
        }

    def __str__(self) -> str:
        return f"{self.capacity:<10} {self.group}: {_figure_text(self.minutes)} ({self.scenario})"


@dataclass
class PoolOutcome:
    pool: str | None
    pod: str
    reaches: bool
    reason: str | None
    #: the groups tried, best first, as tiers of equals (the autoscaler draws among equals)
    tiers: list[Tier]
    first_choice: str | None
    fallback: str | None
    #: scenario "all spot groups out of capacity": until the fallback is asked
    minutes_to_fallback: Figure
    minutes_to_zero: float
    worst_case_nodes: int
    worst_case_monthly_usd: float | None
    #: what the worst case could not price exactly (spot priced as on-demand, or nothing)
    price_notes: list[str] = field(default_factory=list)
    #: until a group that delivers is asked, over the scenarios (node boot time not included)
    minutes_to_first_node: Figure = None
    #: the figures per scenario: first node
    scenarios: dict[str, Figure] = field(default_factory=dict)
    #: the pool's promise (maxMinutesToFallback) and where the timing model comes from
    max_minutes_to_fallback: float | None = None
    timing_source: str = ""
    #: the instance types the groups the pod reaches may launch (one per node group under the
    #: cluster-autoscaler; a ComputeClass priority's family under GKE auto-provisioning; every type of its
    #: NodePools under Karpenter)
    instance_types: list[str] = field(default_factory=list)
    #: what the timing figures rest on (source, docs or proxy, with the reference)
    evidence: Evidence | None = None
    #: per regime (AKS: a VM that fails to provision, a scale-set-level error), its figures:
    #: {"to fallback": ..., scenario: ...}; empty when the autoscaler has one regime
    regimes: dict[str, dict[str, Figure]] = field(default_factory=dict)
    #: the cloud's names of the first choice and the fallback (as `preview` shows them)
    first_choice_group: str | None = None
    fallback_group: str | None = None
    #: a group the pod fits only if the node's reservations are smaller than modelled ("fits only if ...")
    fit_notes: list[str] = field(default_factory=list)
    #: queued provisioning (GKE DWS): nodes come when the queue admits the workload, with no bound
    queued: str | None = None
    #: the worst case's nodes priced as the smallest type of each group that fits the pod (what a provisioner
    #: that sizes nodes per pod, GKE node pool auto-creation, launches); the worst case prices the largest
    expected_monthly_usd: float | None = None
    expected_instance_types: list[str] = field(default_factory=list)
    #: a pool with a reserved tier: its path reserved -> spot -> on-demand, a `PathStep` per capacity type it
    #: reaches, each with its time and what the time rests on; empty for a pool without reserved groups
    path: list[PathStep] = field(default_factory=list)

    @property
    def breaks_promise(self) -> bool:
        """Has a fallback whose simulated worst time exceeds the pool's promise (or never comes)."""
        if self.fallback is None or self.max_minutes_to_fallback is None or self.minutes_to_fallback is None:
            return False
        worst = worst_minutes(self.minutes_to_fallback)
        return worst is None or worst > self.max_minutes_to_fallback

    def to_json(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "pod": self.pod,
            "reaches": self.reaches,
            "reason": self.reason,
            "first_choice": self.first_choice,
            "first_choice_ties": [g.resource for g in self.tiers[0]] if self.tiers else [],
            "fallback": self.fallback,
            "order": [[g.resource for g in tier] for tier in self.tiers],
            "first_choice_group": self.first_choice_group,
            "fallback_group": self.fallback_group,
            "evidence": self.evidence.to_json() if self.evidence else None,
            "minutes_to_fallback": _figure_json(self.minutes_to_fallback),
            "minutes_to_fallback_evidence": self.evidence.kind
            if self.evidence and self.minutes_to_fallback is not None
            else None,
            "minutes_to_fallback_source": self.timing_source if self.minutes_to_fallback is not None else None,
            "breaks_promise": self.breaks_promise,
            "max_minutes_to_fallback": self.max_minutes_to_fallback,
            "max_minutes_to_fallback_source": f"SpotGpuPool input {PROMISE_INPUT}"
            if self.max_minutes_to_fallback is not None
            else None,
            "minutes_to_first_node": _figure_json(self.minutes_to_first_node),
            "minutes_to_first_node_evidence": self.evidence.kind
            if self.evidence and self.minutes_to_first_node is not None
            else None,
            "minutes_to_first_node_source": (self.timing_source + "; node boot time not included")
            if self.minutes_to_first_node is not None
            else None,
            "scenarios": {k: _figure_json(v) for k, v in self.scenarios.items()},
            "regimes": {r: {k: _figure_json(v) for k, v in f.items()} for r, f in self.regimes.items()},
            "queued": self.queued,
            "fit_notes": self.fit_notes,
            "minutes_to_zero": self.minutes_to_zero,
            "minutes_to_zero_evidence": self.evidence.kind if self.evidence else None,
            "instance_types_eligible": len(self.instance_types),
            "instance_types": self.instance_types,
            "worst_case_nodes": self.worst_case_nodes,
            "worst_case_monthly_usd": None
            if self.worst_case_monthly_usd is None
            else round(self.worst_case_monthly_usd, 2),
            "expected_monthly_usd": None if self.expected_monthly_usd is None else round(self.expected_monthly_usd, 2),
            "expected_instance_types": self.expected_instance_types,
            "price_notes": self.price_notes,
            # only for a pool with a reserved tier, so every other pool's JSON reads as before
            **({"path": [step.to_json() for step in self.path]} if self.path else {}),
        }


# --- what the simulation may ask of a cloud beyond its timing and templates: optional capabilities, which a
# cloud's tools implement too (tools/<cloud>/cloud.py) and the simulation checks with isinstance


@runtime_checkable
class OwnProvisioner(Protocol):
    """A provisioner of the cloud's own beside the cluster-autoscaler (EKS: Karpenter; AKS: node
    auto-provisioning), which the simulation models for the pods its objects take."""

    def simulate_pod(
        self, preview: Preview, pod: PodShape, region: str | None, pool: str | None, promise: float | None
    ) -> PoolOutcome | None:
        """The outcome of `pod` under the provisioner's objects in the preview; None when the preview has
        none (the autoscaler's model runs)."""
        ...


@runtime_checkable
class QueueAdmission(Protocol):
    """A queue in front of some of the cloud's groups (GKE: Kueue and queued provisioning): the simulation
    scales a `queued` group only for what the queue admits."""

    def queued_evidence(self) -> Evidence:
        """What a queued group's figure rests on."""
        ...

    def admission_problem(self, preview: Preview, pod: PodShape) -> str | None:
        """Why the queue would never admit the pod; None when it would."""
        ...

    def admission_path(self, preview: Preview, pod: PodShape) -> str:
        """The way an admitted workload gets its nodes, by the objects' names."""
        ...


@runtime_checkable
class GroupOrder(Protocol):
    """A ranking of groups a pod itself selects (GKE: its ComputeClass's priorities)."""

    def group_order(self, preview: Preview, pod: PodShape) -> list[str]:
        """The groups the pod's own selector ranks, first to last; empty without one."""
        ...


def pool_promises(preview: Preview) -> dict[str, float]:
    """Each SpotGpuPool's maxMinutesToFallback, as the component recorded it."""
    out = {}
    for r in preview.of_type(SPOT_GPU_POOL):
        contract, promise = r.inputs.get(CONTRACT_INPUT), r.inputs.get(PROMISE_INPUT)
        if isinstance(contract, dict) and isinstance(promise, (int, float)):
            out[contract["pool"]] = float(promise)
    return out


def pool_contracts(preview: Preview) -> list[WorkloadContract]:
    """Every SpotGpuPool's workload contract, as the component recorded it."""
    return [
        WorkloadContract.from_json(r.inputs[CONTRACT_INPUT])
        for r in preview.of_type(SPOT_GPU_POOL)
        if isinstance(r.inputs.get(CONTRACT_INPUT), dict)
    ]


def _worst_case(
    groups: list[NodeTemplate],
    cloud: str,
    overrides: Overrides | None = None,
    types_of: Callable[[NodeTemplate], list[str]] = lambda g: g.instance_types,
) -> tuple[int, float | None, list[str]]:
    """Every group at its max, each priced as the dearest of `types_of(group)` (default: every type it may
    launch) and of its capacities."""
    # Groups that share a cap (shared_cap) count it once, at the dearest of them and of their types.
    capped: dict[str, list[NodeTemplate]] = {}
    for g in groups:
        if g.shared_cap is not None:
            capped.setdefault(g.shared_cap, []).append(g)
    units = [[g] for g in groups if g.shared_cap is None] + list(capped.values())
    nodes = sum(unit[0].max_size for unit in units)
    total, notes = 0.0, []
    for unit in units:
        hourlies = []
        for g in unit:
            for instance_type in types_of(g):
                price = node_price(cloud, g.region, instance_type, g.accelerators, overrides)
                hourly = price.hourly(g.capacity == "spot")
                if hourly is None and price.on_demand is not None:
                    hourly = price.on_demand  # spot never costs more: an upper bound
                    notes.append(f"{g.name}: no spot price for {price.label} in {g.shown_region}, priced on-demand")
                if hourly is None:
                    notes.append(f"{g.name}: no price for {', '.join(price.missing)} in {g.shown_region}")
                    return nodes, None, notes
                hourlies.append(hourly)
        if len(unit) > 1 or len(types_of(unit[0])) > 1:
            notes.append(
                f"{', '.join(g.name for g in unit)}: {unit[0].max_size} nodes in all ("
                + (
                    "the cap they share"
                    if unit[0].cap_held
                    else "their pool's plan, which nothing in the cluster holds them to: without node "
                    "auto-provisioning only the project's regional GPU quota bounds them"
                )
                + "), each priced as the dearest of their instance types and capacities"
            )
        total += unit[0].max_size * max(hourlies) * HOURS_PER_MONTH
    return nodes, total, notes


def _smallest_fit(cloud: str, group: NodeTemplate, pod: PodShape) -> str:
    """The smallest type the group may launch that holds the pod's CPU and memory (its node template's
    type when the catalog knows none that fits)."""
    return smallest_fit(cloud, group.instance_types, pod.requests) or group.instance_type


def _blocked(pod: PodShape, group: NodeTemplate, kueue: str | None) -> str | None:
    """Why the pod cannot make this group scale up: the scheduler's filters, then, for a
    queued-provisioning group, why Kueue would never request its nodes (None: it can)."""
    if reason := misfit(pod, group):
        return reason
    return f"queued provisioning: {kueue}" if group.queued and kueue else None


def simulate_pod(
    preview: Preview,
    pod: PodShape,
    templates: list[NodeTemplate],
    settings: AutoscalerTiming,
    pool: str | None = None,
    promise: float | None = None,
    candidates: Sequence[NodeTemplate] | None = None,
) -> PoolOutcome:
    """`candidates`: the templates the pod's nodeSelector may select (all when None; LabelIndex). The cloud is the
    one whose autoscaler `settings` times (an entry of its own: `simulate` and the fallback policy call it)."""
    cloud = get_cloud(settings.cloud)
    # A queued group (GKE queued provisioning) scales only for what its cloud's queue admits (Kueue on GKE).
    queue = cloud if isinstance(cloud, QueueAdmission) else None
    kueue = queue.admission_problem(preview, pod) if queue and any(t.queued for t in templates) else None

    # A group the autoscaler does not list is never scaled by it, whatever fits there.
    def listed(t: NodeTemplate) -> bool:
        return settings.groups is None or t.autoscaler_name in settings.groups

    scaled = [t for t in (templates if candidates is None else candidates) if listed(t)]
    fits = [t for t in scaled if _blocked(pod, t, kueue) is None]
    # The groups the pod's own selector ranks (GKE: its ComputeClass's priorities), from its cloud's folder.
    ranked = cloud.group_order(preview, pod) if isinstance(cloud, GroupOrder) else []
    tiers = rank(pod, fits, settings.expanders, settings.priorities, ranked)
    order = [g for tier in tiers for g in tier]
    reached_pool = pool or (order[0].pool if order else None)
    own = [t for t in templates if t.pool == reached_pool]
    # Priced as the preview prices them: the table, and the program's `elastic-gpu:prices` overrides.
    nodes, monthly, notes = _worst_case(own, settings.cloud, price_overrides(preview))
    # Expected: where a group may launch several types, the smallest that fits the pod (GKE auto-creation).
    expected_types = {g.name: _smallest_fit(settings.cloud, g, pod) for g in own}
    _, expected, _ = _worst_case(own, settings.cloud, price_overrides(preview), lambda g: [expected_types[g.name]])
    if not order:
        why = "; ".join(
            f"{t.name}: {_blocked(pod, t, kueue) if listed(t) else 'not a group the autoscaler lists (--nodes)'}"
            for t in (own or templates)
        )
        return PoolOutcome(
            reached_pool,
            pod.name,
            False,
            f"fits no node group ({why})",
            [],
            None,
            None,
            None,
            settings.minutes_to_zero,
            nodes,
            monthly,
            notes,
            expected_monthly_usd=expected,
            expected_instance_types=sorted(set(expected_types.values())),
        )
    first = order[0]
    # The fallback is judged where the reservation is full (its groups at max size are skipped): spot, then on-demand.
    after = [g for g in order if g.capacity != RESERVED] or order
    fallback = next((g for g in after if g.capacity != "spot"), None) if after[0].capacity == "spot" else None
    groups = machine_groups(tiers)
    # A pod that requests no GPU is scaled up for after 2 s, not 30 s (static_autoscaler.go:66, :70).
    gpu = pod.requests.get(GPU_RESOURCE, 0.0) > 0
    per_regime = {
        r.name: _scenarios(groups, settings, r.machine if gpu else _no_gpu_wait(r.machine))
        for r in settings.all_regimes
    }
    figures = {k: _combine([f[k] for f in per_regime.values()]) for k in next(iter(per_regime.values()))}
    fallback_time = figures[SCENARIO_ALL_OUT] if fallback else None
    queued = _queued(preview, pod, cloud) if first.queued else None
    queued_evidence = cloud.queued_evidence() if isinstance(cloud, QueueAdmission) else None
    return PoolOutcome(
        pool=reached_pool,
        pod=pod.name,
        reaches=True,
        reason=None,
        tiers=tiers,
        first_choice=first.resource,
        fallback=fallback.resource if fallback else None,
        minutes_to_fallback=fallback_time,
        minutes_to_zero=settings.minutes_to_zero,
        worst_case_nodes=nodes,
        worst_case_monthly_usd=monthly,
        price_notes=notes,
        minutes_to_first_node=None if queued else _combine(list(figures.values())),
        scenarios={} if queued else figures,
        expected_monthly_usd=expected,
        expected_instance_types=sorted(set(expected_types.values())),
        max_minutes_to_fallback=promise,
        timing_source=settings.machine.source
        if len(per_regime) == 1
        else "; ".join(r.machine.source for r in settings.all_regimes),
        instance_types=list(dict.fromkeys(t for g in order for t in g.instance_types)),
        evidence=queued_evidence if queued and queued_evidence else settings.evidence,
        regimes={} if len(per_regime) == 1 or queued else per_regime,
        first_choice_group=first.name,
        fallback_group=fallback.name if fallback else None,
        fit_notes=[n for g in order if (n := near_fit(pod, g))],
        queued=queued,
        path=[] if queued else reserved_path(order, figures, settings.evidence, fallback),
    )


def reserved_path(
    order: list[NodeTemplate], figures: dict[str, Figure], evidence: Evidence | None, fallback: NodeTemplate | None
) -> list[PathStep]:
    """A pool with a reserved tier: reserved (the reservation has room), spot (full: its groups at max size are
    skipped), on-demand (full, and all spot out of capacity), each the first group of that capacity in the order
    the autoscaler tries them; [] for a pool without reserved groups."""
    reserved = next((g for g in order if g.capacity == RESERVED), None)
    if reserved is None:
        return []
    model = str(evidence) if evidence else "the autoscaler's model"
    full = f"a full reservation's group is at its max size and skipped: {MAX_SIZE_SKIP}"
    steps = [PathStep(RESERVED, reserved.name, SCENARIO_RESERVED_ROOM, figures.get(SCENARIO_RESERVED_ROOM), model)]
    spot = next((g for g in order if g.capacity == "spot"), None)
    if spot is not None:
        zonal = next(
            k for k in (SCENARIO_SPOT_HAS_CAPACITY, SCENARIO_ONE_ZONE, SCENARIO_ZONAL_SHORTAGE) if k in figures
        )
        steps.append(PathStep("spot", spot.name, f"the reservation is full; {zonal}", figures[zonal], model, full))
    if fallback is not None:
        steps.append(
            PathStep(
                fallback.capacity,
                fallback.name,
                f"the reservation is full; {SCENARIO_ALL_OUT}",
                figures.get(SCENARIO_ALL_OUT),
                model,
                full,
            )
        )
    return steps


def _queued(preview: Preview, pod: PodShape, cloud: CloudTools) -> str:
    """A queued-provisioning group's figure: no time, the admission path its nodes come through."""
    via = cloud.admission_path(preview, pod) if isinstance(cloud, QueueAdmission) else "its cloud's queue"
    return f"queued: nodes come when {via} admits the workload; the wait has no documented bound"


def _no_gpu_wait(machine: Machine) -> Machine:
    return replace(machine, start=(POD_WAIT.seconds, POD_WAIT.seconds + machine.scan))


def machine_groups(tiers: list[Tier]) -> list[Group]:
    """The ranked node groups as the backoff machine sees them."""
    return [
        Group(g.resource, i, g.capacity == "spot", tuple(g.zones), g.capacity)
        for i, tier in enumerate(tiers)
        for g in tier
    ]


def reservation_full(groups: list[Group]) -> list[Group]:
    """The groups when the reservations are full: each reserved group at its max size (the tier's nodes)."""
    return [replace(g, at_max=True) if g.reserved else g for g in groups]


def to_fallback(groups: list[Group], machine: Machine) -> Figure:
    """Scenario "all spot groups out of capacity" (and any reservation full): minutes until the on-demand fallback
    is asked."""
    s = span(reservation_full(groups), lambda g: not g.spot and not g.reserved, machine)
    return "never" if s is None else Minutes.of(s)


def _combine(figures: list[Figure]) -> Figure:
    """Best and worst over several figures; the worst is never when any of them is."""
    finite = [f for f in figures if isinstance(f, Minutes)]
    if not finite:
        return "never"
    worst = [f.max for f in finite]
    never = len(finite) < len(figures) or None in worst
    return Minutes(min(f.min for f in finite), None if never else max(w for w in worst if w is not None))


def _scenarios(groups: list[Group], settings: AutoscalerTiming, machine: Machine) -> dict[str, Figure]:
    """Per scenario, minutes from the pod's creation until a group that delivers is asked (spot with
    capacity, or on-demand)."""

    def figure(s: Span | None) -> Figure:
        return "never" if s is None else Minutes.of(s)

    reserved = any(g.reserved for g in groups)
    out: dict[str, Figure] = {}
    if reserved:
        # The reservation has room: its group delivers when asked (spot, if ranked before it, out of capacity).
        out[SCENARIO_RESERVED_ROOM] = figure(span(groups, lambda g: not g.spot, machine))
        # Its launch fails like a spot group without capacity; spot delivers.
        out[SCENARIO_RESERVED_FAILS] = figure(span(groups, lambda g: not g.reserved, machine))
    # Every other scenario: the reservation is full (its groups at max size, skipped).
    groups = reservation_full(groups)
    out[SCENARIO_ALL_OUT] = to_fallback(groups, machine)
    # Each zone in turn is the one with capacity (a single-zone pool: its zone); a group without
    # zones spans them all.
    zones = sorted({z for g in groups if g.spot for z in g.zones}) or [""]

    def has(z: str) -> Callable[[Group], bool]:
        return lambda g: not g.spot or not g.zones or z in g.zones

    def only(z: str) -> Callable[[Group], bool]:
        # Not zone-aware: a multi-zone group may put its node in a zone without capacity and fail whole.
        return lambda g: not g.spot or not g.zones or set(g.zones) == {z}

    if not any(g.zones for g in groups if g.spot):
        out[SCENARIO_SPOT_HAS_CAPACITY] = figure(span(groups, lambda g: True, machine))
    elif settings.zone_aware or not any(len(g.zones) > 1 for g in groups if g.spot):
        out[SCENARIO_ONE_ZONE] = _combine([figure(span(groups, has(z), machine)) for z in zones])
    else:
        # Best: the group's node lands in the zone with capacity; worst: each try of a group that spans
        # a zone without capacity fails and backs the whole group off.
        out[SCENARIO_ZONAL_SHORTAGE] = _combine(
            [figure(span(groups, f(z), machine)) for z in zones for f in (has, only)]
        )
    if all(g.at_max for g in groups):  # a reserved-only pool whose reservation is full: nothing else to ask
        out[SCENARIO_RETURNS] = "never"
        return out
    best, worst = first_node_after_return(groups, machine, SPOT_RETURNS_AFTER)
    out[SCENARIO_RETURNS] = Minutes(round(best / 60, 2), round(worst / 60, 2))
    return out


class LabelIndex:
    """Templates by label, so that a pod's nodeSelector (exact label values, the scheduler's NodeAffinity
    filter) picks its candidates without a pass over every group: with a pod per pool, a pass each would
    grow with pools x groups."""

    def __init__(self, templates: Sequence[NodeTemplate]) -> None:
        self.by_label: dict[tuple[str, str], list[NodeTemplate]] = {}
        for t in templates:
            for item in t.labels.items():
                self.by_label.setdefault(item, []).append(t)

    def selected(self, node_selector: dict[str, str]) -> list[NodeTemplate] | None:
        """The templates whose labels carry every pair of `node_selector`, in template order; None (all
        of them) for a pod without one."""
        if not node_selector:
            return None
        narrowest = min((self.by_label.get(item, []) for item in node_selector.items()), key=len)
        return [t for t in narrowest if all(t.labels.get(k) == v for k, v in node_selector.items())]


@reads_preview  # the node groups are asked for once per pod: the stack is read once
def simulate(preview: Preview, manifest: dict[str, Any] | None = None) -> list[PoolOutcome]:
    """Each GPU pool's own workload (its contract's Job), or the given Pod/Job/Deployment."""
    templates = node_templates(preview)
    try:
        settings = autoscaler_settings(preview)
    except NoAutoscaler as exc:
        raise ConfigError([f"stack {preview.stack!r}: {exc}; nothing to simulate"], source="simulate") from None
    except ValueError as exc:  # a setting the autoscaler would not start with (a bad duration flag ...)
        raise ConfigError([f"stack {preview.stack!r}: the autoscaler's settings: {exc}"], source="simulate") from None
    promises = pool_promises(preview)
    if stuck := _controllers_stuck(preview):
        # The controller that would start the nodes never runs: no figure holds.
        contracts = [None] if manifest is not None else [c.pool for c in pool_contracts(preview)]
        name = pod_shape(manifest).name if manifest is not None else "-"
        return [_unreached(pool, name, stuck, settings, promises) for pool in contracts]
    # A provisioner of the cloud's own (EKS: Karpenter) answers for the pods its objects take: the cloud is the
    # one whose autoscaler the preview has (known only from what it captured).
    cloud = get_cloud(settings.cloud)
    own = cloud if isinstance(cloud, OwnProvisioner) else None
    region = next((t.region for t in templates if t.region), None)

    index = LabelIndex(templates)

    def one(pod: PodShape, pool: str | None, promise: float | None) -> PoolOutcome:
        outcome = None if own is None else own.simulate_pod(preview, pod, region, pool, promise)
        if outcome is None or (pool is None and not outcome.reaches):
            candidates = index.selected(pod.node_selector)
            outcome = simulate_pod(preview, pod, templates, settings, pool=pool, promise=promise, candidates=candidates)
        return outcome

    if manifest is not None:
        outcome = one(pod_shape(manifest), None, None)
        outcome.max_minutes_to_fallback = promises.get(outcome.pool or "")
        return [outcome]
    return [one(pod_shape(job_manifest(c)), c.pool, promises.get(c.pool)) for c in pool_contracts(preview)]


def _controllers_stuck(preview: Preview) -> str | None:
    """Why the stack's autoscaler or Karpenter controller cannot be scheduled (controller_placement), or None."""
    from elastic_gpu.tools.controller_placement import unschedulable
    from elastic_gpu.tools.offline.stack_resources import stack_resources

    # nodes declared elsewhere that a policy config would describe: the gate judges them (controllers-schedulable)
    found = unschedulable(stack_resources(preview), judge_elsewhere=False)
    return "; ".join(message for _, message in found) or None


def _unreached(
    pool: str | None, pod: str, reason: str, settings: AutoscalerTiming, promises: dict[str, float]
) -> PoolOutcome:
    return PoolOutcome(
        pool=pool,
        pod=pod,
        reaches=False,
        reason=reason,
        tiers=[],
        first_choice=None,
        fallback=None,
        minutes_to_fallback=None,
        minutes_to_zero=settings.minutes_to_zero,
        worst_case_nodes=0,
        worst_case_monthly_usd=None,
        max_minutes_to_fallback=promises.get(pool or ""),
    )


def _minutes(value: float | None) -> str:
    return "-" if value is None else f"{value:g} min"


def render_text(stack: str, outcomes: list[PoolOutcome]) -> str:
    lines = [
        f"simulate {stack}: a pending GPU pod per pool; minutes from the pod's creation until the autoscaler "
        "asks a group that delivers (node boot time on top); node groups by the cloud's names, as `preview` shows them"
    ]
    for o in outcomes:
        lines.append("")
        lines.append(f"pool {o.pool or '-'} (pod {o.pod})")
        if not o.reaches:
            lines.append(f"  reaches:           no: {o.reason}")
        else:
            for i, tier in enumerate(o.tiers, 1):
                names = ", ".join(f"{g.name} ({g.capacity}, {g.instance_type})" for g in tier)
                lines.append(f"  {'try ' + str(i) + (' (tie)' if len(tier) > 1 else ''):<18} {names}")
            lines.append(f"  first choice:      {o.first_choice_group or o.first_choice}")
            lines.append(f"  fallback:          {o.fallback_group or o.fallback or 'none'}")
            if o.queued:
                lines.append(f"  first node:        {o.queued}")
            else:
                promise = "" if o.max_minutes_to_fallback is None else f" (promise: {o.max_minutes_to_fallback:g} min)"
                broken = "  BREAKS THE PROMISE" if o.breaks_promise else ""
                lines.append(f"  time to fallback:  {_figure_text(o.minutes_to_fallback)}{promise}{broken}")
                lines.append(f"  first node:        {_figure_text(o.minutes_to_first_node)}")
                if o.regimes:
                    for regime, figures in o.regimes.items():
                        lines.append(f"    {regime}:")
                        lines += [f"      {name + ':':<45}{_figure_text(f)}" for name, f in figures.items()]
                else:
                    lines += [f"    {name + ':':<47}{_figure_text(f)}" for name, f in o.scenarios.items()]
                if o.path:
                    lines.append(f"  path:              {' -> '.join(step.capacity for step in o.path)}")
                    lines += [f"    {step}" for step in o.path]
                    lines += [f"    rests on: {r}" for r in dict.fromkeys(step.rule for step in o.path if step.rule)]
            lines.append(f"  instance types:    {len(o.instance_types)}: {', '.join(o.instance_types)}")
            lines += [f"  fit: {n}" for n in o.fit_notes]
            lines.append(f"  timing:            {o.timing_source}")
            if o.evidence:
                lines.append(f"  evidence:          {o.evidence}")
        lines.append(f"  back to zero:      {_minutes(o.minutes_to_zero)} after the pod ends")
        money = "n/a" if o.worst_case_monthly_usd is None else f"${o.worst_case_monthly_usd:,.0f}/month"
        lines.append(f"  worst case:        {o.worst_case_nodes} nodes, {money}")
        if o.expected_monthly_usd is not None and o.expected_monthly_usd != o.worst_case_monthly_usd:
            lines.append(
                f"  expected:          {o.worst_case_nodes} nodes, ${o.expected_monthly_usd:,.0f}/month as "
                f"{', '.join(o.expected_instance_types)} (the smallest type that fits the pod)"
            )
        lines += [f"  note: {n}" for n in o.price_notes]
    return "\n".join([*lines, "", *_summary(outcomes)])


def _summary(outcomes: list[PoolOutcome]) -> list[str]:
    """One row per pool: the figures a reviewer compares between stacks; a broken promise is marked."""
    rows = [("POOL", "FIRST CHOICE", "FALLBACK", "TO FALLBACK", "PROMISE", "EVIDENCE", "TO ZERO", "WORST CASE")]
    for o in outcomes:
        money = "n/a" if o.worst_case_monthly_usd is None else f"${o.worst_case_monthly_usd:,.0f}/mo"
        promise = _minutes(o.max_minutes_to_fallback) if o.fallback else "-"
        rows.append(
            (
                o.pool or "-",
                o.first_choice_group or o.first_choice or "no group fits",
                o.fallback_group or o.fallback or "-",
                "queued" if o.queued else _figure_text(o.minutes_to_fallback),
                f"{promise} BROKEN" if o.breaks_promise else promise,
                o.evidence.kind if o.evidence else "-",
                _minutes(o.minutes_to_zero),
                f"{o.worst_case_nodes} nodes, {money}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def to_json(stack: str, settings: AutoscalerTiming, outcomes: list[PoolOutcome]) -> dict[str, Any]:
    return {
        "stack": stack,
        "cloud": settings.cloud,
        "timings_source": settings.source,
        "backoff_constants": [{"name": c.name, "seconds": c.seconds, "source": c.source} for c in CONSTANTS],
        "pools": [o.to_json() for o in outcomes],
    }
