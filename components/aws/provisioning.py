"""`simulate` for the provisioners of EKS other than the cluster-autoscaler (Karpenter): the outcome of a
pod under the NodePools of the preview, or None when the preview has none (the autoscaler's model runs)."""

from __future__ import annotations

import math

from elastic_gpu.aws.karpenter import model
from elastic_gpu.aws.karpenter.simulate import consolidate_after_seconds, eligible_types, reached, worst_case
from elastic_gpu.offline.price_overrides import price_overrides
from elastic_gpu.offline.runner import Preview
from elastic_gpu.simulation.fit import misfit
from elastic_gpu.simulation.pod import PodShape
from elastic_gpu.simulation.run import (
    Minutes,
    PoolOutcome,
    _combine,
)


def _minutes(s: model.Seconds | None) -> Minutes | str:
    return "never" if s is None else Minutes(round(s.best / 60, 2), round(s.worst / 60, 2))


def simulate_pod(
    preview: Preview, pod: PodShape, region: str | None, pool: str | None, promise: float | None
) -> PoolOutcome | None:
    every, fits = reached(pod, preview, region)
    if not every:
        return None
    reached_pool = pool or (fits[0].pool if fits else None)
    own = [t for t in every if t.pool == reached_pool]
    nodes, monthly, notes = worst_case(own, preview, price_overrides(preview))
    consolidate = consolidate_after_seconds(preview, own[0].resource) if own else None
    to_zero = math.inf if consolidate is None else round(model.to_zero(consolidate) / 60, 2)
    if not fits:
        why = "; ".join(f"{t.group}: {reason}" for t in own or every if (reason := misfit(pod, t)))
        return PoolOutcome(
            reached_pool,
            pod.name,
            False,
            f"fits no NodePool ({why})",
            [],
            None,
            None,
            None,
            to_zero,
            nodes,
            monthly,
            notes,
        )
    first = fits[0]
    spot = first.capacity == "spot"
    fallback = next((t for t in fits if t.capacity != "spot"), None) if spot else None
    scenarios = {k: _minutes(v) for k, v in model.first_node(spot, fallback is not None).items()}
    return PoolOutcome(
        pool=reached_pool,
        pod=pod.name,
        reaches=True,
        reason=None,
        tiers=[[t] for t in fits],  # one NodePool per weight: no ties to draw
        first_choice=first.resource,
        fallback=fallback.resource if fallback else None,
        minutes_to_fallback=_minutes(model.to_fallback(spot, True)) if fallback else None,
        minutes_to_zero=to_zero,
        worst_case_nodes=nodes,
        worst_case_monthly_usd=monthly,
        price_notes=notes,
        minutes_to_first_node=_combine(list(scenarios.values())),
        scenarios=scenarios,
        max_minutes_to_fallback=promise,
        timing_source=model.SOURCE,
        instance_types=eligible_types(preview, [t.resource for t in fits]),
    )
