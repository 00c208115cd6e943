"""GKE flex-start: nodeConfig.flexStart forces a replacement (terraform-provider-google schemaNodeConfig:
flex_start ForceNew), and `cost` says its on-demand price is an upper bound."""

from __future__ import annotations

import copy
import json

from conftest import stack_preview

from elastic_gpu.__main__ import main
from elastic_gpu.gcp import GKE_NODE_POOL
from elastic_gpu.tools.offline.diff import Side, build_diff
from elastic_gpu.tools.replacement import replacing_paths


def test_flex_start_change_is_a_replacement() -> None:
    assert replacing_paths(GKE_NODE_POOL, ["nodeConfig.flexStart"]) == ["nodeConfig.flexStart"]
    base = stack_preview("gcp-prod")
    head = copy.deepcopy(base.resources)
    [pool] = [r for r in head if r.type == GKE_NODE_POOL and r.inputs["nodeConfig"].get("flexStart")]
    pool.inputs["nodeConfig"]["flexStart"] = False
    diff = build_diff(
        Side("base", {r.urn: r for r in base.resources}, base.config),
        Side("head", {r.urn: r for r in head}, base.config),
    )
    [change] = [c for c in diff.changes if c.name == pool.name]
    assert change.op == "replace" and "nodeConfig.flexStart" in change.forced_by


def test_cost_marks_flex_start_as_an_upper_bound(capsys) -> None:
    assert main(["cost", "--stack", "gcp-prod", "--gpu-hours", "100", "--json"]) == 0
    rows = {r["pool"]: r for r in json.loads(capsys.readouterr().out)["pools"]}
    assert (rows["training"]["capacity"], rows["training"]["upper_bound"]) == ("flex-start", True)
    assert (rows["inference"]["capacity"], rows["inference"]["upper_bound"]) == ("spot", False)
    assert main(["cost", "--stack", "gcp-prod", "--gpu-hours", "100"]) == 0
    out = capsys.readouterr().out
    assert "training   flex-start" in out and "Upper bound: flex-start pools are priced at on-demand" in out


def test_preview_cost_table_marks_flex_start(capsys) -> None:
    assert main(["preview", "--stack", "gcp-prod"]) == 0
    out = capsys.readouterr().out
    assert "flex-start  a2-highgpu-1g" in out and "up to 53% below on-demand" in out


def _with_training(program_dir, **pool):
    from elastic_gpu.tools.offline.runner import run_preview
    from tests.conftest import stack_values

    values = stack_values("gcp-prod")
    values["elastic-gpu:gpuPools"][1].update(pool)
    return run_preview("test", program_dir(values))


def test_queued_pools_declare_their_max_run_duration(program_dir) -> None:
    [dws] = [r for r in stack_preview("gcp-prod").of_type(GKE_NODE_POOL) if r.inputs["nodeConfig"].get("flexStart")]
    assert dws.inputs["nodeConfig"]["maxRunDuration"] == "604800s"  # default: 7 days, GKE's most for flex-start
    others = [
        r for r in stack_preview("gcp-prod").of_type(GKE_NODE_POOL) if not r.inputs["nodeConfig"].get("flexStart")
    ]
    assert others and all("maxRunDuration" not in r.inputs["nodeConfig"] for r in others)
    [dws] = [r for r in _with_training(program_dir, maxRunHours=24).of_type(GKE_NODE_POOL) if "dws" in r.name]
    assert dws.inputs["nodeConfig"]["maxRunDuration"] == "86400s"


def test_max_run_hours_is_checked() -> None:
    import pytest

    from elastic_gpu.config import load_stack_config
    from elastic_gpu.errors import ConfigError
    from tests.conftest import stack_values

    def errors(i: int, **pool) -> str:
        values = stack_values("gcp-prod")
        values["elastic-gpu:gpuPools"][i].update(pool)
        with pytest.raises(ConfigError) as exc:
            load_stack_config(values)
        return str(exc.value)

    assert "gpuPools[1].maxRunHours: 200 h is out of range; allowed: 1 to 168 h" in errors(1, maxRunHours=200)
    assert "gpuPools[0].maxRunHours: bounds how long a queued-provisioning (flex-start) node runs" in (
        errors(0, maxRunHours=24)
    )
    values = stack_values("aws-prod")
    values["elastic-gpu:gpuPools"][0]["maxRunHours"] = 24
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    assert "maxRunHours: a GCP-only setting" in str(exc.value)
