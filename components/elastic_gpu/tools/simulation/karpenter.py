"""`simulate` for Karpenter NodePools, on any cloud that runs Karpenter: which NodePools a pod reaches, in
weight order, and the timings of the cloud's `KarpenterModel` in place of the cluster-autoscaler's backoff
machine (elastic_gpu/tools/simulation/run.py asks the stack's cloud through its `provisioning` part, which calls
`simulate_pod` here with its model).

What differs per cloud is in the model: the node class group its NodePools reference, the label that
lists their instance types, the node class's disk, and how many failed launches exhaust spot (EKS: one
CreateFleet over every type; AKS: one VM per launch, each size failing once).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from elastic_gpu.gpu_catalog import GpuInstanceType
from elastic_gpu.karpenter_core import CAPACITY_TYPE_KEY, CORE, RESERVED, duration_seconds
from elastic_gpu.prices import HOURS_PER_MONTH
from elastic_gpu.scheduling import EPHEMERAL_STORAGE
from elastic_gpu.tools.cost import Overrides, node_price
from elastic_gpu.tools.node_group_view import KARPENTER_GROUP, NodeGroupView
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.backoff import Constant
from elastic_gpu.tools.simulation.fit import NodeTemplate, misfit, near_fit
from elastic_gpu.tools.simulation.pod import PodShape
from elastic_gpu.tools.simulation.timings import Evidence

GIB = 2**30

# --- Karpenter core's scheduling loop, on a clock ---

BATCH_IDLE = Constant("BATCH_IDLE_DURATION", 1, f"{CORE} pkg/operator/options/options.go:130")
BATCH_MAX = Constant("BATCH_MAX_DURATION", 10, f"{CORE} pkg/operator/options/options.go:129")
POD_REQUEUE = Constant("pending-pod requeue", 10, f"{CORE} pkg/controllers/provisioning/controller.go:77 RequeueAfter")
DISRUPTION_POLL = Constant("disruption pollingPeriod", 10, f"{CORE} pkg/controllers/disruption/controller.go:71")
EMPTINESS_VALIDATION = Constant(
    "commandValidationDelay",
    15,
    f"{CORE} pkg/controllers/disruption/consolidation.go:45 (waited by emptiness.go:101 before deleting)",
)
CONSTANTS: tuple[Constant, ...] = (BATCH_IDLE, BATCH_MAX, POD_REQUEUE, DISRUPTION_POLL, EMPTINESS_VALIDATION)

#: How a NodePool that allows `reserved` uses it (aws/karpenter-provider-aws v1.14.1, the one provider at this tag whose
#: NodePools may allow the `reserved` capacity type): a launch is reserved while a reserved offering is available
#: (pkg/providers/instance/instance.go:743-759 getCapacityType: "Prioritization is as follows: reserved, spot,
#: on-demand"), and a reserved offering is priced as its on-demand price / 10,000,000, "free" to the scheduler's
#: cheapest-first choice (pkg/providers/instancetype/offering/reserved_capacity_resolver.go:73-79). A full
#: reservation is no available offering (:88, :98 `reservationCapacity != 0`): spot is chosen at once, with no
#: failed launch. A reserved launch that fails for capacity marks the reservation unavailable (instance.go:653-675),
#: so the next loop launches spot.
RESERVED_FIRST = (
    "aws/karpenter-provider-aws v1.14.1 pkg/providers/instance/instance.go:743-759 getCapacityType (reserved, then "
    "spot, then on-demand); pkg/providers/instancetype/offering/reserved_capacity_resolver.go:73-79 (price = "
    "on-demand / 10,000,000), :98 (a full reservation is no available offering); instance.go:653-675 (a failed "
    "reserved launch marks the reservation unavailable)"
)

#: A loop: from its first trigger, the window closes after [idle, max] seconds.
FIRST_LOOP = (BATCH_IDLE.seconds, BATCH_MAX.seconds)
#: After a failed launch: the pod's next requeue (0 to 10 s away), then a window.
NEXT_LOOP = (BATCH_IDLE.seconds, POD_REQUEUE.seconds + BATCH_MAX.seconds)


@dataclass(frozen=True)
class Seconds:
    """Seconds from the pod's first trigger: best and worst."""

    best: int
    worst: int


def after_failures(failed_launches: int) -> Seconds:
    """The first loop, then one more loop per failed launch."""
    return Seconds(FIRST_LOOP[0] + failed_launches * NEXT_LOOP[0], FIRST_LOOP[1] + failed_launches * NEXT_LOOP[1])


def to_zero(consolidate_after_seconds: int) -> int:
    """Seconds from a GPU node's last pod ending to Karpenter deleting it (WhenEmpty): consolidateAfter, then
    the next disruption poll, then the emptiness command's validation delay (worst case)."""
    return consolidate_after_seconds + DISRUPTION_POLL.seconds + EMPTINESS_VALIDATION.seconds


@dataclass(frozen=True)
class TypeResources:
    """An instance type as its Karpenter provider reports it to the scheduler: `capacity` (the VM's memory
    less the provider's VM overhead estimate; the node class's disk as ephemeral storage) and `overhead`
    (kube-reserved, system-reserved and the eviction threshold). The scheduler fits a pod on capacity less
    overhead (kubernetes-sigs/karpenter v1.14.1 pkg/cloudprovider/types.go:271-280 computeAllocatable, :461
    InstanceTypeOverhead.Total) less the DaemonSet pods that would run there (scheduling/scheduler.go:972-1001
    buildDaemonOverheadGroups, nodeclaim.go:541 filterInstanceTypesByRequirements)."""

    capacity: dict[str, float]
    overhead: dict[str, float]
    #: where the overhead's figures come from, as a fit message names it
    source: str


@dataclass(frozen=True)
class KarpenterModel:
    """One cloud's Karpenter, as the simulation needs it."""

    cloud: str
    #: the requirement key whose `In` values are a NodePool's instance types
    type_key: str
    #: bytes of disk the named node class gives its nodes (None: unknown)
    disk: Callable[[Preview, str], float | None]
    #: per scenario, until capacity that delivers is asked:
    #: (spot, fallback, spot types, fallback in the same NodePool) -> Seconds or None
    first_node: Callable[[bool, bool, int, bool], dict[str, Seconds | None]]
    #: every spot offering out of capacity, until on-demand is asked: (spot types, in the same NodePool)
    to_fallback: Callable[[int, bool], Seconds]
    source: str
    #: what the figures rest on (Karpenter on EKS: its code at the tag this library deploys)
    evidence: Evidence
    #: an instance type (catalog row) and its node class's disk (bytes, None: unknown) as the provider sizes it
    type_resources: Callable[[GpuInstanceType, float | None], TypeResources]


def node_pools(preview: Preview, model: KarpenterModel) -> list[NodeGroupView]:
    """The cloud's NodePools as the scheduler tries them: weight first, then name descending
    (kubernetes-sigs/karpenter pkg/utils/nodepool/nodepool.go:161 OrderByWeight)."""
    from elastic_gpu.tools.simulation.templates import node_groups

    pools = [v for v in node_groups(preview) if v.kind == KARPENTER_GROUP and v.cloud == model.cloud]
    by_name = sorted(pools, key=lambda v: v.name, reverse=True)
    return sorted(by_name, key=lambda v: -v.weight)


def node_pool_templates(
    preview: Preview, view: NodeGroupView, region: str | None, model: KarpenterModel
) -> list[NodeTemplate]:
    """A NodePool as templates, one per capacity type it allows in the order Karpenter tries them (spot,
    then on-demand: karpenter_core.SPOT_FIRST): the labels and taints its nodes get, the biggest eligible
    type as its provider sizes it (the pod fits when some eligible type holds it), less that type's
    overhead and the stack's DaemonSets, as Karpenter's scheduler counts them (`TypeResources`);
    `limits.nodes` as its max (one cap the templates of a NodePool share: `shared_cap`)."""
    from elastic_gpu.tools.simulation.templates import daemon_requests

    rows = [row for t in view.instance_types if (row := view.gpu_row(t)) is not None]
    biggest = max(rows, key=lambda row: (row.gpus, row.vcpus, row.memory_gib), default=None)
    disk = model.disk(preview, view.node_class or "")
    if biggest:
        sized = model.type_resources(biggest, disk)
        allocatable, reserved, source = dict(sized.capacity), dict(sized.overhead), sized.source
    else:
        allocatable, reserved, source = {"cpu": math.inf, "memory": math.inf}, {}, ""
        if disk is not None:
            allocatable[EPHEMERAL_STORAGE] = disk
    capacities = view.capacity_types
    out = [
        NodeTemplate(
            name=view.name,
            resource=view.resource,
            autoscaler_name=view.name,
            pool=view.pool,
            capacity=capacity if capacity in ("spot", RESERVED) else "on-demand",
            instance_type=rows[0].name if rows else "?",
            labels=view.labels | {CAPACITY_TYPE_KEY: capacity},
            taints=sorted(view.taints),
            allocatable=allocatable,
            min_size=0,
            max_size=view.max_size or 0,
            zones=list(view.zones),
            region=region,
            shared_cap=view.resource if len(capacities) > 1 else None,
            reserved=reserved,
            reserved_source=source,
            # Karpenter decides on what the node keeps: its template and the node are one.
            template_reserves=True,
        )
        for capacity in capacities
    ]
    for t in out:
        # The DaemonSets whose pods would run on the node (scheduler.go:1020 isDaemonPodCompatible: taints and
        # requirements), with the kube-proxy DaemonSet EKS and AKS run on every node at the figure the
        # cluster-autoscaler's templates carry for it.
        t.daemon_requests = daemon_requests(preview, t)
    return out


def eligible_types(preview: Preview, resources: list[str], model: KarpenterModel) -> list[str]:
    types: dict[str, None] = {}
    for view in node_pools(preview, model):
        if view.resource in resources:
            types |= dict.fromkeys(view.instance_types)
    return list(types)


def worst_case(
    node_pools: list[NodeTemplate], preview: Preview, overrides: Overrides | None, model: KarpenterModel
) -> tuple[int, float | None, list[str]]:
    """Every NodePool at its limits.nodes (once, however many capacity types it allows), each node the
    priciest eligible type: at its spot price in a spot-only NodePool, else on-demand (a spot-first NodePool
    may fill its limit with on-demand nodes)."""
    nodes, total, notes = 0, 0.0, []
    by_resource: dict[str, list[NodeTemplate]] = {}
    for t in node_pools:
        by_resource.setdefault(t.resource, []).append(t)
    for group in by_resource.values():
        t = group[0]
        spot_only = all(g.capacity == "spot" for g in group)
        hourlies = []
        for it in eligible_types(preview, [t.resource], model):
            price = node_price(model.cloud, t.region, it, [], overrides)
            hourly = price.hourly(spot_only)
            if hourly is None:
                hourly = price.on_demand  # spot never costs more: an upper bound
            if hourly is None:
                return nodes + t.max_size, None, [f"{t.name}: no price for {it} in {t.shown_region}"]
            hourlies.append(hourly)
        nodes += t.max_size
        total += t.max_size * max(hourlies, default=0.0) * HOURS_PER_MONTH
        capacity = "" if spot_only or len(group) == 1 else " on-demand"
        notes.append(
            f"{t.name}: {t.max_size} nodes (limits.nodes), each priced as its priciest eligible type{capacity}"
        )
    return nodes, total, notes


def templates(preview: Preview, region: str | None, model: KarpenterModel) -> list[NodeTemplate]:
    return [t for view in node_pools(preview, model) for t in node_pool_templates(preview, view, region, model)]


def consolidate_after_seconds(preview: Preview, resource: str, model: KarpenterModel) -> int | None:
    for view in node_pools(preview, model):
        if view.resource == resource:
            value = view.consolidate_after
            return None if value in (None, "Never") else duration_seconds(value)
    return None


def _minutes(s: Seconds | None) -> Any:
    from elastic_gpu.tools.simulation.run import Minutes

    return "never" if s is None else Minutes(round(s.best / 60, 2), round(s.worst / 60, 2))


def simulate_pod(
    preview: Preview,
    pod: PodShape,
    region: str | None,
    pool: str | None,
    promise: float | None,
    model: KarpenterModel,
) -> Any:
    """The outcome (a `PoolOutcome`) of a pod under the preview's NodePools of this cloud, or None when the
    preview has none (the autoscaler's model runs)."""
    from elastic_gpu.tools.offline.price_overrides import price_overrides
    from elastic_gpu.tools.simulation.run import PoolOutcome, _combine

    every = templates(preview, region, model)
    if not every:
        return None
    fits = [t for t in every if misfit(pod, t) is None]
    reached_pool = pool or (fits[0].pool if fits else None)
    own = [t for t in every if t.pool == reached_pool]
    nodes, monthly, notes = worst_case(own, preview, price_overrides(preview), model)
    consolidate = consolidate_after_seconds(preview, own[0].resource, model) if own else None
    zero = math.inf if consolidate is None else round(to_zero(consolidate) / 60, 2)
    if not fits:
        why = "; ".join(f"{t.name}: {reason}" for t in own or every if (reason := misfit(pod, t)))
        return PoolOutcome(
            reached_pool,
            pod.name,
            False,
            f"fits no NodePool ({why})",
            [],
            None,
            None,
            None,
            zero,
            nodes,
            monthly,
            notes,
        )
    # A reserved offering first (RESERVED_FIRST); the spot and on-demand figures are where the reservation is full.
    reserved = next((t for t in fits if t.capacity == RESERVED), None)
    after = [t for t in fits if t.capacity != RESERVED] or fits
    first = after[0]
    spot = first.capacity == "spot"
    fallback = next((t for t in after if t.capacity != "spot"), None) if spot else None
    spot_types = len(eligible_types(preview, [first.resource], model)) if spot else 0
    one_node_pool = fallback is not None and fallback.resource == first.resource
    scenarios = {
        k: _minutes(v) for k, v in model.first_node(spot, fallback is not None, spot_types, one_node_pool).items()
    }
    path = []
    if reserved is not None:
        from elastic_gpu.tools.simulation.run import (
            SCENARIO_ALL_OUT,
            SCENARIO_ONE_ZONE,
            SCENARIO_RESERVED_FAILS,
            SCENARIO_RESERVED_ROOM,
            PathStep,
        )

        # Room: the first loop launches it; cannot launch: one failed launch, then spot at the next loop.
        room, fails = _minutes(after_failures(0)), _minutes(after_failures(1))
        scenarios = {SCENARIO_RESERVED_ROOM: room, SCENARIO_RESERVED_FAILS: fails, **scenarios}
        evidence = str(model.evidence)
        path.append(PathStep(RESERVED, reserved.name, SCENARIO_RESERVED_ROOM, room, evidence, RESERVED_FIRST))
        if spot:
            # A full reservation is no offering: spot in the first loop where a zone has capacity.
            has = scenarios.get(SCENARIO_ONE_ZONE) or room
            scenario = f"the reservation is full; {SCENARIO_ONE_ZONE}"
            path.append(PathStep("spot", first.name, scenario, has, evidence, RESERVED_FIRST))
        if fallback is not None:
            to_od = _minutes(model.to_fallback(spot_types, one_node_pool))
            scenario = f"the reservation is full; {SCENARIO_ALL_OUT}"
            path.append(PathStep(fallback.capacity, fallback.name, scenario, to_od, evidence, RESERVED_FIRST))
    return PoolOutcome(
        pool=reached_pool,
        pod=pod.name,
        reaches=True,
        reason=None,
        tiers=[[t] for t in fits],  # one NodePool (capacity type) per try: no ties to draw
        first_choice=fits[0].resource,
        fallback=fallback.resource if fallback else None,
        minutes_to_fallback=_minutes(model.to_fallback(spot_types, one_node_pool)) if fallback else None,
        minutes_to_zero=zero,
        worst_case_nodes=nodes,
        worst_case_monthly_usd=monthly,
        price_notes=notes,
        minutes_to_first_node=_combine(list(scenarios.values())),
        scenarios=scenarios,
        max_minutes_to_fallback=promise,
        timing_source=model.source,
        instance_types=eligible_types(preview, [t.resource for t in fits], model),
        evidence=model.evidence,
        first_choice_group=fits[0].name,
        fallback_group=fallback.name if fallback else None,
        fit_notes=[n for t in fits if (n := near_fit(pod, t))],
        path=path,
    )
