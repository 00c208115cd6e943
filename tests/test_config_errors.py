"""Bad stack config fails with one ConfigError naming field, value and what is allowed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from elastic_gpu.config import load_stack_config, parse_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.prices import price_row
from tests.conftest import ROOT, stack_values

P = "elastic-gpu:"


def errors_for(mutate) -> str:
    values = stack_values("aws-dev")
    mutate(values)
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return str(exc.value)


def test_shipped_aws_stacks_parse() -> None:
    for stack in ("aws-dev", "aws-prod"):
        cfg = load_stack_config(stack_values(stack))
        assert cfg.cloud == "aws"
        assert any(p.on_demand_fallback for p in cfg.gpu_pools) or stack == "aws-dev"


def test_unknown_top_level_key_is_named_with_allowed_keys() -> None:
    msg = errors_for(lambda v: v.update({P + "gpuPool": []}))
    assert "gpuPool: unknown key; did you mean 'gpuPools'? allowed keys: cloud, cluster, generalPool, gpuPools" in msg


def test_unknown_nested_key_lists_the_keys_of_that_section() -> None:
    msg = errors_for(lambda v: v[P + "generalPool"].update({"instanceType": "m5.large"}))
    assert (
        "generalPool.instanceType: unknown key; did you mean 'instanceTypes'? allowed keys: instanceTypes, minSize"
        in msg
    )


def test_unknown_cloud() -> None:
    msg = errors_for(lambda v: v.update({P + "cloud": "ibm"}))
    assert "cloud: Input should be 'aws', 'azure' or 'gcp' (got 'ibm')" in msg


def test_min_above_max_names_both_values() -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"][0].update({"minSize": 5, "maxSize": 4}))
    assert "gpuPools[0].maxSize: must be >= minSize (got minSize=5, maxSize=4)" in msg


def test_negative_size() -> None:
    msg = errors_for(lambda v: v[P + "generalPool"].update({"maxSize": -1}))
    assert "generalPool.maxSize: Input should be greater than or equal to 0 (got -1)" in msg


def test_gpu_pool_with_cpu_instance_type() -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"][0].update({"gpu": None, "instanceTypes": ["m5.large"]}))
    assert "gpuPools[0].instanceTypes[0]: 'm5.large' carries no GPU we know on aws" in msg


def test_instance_type_of_another_gpu() -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"][0].update({"instanceTypes": ["g5.xlarge"]}))
    assert "gpuPools[0].instanceTypes[0]: 'g5.xlarge' has NVIDIA A10G, not gpu 't4'" in msg


def test_unknown_gpu_lists_known_ones() -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"][0].update({"gpu": "gb300"}))
    assert "gpuPools[0].gpu: unknown GPU 'gb300'; allowed: t4, a10g, a10, l4, l40s, v100, a100" in msg


def test_mixed_gpu_counts_in_one_pool() -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"][0].update({"instanceTypes": ["g4dn.xlarge", "g4dn.12xlarge"]}))
    assert "gpuPools[0].instanceTypes: all types in a pool must carry the same GPU count" in msg
    assert "got counts [1, 4]" in msg


def test_zone_outside_region() -> None:
    msg = errors_for(lambda v: v[P + "cluster"].update({"zones": ["us-west-2a", "eu-west-1b"]}))
    assert "cluster.zones[1]: 'eu-west-1b' is not a zone of region 'us-west-2'" in msg


def test_unsupported_kubernetes_version() -> None:
    msg = errors_for(lambda v: v[P + "cluster"].update({"kubernetesVersion": "1.27"}))
    assert "cluster.kubernetesVersion: '1.27' is not supported on aws; allowed: 1.32, 1.33, 1.34, 1.35, 1.36" in msg


def test_unquoted_version_is_a_type_error_not_a_silent_float() -> None:
    msg = errors_for(lambda v: v[P + "cluster"].update({"kubernetesVersion": 1.3}))
    assert "cluster.kubernetesVersion: Input should be a valid string (got 1.3)" in msg


def test_general_pool_on_spot_is_refused_on_eks() -> None:
    msg = errors_for(lambda v: v[P + "generalPool"].update({"spot": True}))
    assert "generalPool.spot: the cluster-autoscaler runs on the general pool and must never run on spot nodes" in msg


def test_general_pool_min_zero() -> None:
    msg = errors_for(lambda v: v[P + "generalPool"].update({"minSize": 0}))
    assert "generalPool.minSize: must be >= 1" in msg


def test_per_zone_max_below_zone_count() -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"][0].update({"maxSize": 1}))
    assert "gpuPools[0].maxSize: with perZone the total max is split across 2 zones, so it must be >= 2" in msg


def test_fallback_without_spot() -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"][0].update({"spot": False}))
    assert "gpuPools[0].onDemandFallback: only a spot pool can fall back to on-demand" in msg


def test_duplicate_pool_names() -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"].append(dict(v[P + "gpuPools"][0])))
    assert "gpuPools[1].name: 't4' is used by more than one GPU pool" in msg


def test_every_problem_is_reported_at_once() -> None:
    def mutate(v: dict) -> None:
        v[P + "gpuPools"][0].update({"minSize": 9})
        v[P + "cluster"].update({"kubernetesVersion": "1.20"})

    exc_text = errors_for(mutate)
    assert "(2 problem(s))" in exc_text
    assert "gpuPools[0].maxSize" in exc_text and "cluster.kubernetesVersion" in exc_text


def test_other_namespaces_are_ignored() -> None:
    cfg = parse_stack_config({k.removeprefix(P): v for k, v in stack_values("aws-dev").items()})
    values = stack_values("aws-dev") | {"aws:profile": "dev"}
    assert load_stack_config(values) == cfg


def test_cli_prints_the_error_without_traceback(program_dir) -> None:
    values = stack_values("aws-dev")
    values[P + "gpuPools"][0]["maxSize"] = -3
    directory = program_dir(values)
    run = subprocess.run(
        [sys.executable, "-m", "elastic_gpu", "preview", "--stack", "test", "--program", str(directory)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert run.returncode == 2
    assert "gpuPools[0].maxSize" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout == ""


def test_unknown_stack_lists_known_ones() -> None:
    from elastic_gpu.tools.offline.runner import run_preview

    with pytest.raises(ConfigError, match=r"known stacks: .*aws-dev.*aws-prod"):
        run_preview("aws-staging", ROOT)


# --- elastic-gpu:prices: price overrides over the table (elastic_gpu/data/prices.csv) ----------


def price_errors(prices: dict) -> str:
    return errors_for(lambda v: v.update({P + "prices": prices}))


def test_price_override_parses_over_the_table_row() -> None:
    values = stack_values("aws-dev") | {P + "prices": {"g4dn.xlarge": {"spot": 0.1, "evictionRate": 0.08}}}
    cfg = load_stack_config(values)
    assert cfg.prices["g4dn.xlarge"].spot == 0.1 and cfg.prices["g4dn.xlarge"].on_demand is None
    assert load_stack_config(stack_values("aws-dev")).prices == {}


def test_price_override_spot_above_on_demand() -> None:
    msg = price_errors({"g4dn.xlarge": {"onDemand": 0.5, "spot": 0.9}})
    assert "prices.g4dn.xlarge.spot: must be <= onDemand (got spot=0.9, onDemand=0.5)" in msg


def test_price_override_spot_above_the_tables_on_demand() -> None:
    row = price_row("aws", "us-west-2", "g4dn.xlarge")
    assert row is not None
    msg = price_errors({"g4dn.xlarge": {"spot": row.on_demand + 1}})
    assert (
        f"prices.g4dn.xlarge.spot: must be <= the on-demand price {row.on_demand} of elastic_gpu/data/prices.csv "
        f"(us-west-2) (got {row.on_demand + 1})"
    ) in msg


def test_price_override_of_an_item_without_a_row_needs_on_demand() -> None:
    def change(v: dict) -> None:
        v[P + "generalPool"]["instanceTypes"] = ["m7i.large"]
        v[P + "prices"] = {"m7i.large": {"spot": 0.1}}

    assert price_row("aws", "us-west-2", "m7i.large") is None
    assert (
        "prices.m7i.large.onDemand: required: elastic_gpu/data/prices.csv has no aws row for 'm7i.large' in region "
        "'us-west-2', so the override must give the on-demand USD per hour"
    ) in errors_for(change)


def test_price_override_of_an_item_no_pool_uses_is_a_typo() -> None:
    msg = price_errors({"g4dn.xlarg": {"spot": 0.1}, "p5.48xlarge": {"onDemand": 90}})
    assert "prices.g4dn.xlarg: no pool of this stack uses 'g4dn.xlarg'; did you mean 'g4dn.xlarge'? allowed: " in msg
    assert "prices.p5.48xlarge: no pool of this stack uses 'p5.48xlarge'; " in msg
    assert "allowed: m6i.large, m6a.large, m5.large, g4dn.xlarge" in msg


def test_gcp_price_overrides_may_name_the_pools_accelerators() -> None:
    values = stack_values("gcp-dev") | {P + "prices": {"nvidia-tesla-t4": {"spot": 0.12}}}
    assert load_stack_config(values).prices["nvidia-tesla-t4"].spot == 0.12


def test_price_override_ranges_types_and_keys() -> None:
    msg = price_errors(
        {
            "g4dn.xlarge": {"evictionRate": 1.5, "onDemand": -1},
            "g6.xlarge": {"spotPrice": 0.2},
            "p3.2xlarge": {"spot": "0.1"},
        }
    )
    assert "prices.g4dn.xlarge.evictionRate: Input should be less than or equal to 1 (got 1.5)" in msg
    assert "prices.g4dn.xlarge.onDemand: Input should be greater than or equal to 0 (got -1)" in msg
    assert "prices.g6.xlarge.spotPrice: unknown key; allowed keys: onDemand, spot, evictionRate" in msg
    assert "prices.p3.2xlarge.spot: Input should be a valid number (got '0.1')" in msg
    assert "(4 problem(s))" in msg


def test_price_override_must_set_something() -> None:
    msg = price_errors({"g4dn.xlarge": {}})
    assert "prices.g4dn.xlarge: set at least one of onDemand, spot, evictionRate (got {})" in msg
