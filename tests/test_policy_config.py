"""Policy config: schema defaults, overrides, exceptions, the cost ceiling, enforcement levels."""

from __future__ import annotations

import copy

from policy_programs import judge, program_preview, program_report

from elastic_gpu.prices import HOURS_PER_MONTH, price_row
from elastic_gpu.tools.cost import node_price, pool_cost
from elastic_gpu.tools.node_group_view import NodeGroupView
from elastic_gpu.tools.policy import POLICIES_BY_NAME


def _names(report, policy):
    return {v.name or "<stack>" for v in report.of(policy)}


def test_cost_ceiling_under_and_over_budget() -> None:
    preview = program_preview("aws")
    under = judge(preview, config={"gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": 1_000_000}})
    assert not under.of("gpu-monthly-cost-ceiling")
    over = judge(preview, config={"gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": 100}})
    [v] = over.of("gpu-monthly-cost-ceiling")
    assert v.level == "advisory" and v.urn is None
    # bad-toobig alone: 50 spot g4dn.xlarge at the table's spot price in the program's region (aws:region), 730 h,
    # with where that price comes from (its row's source and date)
    row = price_row("aws", "us-east-1", "g4dn.xlarge")
    assert row is not None and row.spot is not None
    assert (
        f"c1-bad-toobig: 50 x g4dn.xlarge at ${row.spot:.3f}/h ({row.source}, {row.date}) = "
        f"${50 * row.spot * HOURS_PER_MONTH:,.0f}" in v.message
    )


def test_cost_ceiling_is_the_models_upper_bound_and_fires_only_over_budget() -> None:
    """The GCP program: GPU pools of n1-standard-4 + 1 T4 in us-central1-c (region us-central1), at max size."""
    preview = program_preview("gcp")
    node = node_price("gcp", "us-central1", "n1-standard-4", [("nvidia-tesla-t4", 1)])
    assert node.on_demand is not None and node.spot is not None
    on_demand = {"ok-fallback", "bad-preemptible"}  # not spot: on-demand price
    max_sizes = {"bad-toobig": 30}  # every other pool: 3; bad-unbounded has no max and is not counted
    names = {r.name for r in preview.of_type("gcp:container/nodePool:NodePool")} - {"bad-unbounded"}
    expected = sum(
        max_sizes.get(n, 3) * (node.on_demand if n in on_demand else node.spot) * HOURS_PER_MONTH for n in names
    )
    just_over = {"gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": expected * 0.999}}
    [v] = judge(preview, config=just_over).of("gpu-monthly-cost-ceiling")
    assert f"can cost ${expected:,.0f}/month" in v.message
    just_under = {"gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": expected * 1.001}}
    assert not judge(preview, config=just_under).of("gpu-monthly-cost-ceiling")


def test_cost_ceiling_prices_the_most_expensive_type() -> None:
    pool = NodeGroupView(
        "aws", "ng", "p", True, True, True, ["g4dn.xlarge", "g5.xlarge"], 0, 4, None, True, region="us-east-1"
    )
    assert pool_cost(pool).price.instance_type == "g4dn.xlarge"  # the report: the first type
    rows = [price_row("aws", "us-east-1", t) for t in pool.instance_types]
    assert pool_cost(pool, upper_bound=True).hourly == max(r.spot for r in rows if r and r.spot is not None)
    assert "elastic_gpu/data/prices.csv" in POLICIES_BY_NAME["gpu-monthly-cost-ceiling"].description


def test_cost_ceiling_price_overrides_and_unpriced_types() -> None:
    preview = program_preview("gcp")
    report = judge(preview, config={"gpu-monthly-cost-ceiling": {"pricePerHour": {"nvidia-tesla-t4": 1e6}}})
    assert report.of("gpu-monthly-cost-ceiling")
    unpriced = judge(preview, config={"gpu-monthly-cost-ceiling": {"pricePerHour": {}}})
    assert not unpriced.of("gpu-monthly-cost-ceiling")  # n1-standard-4 + T4 are both in the table


def test_cost_ceiling_region_comes_from_the_aks_cluster_and_a_missing_price_says_how_to_give_one() -> None:
    budget_zero = {"gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": 0}}
    # The Azure program's agent pools bill in their cluster's location (eastus): priced, so over a zero budget.
    [over] = judge(program_preview("azure"), config=budget_zero).of("gpu-monthly-cost-ceiling")
    assert over.urn is None and "okspot: 3 x Standard_NC4as_T4_v3" in over.message
    moved = copy.deepcopy(program_preview("azure"))
    for r in moved.of_type("azure-native:containerservice:ManagedCluster"):
        r.inputs["location"] = "nowhere"
    violations = judge(moved, config=budget_zero).of("gpu-monthly-cost-ceiling")
    assert {v.name for v in violations} == {r.name for r in moved.of_type("azure-native:containerservice:AgentPool")}
    [ok_spot] = [v for v in violations if v.name == "ok-spot"]
    assert ok_spot.message == (
        "No price for GPU pool 'okspot' (Standard_NC4as_T4_v3) in region nowhere (missing: Standard_NC4as_T4_v3): "
        "its spend is not counted. Give the price as `elastic-gpu:prices: {Standard_NC4as_T4_v3: {onDemand: <USD/h>, "
        "spot: <USD/h>}}` in the stack's config (the preview and the offline gate read it) or under `prices` in this "
        "policy's config (`pulumi preview --policy-pack-config`)."
    )


def test_scale_to_zero_exception_and_fallback_opt_out() -> None:
    preview = program_preview("aws")
    report = judge(
        preview,
        config={
            "spot-gpu-pool-scales-to-zero": {"exceptions": ["c1-bad-minsize"]},
            "spot-gpu-pool-on-demand-fallback": {"optOut": ["lonely"]},
        },
    )
    assert not report.of("spot-gpu-pool-scales-to-zero")
    assert not report.of("spot-gpu-pool-on-demand-fallback")


def test_max_size_cap_and_tag_keys_are_configurable() -> None:
    preview = program_preview("aws")
    report = judge(
        preview,
        config={"gpu-pool-max-size-cap": {"maxNodesPerPool": 3}, "cost-allocation-tags": {"requiredKeys": ["owner"]}},
    )
    assert "ok-spot" in _names(report, "gpu-pool-max-size-cap")
    assert "ok-vpc" in _names(report, "cost-allocation-tags")


def test_enforcement_level_override_and_disable() -> None:
    preview = program_preview("aws")
    levels = {"gpu-pool-noschedule-taint": "advisory", "eks-launch-template-imdsv2": "disabled"}
    report = judge(preview, config=levels)
    assert {v.level for v in report.of("gpu-pool-noschedule-taint")} == {"advisory"}
    assert not report.of("eks-launch-template-imdsv2")


def test_defaults_apply_without_config() -> None:
    assert program_report("aws").of("gpu-pool-max-size-cap")  # the default cap 20 < 50
    schema = POLICIES_BY_NAME["gpu-pool-max-size-cap"].config_schema
    assert schema is not None and schema.properties["maxNodesPerPool"]["default"] == 20
