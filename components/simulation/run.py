"""The simulation: for each GPU pool's own workload (or a given pod), which groups it reaches,
in which order, how long until the fallback, until the pool is back to zero, and the worst case."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from elastic_gpu.cost import Overrides, node_price
from elastic_gpu.errors import ConfigError
from elastic_gpu.offline.report import price_overrides
from elastic_gpu.offline.runner import Preview
from elastic_gpu.prices import HOURS_PER_MONTH
from elastic_gpu.scheduling import GKE_COMPUTE_CLASS_KEY
from elastic_gpu.simulation.expanders import Tier, rank
from elastic_gpu.simulation.fit import NodeTemplate, misfit
from elastic_gpu.simulation.kueue import admission_problem
from elastic_gpu.simulation.pod import PodShape, pod_shape
from elastic_gpu.simulation.templates import node_templates
from elastic_gpu.simulation.timings import AutoscalerSettings, autoscaler_settings
from elastic_gpu.spot_gpu_pool import TYPE_TOKEN as SPOT_GPU_POOL
from elastic_gpu.workload import CONTRACT_INPUT, WorkloadContract, job_manifest

COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"


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
    minutes_to_fallback: float | None
    minutes_to_zero: float
    worst_case_nodes: int
    worst_case_monthly_usd: float | None
    #: what the worst case could not price exactly (spot priced as on-demand, or nothing)
    price_notes: list[str] = field(default_factory=list)

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
            "minutes_to_fallback": self.minutes_to_fallback,
            "minutes_to_zero": self.minutes_to_zero,
            "worst_case_nodes": self.worst_case_nodes,
            "worst_case_monthly_usd": None
            if self.worst_case_monthly_usd is None
            else round(self.worst_case_monthly_usd, 2),
            "price_notes": self.price_notes,
        }


def pool_contracts(preview: Preview) -> list[WorkloadContract]:
    """Every SpotGpuPool's workload contract, as the component recorded it."""
    return [
        WorkloadContract.from_json(r.inputs[CONTRACT_INPUT])
        for r in preview.of_type(SPOT_GPU_POOL)
        if isinstance(r.inputs.get(CONTRACT_INPUT), dict)
    ]


def _class_order(preview: Preview, pod: PodShape) -> list[str]:
    wanted = pod.node_selector.get(GKE_COMPUTE_CLASS_KEY)
    if not wanted:
        return []
    for r in preview.of_type(COMPUTE_CLASS):
        if (r.inputs.get("metadata") or {}).get("name") == wanted:
            return [
                n for prio in (r.inputs.get("spec") or {}).get("priorities") or [] for n in prio.get("nodepools") or []
            ]
    return ["<no such ComputeClass>"]


def _worst_case(
    groups: list[NodeTemplate], cloud: str, overrides: Overrides | None = None
) -> tuple[int, float | None, list[str]]:
    nodes = sum(g.max_size for g in groups)
    total, notes = 0.0, []
    for g in groups:
        price = node_price(cloud, g.region, g.instance_type, g.accelerators, overrides)
        hourly = price.hourly(g.capacity == "spot")
        if hourly is None and price.on_demand is not None:
            hourly = price.on_demand  # spot never costs more: an upper bound
            notes.append(f"{g.group}: no spot price for {price.label} in {g.region}, priced on-demand")
        if hourly is None:
            notes.append(f"{g.group}: no price for {', '.join(price.missing)} in {g.region}")
            return nodes, None, notes
        total += g.max_size * hourly * HOURS_PER_MONTH
    return nodes, total, notes


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
    settings: AutoscalerSettings,
    pool: str | None = None,
) -> PoolOutcome:
    kueue = admission_problem(preview, pod) if any(t.queued for t in templates) else None
    # A group the autoscaler does not list is never scaled by it, whatever fits there.
    scaled = [t for t in templates if settings.groups is None or t.autoscaler_name in settings.groups]
    fits = [t for t in scaled if _blocked(pod, t, kueue) is None]
    tiers = rank(pod, fits, settings.expanders, settings.priorities, _class_order(preview, pod))
    order = [g for tier in tiers for g in tier]
    reached_pool = pool or (order[0].pool if order else None)
    own = [t for t in templates if t.pool == reached_pool]
    # Priced as the preview prices them: the table, and the program's `elastic-gpu:prices` overrides.
    nodes, monthly, notes = _worst_case(own, settings.cloud, price_overrides(preview))
    if not order:
        why = "; ".join(
            f"{t.group}: {_blocked(pod, t, kueue) if t in scaled else 'not a group the autoscaler lists (--nodes)'}"
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
        )
    # Every spot group out of capacity: the autoscaler moves on from each in turn until it
    # reaches an on-demand group (the fallback), if any.
    fallback, waited = None, 0.0
    for group in order:
        if group.capacity != "spot":
            fallback = group
            break
        waited += settings.failed_group_minutes
    first = order[0]
    if first.capacity != "spot":
        fallback, waited = None, 0.0  # an on-demand first choice has nothing to fall back from
    return PoolOutcome(
        pool=reached_pool,
        pod=pod.name,
        reaches=True,
        reason=None,
        tiers=tiers,
        first_choice=first.resource,
        fallback=fallback.resource if fallback else None,
        minutes_to_fallback=waited if fallback else None,
        minutes_to_zero=settings.minutes_to_zero,
        worst_case_nodes=nodes,
        worst_case_monthly_usd=monthly,
        price_notes=notes,
    )


def simulate(preview: Preview, manifest: dict[str, Any] | None = None) -> list[PoolOutcome]:
    """Each GPU pool's own workload (its contract's Job), or the given Pod/Job/Deployment."""
    templates = node_templates(preview)
    try:
        settings = autoscaler_settings(preview)
    except ValueError as exc:
        raise ConfigError([f"stack {preview.stack!r}: {exc}; nothing to simulate"], source="simulate") from None
    if manifest is not None:
        return [simulate_pod(preview, pod_shape(manifest), templates, settings)]
    return [
        simulate_pod(preview, pod_shape(job_manifest(c)), templates, settings, pool=c.pool)
        for c in pool_contracts(preview)
    ]


def _minutes(value: float | None) -> str:
    return "-" if value is None else f"{value:g} min"


def render_text(stack: str, outcomes: list[PoolOutcome]) -> str:
    lines = [f"simulate {stack}: a pending GPU pod per pool, every spot group out of capacity"]
    for o in outcomes:
        lines.append("")
        lines.append(f"pool {o.pool or '-'} (pod {o.pod})")
        if not o.reaches:
            lines.append(f"  reaches:           no: {o.reason}")
        else:
            for i, tier in enumerate(o.tiers, 1):
                names = ", ".join(f"{g.resource} ({g.capacity}, {g.instance_type})" for g in tier)
                lines.append(f"  {'try ' + str(i) + (' (tie)' if len(tier) > 1 else ''):<18} {names}")
            lines.append(f"  first choice:      {o.first_choice}")
            lines.append(f"  fallback:          {o.fallback or 'none'}")
            lines.append(f"  time to fallback:  {_minutes(o.minutes_to_fallback)}")
        lines.append(f"  back to zero:      {_minutes(o.minutes_to_zero)} after the pod ends")
        money = "n/a" if o.worst_case_monthly_usd is None else f"${o.worst_case_monthly_usd:,.0f}/month"
        lines.append(f"  worst case:        {o.worst_case_nodes} nodes, {money}")
        lines += [f"  note: {n}" for n in o.price_notes]
    return "\n".join([*lines, "", *_summary(outcomes)])


def _summary(outcomes: list[PoolOutcome]) -> list[str]:
    """One row per pool: the figures a reviewer compares between stacks."""
    rows = [("POOL", "FIRST CHOICE", "FALLBACK", "TO FALLBACK", "TO ZERO", "WORST CASE")]
    for o in outcomes:
        money = "n/a" if o.worst_case_monthly_usd is None else f"${o.worst_case_monthly_usd:,.0f}/mo"
        rows.append(
            (
                o.pool or "-",
                o.first_choice or "no group fits",
                o.fallback or "-",
                _minutes(o.minutes_to_fallback),
                _minutes(o.minutes_to_zero),
                f"{o.worst_case_nodes} nodes, {money}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def to_json(stack: str, settings: AutoscalerSettings, outcomes: list[PoolOutcome]) -> dict[str, Any]:
    return {
        "stack": stack,
        "cloud": settings.cloud,
        "timings_source": settings.source,
        "pools": [o.to_json() for o in outcomes],
    }
