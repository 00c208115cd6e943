"""Policy config: schema defaults, overrides, exceptions, the cost ceiling, enforcement levels."""

from __future__ import annotations

from policy_programs import program_preview, program_report

from components.offline.policy_run import run_policies
from components.prices import HOURS_PER_MONTH, PRICES
from policy_rules import POLICIES_BY_NAME


def _names(report, policy):
    return {v.name or "<stack>" for v in report.of(policy)}


def test_cost_ceiling_under_and_over_budget() -> None:
    preview = program_preview("aws")
    under = run_policies(preview, config={"gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": 1_000_000}})
    assert not under.of("gpu-monthly-cost-ceiling")
    over = run_policies(preview, config={"gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": 100}})
    [v] = over.of("gpu-monthly-cost-ceiling")
    assert v.level == "advisory" and v.urn is None
    # bad-toobig alone: 50 spot g4dn.xlarge at the table's spot price, 730 h
    cost = 50 * PRICES[("aws", "g4dn.xlarge")].spot * HOURS_PER_MONTH
    assert f"${cost:,.0f}" in v.message


def test_cost_ceiling_price_overrides_and_unpriced_types() -> None:
    preview = program_preview("gcp")
    report = run_policies(preview, config={"gpu-monthly-cost-ceiling": {"pricePerHour": {"nvidia-tesla-t4": 1e6}}})
    assert report.of("gpu-monthly-cost-ceiling")
    unpriced = run_policies(preview, config={"gpu-monthly-cost-ceiling": {"pricePerHour": {}}})
    assert not unpriced.of("gpu-monthly-cost-ceiling")  # n1-standard-4 + T4 are both in the table


def test_scale_to_zero_exception_and_fallback_opt_out() -> None:
    preview = program_preview("aws")
    report = run_policies(
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
    report = run_policies(
        preview,
        config={"gpu-pool-max-size-cap": {"maxNodesPerPool": 3}, "cost-allocation-tags": {"requiredKeys": ["owner"]}},
    )
    assert "ok-spot" in _names(report, "gpu-pool-max-size-cap")
    assert "ok-vpc" in _names(report, "cost-allocation-tags")


def test_enforcement_level_override_and_disable() -> None:
    preview = program_preview("aws")
    levels = {"gpu-pool-noschedule-taint": "advisory", "eks-launch-template-imdsv2": "disabled"}
    report = run_policies(preview, config=levels)
    assert {v.level for v in report.of("gpu-pool-noschedule-taint")} == {"advisory"}
    assert not report.of("eks-launch-template-imdsv2")


def test_defaults_apply_without_config() -> None:
    assert program_report("aws").of("gpu-pool-max-size-cap")  # the default cap 20 < 50
    schema = POLICIES_BY_NAME["gpu-pool-max-size-cap"].config_schema
    assert schema is not None and schema.properties["maxNodesPerPool"]["default"] == 20
