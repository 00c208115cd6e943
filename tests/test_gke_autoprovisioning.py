"""GKE node pool auto-creation (provisioner auto-provisioning): the ComputeClass per spot pool, the
cluster's node auto-provisioning limits, the workload contract, CRD validation, the simulation and
the policy rules, on the shipped stack gcp-autoprovision and on small variants."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from policy_programs import judge, write_program

from elastic_gpu.compose import PlannedCluster
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.gcp.autoprovisioning.cluster import limits_for, limits_problems, machine_shape
from elastic_gpu.gcp.autoprovisioning.compute_class import compute_class_spec, instance_types_eligible
from elastic_gpu.gcp.autoprovisioning.spec import eligible_machine_types
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs, spot_gpu_pool_problems
from elastic_gpu.tools.offline.runner import Preview, run_preview
from elastic_gpu.tools.simulation.run import simulate
from tests.conftest import stack_preview, stack_values, write_program_dir
from tests.crd_schemas import validate

NS = "elastic-gpu:"
STACK = "gcp-autoprovision"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
G2_ONE_L4 = ["g2-standard-4", "g2-standard-8", "g2-standard-12", "g2-standard-16", "g2-standard-32"]


def _class() -> dict[str, Any]:
    return copy.deepcopy(stack_preview(STACK).one(COMPUTE_CLASS, "inference-compute-class").inputs)


def _errors(values: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return str(exc.value)


# --- the ComputeClass -------------------------------------------------------------------------


def test_the_spot_pool_is_one_compute_class_spot_first_with_node_pool_auto_creation() -> None:
    spec = _class()["spec"]
    # The pool's plan (maxSize 9 + fallback 9) for the tools: GKE reads no such field.
    assert _class()["metadata"] == {
        "name": "inference-spot-first",
        "annotations": {"elastic-gpu.io/planned-nodes": "18"},
    }
    # The pool's zones for every priority: no cluster-wide autoProvisioningLocations place them without NAP.
    assert spec["priorityDefaults"] == {"location": {"zones": ["us-central1-a", "us-central1-b", "us-central1-c"]}}
    assert [(p["machineFamily"], p["spot"], p["gpu"]) for p in spec["priorities"]] == [
        ("g2", True, {"type": "nvidia-l4", "count": 1, "driverVersion": "default"}),
        ("g2", False, {"type": "nvidia-l4", "count": 1, "driverVersion": "default"}),
    ]
    # Labels in the reference's class-wide field, none per priority (GKE marks spot nodes gke-spot itself).
    assert all("nodeLabels" not in p for p in spec["priorities"])
    assert spec["nodePoolConfig"]["nodeLabels"] == {
        "elastic-gpu.io/node-class": "gpu",
        "elastic-gpu.io/pool": "inference",
        "nvidia.com/gpu.present": "true",
    }
    assert spec["priorities"][0]["storage"] == {"bootDiskSize": 100, "bootDiskType": "pd-balanced"}
    assert spec["nodePoolAutoCreation"] == {"enabled": True}
    assert spec["whenUnsatisfiable"] == "DoNotScaleUp"
    assert spec["activeMigration"] == {"optimizeRulePriority": True}
    assert spec["autoscalingPolicy"] == {"consolidationDelayMinutes": 10}


def test_no_node_pool_is_declared_for_the_spot_pool() -> None:
    pools = {r.name for r in stack_preview(STACK).of_type("gcp:container/nodePool:NodePool")}
    # The general pool, and the queued-provisioning pool whose ProvisioningRequests need a node pool.
    assert pools == {"general-np", "training-dws"}


def test_a_pool_of_one_machine_type_names_it_and_a_gpu_pool_its_family() -> None:
    handle = PlannedCluster("gcp", "c", ["us-central1-a"], "1.35", {}, "auto-provisioning")
    pinned = SpotGpuPoolArgs(cluster=handle, instance_types=["g2-standard-8"], max_size=3, on_demand_fallback=True)
    assert spot_gpu_pool_problems("p", pinned) == []
    assert [(p["machineType"], p["spot"]) for p in compute_class_spec("p", pinned)["priorities"]] == [
        ("g2-standard-8", True),
        ("g2-standard-8", False),
    ]
    assert instance_types_eligible(["g2-standard-8"], 1) == ["g2-standard-8"]
    family = SpotGpuPoolArgs(cluster=handle, instance_types=G2_ONE_L4, max_size=3)
    assert [p.get("machineFamily") for p in compute_class_spec("p", family)["priorities"]] == ["g2"]
    assert instance_types_eligible(G2_ONE_L4, 1) == G2_ONE_L4


def test_eligible_machine_types_carry_exactly_the_gpu_count() -> None:
    # Every G2 type with one L4 (g2-standard-24 has two); N1 attaches 1, 2 or 4 T4s to any of the catalog's rows.
    assert eligible_machine_types("l4", 1, "g2") == G2_ONE_L4
    assert eligible_machine_types("l4", 2) == ["g2-standard-24"]
    assert eligible_machine_types("t4", 2) == ["n1-standard-4", "n1-standard-8", "n1-standard-16"]
    assert eligible_machine_types("v100", 1) == ["n1-highmem-8"]


def test_the_compute_class_validates_against_the_crd_and_a_wrong_field_fails() -> None:
    obj = _class()
    assert validate(obj) == []
    obj["spec"]["priorities"][0]["gpu"]["model"] = "l4"
    obj["spec"]["priorities"][1]["gpu"]["driverVersion"] = "LATEST"
    errors = validate(obj)
    assert any("'model' was unexpected" in e for e in errors), errors
    assert any("'LATEST' is not one of ['default', 'latest']" in e for e in errors), errors


def test_the_workload_selects_the_compute_class_and_tolerates_the_taints_gke_puts() -> None:
    [pool] = [r for r in stack_preview(STACK).of_type("elastic-gpu:index:SpotGpuPool") if r.name == "inference"]
    contract = pool.inputs["workloadContract"]
    assert contract["nodeSelector"] == {
        "cloud.google.com/compute-class": "inference-spot-first",
        "elastic-gpu.io/pool": "inference",
    }
    assert contract["taints"] == [
        "cloud.google.com/compute-class=inference-spot-first:NoSchedule",
        "nvidia.com/gpu=present:NoSchedule",
    ]


# --- the cluster --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nap_on(tmp_path_factory) -> Preview:
    """gcp-autoprovision with `cluster.nodeAutoProvisioning: true`: cluster-wide node auto-provisioning as the cap."""
    values = stack_values(STACK)
    values[NS + "cluster"]["nodeAutoProvisioning"] = True
    return run_preview("test", write_program_dir(tmp_path_factory.mktemp("nap-on"), values))


def test_the_cluster_auto_provisions_within_limits_summed_from_every_pool(nap_on: Preview) -> None:
    scaling = nap_on.one("gcp:container/cluster:Cluster", "gpu-nap-gke").inputs["clusterAutoscaling"]
    assert scaling["enabled"] is True
    assert scaling["autoscalingProfile"] == "OPTIMIZE_UTILIZATION"
    assert scaling["autoProvisioningLocations"] == ["us-central1-a", "us-central1-b", "us-central1-c"]
    # general: 6 x e2-standard-4 (4 vCPU, 16 GB); inference: (9 spot + 9 fallback) x its largest eligible
    # type g2-standard-32; training: 4 x a2-highgpu-1g.
    g2, a2 = gpu_instance_type("gcp", "g2-standard-32"), gpu_instance_type("gcp", "a2-highgpu-1g")
    assert g2 is not None and a2 is not None
    limits = {lim["resourceType"]: lim["maximum"] for lim in scaling["resourceLimits"]}
    assert limits == {
        "cpu": 6 * 4 + 18 * g2.vcpus + 4 * a2.vcpus,
        "memory": 6 * 16 + 18 * g2.memory_gib + 4 * a2.memory_gib,
        "nvidia-l4": 18,
        "nvidia-tesla-a100": 4,
    }
    defaults = scaling["autoProvisioningDefaults"]
    assert defaults["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert defaults["shieldedInstanceConfig"] == {"enableIntegrityMonitoring": True, "enableSecureBoot": True}
    assert defaults["oauthScopes"] == ["https://www.googleapis.com/auth/cloud-platform"]


def test_the_cluster_autoscaler_stacks_keep_auto_provisioning_off() -> None:
    scaling = stack_preview("gcp-prod").one("gcp:container/cluster:Cluster", "gpu-prod-gke").inputs
    # Off said, not left out: the provider keeps a dropped `enabled` (gcp/replacement.py KEPT_WHEN_DROPPED).
    assert scaling["clusterAutoscaling"] == {"enabled": False, "autoscalingProfile": "OPTIMIZE_UTILIZATION"}


def test_machine_shapes_for_the_limits() -> None:
    assert machine_shape("e2-standard-4") == (4, 16.0)
    assert machine_shape("n1-standard-8") == (8, 30.0)
    assert machine_shape("n2-highcpu-16") == (16, 16.0)
    assert machine_shape("e2-custom-4-8192") is None
    v = stack_values(STACK)
    v[NS + "generalPool"]["instanceTypes"] = ["e2-custom-4-8192"]
    [problem] = limits_problems(load_stack_config(v))
    assert problem.startswith("generalPool.instanceTypes[0]: 'e2-custom-4-8192': node auto-provisioning's cpu")


def test_two_pools_of_one_gpu_add_up_in_its_limit() -> None:
    v = stack_values(STACK)
    second = dict(v[NS + "gpuPools"][0], name="batch", maxSize=2, onDemandFallback=False)
    v[NS + "gpuPools"].append(second)
    assert limits_for(load_stack_config(v)).gpus == {"nvidia-l4": 18 + 2, "nvidia-tesla-a100": 4}


# --- the config ---------------------------------------------------------------------------------


def test_a_provisioner_a_cloud_cannot_do_is_a_config_error() -> None:
    v = stack_values("aws-prod")
    v[NS + "provisioner"] = "auto-provisioning"
    assert "provisioner: 'auto-provisioning' is not available on aws; allowed on aws: cluster-autoscaler" in _errors(v)
    v = stack_values(STACK)
    v[NS + "provisioner"] = "karpenter"
    assert (
        "provisioner: 'karpenter' is not available on gcp; allowed on gcp: cluster-autoscaler, auto-provisioning"
        in _errors(v)
    )
    v[NS + "provisioner"] = "nap"
    assert "provisioner: Input should be 'cluster-autoscaler', 'karpenter' or 'auto-provisioning'" in _errors(v)


def test_the_provisioner_defaults_to_the_cluster_autoscaler() -> None:
    assert load_stack_config(stack_values("gcp-prod")).provisioner == "cluster-autoscaler"
    assert load_stack_config(stack_values(STACK)).provisioner == "auto-provisioning"


# --- the simulation -----------------------------------------------------------------------------


def test_simulate_reports_eligible_types_and_the_fallback_from_the_compute_class() -> None:
    [nap, _] = simulate(stack_preview(STACK))
    [ca, _] = simulate(stack_preview("gcp-prod"))
    assert nap.to_json()["instance_types_eligible"] == 5 and nap.instance_types == G2_ONE_L4
    assert ca.to_json()["instance_types_eligible"] == 1 and ca.instance_types == ["g2-standard-8"]
    assert [[g.resource for g in tier] for tier in nap.tiers] == [
        ["inference-compute-class[0]"],
        ["inference-compute-class[1]"],
    ]
    assert (nap.tiers[0][0].capacity, nap.tiers[1][0].capacity) == ("spot", "on-demand")
    # The same upstream autoscaler backs off a failed group and asks the next priority in the same loop.
    assert nap.to_json()["minutes_to_fallback"] == ca.to_json()["minutes_to_fallback"]
    # Both priorities share the cluster's nvidia-l4 limit (18): 18 nodes, priced at the dearest.
    assert nap.worst_case_nodes == 18


# --- the policy rules ---------------------------------------------------------------------------

RULES_PROGRAM = """
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

L4 = {"type": "nvidia-l4", "count": 1}
T4 = {"type": "nvidia-tesla-t4", "count": 1}

gcp.container.Cluster(
    "c1",
    location="us-central1",
    cluster_autoscaling={
        "enabled": True,
        "resource_limits": [
            {"resource_type": "cpu", "maximum": 100},
            {"resource_type": "memory", "maximum": 400},
            {"resource_type": "nvidia-l4", "maximum": 4},
        ],
    },
)


def cc(name, priorities, delay=10):
    spec = {"priorities": priorities, "nodePoolAutoCreation": {"enabled": True}, "whenUnsatisfiable": "DoNotScaleUp"}
    if delay is not None:
        spec["autoscalingPolicy"] = {"consolidationDelayMinutes": delay}
    k8s.apiextensions.CustomResource(
        name, api_version="cloud.google.com/v1", kind="ComputeClass", metadata={"name": name}, spec=spec
    )


cc("ok-class", [{"machineFamily": "g2", "spot": True, "gpu": L4}, {"machineFamily": "g2", "spot": False, "gpu": L4}])
cc("bad-nolimit", [{"machineFamily": "n1", "spot": True, "gpu": T4}])
cc("bad-nogpu", [{"machineFamily": "g2", "spot": True, "gpu": L4}, {"machineFamily": "e2", "spot": False}])
cc("bad-odfirst", [{"machineFamily": "g2", "spot": False, "gpu": L4}, {"machineFamily": "g2", "spot": True, "gpu": L4}])
cc("bad-noscaledown", [{"machineFamily": "g2", "spot": True, "gpu": L4}], delay=None)
cc("bad-slowscaledown", [{"machineFamily": "g2", "spot": True, "gpu": L4}], delay=600)
"""

RULES = {
    "gke-auto-provisioning-gpu-limits": {"bad-nolimit"},
    "gke-compute-class-gpu-taint": {"bad-nogpu"},
    "gke-compute-class-spot-first": {"bad-odfirst"},
    "gke-compute-class-scale-down": {"bad-noscaledown", "bad-slowscaledown"},
}


@pytest.fixture(scope="module")
def rules_report(tmp_path_factory: pytest.TempPathFactory):
    return judge(run_preview("test", write_program(RULES_PROGRAM, tmp_path_factory.mktemp("gke-nap-rules"))))


@pytest.mark.parametrize("policy", sorted(RULES))
def test_each_rule_flags_exactly_its_bad_class(rules_report, policy: str) -> None:
    assert {v.name for v in rules_report.of(policy)} == RULES[policy]


def test_the_rule_messages_say_what_to_do(rules_report) -> None:
    [limit] = rules_report.of("gke-auto-provisioning-gpu-limits")
    assert "1 x nvidia-tesla-t4" in limit.message and "has a nvidia-tesla-t4 limit of 0" in limit.message
    [order] = rules_report.of("gke-compute-class-spot-first")
    assert "on-demand priority 0 before spot priorities [1]" in order.message
    slow = {v.name: v.message for v in rules_report.of("gke-compute-class-scale-down")}
    assert "consolidationDelayMinutes: 600 min, allowed: 1 to 60" in slow["bad-slowscaledown"]
    assert "consolidationDelayMinutes: unset" in slow["bad-noscaledown"]


def test_the_shipped_stack_passes_the_new_rules() -> None:
    from elastic_gpu.tools.offline.policy_run import run_policies

    report = run_policies(stack_preview(STACK))
    assert [v for v in report.violations if v.policy in RULES] == []
    assert [v.policy for v in report.violations if v.level == "mandatory"] == []


EXISTING_PROGRAM = """
import pulumi
from elastic_gpu import GkeCluster, SpotGpuPool, SpotGpuPoolArgs

cluster = GkeCluster.existing(
    "ext", cluster_name="c1", project="p-123456", location="us-central1", zones=["us-central1-a"],
    kubernetes_version="1.35", private_nodes=True, provisioner=PROVISIONER,
)
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g2-standard-8"], max_size=2,
                                  on_demand_fallback=True))
"""


def test_an_existing_cluster_that_auto_provisions_gets_a_compute_class_and_no_node_pool(tmp_path) -> None:
    preview = run_preview(
        "test", write_program(EXISTING_PROGRAM.replace("PROVISIONER", '"auto-provisioning"'), tmp_path)
    )
    assert preview.of_type("gcp:container/nodePool:NodePool") == []
    [cc] = preview.of_type(COMPUTE_CLASS)
    assert [p["machineType"] for p in cc.inputs["spec"]["priorities"]] == ["g2-standard-8", "g2-standard-8"]


def test_an_unknown_provisioner_on_an_existing_cluster_is_an_error() -> None:
    from elastic_gpu import GkeCluster

    with pytest.raises(ConfigError) as exc:
        GkeCluster.existing(
            "ext", cluster_name="c1", project="p-123456", location="us-central1", zones=["us-central1-a"],
            kubernetes_version="1.35", provisioner="karpenter",
        )  # fmt: skip
    assert (
        "provisioner: 'karpenter' is not available on gcp; allowed: None, cluster-autoscaler, auto-provisioning"
        in str(exc.value)
    )


def test_the_readme_table_is_what_simulate_says() -> None:
    from tests.docs_pages import page

    readme = page("gcp.md")
    for stack, provisioner in (("gcp-prod", "cluster-autoscaler"), (STACK, "auto-provisioning")):
        [o, _] = simulate(stack_preview(stack))
        data = o.to_json()
        row = (
            f"| {stack} | {provisioner} | {o.pool} | {data['instance_types_eligible']} | "
            f"{o.minutes_to_fallback} | {o.worst_case_nodes} nodes, ${o.worst_case_monthly_usd:,.0f}/month |"
        )
        assert row.replace(" min |", " |") in readme, row


# --- node auto-provisioning: why the cluster keeps it, and what its auto-created nodes get ------------

NAP_OFF_PROGRAM = """
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

gcp.container.Cluster("c1", location="us-central1", min_master_version="VERSION", CHANNEL)
k8s.apiextensions.CustomResource(
    "l4", api_version="cloud.google.com/v1", kind="ComputeClass", metadata={"name": "l4"},
    spec={"priorities": [{"machineFamily": "g2", "spot": True, "gpu": {"type": "nvidia-l4", "count": 1}},
                         {"machineFamily": "g2", "spot": False, "gpu": {"type": "nvidia-l4", "count": 1}}],
          "nodePoolAutoCreation": {"enabled": True}, "whenUnsatisfiable": "DoNotScaleUp",
          "autoscalingPolicy": {"consolidationDelayMinutes": 10}},
)
"""


@pytest.mark.parametrize(
    ("version", "channel", "says"),
    [
        (
            "1.35",
            "RAPID",
            "has node auto-provisioning off: GKE creates them with no cap; without node auto-provisioning GKE caps "
            "a ComputeClass's auto-created node pools nowhere",
        ),
        ("1.33.3-gke.1136000", "RAPID", "GKE creates them with no cap"),
        # GKE needs no channel for it (concepts/node-auto-provisioning, Enablement methods, 2026-04-10): off Rapid
        # the pools come, uncapped, as on Rapid.
        ("1.35", "STABLE", "GKE creates them with no cap"),
        ("1.35", None, "GKE creates them with no cap"),
        # Below the version no channel helps: GKE creates no pool for the class at all.
        ("1.33", "STABLE", "may run a version below 1.33.3-gke.1136000 (minMasterVersion '1.33')"),
        ("1.33.3-gke.1135999", "RAPID", "may run a version below 1.33.3-gke.1136000"),
        ("1.32", "RAPID", "GKE creates no such node pool"),
    ],
)
def test_without_auto_provisioning_the_gpu_limits_rule_says_what_the_version_does(
    tmp_path, version, channel, says
) -> None:
    channel_arg = f"release_channel={{'channel': {channel!r}}}" if channel else "opts=None"
    program = write_program(NAP_OFF_PROGRAM.replace("VERSION", version).replace("CHANNEL", channel_arg), tmp_path)
    report = judge(run_preview("test", program))
    # GKE creates no pool below 1.33.3-gke.1136000 (mandatory); from it, on any channel, uncapped pools (advisory)
    [v] = report.of("gke-auto-provisioning-gpu-limits") + report.of("gke-auto-provisioning-gpu-cap")
    assert says in v.message
    if "no cap" in says:
        assert (v.policy, v.level) == ("gke-auto-provisioning-gpu-cap", "advisory")
        # What bounds them then: the regional quotas their spot and on-demand priorities draw on (gcp/quotas.py).
        quotas = "PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region, NVIDIA-L4-GPUS-per-project-region"
        assert f"({quotas} in the cluster's region)" in v.message
    else:
        assert (v.policy, v.level) == ("gke-auto-provisioning-gpu-limits", "mandatory")
        assert "or set minMasterVersion to 1.33.3-gke.1136000 or later" in v.message


@pytest.mark.parametrize(
    ("version", "needs"),
    [
        ("1.33.3-gke.1135999", True),
        ("1.33.2", True),
        ("1.33", True),  # a minor's floor is its lowest build
        ("1.33.3-gke.1136000", False),
        ("1.34", False),
        ("not-a-version", True),  # unreadable: judged as below
        (None, False),  # a new cluster: at least the oldest minor GKE's calendar offers
    ],
)
def test_auto_creation_needs_node_auto_provisioning_below_the_version_only(version, needs) -> None:
    from elastic_gpu.gcp.autoprovisioning.spec import auto_creation_needs_nap

    assert auto_creation_needs_nap(version) is needs


def test_the_cap_finding_names_the_quotas_each_capacity_draws_on() -> None:
    from elastic_gpu.tools.gcp.pack.auto_provisioning import quota_ids

    l4 = ["PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region", "NVIDIA-L4-GPUS-per-project-region"]
    assert quota_ids("nvidia-l4", [True, False]) == l4  # spot first, then the on-demand fallback
    assert quota_ids("nvidia-l4", [False]) == l4[1:]
    # A model gcp/quotas.py has no row for (H100: a per-family quota).
    assert quota_ids("nvidia-h100-80gb", [True]) == ["GPUS-PER-GPU-FAMILY-per-project-region"]


def test_the_autoprovision_stack_declares_no_cluster_wide_node_auto_provisioning_on_its_version() -> None:
    # Its version (1.35, STABLE) is past 1.33.3-gke.1136000: GKE creates the ComputeClass's node pools without
    # cluster-level node auto-provisioning, so the stack leaves it off (no pools for Pods that select no class, no
    # spare cpu/memory room), and the gate says what then bounds the pools.
    from elastic_gpu.gcp.autoprovisioning.spec import auto_creation_needs_nap

    p = stack_preview(STACK)
    cluster = p.one("gcp:container/cluster:Cluster", "gpu-nap-gke").inputs
    assert not auto_creation_needs_nap(cluster["minMasterVersion"])
    assert cluster["clusterAutoscaling"] == {"enabled": False, "autoscalingProfile": "OPTIMIZE_UTILIZATION"}
    assert [c.inputs["spec"]["nodePoolAutoCreation"] for c in p.of_type(COMPUTE_CLASS)] == [{"enabled": True}]
    report = judge(p)
    assert report.of("gke-auto-provisioning-gpu-limits") == []
    [v] = report.of("gke-auto-provisioning-gpu-cap")
    assert v.level == "advisory" and "cluster.nodeAutoProvisioning: true" in v.message


def test_node_auto_provisioning_true_keeps_it_as_the_cap_of_the_pools(nap_on: Preview) -> None:
    scaling = nap_on.one("gcp:container/cluster:Cluster", "gpu-nap-gke").inputs["clusterAutoscaling"]
    assert scaling["enabled"] is True
    limits = {lim["resourceType"]: lim["maximum"] for lim in scaling["resourceLimits"]}
    assert limits["nvidia-l4"] == 9 + 9  # inference: maxSize 9 spot + 9 on-demand fallback, 1 L4 each
    report = judge(nap_on)
    assert report.of("gke-auto-provisioning-gpu-limits") == report.of("gke-auto-provisioning-gpu-cap") == []


@pytest.mark.parametrize(
    ("setting", "version", "on"),
    [
        (None, "1.33", True),
        (None, "1.33.3-gke.1136000", False),
        (None, "1.35", False),
        (True, "1.35", True),
        (False, "1.35", False),
    ],
)
def test_node_auto_provisioning_is_on_by_default_only_below_the_version(setting, version, on) -> None:
    from elastic_gpu.gcp.autoprovisioning.spec import cluster_auto_provisioning

    assert cluster_auto_provisioning(setting, version) is on


def test_node_auto_provisioning_is_a_setting_of_the_auto_provisioning_provisioner_only() -> None:
    values = stack_values("gcp-prod")
    values[NS + "cluster"]["nodeAutoProvisioning"] = True
    assert (
        "cluster.nodeAutoProvisioning: true is a setting of provisioner auto-provisioning (got provisioner "
        "cluster-autoscaler)" in _errors(values)
    )
    values = stack_values("aws-dev")
    values[NS + "cluster"]["nodeAutoProvisioning"] = True
    assert "nodeAutoProvisioning" in _errors(values)  # a GCP setting


def test_a_program_below_the_version_must_give_the_limits(run_program) -> None:
    source = """
from elastic_gpu.gcp.cluster import GkeCluster, GkeClusterArgs
GkeCluster("c", GkeClusterArgs(cluster_name="c", project="p", region="us-central1", zones=["us-central1-a"],
                               kubernetes_version="VERSION", provisioner="auto-provisioning"))
"""
    with pytest.raises(ConfigError) as exc:
        run_program(source.replace("VERSION", "1.33"))
    assert "GkeClusterArgs.auto_provisioning: None, but kubernetes_version '1.33' may run below 1.33.3-gke.1136000" in (
        str(exc.value)
    )
    # From the version on, no limits: node auto-provisioning off, the cluster's spot pools still ComputeClasses.
    p = run_program(source.replace("VERSION", "1.35"))
    cluster = p.one("gcp:container/cluster:Cluster", "c-gke").inputs
    assert cluster["clusterAutoscaling"]["enabled"] is False
    assert cluster["nodePoolAutoConfig"]["networkTags"]["tags"] == ["elastic-gpu-c"]


def test_auto_created_nodes_get_the_node_account_and_network_tag_and_kueue_stays_on_the_general_pool(
    nap_on: Preview,
) -> None:
    account = "gpu-nap-nodes@elastic-gpu-prod.iam.gserviceaccount.com"
    for p, nap in ((stack_preview(STACK), False), (nap_on, True)):
        cluster = p.one("gcp:container/cluster:Cluster", "gpu-nap-gke").inputs
        # The class's own pools run as the node account either way; with node auto-provisioning on, the pools it
        # creates for any other Pod too.
        [cc] = p.of_type(COMPUTE_CLASS)
        assert cc.inputs["spec"]["nodePoolConfig"]["serviceAccount"] == account
        if nap:
            assert cluster["clusterAutoscaling"]["autoProvisioningDefaults"]["serviceAccount"] == account
        # Kueue's firewall rule targets the cluster's network tag, which nodePoolAutoConfig gives the pools node
        # auto-provisioning creates; Kueue's controller runs on the general pool, a node pool of ours, either way.
        tags = cluster["nodePoolAutoConfig"]["networkTags"]["tags"]
        assert tags == p.one("gcp:compute/firewall:Firewall", "kueue-webhook").inputs["targetTags"]
        assert tags == ["elastic-gpu-gpu-nap"]
        release = p.one("kubernetes:helm.sh/v3:Release", "kueue-kueue").inputs
        assert release["values"]["controllerManager"]["nodeSelector"] == {"elastic-gpu.io/pool": "general"}


def test_the_workloads_selector_is_met_by_the_documented_class_wide_node_labels() -> None:

    from tests.conftest import ROOT

    crd = yaml.safe_load((ROOT / "tests/data/crds/cloud.google.com_computeclasses.yaml").read_text())
    node_pool_config = crd["openAPIV3Schema"]["properties"]["spec"]["properties"]["nodePoolConfig"]
    assert "nodeLabels" in node_pool_config["properties"]  # the field the ComputeClass reference lists
    p = stack_preview(STACK)
    [pool] = [r for r in p.of_type("elastic-gpu:index:SpotGpuPool") if r.name == "inference"]
    [cc] = p.of_type(COMPUTE_CLASS)
    spec = cc.inputs["spec"]
    selector = dict(pool.inputs["workloadContract"]["nodeSelector"])
    assert selector.pop("cloud.google.com/compute-class") == cc.inputs["metadata"]["name"]  # GKE's own label
    labels = spec["nodePoolConfig"]["nodeLabels"]
    assert selector and all(labels.get(k) == v for k, v in selector.items())
    assert all("nodeLabels" not in prio for prio in spec["priorities"])
    assert validate(cc.inputs | {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass"}) == []


# --- cost: the expected figure (smallest fit) and the worst case (largest), apart ---------------------


def test_simulate_gives_the_expected_figure_from_the_smallest_fit_and_the_worst_case_apart() -> None:
    from elastic_gpu.tools.cost import HOURS_PER_MONTH, node_price

    [nap, _] = simulate(stack_preview(STACK))
    data = nap.to_json()
    assert data["expected_instance_types"] == ["g2-standard-4"]  # the pod asks 1 CPU, 4Gi: the smallest G2 fits
    l4 = [("nvidia-l4", 1)]
    smallest = node_price("gcp", "us-central1", "g2-standard-4", l4).on_demand
    largest = node_price("gcp", "us-central1", "g2-standard-32", l4).on_demand
    # 18 nodes (the shared nvidia-l4 cap), at the dearest capacity (on-demand) of the two priorities.
    assert data["expected_monthly_usd"] == round(18 * smallest * HOURS_PER_MONTH, 2)
    assert data["worst_case_monthly_usd"] == round(18 * largest * HOURS_PER_MONTH, 2)
    assert data["expected_monthly_usd"] < data["worst_case_monthly_usd"]
    [ca, _] = simulate(stack_preview("gcp-prod"))  # one machine type per node pool: no difference
    assert ca.to_json()["expected_monthly_usd"] == ca.to_json()["worst_case_monthly_usd"]


def test_cost_gives_the_expected_figure_and_the_worst_case(capsys) -> None:
    import json

    from elastic_gpu.__main__ import main

    main(["cost", "--stack", STACK, "--gpu-hours", "100", "--json"])
    [inference] = [p for p in json.loads(capsys.readouterr().out)["pools"] if p["pool"] == "inference"]
    assert inference["priced_as"] == "g2-standard-4 + 1 x nvidia-l4"
    assert inference["worst_case"]["priced_as"] == "g2-standard-32 + 1 x nvidia-l4"
    assert inference["on_demand_cost"] < inference["worst_case"]["on_demand_cost"]
    main(["cost", "--stack", STACK, "--gpu-hours", "100"])
    assert "worst case, as g2-standard-32 + 1 x nvidia-l4: on-demand $173.44" in capsys.readouterr().out
    from elastic_gpu.tools.offline.report import cost_json, preview_cost

    total = cost_json(preview_cost(stack_preview(STACK)))["total"]
    assert total["expected_max_monthly"] < total["max_monthly"]
    assert cost_json(preview_cost(stack_preview("gcp-prod")))["total"]["expected_max_monthly"] is None


def test_a_new_cluster_whose_version_is_unknown_is_judged_by_the_oldest_minor_gke_creates(tmp_path) -> None:
    # No minMasterVersion: GKE picks its default, at least the oldest minor its calendar offers (1.35 today),
    # above 1.33.3-gke.1136000, so the class gets uncapped pools (an advisory-worthy fact, not "none at all").
    # On any channel (STABLE here): GKE auto-creates ComputeClass pools without node auto-provisioning there.
    stable = NAP_OFF_PROGRAM.replace("CHANNEL", "release_channel={'channel': 'STABLE'}")
    program = write_program(stable.replace(', min_master_version="VERSION"', ""), tmp_path)
    report = judge(run_preview("test", program))
    assert report.of("gke-auto-provisioning-gpu-limits") == []  # nothing mandatory: GKE creates the pools
    [v] = report.of("gke-auto-provisioning-gpu-cap")
    assert v.level == "advisory"
    assert "GKE creates them with no cap" in v.message and "(at least 1.35)" in v.message


def test_a_programs_provisioner_and_limits_must_agree() -> None:
    from elastic_gpu.gcp.autoprovisioning.cluster import AutoProvisioningLimits
    from elastic_gpu.gcp.cluster import GkeClusterArgs, gke_cluster_problems

    base = {"cluster_name": "c", "project": "p", "region": "us-central1", "zones": ["us-central1-a"]}
    limits = AutoProvisioningLimits(cpu=8, memory_gb=32, gpus={"nvidia-l4": 1})
    [problem] = gke_cluster_problems(
        "c",
        GkeClusterArgs(**base, kubernetes_version="1.35", provisioner="cluster-autoscaler", auto_provisioning=limits),
    )
    assert problem.startswith("GkeCluster 'c': GkeClusterArgs.auto_provisioning: node auto-provisioning's limits")
    assert "provisioner 'cluster-autoscaler' does not" in problem
    [problem] = gke_cluster_problems("c", GkeClusterArgs(**base, kubernetes_version="1.35", provisioner="karpenter"))
    assert problem == (
        "GkeCluster 'c': GkeClusterArgs.provisioner: 'karpenter' is not available on gcp; allowed: None, "
        "cluster-autoscaler, auto-provisioning"
    )
    # Limits alone still mean auto-provisioning, on any version.
    assert gke_cluster_problems("c", GkeClusterArgs(**base, kubernetes_version="1.33", auto_provisioning=limits)) == []
    assert GkeClusterArgs(**base, kubernetes_version="1.33", auto_provisioning=limits).auto_creates


def test_every_minor_the_stack_file_accepts_on_gcp_needs_no_node_auto_provisioning_for_auto_creation() -> None:
    # So a stack file's `nodeAutoProvisioning: false`, and its default off, hold on every version it accepts (the
    # setting's docstring says so); a calendar row below 1.33.3-gke.1136000 would fail here.
    from elastic_gpu.config import SUPPORTED_KUBERNETES_VERSIONS
    from elastic_gpu.gcp.autoprovisioning.spec import auto_creation_needs_nap

    minors = SUPPORTED_KUBERNETES_VERSIONS["gcp"]
    assert minors and not [m for m in minors if auto_creation_needs_nap(m)]
