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
from elastic_gpu.scheduling import AKS_SPOT_TAINT, GPU_TAINT, POOL_LABEL
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.tools.simulation import simulate
from elastic_gpu.tools.simulation.pod import pod_shape
from elastic_gpu.tools.simulation.run import pool_contracts, simulate_pod
from elastic_gpu.tools.simulation.templates import node_templates
from elastic_gpu.tools.simulation.timings import autoscaler_settings
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
    """The figures the note quotes, from the captured resources of each stack, timed from the pod's creation."""
    table = {
        (s, p): (
            o.fallback is not None,
            o.minutes_to_fallback and o.minutes_to_fallback.to_json(),
            o.max_minutes_to_fallback,
            o.minutes_to_zero,
            o.worst_case_nodes,
            o.evidence.kind if o.evidence else None,
        )
        for s in STACKS
        for p, o in _outcomes(s).items()
    }
    # Minutes to fallback: the 30 s GPU-pod wait and up to one loop (30 s to 40 s), then n spot groups x one
    # attempt each (EKS: 10 s to 130 s, 80 s when chained: AWS's 10-70 s, then the ASG cache rebuild; GKE: 10 s to
    # 15 s); AKS over both regimes, a VM
    # that fails to provision (10 s to 20 s) to a scale-set-level error (15 min + 11 s to 15 min + 20 s), as
    # the backoff machine works them (tests/test_backoff.py has the timelines).
    assert table == {
        ("aws-dev", "t4"): (True, {"min": 0.83, "max": 4.17}, 10.0, 5.0, 8, "source"),
        ("aws-prod", "inference"): (True, {"min": 1.0, "max": 5.5}, 10.0, 10.0, 18, "source"),
        ("aws-prod", "training"): (False, None, None, 10.0, 6, "source"),
        ("azure-dev", "t4"): (True, {"min": 0.67, "max": 16.0}, 20.0, 5.0, 8, "docs"),
        ("azure-prod", "inference"): (True, {"min": 0.67, "max": 16.0}, 20.0, 10.0, 18, "docs"),
        ("azure-prod", "training"): (False, None, None, 10.0, 3, "docs"),
        ("gcp-dev", "t4"): (False, None, None, 10.0, 3, "proxy"),
        ("gcp-prod", "inference"): (True, {"min": 0.67, "max": 0.92}, 10.0, 10.0, 18, "proxy"),
        ("gcp-prod", "training"): (False, None, None, 10.0, 4, "docs"),
    }


@pytest.mark.parametrize("stack", ["azure-dev", "azure-prod"])
def test_aks_pools_show_both_regimes_and_the_timeout_one_contains_the_real_autoscalers_time(stack):
    """A VM that fails to provision is deleted at once by AKS's autoscaler; a scale-set-level error waits
    for the timeout. The real cluster-autoscaler asked the fallback 15.9 min after the pod's creation."""
    o = _outcomes(stack)["inference" if stack == "azure-prod" else "t4"]
    fast, timeout = (o.regimes[name]["all spot groups out of capacity"] for name in o.regimes)
    assert list(o.regimes) == [
        "VM fails to provision (AKS deletes it at once)",
        "scale-set-level error (waits for maxNodeProvisionTime)",
    ]
    assert (fast.min, fast.max) == (0.67, 1.0)
    assert timeout.min <= 15.9 <= timeout.max and (timeout.min, timeout.max) == (15.68, 16.0)
    # One spot agent pool across the zones: AKS's autoscaler is not zone-aware, so a shortage in one zone
    # can fail it whole and the pod waits for the fallback.
    zonal = o.regimes["scale-set-level error (waits for maxNodeProvisionTime)"][
        "one zone has spot capacity (not zone-aware)"
    ]
    assert (zonal.min, zonal.max) == (0.5, 16.0)
    doc = json.loads(json.dumps(o.to_json()))
    assert doc["evidence"]["class"] == "docs" and "2025-09-21" in doc["evidence"]["reference"]
    assert doc["minutes_to_fallback_evidence"] == doc["minutes_to_zero_evidence"] == "docs"


def test_every_figure_counts_from_the_pods_creation():
    """No scale-up for a GPU pod younger than 30 s (static_autoscaler.go unschedulablePodWithGpuTimeBuffer):
    nothing is asked before 0.5 min; a pod that requests no GPU waits 2 s."""
    for stack in STACKS:
        for o in _outcomes(stack).values():
            if o.minutes_to_first_node is not None and o.minutes_to_first_node != "never":
                assert o.minutes_to_first_node.min >= 0.5, (stack, o.pool)
    preview = stack_preview("aws-dev")
    job = job_manifest(next(iter(pool_contracts(preview))))
    for c in job["spec"]["template"]["spec"]["containers"]:
        for kind in ("requests", "limits"):
            c["resources"].get(kind, {}).pop("nvidia.com/gpu", None)
    o = simulate_pod(preview, pod_shape(job), node_templates(preview), autoscaler_settings(preview))
    assert o.minutes_to_first_node.min == round((2 + 0) / 60, 2)


def test_a_queued_provisioning_pool_is_reported_queued_with_its_admission_path():
    o = _outcomes("gcp-prod")["training"]
    assert o.minutes_to_first_node is None and o.scenarios == {}
    assert o.queued and "LocalQueue default/dws-local-queue" in o.queued and "ClusterQueue" in o.queued
    assert "no documented bound" in o.queued


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


def _pod_on(stack: str, **requests: str) -> dict:
    preview = stack_preview(stack)
    job = job_manifest(next(iter(pool_contracts(preview))))
    job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"].update(requests)
    return job


def test_a_pod_of_a_whole_node_does_not_reach_the_autoscalers_template_holds_kube_proxy_and_daemonsets():
    """4 vCPU on g4dn.xlarge (4 vCPU): the autoscaler's template holds the kube-proxy pod (100m) and the
    DaemonSets that run there (the device plugin), so it never scales up for it."""
    preview = stack_preview("aws-dev")
    o = simulate_pod(
        preview, pod_shape(_pod_on("aws-dev", cpu="4")), node_templates(preview), autoscaler_settings(preview)
    )
    assert not o.reaches
    assert "insufficient cpu" in o.reason and "DaemonSets and kube-proxy" in o.reason


def test_a_pod_that_fits_the_template_but_not_the_nodes_reserve_does_not_reach():
    """The AWS template is the raw capacity less kube-proxy (3.9 cores): 3.85 fits it, but an AL2023 node keeps
    kube-reserved CPU (80m on 4 cores), so the scaled-up node never takes the pod."""
    preview = stack_preview("aws-dev")
    o = simulate_pod(
        preview, pod_shape(_pod_on("aws-dev", cpu="3850m")), node_templates(preview), autoscaler_settings(preview)
    )
    assert not o.reaches
    assert "fits the autoscaler's template but not the node" in o.reason and "AL2023" in o.reason


def test_an_eks_node_keeps_11_mib_per_eni_limited_pod_on_top_of_255():
    """nodeadm reserves 11 x maxPods + 255 MiB, maxPods from its ENI table (g4dn.xlarge: 29), and 100Mi eviction."""
    mib = 2**20
    gpu = [t for t in node_templates(stack_preview("aws-dev")) if t.instance_type == "g4dn.xlarge"]
    assert gpu
    for t in gpu:
        assert t.reserved["memory"] == (11 * 29 + 255 + 100) * mib
        assert "ENI-limited pod" in t.reserved_source


def test_a_pod_within_a_few_percent_of_the_node_fits_only_if(tmp_path, capsys):
    pod = tmp_path / "job.yaml"
    pod.write_text(yaml.safe_dump(_pod_on("aws-dev", cpu="3700m")))
    assert main(["simulate", "--stack", "aws-dev", "--pod", str(pod), "--json"]) == 0
    (out,) = json.loads(capsys.readouterr().out)["pools"]
    assert out["reaches"] and out["fit_notes"]
    assert all("fits only if" in n and "cpu" in n for n in out["fit_notes"])


def test_gke_templates_subtract_the_reserve_the_gce_provider_computes():
    """cloudprovider/gce templates.go:69-135: capacity less kernel memory, then kube-reserved and eviction."""
    (t,) = [t for t in node_templates(stack_preview("gcp-prod")) if t.resource == "inference-spot"] or [None]
    if t is None:
        t = next(t for t in node_templates(stack_preview("gcp-prod")) if t.capacity == "spot")
    assert t.template_reserves
    gib = 2**30
    # g2-standard-8: 8 vCPU, 32 GiB. CPU: 60 + 10 + 10 + 4 x 2.5 = 90m.
    assert round(t.reserved["cpu"], 4) == 0.09
    # Memory: kernel 32/64 GiB + 16 + 64 MiB + min(0.00175 x 32 GiB, 248 MiB); kube-reserved 25% of 4 + 20% of 4
    # + 10% of 8 + 6% of 16 GiB; 100 MiB eviction.
    kernel = 32 * gib / 64 + 80 * 2**20 + 0.00175 * 32 * gib
    kube = (0.25 * 4 + 0.2 * 4 + 0.1 * 8 + 0.06 * 16) * gib
    assert t.reserved["memory"] == pytest.approx(kernel + kube + 100 * 2**20)


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

    from elastic_gpu.workload import README_BEGIN, README_END, readme_examples

    examples = [
        (stack, next(c for c in pool_contracts(stack_preview(stack)) if c.pool == pool))
        for stack, pool in README_EXAMPLES
    ]
    from tests.docs_pages import page

    readme = page("simulate.md")
    section = readme[readme.index(README_BEGIN) : readme.index(README_END) + len(README_END)]
    assert section == readme_examples(examples), "regenerate README's workload examples from readme_examples()"


def test_simulate_text_ends_with_one_row_per_pool(capsys):
    assert main(["simulate", "--stack", "aws-prod"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("POOL ")))
    assert "EVIDENCE" in lines[header]
    rows = [line.split() for line in lines[header + 1 :]]
    assert [r[:9] for r in rows] == [
        [
            "inference",
            "gpu-prod-inference-spot-us-east-1a-e9d7c6",
            "gpu-prod-inference-fallback-us-east-1a-1683e8",
            "1",
            "to",
            "5.5",
            "min",
            "10",
            "min",
        ],
        ["training", "gpu-prod-training-spot-us-east-1a-5119a0", "-", "-", "-", "source", "10", "min", "6"],
    ]


def test_simulate_names_groups_as_preview_does(capsys):
    """AKS agent pools by the cloud's name (the Pools table of `preview`), not the Pulumi resource name."""
    assert main(["preview", "--stack", "azure-dev"]) == 0
    preview_out = capsys.readouterr().out
    assert main(["simulate", "--stack", "azure-dev"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("t4 "))
    spot, fallback = row.split()[1:3]
    assert spot != "t4-t4s0" and spot in preview_out and fallback in preview_out


def test_a_broken_promise_is_marked_in_the_table(capsys, program_dir, tmp_path):
    values = stack_values("aws-dev")
    values["elastic-gpu:gpuPools"][0]["maxMinutesToFallback"] = 1
    preview = run_preview("test", program_dir(values))
    from elastic_gpu.tools.simulation.run import render_text

    text = render_text("test", simulate(preview))
    row = next(line for line in text.splitlines() if line.startswith("t4 "))
    assert "1 min BROKEN" in row
    assert "BREAKS THE PROMISE" in text


def test_an_autoscaler_without_an_expander_flag_uses_least_waste_and_aks_random():
    """cluster-autoscaler 1.33's default expander is least-waste (config/flags/flags.go:143); AKS documents
    random as its managed autoscaler's default (autoScalerProfile.expander)."""
    preview = copy.deepcopy(stack_preview("aws-dev"))
    for r in preview.of_type("kubernetes:apps/v1:Deployment"):
        for c in r.inputs["spec"]["template"]["spec"]["containers"]:
            c["command"] = [w for w in c.get("command") or [] if not str(w).startswith("--expander")]
            c["args"] = [w for w in c.get("args") or [] if not str(w).startswith("--expander")]
    assert autoscaler_settings(preview).expanders == ("least-waste",)
    aks = copy.deepcopy(stack_preview("azure-dev"))
    for r in aks.of_type("azure-native:containerservice:ManagedCluster"):
        r.inputs.get("autoScalerProfile", {}).pop("expander", None)
    assert autoscaler_settings(aks).expanders == ("random",)


def test_aks_templates_keep_the_reserve_aks_documents_for_the_clusters_max_pods():
    """AKS node-resource-reservations: kube-reserved memory is the lesser of 20 MB x maxPods + 50 MB and 25%
    of the VM's, plus 100Mi eviction; CPU by the host's cores (4 cores: 140m). Azure CNI overlay: 250 pods."""
    t = next(t for t in node_templates(stack_preview("azure-dev")) if t.capacity == "spot")
    assert t.instance_type == "Standard_NC4as_T4_v3" and not t.template_reserves
    assert t.reserved["cpu"] == 0.14
    assert t.reserved["memory"] == pytest.approx(min(20e6 * 250 + 50e6, 0.25 * 28 * 2**30) + 100 * 2**20)
