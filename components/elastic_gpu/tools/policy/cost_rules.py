"""The monthly GPU cost ceiling and cost-allocation tags (gpu-monthly-cost-ceiling, cost-allocation-tags)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from elastic_gpu.config import PRICES_KEY, PriceOverride, load_price_overrides
from elastic_gpu.prices import SOURCE_SEPARATOR, TABLE_PATH
from elastic_gpu.tools.cost import OVERRIDE_SOURCE, NodePrice, pool_cost
from elastic_gpu.tools.policy._base import config, known_gpu_pools, schema
from elastic_gpu.tools.policy.pack_parts import TagReader, pack_clouds
from elastic_gpu.tools.policy.scope import judged

# --- 9. gpu-monthly-cost-ceiling -------------------------------------------------------------

_COST_SCHEMA = schema(
    monthlyBudgetUsd={
        "type": "number",
        "minimum": 0,
        "default": 20000,
        "description": "Ceiling for the stack's maximum monthly GPU spend (all GPU pools at max size, 730 h).",
    },
    pricePerHour={
        "type": "object",
        "default": {},
        "description": "Per-hour USD price overrides by instance type / VM size / machine or accelerator type "
        "(used for spot and on-demand pools alike).",
    },
    prices={
        "type": "object",
        "default": {},
        "additionalProperties": {
            "type": "object",
            "properties": {
                "onDemand": {"type": "number", "minimum": 0},
                "spot": {"type": "number", "minimum": 0},
                "evictionRate": {"type": "number", "minimum": 0, "maximum": 1},
            },
        },
        "description": "The stack config's `elastic-gpu:prices` shape ({item: {onDemand, spot}}, USD per hour): "
        "the offline gate fills it from the stack's config, so the gate prices pools as the preview does; "
        "under `pulumi preview --policy-pack` give the same map here.",
    },
)


def _overrides(cfg: Mapping[str, Any]) -> dict[str, PriceOverride]:
    """The stack's `prices` (per capacity type), then `pricePerHour` (one figure whatever the capacity type)."""
    overrides = load_price_overrides({PRICES_KEY: dict(cfg.get("prices") or {})})
    overrides.update(
        {item: PriceOverride(on_demand=float(v), spot=float(v)) for item, v in cfg["pricePerHour"].items()}
    )
    return overrides


def _price_from(price: NodePrice) -> str:
    """Where a pool's hourly figure comes from, as the Cost table's sources say it: the table's source keys
    (elastic_gpu/data/price_sources.csv) and the oldest row's date, a live source, or the config's override."""
    keys = (price.source or "?").split(SOURCE_SEPARATOR)
    source = " + ".join("the config's prices" if key == OVERRIDE_SOURCE else key for key in keys)
    return f"{source}, {price.date}" if price.date else source


def validate_cost_ceiling(args: StackValidationArgs, report: ReportViolation) -> None:
    """Upper bound (elastic_gpu/cost.py): each GPU pool's max size x its most expensive type x 730 h.

    A policy sees no stack config: the region comes from the resources (elastic_gpu/tools/node_group_view.py),
    and the stack config's `prices` reach it through `prices` (the offline gate fills it); `pricePerHour` too.
    """
    cfg = config(args, _COST_SCHEMA)
    budget = float(cfg["monthlyBudgetUsd"])
    overrides = _overrides(cfg)
    total = 0.0
    lines: list[str] = []
    #: pools that share a cap (GKE auto-provisioning's GPU limit) count it once, at the dearest of them
    shared: dict[str, float] = {}
    for r in args.resources:
        if not judged(args, r.urn):
            continue  # the total is the judged pools' (other resources are context only)
        for pool in known_gpu_pools(r, args.resources):
            cost = pool_cost(pool, overrides, upper_bound=True)
            if cost.hourly is None:
                what = " + ".join([", ".join(pool.instance_types) or "?", *(a for a, _ in pool.accelerators)])
                report(
                    f"No price for GPU pool '{pool.name}' ({what}) in region {pool.region or 'unknown'} "
                    f"(missing: {', '.join(cost.price.missing)}): its spend is not counted. Give the price as "
                    f"`{PRICES_KEY}: {{{cost.price.missing[0]}: {{onDemand: <USD/h>, spot: <USD/h>}}}}` in the "
                    "stack's config (the preview and the offline gate read it) or under `prices` in this "
                    "policy's config (`pulumi preview --policy-pack-config`).",
                    r.urn,
                )
                continue
            monthly = cost.monthly(pool.max_size)
            if monthly is None:
                continue  # no max size: gpu-pool-max-size-cap reports an unbounded pool
            if pool.shared_cap is None:
                total += monthly
            else:
                shared[pool.shared_cap] = max(shared.get(pool.shared_cap, 0.0), monthly)
            lines.append(
                f"{pool.name}: {pool.max_size} x {cost.price.label} at ${cost.hourly:.3f}/h ({_price_from(cost.price)})"
                f" = ${monthly:,.0f}"
            )
    total += sum(shared.values())
    if shared:
        lines.append(f"pools sharing one cap ({', '.join(shared)}) count it once, at the dearest")
    if total > budget:
        report(
            f"At max size the stack's GPU pools can cost ${total:,.0f}/month, over the budget of ${budget:,.0f} "
            f"({'; '.join(lines)}). Lower the pools' max sizes or raise `monthlyBudgetUsd` in this policy's config.",
            None,
        )


gpu_monthly_cost_ceiling = StackValidationPolicy(
    name="gpu-monthly-cost-ceiling",
    description=(
        "The stack's maximum monthly GPU spend (each GPU pool's max nodes x the most expensive of its instance "
        "types' hourly price x 730 h, spot price for spot pools) stays under `monthlyBudgetUsd`. Prices come from "
        f"{TABLE_PATH} for the pool's region (elastic_gpu/cost.py). Fix: lower max sizes or raise the budget."
    ),
    enforcement_level=EnforcementLevel.ADVISORY,
    config_schema=_COST_SCHEMA,
    validate=validate_cost_ceiling,
)

# --- 10. cost-allocation-tags ----------------------------------------------------------------

_TAGS_SCHEMA = schema(
    requiredKeys={
        "type": "array",
        "items": {"type": "string"},
        "default": ["project", "cost-center"],
        "description": "Tag (AWS, Azure) or label (GCP) keys every taggable resource must carry.",
    }
)


@cache
def _tag_readers() -> dict[str, TagReader]:
    """Resource type -> its reader, from every cloud's pack (PackRules.cost_tags)."""
    return {t: read for c in pack_clouds() for t, read in c.pack().cost_tags.items()}


def validate_cost_tags(args: ResourceValidationArgs, report: ReportViolation) -> None:
    read = _tag_readers().get(args.resource_type)
    if read is None:
        return  # a type that takes no tags we check
    path, keys = read(args)
    missing = [k for k in config(args, _TAGS_SCHEMA)["requiredKeys"] if k not in keys]
    if missing:
        report(
            f"Missing cost-allocation key(s) {', '.join(missing)} in {path}: its spend cannot be attributed. "
            "Add them to the tags: `tags=` of the components (SpotGpuPoolArgs.tags, GeneralPoolArgs.tags, the "
            "cluster handle's tags) in a program, `elastic-gpu:tags` in a stack file, or the AWS provider's "
            "defaultTags.",
            None,
        )


cost_allocation_tags = ResourceValidationPolicy(
    name="cost-allocation-tags",
    description=(
        "Every taggable resource (AWS/Azure tags, GKE resource labels) carries the cost-allocation keys in "
        "`requiredKeys` (default project, cost-center). Fix: set them in the components' `tags=` (a program) or "
        "the stack's `tags` config."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=_TAGS_SCHEMA,
    validate=validate_cost_tags,
)
