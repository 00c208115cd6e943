"""Human and machine reports of a captured preview: resource tree, pools, cost, outputs."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import yaml

from elastic_gpu.prices import HOURS_PER_MONTH, TABLE_PATH, live_book
from elastic_gpu.scheduling import POOL_LABEL
from elastic_gpu.tools.cost import (
    DEFAULT_EVICTION_RATE,
    EVICTION_ASSUMED,
    FLEX_START_PRICING,
    OVERRIDE_SOURCE,
    NodePrice,
    PoolCost,
    PoolWork,
    ReservedWork,
    StackCost,
    WorkCost,
    live_sources,
    pools_work,
    price_hints,
    reserved_first,
    stack_cost,
    work_total,
)
from elastic_gpu.tools.node_group_view import KARPENTER_GROUP, NodeGroupView
from elastic_gpu.tools.offline.price_overrides import price_overrides
from elastic_gpu.tools.offline.runner import SECRET_MASK, CapturedResource, Preview, StackOutput, shown
from elastic_gpu.tools.offline.stack_resources import node_groups


def _finite(value: Any) -> Any:
    """JSON has no Infinity or NaN: a figure that is not finite has no value (null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def dump_json(data: Any) -> str:
    """What every --json prints: strict JSON (never `Infinity`/`NaN`), keys sorted."""
    return json.dumps(_finite(data), indent=2, sort_keys=True, allow_nan=False)


@dataclass
class PoolRow:
    """A row of the preview's Pools table: one node group as its resource declares it."""

    pool: str  #: our pool label, else the name the program gave what declares it
    node_group: str  #: the group's name (`NodeGroupView.name`)
    #: "spot" | "on-demand" | "spot, on-demand" (spot first, one Karpenter NodePool) | "reserved" (a reserved tier's
    #: group) | "reserved, spot, on-demand" (a NodePool allowing reserved first): its capacity types in order
    capacity: str
    instance_types: list[str]
    min_size: int
    max_size: int
    zones: list[str]
    taints: list[str]
    #: any of its instance types may be launched (a Karpenter NodePool), not the first alone
    any_type: bool = False
    #: the resource that declares it (the text tables name it where two rows would read the same)
    resource: str = ""


def group_labels(rows: Sequence[tuple[str, str, str]]) -> list[str]:
    """The NODE GROUP column for rows of (pool, node group, declaring resource): the group's name, and where two
    rows would read the same (two clusters' inline system pools of one name), the resource that declares it."""
    seen = Counter((pool, name) for pool, name, _ in rows)
    return [name if seen[(pool, name)] == 1 else f"{name} (in {resource})" for pool, name, resource in rows]


def pool_row(v: NodeGroupView) -> PoolRow:
    """A node group as the Pools table shows it: its taints as its resource spells them; a group with
    accelerators attached to its machine type (GKE) as that machine type (an auto-created one's largest, the
    first), then `<count>x<accelerator>` each."""
    types = list(v.instance_types)
    if v.accelerators:
        types = [types[0] if types else "?", *(f"{n}x{a}" for a, n in v.accelerators)]
    return PoolRow(
        pool=v.labels.get(POOL_LABEL, v.declared_name),
        node_group=v.name,
        capacity=", ".join(v.capacity_types)
        if reserved_first(v)
        else "spot"
        if v.spot
        else "spot, on-demand"
        if v.spot_first
        else "on-demand",
        instance_types=types,
        min_size=v.min_size or 0,
        max_size=v.max_size or 0,
        zones=sorted(v.zones),
        taints=list(v.shown_taints),
        any_type=v.kind == KARPENTER_GROUP,
        resource=v.resource,
    )


def _row_json(p: PoolRow) -> dict[str, Any]:
    """A Pools row; `any_type` only where it is true (a Karpenter NodePool), so other rows read as before."""
    row = asdict(p)
    del row["resource"]  # for the text tables only: JSON rows read as before
    if not row["any_type"]:
        del row["any_type"]
    return row


def pool_rows(preview: Preview) -> list[PoolRow]:
    """The Pools table: every node group the captured resources declare, read once
    (elastic_gpu/tools/node_group_view.py)."""
    rows = [pool_row(v) for v in node_groups(preview)]
    return sorted(rows, key=lambda p: (p.pool, p.node_group))


# --- cost --------------------------------------------------------------------------------------


def preview_cost(preview: Preview) -> StackCost:
    """Every captured pool priced: the pools read as the policies read them (elastic_gpu/tools/node_group_view.py)."""
    pools = sorted(node_groups(preview), key=lambda p: (p.pool, p.name))
    return stack_cost(pools, price_overrides(preview))


def _regions(cost: StackCost) -> list[str]:
    return sorted({c.pool.region or "unknown" for c in cost.pools})


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def _cost_row_json(c: PoolCost, expected: PoolCost | None = None) -> dict[str, Any]:
    return {
        "pool": c.pool.pool,
        "node_group": c.pool.name,
        "capacity": c.capacity,
        "region": c.pool.region,
        "instance_types": list(c.pool.instance_types),
        "priced_as": c.price.label,
        "min_size": c.pool.min_size,
        "max_size": c.pool.max_size,
        "gpus_per_node": c.gpus_per_node,
        "on_demand_hourly": _round(c.price.on_demand),
        "spot_hourly": _round(c.price.spot),
        "gpu_hourly": _round(c.gpu_hourly),
        "idle_monthly": _round(c.idle_monthly, 2),
        "max_monthly": _round(c.max_monthly, 2),
        "saving_pct": _round(c.price.saving_pct, 2),
        "eviction_rate": c.price.eviction_rate,
        "source": c.price.source,
        "date": c.price.date,
        "missing": list(c.price.missing),
        "gap": c.gap,
        "upper_bound": c.on_demand_bound,
        "cap_group": c.pool.shared_cap,
        "expected_priced_as": None if expected is None else expected.price.label,
        "expected_max_monthly": None if expected is None else _round(expected.max_monthly, 2),
        # a reserved tier's group only, so every other row reads as before
        **(
            {
                "reservations": list(c.pool.reservations),
                "reservation_monthly": _round(c.reservation_monthly, 2),
                "idle_reserved_monthly": _round(c.idle_reserved_monthly(c.pool.min_size), 2),
            }
            if c.reserved
            else {}
        ),
    }


def cost_json(cost: StackCost) -> dict[str, Any]:
    return {
        "currency": "USD",
        "table": TABLE_PATH,
        "hours_per_month": HOURS_PER_MONTH,
        "regions": _regions(cost),
        "pools": [_cost_row_json(c, cost.expected.get(c.pool.name)) for c in cost.pools],
        "total": {
            "idle_monthly": round(cost.idle_monthly, 2),
            "max_monthly": round(cost.max_monthly, 2),
            # the same, with GKE's auto-created pools at the smallest machine type that fits their workload
            "expected_max_monthly": _round(cost.expected_max_monthly, 2),
            "idle_excludes": cost.idle_excludes,
            "max_excludes": cost.max_excludes,
            # the reservations' unused nodes at min size (paid whether used or not): only where a pool has them
            **({"idle_reserved_monthly": round(cost.idle_reserved_monthly, 2)} if cost.reserved else {}),
        },
        "hints": cost.hints,
        **({"price_notes": cost.notes} if cost.notes else {}),
    }


def to_json(preview: Preview) -> dict[str, Any]:
    return preview.to_json() | {
        "pools": [_row_json(p) for p in pool_rows(preview)],
        "cost": cost_json(preview_cost(preview)),
    }


def money(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"${value:,.{digits}f}"


def hourly(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}%"


def table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], right: int = 0) -> list[str]:
    """Aligned columns, two spaces apart; the last ``right`` columns right-aligned (numbers)."""
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=False)]
    first_right = len(header) - right
    return [
        "  "
        + "  ".join(
            c.rjust(w) if i >= first_right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in (header, *rows)
    ]


def _priced_as(c: PoolCost) -> str:
    n = len(c.pool.instance_types)
    return c.price.label + (f" ({'priciest' if c.pool.any_type else '1st'} of {n})" if n > 1 else "")


def _prices_from(prices: list[NodePrice], regions: list[str]) -> str:
    overridden = any(OVERRIDE_SOURCE in (p.source or "").split("+") for p in prices)
    live = live_sources(prices)
    where = f"USD list prices from {TABLE_PATH}" + (f", live from {', '.join(live)}" if live else "")
    where += " and the stack config's `prices`" if overridden else ""
    return f"{where}, region {', '.join(regions) or 'unknown'}"


def render_cost(cost: StackCost) -> list[str]:
    lines = [
        f"Cost ({_prices_from([c.price for c in cost.pools], _regions(cost))}, {HOURS_PER_MONTH} h/month; "
        "node pools only: no control plane, disks or network):"
    ]
    header: tuple[str, ...] = (
        "POOL",
        "NODE GROUP",
        "CAPACITY",
        "PRICED AS",
        "ON-DEMAND $/H",
        "SPOT $/H",
        "$/GPU-H",
        "IDLE $/MO",
    )
    header += ("MAX $/MO", "SAVING")
    labels = group_labels([(c.pool.pool, c.pool.name, c.pool.resource) for c in cost.pools])
    rows = [
        (
            c.pool.pool,
            label,
            c.capacity,
            _priced_as(c),
            hourly(c.price.on_demand),
            hourly(c.price.spot),
            "-" if c.gpus_per_node is None else hourly(c.gpu_hourly),
            money(c.idle_monthly),
            money(c.max_monthly),
            percent(c.price.saving_pct),
        )
        for c, label in zip(cost.pools, labels, strict=True)
    ]
    lines += table(header, rows, right=6)
    total = f"  Total: idle {money(cost.idle_monthly)}/month, at max size {money(cost.max_monthly)}/month"
    gaps = {c.pool.name: c.gap for c in cost.pools if c.pool.name in cost.idle_excludes + cost.max_excludes}
    if gaps:
        by_gap = {gap: [label for label, g in gaps.items() if g == gap] for gap in dict.fromkeys(gaps.values())}
        total += " (excludes " + "; ".join(f"{', '.join(labels)}: {gap}" for gap, labels in by_gap.items()) + ")"
    lines.append(total)
    if any(len(c.pool.instance_types) > 1 and not c.pool.any_type for c in cost.pools):
        lines.append(
            "  A node group of several instance types is priced as its first (the autoscaler's node template)."
        )
    if any(len(c.pool.instance_types) > 1 and c.pool.any_type for c in cost.pools):
        lines.append("  A Karpenter NodePool may launch any of its types: priced as the priciest, at its limits.nodes.")
    if any(c.on_demand_bound for c in cost.pools):
        lines.append(f"  Upper bound: {FLEX_START_PRICING}.")
    lines += [f"  Shared cap: {line}." for line in cost.shared_caps]
    lines += _reserved_lines(cost)
    if cost.expected_max_monthly is not None:
        types = sorted({c.price.label for c in cost.expected.values()})
        lines.append(
            f"  Expected at max size: {money(cost.expected_max_monthly)}/month, with the auto-created pools at the "
            f"smallest machine type that fits their workload ({'; '.join(types)}), as GKE picks it; the total "
            "above is the worst case (each at its largest)."
        )
    lines += [f"  n/a: {hint}" for hint in cost.hints]
    lines += [f"  Prices: {note}." for note in cost.notes]
    return lines


def _reserved_lines(cost: StackCost) -> list[str]:
    """The reserved tiers: $0 marginal in the table and totals; what their reservations cost, and the idle cost of
    the reserved nodes left unused at min size (at max size every reserved node runs: $0 idle)."""
    if not cost.reserved:
        return []
    groups = "; ".join(
        f"{c.pool.name}: {c.pool.max_size or 0} x {c.price.label} from {', '.join(c.pool.reservations) or '?'}, "
        f"{money(c.reservation_monthly)}/month at on-demand prices"
        for c in cost.reserved
    )
    unused = sum(max((c.pool.max_size or 0) - (c.pool.min_size or 0), 0) for c in cost.reserved)
    return [
        f"  Reserved: {groups}; priced $0 above (the reservation is paid whether used or not), used before spot "
        "and on-demand.",
        f"  Idle reserved capacity: {money(cost.idle_reserved_monthly)}/month at min size ({unused} reserved "
        "node(s) unused x on-demand price), $0 at max size; not in the totals.",
    ]


def render_text(preview: Preview) -> str:
    lines = [f"elastic-gpu offline preview: stack {preview.stack} (mock engine; nothing is deployed)", ""]
    lines.append(f"Resources ({len(preview.resources)}):")
    kids: dict[str | None, list[CapturedResource]] = {}
    for r in preview.resources:
        kids.setdefault(r.parent, []).append(r)

    def walk(parent: str | None, indent: str) -> None:
        items = sorted(kids.get(parent, []), key=lambda r: (r.type, r.name))
        for i, r in enumerate(items):
            last = i == len(items) - 1
            branch = "" if parent is None else ("└─ " if last else "├─ ")
            flags = [
                f
                for f, on in (
                    ("protected", r.protect),
                    ("ignores " + ",".join(r.ignore_changes), bool(r.ignore_changes)),
                )
                if on
            ]
            suffix = f"  [{'; '.join(flags)}]" if flags else ""
            lines.append(f"  {indent}{branch}{r.type}  {r.name}{suffix}")
            walk(r.urn, indent + ("" if parent is None else ("   " if last else "│  ")))

    walk(None, "")
    lines += ["", "Pools:"]
    header = ("POOL", "NODE GROUP", "CAPACITY", "MIN", "MAX", "ZONES", "INSTANCE TYPES", "TAINTS")
    shown = pool_rows(preview)
    labels = group_labels([(p.pool, p.node_group, p.resource) for p in shown])
    rows = [
        (
            p.pool,
            label,
            p.capacity,
            str(p.min_size),
            str(p.max_size),
            ",".join(p.zones),
            ",".join(p.instance_types),
            ",".join(p.taints) or "-",
        )
        for p, label in zip(shown, labels, strict=True)
    ]
    lines += table(header, rows)
    lines += ["", *render_cost(preview_cost(preview))]
    lines += ["", "Outputs:"]
    for key, out in sorted(preview.outputs.items()):
        lines += output_lines(key, out)
    return "\n".join(lines)


#: How far an output's block is indented under its key in the Outputs section.
_BLOCK = "    "


def output_lines(key: str, out: StackOutput) -> list[str]:
    """One stack output as the Outputs section shows it: a secret masked (its shape too); a map or a list as a
    YAML block under its key (an EKS kubeconfig is a map, never a Python dict); text of several lines (a YAML
    kubeconfig) as a literal block; text that is a JSON object or array (pulumi-eks's kubeconfigJson) as indented
    JSON; anything else on the key's line. Unknown values show as the reports show them."""
    if out.secret:
        return [f"  {key}: {SECRET_MASK}"]
    value = shown(out.value)
    if isinstance(value, str) and value[:1] in "{[" and (parsed := _json_of(value)) is not None:
        return [f"  {key}: (JSON)", *(_BLOCK + line for line in json.dumps(parsed, indent=2).splitlines())]
    if isinstance(value, dict | list) and value:
        text = yaml.safe_dump(value, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)
        return [f"  {key}:", *(_BLOCK + line for line in text.rstrip("\n").splitlines())]
    if isinstance(value, str) and "\n" in value.rstrip("\n"):
        return [f"  {key}: |", *(_BLOCK + line if line else "" for line in value.rstrip("\n").splitlines())]
    return [f"  {key}: {value}"]


def _json_of(text: str) -> dict[str, Any] | list[Any] | None:
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict | list) else None


# --- the `cost` command: N GPU-hours of work ---------------------------------------------------


def preview_work(preview: Preview, gpu_hours: float, eviction_rate: float | None = None) -> list[PoolWork]:
    pools = node_groups(preview)
    return pools_work(pools, gpu_hours, price_overrides(preview), eviction_rate)


def _eviction(w: WorkCost) -> str:
    return f"{w.eviction_rate:.0%} ({'assumed' if w.eviction_source == EVICTION_ASSUMED else w.eviction_source})"


def work_json(stack: str, gpu_hours: float, works: list[PoolWork]) -> dict[str, Any]:
    total = work_total(works)
    rows = []
    for p in works:
        w = p.work
        rows.append(
            {
                "pool": p.pool,
                "node_groups": p.node_groups,
                "region": p.region,
                "capacity": p.capacity,
                "upper_bound": p.flex_start,
                "priced_as": p.price.label,
                "gpus_per_node": p.gpus_per_node,
                "node_hours": _round(w.node_hours) if w else None,
                "on_demand_hourly": _round(p.price.on_demand),
                "spot_hourly": _round(w.spot_hourly) if w else None,
                "on_demand_cost": _round(w.on_demand_cost, 2) if w else None,
                "spot_run_hours": _round(w.spot_run_hours) if w and w.spot_hourly is not None else None,
                "spot_cost": _round(w.spot_cost, 2) if w else None,
                "eviction_rate": w.eviction_rate if w and p.spot else None,
                "eviction_rate_source": w.eviction_source if w and p.spot else None,
                "eviction_assumed": bool(w and p.spot and w.eviction_source == EVICTION_ASSUMED),
                "saving_pct": _round(w.saving_pct, 2) if w else None,
                "source": p.price.source,
                "date": p.price.date,
                # a pool GKE sizes per pod: the figures above at the smallest type that fits, these at its largest
                "worst_case": None
                if p.worst_price is None
                else {
                    "priced_as": p.worst_price.label,
                    "on_demand_cost": _round(p.worst_work.on_demand_cost, 2) if p.worst_work else None,
                    "spot_cost": _round(p.worst_work.spot_cost, 2) if p.worst_work else None,
                },
                # a pool with a reserved tier only, so every other row reads as before
                **({"reserved": _reserved_json(p.reserved, p.own_cost)} if p.reserved else {}),
            }
        )
    return {
        "stack": stack,
        "gpu_hours": gpu_hours,
        "currency": "USD",
        "table": TABLE_PATH,
        "pools": rows,
        "total": {
            "on_demand_cost": round(total.on_demand_cost, 2),
            "own_cost": round(total.own_cost, 2),
            "saving_pct": _round(total.saving_pct, 2),
            "excludes": total.excludes,
            **(
                {"idle_reserved_cost": round(total.idle_reserved_cost, 2)}
                if total.idle_reserved_cost is not None
                else {}
            ),
        },
        "hints": price_hints([(p.price, p.region, p.spot) for p in works]),
        **({"price_notes": list(live_book().notes)} if live_book().notes else {}),
    }


def _reserved_json(r: ReservedWork, own_cost: float | None) -> dict[str, Any]:
    return {
        "node_groups": r.groups,
        "nodes": r.nodes,
        "hours": r.hours,
        "capacity_gpu_hours": _round(r.capacity_gpu_hours),
        "served_gpu_hours": _round(r.served_gpu_hours),
        "rest_gpu_hours": _round(r.rest_gpu_hours),
        "own_cost": _round(own_cost, 2),
        "unused_node_hours": _round(r.unused_node_hours),
        "on_demand_hourly": _round(r.on_demand_hourly),
        "idle_cost": _round(r.idle_cost, 2),
    }


def _reserved_work_lines(works: list[PoolWork]) -> list[str]:
    """Per pool with a reserved tier: what it serves at $0 marginal, what the rest costs; then the idle cost of the
    reservations' unused hours, on a line of its own."""
    lines = []
    for p in works:
        r = p.reserved
        if r is None:
            continue
        rest = (
            f"the other {r.rest_gpu_hours:,g} wait for it (reservations only)"
            if p.reserved_alone
            else f"the other {r.rest_gpu_hours:,g} on {'spot' if p.spot else 'on-demand'}"
        )
        lines.append(
            f"  Reserved: {p.pool} serves the first {r.served_gpu_hours:,g} GPU-hours on its reserved tier "
            f"({', '.join(r.groups)}: {r.nodes} nodes x {r.gpus_per_node} GPUs x {r.hours:g} h, a month, the period "
            f"of the monthly figures = {r.capacity_gpu_hours:,g} GPU-hours) at $0 marginal (the reservation is paid "
            f"whether used or not); {rest}: {money(p.own_cost, 2)} on its own capacity."
        )
    idle = work_total(works).idle_reserved_cost
    if idle is not None:
        unused = "; ".join(
            f"{p.pool} {p.reserved.unused_node_hours:,g} node-hours x {hourly(p.reserved.on_demand_hourly)} $/h"
            for p in works
            if p.reserved is not None
        )
        lines.append(
            f"  Idle reserved capacity: {money(idle, 2)} (the reservations' hours not used, at on-demand prices: "
            f"{unused}); paid whether used or not, not in the total."
        )
    return lines


def render_work(stack: str, gpu_hours: float, works: list[PoolWork]) -> str:
    if not works:
        return f"elastic-gpu cost: stack {stack} declares no GPU pool"
    regions = sorted({p.region or "unknown" for p in works})
    lines = [
        f"elastic-gpu cost: {gpu_hours:,g} GPU-hours of work on each GPU pool of stack {stack} "
        f"({_prices_from([p.price for p in works], regions)})",
        "",
    ]
    header: tuple[str, ...] = (
        "POOL",
        "CAPACITY",
        "PRICED AS",
        "GPUS/NODE",
        "NODE-H",
        "ON-DEMAND",
        "SPOT RUN-H",
        "EVICTION",
    )
    header += ("SPOT", "SAVING")
    rows = []
    for p in works:
        w = p.work
        on_spot = w is not None and p.spot and w.spot_hourly is not None
        rows.append(
            (
                p.pool,
                p.capacity,
                p.price.label,
                str(p.gpus_per_node or "n/a"),
                f"{w.node_hours:,.1f}" if w else "n/a",
                money(w.on_demand_cost if w else None, 2),
                f"{w.spot_run_hours:,.1f}" if w and on_spot else ("-" if not p.spot else "n/a"),
                _eviction(w) if w and p.spot else "-",
                money(w.spot_cost, 2) if w and on_spot else ("-" if not p.spot else "n/a"),
                percent(w.saving_pct) if w and on_spot else ("-" if not p.spot else "n/a"),
            )
        )
    lines += table(header, rows, right=6)
    total = work_total(works)
    gaps = "; ".join(f"{pool}: {gap}" for pool, gap in total.excludes.items())
    if len(total.excludes) == len(works):
        line = f"  Total ({gpu_hours:,g} GPU-hours on each pool): n/a ({gaps})"
    else:
        line = (
            f"  Total ({gpu_hours:,g} GPU-hours on each pool): all on-demand {money(total.on_demand_cost, 2)}, "
            f"on the pools' own capacity (spot with re-runs) {money(total.own_cost, 2)}, "
            f"saving {percent(total.saving_pct)}"
        )
        line += f" (excludes {gaps})" if gaps else ""
    lines.append(line)
    lines += _reserved_work_lines(works)
    lines.append(
        "  Spot run hours = node-hours x (1 + eviction rate): evicted work is re-run. Eviction rate: the price row's, "
        f"else --eviction-rate, else assumed {DEFAULT_EVICTION_RATE:.0%}."
    )
    if any(p.flex_start for p in works):
        lines.append(f"  Upper bound: {FLEX_START_PRICING}.")
    for p in works:
        if p.worst_price is not None:
            worst = p.worst_work
            figures = (
                f"on-demand {money(worst.on_demand_cost, 2)}, spot {money(worst.spot_cost, 2)}"
                if worst is not None and p.spot
                else f"on-demand {money(worst.on_demand_cost if worst else None, 2)}"
            )
            lines.append(
                f"  Expected: {p.pool} is priced as {p.price.label}, the smallest machine type that fits its workload "
                f"(GKE creates it per pod); worst case, as {p.worst_price.label}: {figures}."
            )
    lines += [f"  n/a: {hint}" for hint in price_hints([(p.price, p.region, p.spot) for p in works])]
    lines += [f"  Prices: {note}." for note in live_book().notes]
    return "\n".join(lines)
