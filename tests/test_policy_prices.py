"""The gate prices pools as the preview does: the stack config's `elastic-gpu:prices` reach the cost policy, and a
region without a price says how to give one (never a file inside the installed package)."""

from __future__ import annotations

from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import stack_values

#: A region the shipped table has no row for.
REGION, ZONES = "ap-southeast-4", ["ap-southeast-4a", "ap-southeast-4b"]


def _values() -> dict:
    values = stack_values("aws-dev")
    values["elastic-gpu:cluster"] = {**values["elastic-gpu:cluster"], "region": REGION, "zones": ZONES}
    return values


def test_a_region_without_a_price_says_how_to_give_one(program_dir) -> None:
    report = run_policies(run_preview("test", program_dir(_values())))
    missing = [v for v in report.of("gpu-monthly-cost-ceiling") if v.message.startswith("No price")]
    assert missing
    for v in missing:
        assert "ap-southeast-4" in v.message
        assert "elastic-gpu:prices: {g4dn.xlarge: {onDemand: <USD/h>, spot: <USD/h>}}" in v.message
        assert "prices.csv" not in v.message and "site-packages" not in v.message


def test_the_gate_reads_the_stack_configs_prices(program_dir) -> None:
    values = _values()
    values["elastic-gpu:prices"] = {"g4dn.xlarge": {"onDemand": 1.0, "spot": 0.5}}
    preview = run_preview("test", program_dir(values))
    # a budget of $1 shows the total the gate computed from those prices
    report = run_policies(preview, config={"gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": 1}})
    [over] = report.of("gpu-monthly-cost-ceiling")
    assert "No price" not in over.message
    # t4: two spot groups of max 2 at $0.5/h and two on-demand fallbacks of max 2 at $1/h, 730 h
    assert "at $0.500/h" in over.message and "at $1.000/h" in over.message
    assert "$4,380/month" in over.message
    # the policy's own `prices` wins over the stack's
    mine = {"gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": 1, "prices": {"g4dn.xlarge": {"onDemand": 2.0}}}}
    [over] = run_policies(preview, config=mine).of("gpu-monthly-cost-ceiling")
    assert "at $2.000/h" in over.message


def test_cost_prices_the_readme_and_default_regions(program_dir, capsys) -> None:
    """The README's EKS examples run in eu-west-1 and Pulumi's AWS default region is us-east-2: `cost` gives
    figures there (both capacity types), from rows that name their source and date."""
    import json

    from elastic_gpu.__main__ import main

    for region in ("eu-west-1", "us-east-2"):
        values = stack_values("aws-dev")
        values["elastic-gpu:cluster"] = {
            **values["elastic-gpu:cluster"],
            "region": region,
            "zones": [f"{region}a", f"{region}b"],
        }
        values["elastic-gpu:gpuPools"][0] = {
            **values["elastic-gpu:gpuPools"][0],
            "gpu": None,
            "instanceTypes": ["g5.xlarge"],
        }
        del values["elastic-gpu:gpuPools"][0]["gpu"]
        d = program_dir(values, stack=region)
        assert main(["cost", "--stack", region, "--gpu-hours", "10", "--program", str(d), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        [pool] = out["pools"]
        assert pool["region"] == region and pool["priced_as"] == "g5.xlarge"
        assert pool["on_demand_hourly"] and pool["spot_hourly"] and pool["source"] == "skypilot-aws"
        assert out["hints"] == []
