"""A pool's promise of a time to its on-demand fallback (maxMinutesToFallback): the
setting, the `spot-gpu-pool-fallback-promise` policy and what `simulate --json` reports."""

from __future__ import annotations

import copy
import json

import pytest
from pulumi_policy import StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from elastic_gpu.__main__ import main
from elastic_gpu.compose import PlannedCluster
from elastic_gpu.errors import ConfigError
from elastic_gpu.spot_gpu_pool import PROMISE_INPUT, SpotGpuPoolArgs, spot_gpu_pool_problems
from elastic_gpu.tools.offline.policy_run import run_policies, stack_resources
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.tools.policy.fallback_rules import validate_fallback_promise
from elastic_gpu.tools.simulation import simulate
from tests.conftest import ROOT, stack_preview, stack_values
from tests.docs_pages import page

P = "elastic-gpu:"
RULE = "spot-gpu-pool-fallback-promise"
ADVISORY = "spot-gpu-pool-fallback-promise-advisory"


def violations(preview, rule: str = RULE):
    return [v for v in run_policies(preview).violations if v.policy == rule]


def test_shipped_stacks_keep_their_promise_and_record_it():
    for stack, promise in [("aws-dev", 10.0), ("azure-dev", 20.0), ("azure-prod", 20.0), ("gcp-prod", 10.0)]:
        preview = stack_preview(stack)
        assert violations(preview) == [] and violations(preview, ADVISORY) == [], stack
        recorded = [r.inputs.get(PROMISE_INPUT) for r in preview.of_type("elastic-gpu:index:SpotGpuPool")]
        assert promise in recorded, (stack, recorded)


def test_two_aks_spot_sizes_break_the_default_promise_and_the_advice_names_the_evidence_and_the_knobs(program_dir):
    """azure-prod inference as it was: two VM sizes, two spot agent pools taking turns in backoff. AKS's
    figures rest on its documentation, not on code that runs as is: the promise is advisory there."""
    values = stack_values("azure-prod")
    values[P + "gpuPools"][0]["instanceTypes"] = ["Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3"]
    preview = run_preview("test", program_dir(values))
    assert violations(preview) == []
    (v,) = violations(preview, ADVISORY)
    assert v.level == "advisory" and v.name == "inference"
    assert "within 20 min (maxMinutesToFallback)" in v.message
    assert "92.67 min after the pod's creation at worst" in v.message
    assert "at most 1 spot node group(s) instead of 2" in v.message
    assert "a single instance type (Standard_NC4as_T4_v3" in v.message
    # Two pools reach the fallback only with a timeout under the 5 min initial backoff: shorter than a GPU node
    # takes to be Ready, so that knob is not offered (the autoscaler would time out healthy nodes).
    assert "maxNodeProvisionTime" not in v.message
    assert "perZone: false" not in v.message  # already one agent pool across the zones
    assert "evidence is docs" in v.message and "TriggeredScaleUp" in v.message


def test_an_eks_pool_that_breaks_its_promise_is_refused(program_dir):
    """EKS runs the cluster-autoscaler this library deploys, as is: its figure is source, the rule mandatory.
    aws-prod inference, three zonal spot groups: 1 to 5.5 min; a 3-minute promise is broken."""
    values = stack_values("aws-prod")
    values[P + "gpuPools"][0]["maxMinutesToFallback"] = 3
    preview = run_preview("test", program_dir(values))
    assert violations(preview, ADVISORY) == []
    (v,) = violations(preview)
    assert v.level == "mandatory" and "5.5 min after the pod's creation at worst" in v.message
    assert "evidence is" not in v.message


def test_zonal_aks_spot_pools_without_a_promise_are_told_perzone_false(program_dir):
    values = stack_values("azure-dev")
    values[P + "gpuPools"][0]["perZone"] = True
    (v,) = violations(run_preview("test", program_dir(values)), ADVISORY)
    assert "perZone: false (1 spot node group(s) across the zones)" in v.message


def test_three_aks_spot_pools_never_reach_the_fallback(program_dir, capsys):
    values = stack_values("azure-dev")
    values[P + "cluster"]["zones"] = ["1", "2", "3"]
    values[P + "gpuPools"][0]["maxSize"] = 6
    values[P + "gpuPools"][0]["perZone"] = True
    values[P + "gpuPools"][0]["maxMinutesToFallback"] = 95
    program = program_dir(values)
    (v,) = violations(run_preview("test", program), ADVISORY)
    assert "never (the spot groups take turns leaving their backoff)" in v.message
    assert main(["simulate", "--stack", "test", "--program", str(program), "--json"]) == 0
    (pool,) = json.loads(capsys.readouterr().out)["pools"]
    # Fast delete: three loops after the 30 s wait; a scale-set-level error: never.
    assert pool["minutes_to_fallback"] == {"min": 1.0, "max": "never"} and pool["max_minutes_to_fallback"] == 95.0
    assert (
        pool["regimes"]["scale-set-level error (waits for maxNodeProvisionTime)"]["all spot groups out of capacity"]
        == "never"
    )
    assert pool["breaks_promise"] is True
    # Advisory: reported, not a failure of the gate.
    assert main(["policy", "--stack", "test", "--program", str(program)]) == 0


def test_a_larger_promise_is_kept(program_dir):
    values = stack_values("azure-prod")
    values[P + "gpuPools"][0]["instanceTypes"] = ["Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3"]
    values[P + "gpuPools"][0]["maxMinutesToFallback"] = 93
    assert violations(run_preview("test", program_dir(values)), ADVISORY) == []


def test_simulate_json_gives_the_range_the_promise_and_their_sources(capsys):
    assert main(["simulate", "--stack", "azure-dev", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (t4,) = out["pools"]
    # One spot agent pool across both zones, from the pod's creation: 30 to 40 s, then one to two loops when AKS
    # deletes the failed VM at once, or max-node-provision-time (15 min) and one to two loops more when a
    # scale-set-level error is seen only by the timeout.
    assert t4["minutes_to_fallback"] == {"min": 0.67, "max": 16.0}
    assert t4["max_minutes_to_fallback"] == 20.0
    assert "max-node-provision-time" in t4["minutes_to_fallback_source"]
    assert t4["minutes_to_fallback_evidence"] == "docs"
    assert t4["max_minutes_to_fallback_source"] == "SpotGpuPool input maxMinutesToFallback"
    assert t4["minutes_to_first_node"] == {"min": 0.5, "max": 16.0}
    # The agent pool spans both zones and AKS's autoscaler is not zone-aware: with one zone out, the pool may
    # fail whole and the pod waits for the fallback.
    assert t4["scenarios"]["one zone has spot capacity (not zone-aware)"] == {"min": 0.5, "max": 16.0}
    names = {c["name"] for c in out["backoff_constants"]}
    assert {"scan-interval", "initial-node-group-backoff-duration", "unschedulablePodWithGpuTimeBuffer"} <= names


def test_a_pool_without_fallback_has_no_promise_and_its_first_node_may_never_come(capsys):
    assert main(["simulate", "--stack", "aws-prod", "--json"]) == 0
    training = json.loads(capsys.readouterr().out)["pools"][1]
    assert training["fallback"] is None and training["minutes_to_fallback"] is None
    assert training["max_minutes_to_fallback"] is None
    assert training["scenarios"]["all spot groups out of capacity"] == "never"
    assert training["minutes_to_first_node"] == {"min": 0.5, "max": "never"}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, "gpuPools[0].maxMinutesToFallback: Input should be greater than 0 (got -1)"),
        (0, "gpuPools[0].maxMinutesToFallback: Input should be greater than 0 (got 0)"),
        ("30", "gpuPools[0].maxMinutesToFallback: Input should be a valid number (got '30')"),
        (True, "gpuPools[0].maxMinutesToFallback: Input should be a valid number (got True)"),
    ],
)
def test_bad_promise_is_a_config_error(program_dir, value, message):
    values = stack_values("aws-dev")
    values[P + "gpuPools"][0]["maxMinutesToFallback"] = value
    with pytest.raises(ConfigError) as exc:
        run_preview("test", program_dir(values))
    assert message in str(exc.value)


def test_a_promise_without_a_fallback_is_refused_before_any_resource(program_dir):
    values = stack_values("aws-prod")
    values[P + "gpuPools"][1]["maxMinutesToFallback"] = 10
    with pytest.raises(ConfigError) as exc:
        run_preview("test", program_dir(values))
    # the same rule as SpotGpuPoolArgs', in the stack file's words
    assert "gpuPools[1].maxMinutesToFallback: set only with onDemandFallback (got 10.0)" in str(exc.value)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (-1, "must be a number of minutes > 0 (got -1)"),
        (0, "must be a number of minutes > 0 (got 0)"),
        (float("nan"), "must be a finite number, got nan"),
        ("30", "must be a number, got str '30'"),
        (15, None),
    ],
)
def test_args_refuse_a_promise_that_is_not_a_positive_number(value, problem):
    handle = PlannedCluster("aws", "c", ["us-east-1a", "us-east-1b"], "1.33", {})
    args = SpotGpuPoolArgs(
        cluster=handle,
        instance_types=["g4dn.xlarge"],
        max_size=2,
        on_demand_fallback=True,
        max_minutes_to_fallback=value,  # type: ignore[arg-type]
    )
    problems = [p for p in spot_gpu_pool_problems("p", args) if "max_minutes_to_fallback" in p]
    assert problems == ([f"SpotGpuPool 'p': SpotGpuPoolArgs.max_minutes_to_fallback: {problem}"] if problem else [])


def test_the_rule_says_it_cannot_run_while_a_value_it_reads_is_unknown():
    """Not silence: the rule raises the engine's UnknownValueError, which CrossGuard (and the offline run)
    reports as an advisory "can't run policy ... during preview"; `pulumi up` judges the known values."""
    resources = stack_resources(copy.deepcopy(stack_preview("azure-dev")))
    pools = [r for r in resources if r.resource_type == "azure-native:containerservice:AgentPool"]
    target = pools[0].props["__target"]
    target["vmSize"] = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # pulumi_policy's unknown string
    reports: list[str] = []
    with pytest.raises(UnknownValueError) as exc:
        validate_fallback_promise(StackValidationArgs(resources, {}), lambda m, urn=None: reports.append(m))
    assert exc.value.message == "string value at .vmSize can't be known during preview" and reports == []


def test_an_unknown_the_simulation_does_not_read_does_not_stop_the_rule(program_dir) -> None:
    """A real preview leaves many values unknown (a cluster's role, a secret): the rule judges what it reads."""
    config = stack_values("aws-dev")
    config["elastic-gpu:gpuPools"][0]["maxMinutesToFallback"] = 0.5  # the figure is 0.83 to 3 min: broken
    resources = stack_resources(run_preview("test", program_dir(config)))
    (cluster,) = [r for r in resources if r.resource_type == "aws:eks/cluster:Cluster"]
    cluster.props["__target"]["roleArn"] = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # unknown until the role exists
    with pytest.raises(UnknownValueError):
        cluster.props["roleArn"]  # as the engine hands it
    reports: list[str] = []
    validate_fallback_promise(StackValidationArgs(resources, {}), lambda m, urn=None: reports.append(m))
    assert len(reports) == 1 and "promises its on-demand fallback within 0.5 min" in reports[0]


def test_readme_fallback_table_is_what_simulate_says():
    readme = page("simulate.md")
    header = "| Stack | Pool | Spot groups | To fallback | Promise | Evidence |"
    rows = readme[readme.index(header) :].split("\n\n", 1)[0].splitlines()[2:]
    table = {tuple(c.strip() for c in row.strip("|").split("|")) for row in rows}
    expected = set()
    for stack in ("aws-dev", "aws-prod", "azure-dev", "azure-prod", "gcp-dev", "gcp-prod"):
        for o in simulate(stack_preview(stack)):
            if o.fallback is None:
                continue
            spot = [g for tier in o.tiers for g in tier if g.capacity == "spot"]
            zonal = len(spot) > 1 and all(len(g.zones) == 1 for g in spot)
            count = f"{len(spot)} (zones)" if zonal else str(len(spot))
            promise = f"{o.max_minutes_to_fallback:g} min"
            expected.add((stack, o.pool, count, str(o.minutes_to_fallback), promise, o.evidence.kind))
    assert table == expected


def test_a_single_zone_pool_with_spot_capacity_is_asked_at_once(capsys):
    """gcp-dev: one zone, one spot node pool, no fallback: with capacity its first node is asked once the
    pod is 30 s old, at the next loop; with none it never comes; spot back after 60 min: when the pool's
    backoff lets the autoscaler ask."""
    assert main(["simulate", "--stack", "gcp-dev", "--json"]) == 0
    (t4,) = json.loads(capsys.readouterr().out)["pools"]
    assert t4["scenarios"]["one zone has spot capacity"] == {"min": 0.5, "max": 0.67}
    assert t4["scenarios"]["all spot groups out of capacity"] == "never"
    assert t4["minutes_to_first_node"]["min"] == 0.5 and t4["minutes_to_first_node"]["max"] == "never"


def test_the_provision_time_advice_never_goes_below_a_gpu_nodes_time_to_be_ready(program_dir):
    """One spot agent pool falls back a minute after maxNodeProvisionTime at worst: an 11-minute promise is kept with
    10m, the floor (a GPU node's time to be Ready, GPU_NODE_READY); a 10-minute one would need 9m, below the floor,
    so the advice does not offer it (the autoscaler would time out the healthy GPU nodes it asked for)."""
    values = stack_values("azure-dev")
    values[P + "gpuPools"][0]["maxMinutesToFallback"] = 11
    (v,) = violations(run_preview("test", program_dir(values)), ADVISORY)
    assert "autoscaler.maxNodeProvisionTime: 10m (a failed spot group is seen only then; no less than 10m" in v.message
    values[P + "gpuPools"][0]["maxMinutesToFallback"] = 10
    (v,) = violations(run_preview("test", program_dir(values)), ADVISORY)
    assert "maxNodeProvisionTime" not in v.message and "raise maxMinutesToFallback" in v.message


def test_aks_gpu_pools_default_to_one_agent_pool_across_the_zones(program_dir):
    """perZone unset on AKS: one spot agent pool per VM size across the zones, which reaches the fallback within
    the default promise in both regimes; perZone: true still makes a pool per zone."""
    values = stack_values("azure-dev")
    assert "perZone" not in values[P + "gpuPools"][0]
    preview = run_preview("test", program_dir(values))
    spot = [
        r
        for r in preview.of_type("azure-native:containerservice:AgentPool")
        if r.inputs.get("scaleSetPriority") == "Spot"
    ]
    (pool,) = spot
    assert pool.inputs["availabilityZones"] == ["1", "2"]
    assert violations(preview, ADVISORY) == []
    values[P + "gpuPools"][0]["perZone"] = True
    spot = [
        r
        for r in run_preview("test", program_dir(values)).of_type("azure-native:containerservice:AgentPool")
        if r.inputs.get("scaleSetPriority") == "Spot"
    ]
    assert sorted(tuple(r.inputs["availabilityZones"]) for r in spot) == [("1",), ("2",)]


def test_eks_gpu_pools_still_default_to_a_group_per_zone(program_dir):
    values = stack_values("aws-dev")
    del values[P + "gpuPools"][0]["perZone"]
    groups = run_preview("test", program_dir(values)).of_type("aws:eks/nodeGroup:NodeGroup")
    spot = [g for g in groups if g.inputs.get("capacityType") == "SPOT"]
    assert len(spot) == 2


def test_a_program_pool_takes_its_clouds_per_zone_default():
    aks = PlannedCluster("azure", "c", ["1", "2"], "1.35", {})
    eks = PlannedCluster("aws", "c", ["us-west-2a", "us-west-2b"], "1.35", {})
    assert SpotGpuPoolArgs(cluster=aks, instance_types=["Standard_NC4as_T4_v3"], max_size=2).pool_per_zone is False
    assert SpotGpuPoolArgs(cluster=eks, instance_types=["g4dn.xlarge"], max_size=2).pool_per_zone is True
    given = SpotGpuPoolArgs(cluster=aks, instance_types=["Standard_NC4as_T4_v3"], max_size=2, per_zone=True)
    assert given.pool_per_zone is True


def test_the_gate_judges_a_pool_on_an_existing_aks_cluster(tmp_path, capsys):
    """AksCluster.existing declares no ManagedCluster: the gate judges its pools with AKS's default profile (the
    priority expander that ClusterAutoscaler requires). The shipped example keeps its promise; with a pool per
    zone it breaks it, as on a cluster the library creates."""
    example = ROOT / "examples" / "existing-aks"
    preview = run_preview("dev", example)
    assert violations(preview) == [] and violations(preview, ADVISORY) == []
    (t4,) = simulate(preview)
    assert t4.max_minutes_to_fallback == 20.0 and t4.minutes_to_fallback.max == 16.0
    assert "AKS autoScalerProfile defaults" in stack_resources_source(preview)
    program = tmp_path / "existing-aks"
    program.mkdir()
    for f in example.iterdir():
        (program / f.name).write_text(f.read_text())
    main_py = program / "__main__.py"
    main_py.write_text(
        main_py.read_text().replace("on_demand_fallback=True,", "on_demand_fallback=True, per_zone=True,")
    )
    (v,) = violations(run_preview("dev", program), ADVISORY)
    assert v.name == "t4" and "92.67 min after the pod's creation at worst" in v.message
    assert "perZone: false (1 spot node group(s) across the zones)" in v.message


def stack_resources_source(preview) -> str:
    from elastic_gpu.tools.simulation.timings import autoscaler_settings

    return autoscaler_settings(preview).source
