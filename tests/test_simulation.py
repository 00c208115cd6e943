"""The offline scale-up simulation, and the runtime behaviour it checks on every shipped stack."""

from __future__ import annotations

import copy
import json
import time

import kubernetes_validate
import pytest
import yaml

from elastic_gpu.__main__ import main
from elastic_gpu.errors import ConfigError
from elastic_gpu.offline.runner import run_preview
from elastic_gpu.scheduling import AKS_SPOT_TAINT, GPU_TAINT, POOL_LABEL
from elastic_gpu.simulation import simulate
from elastic_gpu.simulation.pod import pod_shape
from elastic_gpu.simulation.run import pool_contracts, simulate_pod
from elastic_gpu.simulation.templates import node_templates
from elastic_gpu.simulation.timings import autoscaler_settings
from elastic_gpu.workload import job_manifest
from tests.conftest import stack_preview, stack_values

STACKS = ["aws-dev", "aws-prod", "azure-dev", "azure-prod", "gcp-dev", "gcp-prod"]


def _outcomes(stack: str):
    return {o.pool: o for o in simulate(stack_preview(stack))}


def _groups(stack: str):
    return {t.resource: t for t in node_templates(stack_preview(stack))}


@pytest.mark.parametrize("stack", STACKS)
def test_each_pool_workload_reaches_its_spot_groups_first_then_its_fallback_never_a_general_node(stack):
    groups = _groups(stack)
    outcomes = _outcomes(stack)
    contracts = pool_contracts(stack_preview(stack))
    assert {c.pool for c in contracts} == set(outcomes) and outcomes
    for pool, o in outcomes.items():
        assert o.reaches, o.reason
        order = [g for tier in o.tiers for g in tier]
        own = {r for r, t in groups.items() if t.pool == pool}
        assert {g.resource for g in order} == own, "the workload must reach every group of its pool and no other"
        spot = [g for g in order if g.capacity == "spot"]
        on_demand = [g for g in order if g.capacity == "on-demand"]
        if spot:
            assert order[: len(spot)] == spot, "every spot group comes before any on-demand one"
            assert o.first_choice == spot[0].resource
            assert o.fallback == (on_demand[0].resource if on_demand else None)
        else:
            assert o.fallback is None
        assert all(groups[g.resource].labels.get(POOL_LABEL) == pool for g in order)


def test_shipped_pool_outcomes():
    """The figures the note quotes, from the captured resources of each stack."""
    table = {
        (s, p): (
            o.fallback is not None,
            o.minutes_to_fallback and o.minutes_to_fallback.to_json(),
            o.max_minutes_to_fallback,
            o.minutes_to_zero,
            o.worst_case_nodes,
        )
        for s in STACKS
        for p, o in _outcomes(s).items()
    }
    # Minutes to fallback: n spot groups x one attempt each (EKS: 10 s to 70 s, the ASG cache refresh;
    # GKE: 10 s to 15 s; AKS: 15 min + 1 s to 15 min + 10 s, max-node-provision-time), as the backoff
    # machine works them (tests/test_backoff.py has the timelines).
    assert table == {
        ("aws-dev", "t4"): (True, {"min": 0.33, "max": 2.33}, 10.0, 5.0, 8),
        ("aws-prod", "inference"): (True, {"min": 0.5, "max": 3.5}, 10.0, 10.0, 18),
        ("aws-prod", "training"): (False, None, None, 10.0, 6),
        ("azure-dev", "t4"): (True, {"min": 15.02, "max": 15.17}, 20.0, 5.0, 8),
        ("azure-prod", "inference"): (True, {"min": 15.02, "max": 15.17}, 20.0, 10.0, 18),
        ("azure-prod", "training"): (False, None, None, 10.0, 3),
        ("gcp-dev", "t4"): (False, None, None, 10.0, 3),
        ("gcp-prod", "inference"): (True, {"min": 0.17, "max": 0.25}, 10.0, 10.0, 18),
        ("gcp-prod", "training"): (False, None, None, 10.0, 4),
    }


def test_a_pod_tolerating_only_the_gpu_taint_does_not_reach_aks_spot():
    preview = stack_preview("azure-prod")
    templates, settings = node_templates(preview), autoscaler_settings(preview)

    def pod(pool: str):
        return {
            "kind": "Pod",
            "metadata": {"name": f"{pool}-gpu-only"},
            "spec": {
                "nodeSelector": {POOL_LABEL: pool},
                "tolerations": [{"key": GPU_TAINT.key, "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
            },
        }

    training = simulate_pod(preview, pod_shape(pod("training")), templates, settings)
    assert not training.reaches
    assert str(AKS_SPOT_TAINT) in training.reason
    inference = simulate_pod(preview, pod_shape(pod("inference")), templates, settings)
    assert inference.reaches
    assert all(g.capacity == "on-demand" for tier in inference.tiers for g in tier), "never a spot node"


def test_aks_spot_sizes_are_ranked_by_price_not_drawn_at_random(program_dir):
    values = stack_values("azure-prod")
    values["elastic-gpu:gpuPools"][0]["instanceTypes"] = ["Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3"]
    values["elastic-gpu:gpuPools"][0]["maxMinutesToFallback"] = 95
    o = {o.pool: o for o in simulate(run_preview("test", program_dir(values)))}["inference"]
    assert [[g.instance_type for g in tier] for tier in o.tiers] == [
        ["Standard_NC4as_T4_v3"],  # $0.063/h spot in eastus2's table row...
        ["Standard_NC8as_T4_v3"],  # ...before the dearer size, not tied with it
        ["Standard_NC4as_T4_v3"],
        ["Standard_NC8as_T4_v3"],
    ]
    assert [g.capacity for tier in o.tiers for g in tier] == ["spot", "spot", "on-demand", "on-demand"]


def test_maxsize_is_the_pool_total_on_every_cloud_and_the_worst_case_counts_every_group():
    for stack, pool, max_size, fallback in [
        ("aws-dev", "t4", 4, 4),
        ("azure-prod", "inference", 9, 9),
        ("gcp-prod", "inference", 9, 9),
        ("azure-prod", "training", 3, 0),
    ]:
        groups = [t for t in node_templates(stack_preview(stack)) if t.pool == pool]
        assert sum(t.max_size for t in groups if t.capacity == "spot") == max_size, (stack, pool)
        assert sum(t.max_size for t in groups if t.capacity == "on-demand") == fallback, (stack, pool)
        assert _outcomes(stack)[pool].worst_case_nodes == max_size + fallback


def test_fallback_max_size_caps_the_fallback(program_dir):
    values = stack_values("azure-prod")
    values["elastic-gpu:gpuPools"][0]["fallbackMaxSize"] = 2
    values["elastic-gpu:gpuPools"][0]["instanceTypes"] = ["Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3"]
    preview = run_preview("test", program_dir(values))
    groups = [t for t in node_templates(preview) if t.pool == "inference"]
    assert sorted(t.max_size for t in groups if t.capacity == "on-demand") == [1, 1]
    assert simulate(preview)[0].worst_case_nodes == 9 + 2


def test_a_zone_pinned_pod_gets_the_fallback_in_its_own_zone():
    preview = stack_preview("aws-dev")
    contract = next(c for c in pool_contracts(preview) if c.pool == "t4")
    job = job_manifest(contract)
    job["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2b"]}
                        ]
                    }
                ]
            }
        }
    }
    o = simulate_pod(preview, pod_shape(job), node_templates(preview), autoscaler_settings(preview))
    assert o.first_choice == "t4-spot-us-west-2b"
    assert o.fallback == "t4-fallback-us-west-2b"


def test_a_missing_ephemeral_storage_template_keeps_the_pool_at_zero():
    preview = copy.deepcopy(stack_preview("aws-dev"))
    for r in preview.of_type("aws:eks/nodeGroup:NodeGroup"):
        r.inputs["tags"] = {k: v for k, v in r.inputs["tags"].items() if not k.endswith("/ephemeral-storage")}
    o = simulate(preview)[0]
    assert not o.reaches
    assert "insufficient ephemeral-storage" in o.reason


def test_the_template_is_the_first_instance_type_so_a_bigger_pod_never_scales_an_empty_group():
    preview = stack_preview("aws-dev")
    job = job_manifest(next(iter(pool_contracts(preview))))
    job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "6"  # > g4dn.xlarge's 4
    o = simulate_pod(preview, pod_shape(job), node_templates(preview), autoscaler_settings(preview))
    assert not o.reaches
    assert "insufficient cpu" in o.reason


def test_mixed_shape_aws_group_is_rejected(program_dir):
    values = stack_values("aws-prod")
    values["elastic-gpu:gpuPools"][0]["instanceTypes"] = ["g4dn.xlarge", "g4dn.2xlarge"]
    with pytest.raises(ConfigError) as err:
        run_preview("test", program_dir(values))
    assert "gpuPools[0].instanceTypes: all types of one node group must have the same vCPUs and memory" in str(
        err.value
    )
    assert "g4dn.2xlarge (8 vCPU, 32 GiB)" in str(err.value)


def test_catalog_default_is_one_shape_on_aws():
    groups = [t for t in node_templates(stack_preview("aws-dev")) if t.pool == "t4"]
    ng = stack_preview("aws-dev").one("aws:eks/nodeGroup:NodeGroup", "t4-spot-us-west-2a")
    assert ng.inputs["instanceTypes"] == ["g4dn.xlarge"]
    assert all(t.allocatable["cpu"] == 4 for t in groups)


def test_gke_time_slicing_is_real_and_the_template_advertises_it(program_dir):
    values = stack_values("gcp-dev")
    values["elastic-gpu:devicePlugin"] = {"timeSlicingReplicas": 3}
    preview = run_preview("test", program_dir(values))
    pool = preview.one("gcp:container/nodePool:NodePool", "t4-spot")
    acc = pool.inputs["nodeConfig"]["guestAccelerators"][0]
    assert acc["gpuSharingConfig"] == {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 3}
    assert next(t for t in node_templates(preview) if t.resource == "t4-spot").allocatable["nvidia.com/gpu"] == 3


@pytest.mark.parametrize(
    ("stack", "change", "message"),
    [
        ("aws-dev", {"amiFamily": "bottlerocket"}, "'bottlerocket' nodes do not run"),
    ],
)
def test_time_slicing_is_rejected_where_the_autoscaler_template_would_lie(program_dir, stack, change, message):
    values = stack_values(stack)
    if "amiFamily" in change:
        values["elastic-gpu:gpuPools"][0].update(change)
    else:
        values.update(change)
    with pytest.raises(ConfigError) as err:
        run_preview("test", program_dir(values))
    assert "gpu_sharing_replicas" in str(err.value) and message in str(err.value)


def test_queued_provisioning_pools_are_flex_start():
    nodepools = stack_preview("gcp-prod").of_type("gcp:container/nodePool:NodePool")
    flex = {p.name: p.inputs["nodeConfig"].get("flexStart") for p in nodepools}
    assert flex["training-dws"] is True
    assert flex["inference-spot"] is None and flex["inference-fallback"] is None


@pytest.mark.parametrize("value", ["90s", "1h"])
def test_aks_durations_must_be_whole_minutes(program_dir, value):
    values = stack_values("azure-dev")
    values["elastic-gpu:autoscaler"]["scaleDownUnneededTime"] = value
    with pytest.raises(ConfigError) as err:
        run_preview("test", program_dir(values))
    assert f"autoscaler.scaleDownUnneededTime: {value!r} is not allowed; allowed: whole minutes" in str(err.value)


def test_default_max_node_provision_time_is_the_gpu_start_up_time():
    for stack in ("aws-dev", "azure-prod"):
        assert autoscaler_settings(stack_preview(stack)).max_node_provision == 15


def test_workload_job_is_strictly_valid_and_carries_the_contract(capsys):
    assert main(["workload", "--stack", "gcp-prod", "--pool", "training"]) == 0
    job = yaml.safe_load(capsys.readouterr().out)
    kubernetes_validate.validate(job, "1.33", strict=True)
    assert job["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "dws-local-queue"}
    assert job["spec"]["suspend"] is True
    for stack in STACKS:
        for c in pool_contracts(stack_preview(stack)):
            kubernetes_validate.validate(job_manifest(c), "1.33", strict=True)


def test_workload_unknown_pool_is_an_error(capsys):
    assert main(["workload", "--stack", "aws-dev", "--pool", "nope"]) == 2
    assert "--pool 'nope': no such GPU pool in aws-dev; allowed: t4" in capsys.readouterr().err


def test_simulate_json_shape_and_speed(capsys):
    start = time.perf_counter()
    assert main(["simulate", "--stack", "azure-prod", "--json"]) == 0
    assert time.perf_counter() - start < 10
    pools = json.loads(capsys.readouterr().out)["pools"]
    keys = {
        "pool",
        "reaches",
        "reason",
        "first_choice",
        "fallback",
        "minutes_to_fallback",
        "minutes_to_zero",
        "worst_case_nodes",
        "worst_case_monthly_usd",
    }
    assert all(keys <= set(p) for p in pools)
    assert [p["pool"] for p in pools] == ["inference", "training"]
    assert pools[0]["fallback"] == "inference-inferenceo0" and pools[1]["fallback"] is None


def test_simulate_a_given_pod(tmp_path, capsys):
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        yaml.safe_dump(
            {
                "kind": "Pod",
                "metadata": {"name": "cpu"},
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]},
            }
        )
    )
    assert main(["simulate", "--stack", "aws-dev", "--pod", str(pod), "--json"]) == 0
    (out,) = json.loads(capsys.readouterr().out)["pools"]
    assert out["pool"] == "general" and out["first_choice"] == "general-ng"


README_EXAMPLES = [("aws-dev", "t4"), ("azure-dev", "t4"), ("gcp-prod", "inference"), ("gcp-prod", "training")]


def test_readme_workload_examples_are_the_contracts():
    from pathlib import Path

    from elastic_gpu.workload import README_BEGIN, README_END, readme_examples

    examples = [
        (stack, next(c for c in pool_contracts(stack_preview(stack)) if c.pool == pool))
        for stack, pool in README_EXAMPLES
    ]
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme[readme.index(README_BEGIN) : readme.index(README_END) + len(README_END)]
    assert section == readme_examples(examples), "regenerate README's workload examples from readme_examples()"


def test_simulate_text_ends_with_one_row_per_pool(capsys):
    assert main(["simulate", "--stack", "aws-prod"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("POOL ")))
    rows = [line.split() for line in lines[header + 1 :]]
    assert [r[:8] for r in rows] == [
        ["inference", "inference-spot-us-east-1a", "inference-fallback-us-east-1a", "0.5", "to", "3.5", "min", "10"],
        ["training", "training-spot-us-east-1a", "-", "-", "-", "10", "min", "6"],
    ]
