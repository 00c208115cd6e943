"""AKS node auto-provisioning: the NodePools and AKSNodeClass a GPU pool becomes, checked against
karpenter-provider-azure v1.14.2's CRDs, the sizes it may take, and NAP's scale-up model."""

from __future__ import annotations

import copy

import pytest
from pulumi_policy import PolicyResource, ResourceValidationArgs, StackValidationArgs
from pulumi_policy.policy import PolicyResourceOptions

from elastic_gpu.azure.node_provisioning.cluster import nap_cluster_problems, node_provisioning_profile
from elastic_gpu.azure.node_provisioning.objects import NODE_CLASS_API, NODE_CLASS_KIND, node_class_spec
from elastic_gpu.azure.node_provisioning.pools import nap_pool_problems, node_pool_specs
from elastic_gpu.azure.node_provisioning.skus import NAP_GPU_SKUS, eligible_skus
from elastic_gpu.compose import PlannedCluster
from elastic_gpu.config import load_stack_config, stack_warnings
from elastic_gpu.errors import ConfigError
from elastic_gpu.gpu_catalog import gpu_instance_types
from elastic_gpu.karpenter_core import NODE_POOL_API, NODE_POOL_KIND
from elastic_gpu.scheduling import AKS_SPOT_TAINT, GPU_TAINT
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs
from elastic_gpu.tools.azure.node_provisioning import simulation as nap_sim
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.policy.karpenter_rules import NODE_POOL_TYPE, validate_fallback_ordered, validate_gpu_node_pool
from elastic_gpu.tools.simulation.run import simulate
from elastic_gpu.workload import WorkloadContract, job_manifest
from tests.conftest import stack_preview, stack_values
from tests.crd_schemas import validate

CLUSTER = PlannedCluster("azure", "gpu-prod", ["1", "2", "3"], "1.35", {})


def pool_args(**changes: object) -> SpotGpuPoolArgs:
    """azure-prod's inference pool: T4, 9 spot nodes, on-demand fallback."""
    base = SpotGpuPoolArgs(
        cluster=CLUSTER, instance_types=["Standard_NC4as_T4_v3"], max_size=9, on_demand_fallback=True
    )
    return base.model_copy(update=changes)


def node_pools(args: SpotGpuPoolArgs, name: str = "inference") -> list[dict]:
    specs = node_pool_specs(name, args, region="eastus2", consolidate_after="10m", node_class=name)
    return [
        {"apiVersion": NODE_POOL_API, "kind": NODE_POOL_KIND, "metadata": {"name": s.name}, "spec": s.to_spec()}
        for s in specs
    ]


def test_a_pool_takes_every_supported_size_with_its_gpu_and_count() -> None:
    assert eligible_skus(["Standard_NC4as_T4_v3"]) == [
        "Standard_NC4as_T4_v3",
        "Standard_NC8as_T4_v3",
        "Standard_NC16as_T4_v3",
    ]
    assert eligible_skus(["Standard_NC24ads_A100_v4"]) == ["Standard_NC24ads_A100_v4"]
    assert eligible_skus(["Standard_NC64as_T4_v3"]) == ["Standard_NC64as_T4_v3"]  # 4 GPUs: no other T4 size


def test_every_catalog_azure_size_is_one_nap_drives() -> None:
    # A catalog size outside supported-gpus.yaml would get no driver: add it to NAP_GPU_SKUS only from there.
    assert {t.name for t in gpu_instance_types("azure")} == NAP_GPU_SKUS


def test_a_spot_pool_with_a_fallback_is_one_node_pool_spot_first() -> None:
    [only] = node_pools(pool_args())
    assert (only["metadata"]["name"], only["spec"]["weight"]) == ("inference-spot-first", 100)
    reqs = {r["key"]: r["values"] for r in only["spec"]["template"]["spec"]["requirements"]}
    # NAP ranks one NodePool's offerings by price, spot first at equal price (offering_rank.go)
    assert reqs["karpenter.sh/capacity-type"] == ["spot", "on-demand"]
    assert only["spec"]["limits"] == {"nodes": "9", "nvidia.com/gpu": "9"}  # one cap: maxSize
    taints = only["spec"]["template"]["spec"]["taints"]
    assert {"key": AKS_SPOT_TAINT.key, "value": "spot", "effect": "NoSchedule"} in taints
    assert "elastic-gpu.io/capacity" not in only["spec"]["template"]["metadata"]["labels"]


def test_spot_node_pool_outranks_a_separately_capped_fallback_over_the_same_sizes() -> None:
    spot, fallback = node_pools(pool_args(fallback_max_size=9))
    assert [spot["metadata"]["name"], fallback["metadata"]["name"]] == ["inference-spot", "inference-on-demand"]
    assert spot["spec"]["weight"] == 100 and fallback["spec"]["weight"] == 10
    reqs = {r["key"]: r["values"] for r in spot["spec"]["template"]["spec"]["requirements"]}
    assert reqs == {
        "karpenter.sh/capacity-type": ["spot"],
        "karpenter.azure.com/sku-name": ["Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3", "Standard_NC16as_T4_v3"],
        "topology.kubernetes.io/zone": ["eastus2-1", "eastus2-2", "eastus2-3"],
    }
    fallback_reqs = {r["key"]: r["values"] for r in fallback["spec"]["template"]["spec"]["requirements"]}
    assert fallback_reqs["karpenter.sh/capacity-type"] == ["on-demand"]


def test_limits_taints_labels_and_disruption() -> None:
    spot, fallback = node_pools(pool_args(fallback_max_size=4))
    assert spot["spec"]["limits"] == {"nodes": "9", "nvidia.com/gpu": "9"}
    assert fallback["spec"]["limits"] == {"nodes": "4", "nvidia.com/gpu": "4"}
    taint = {"key": AKS_SPOT_TAINT.key, "value": "spot", "effect": "NoSchedule"}
    gpu = {"key": GPU_TAINT.key, "value": "true", "effect": "NoSchedule"}
    assert spot["spec"]["template"]["spec"]["taints"] == [taint, gpu]
    assert fallback["spec"]["template"]["spec"]["taints"] == [gpu]
    assert spot["spec"]["template"]["metadata"]["labels"]["elastic-gpu.io/capacity"] == "spot"
    assert fallback["spec"]["template"]["metadata"]["labels"]["elastic-gpu.io/pool"] == "inference"
    assert spot["spec"]["disruption"] == {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": "10m",
        # a new node image reaches busy nodes, one drifted node at a time (a running Job keeps do-not-disrupt)
        "budgets": [{"nodes": "10%"}, {"nodes": "1", "reasons": ["Drifted"]}],
    }
    assert spot["spec"]["template"]["spec"]["expireAfter"] == "720h"


def _allowed_disruptions(budgets: list[dict], reason: str, total: int) -> int:
    """Karpenter's count of nodes a NodePool may disrupt for `reason` (disruption.md "NodePool Disruption
    Budgets": the minimum over the budgets listing the reason or none, a percentage rounded up)."""
    allowed = []
    for b in budgets:
        if b.get("reasons") and reason not in b["reasons"]:
            continue
        nodes = b["nodes"]
        allowed.append(-(-total * int(nodes[:-1]) // 100) if nodes.endswith("%") else int(nodes))
    return min(allowed)


def test_the_drift_budget_lets_node_image_updates_through_and_jobs_keep_their_node() -> None:
    # NAP moves nodes to a new node image only by drift (node-auto-provisioning-upgrade-image.md): a budget of
    # 0 held every busy node on its old image until it emptied or expired (720h).
    for obj in node_pools(pool_args()):
        budgets = obj["spec"]["disruption"]["budgets"]
        assert [_allowed_disruptions(budgets, "Drifted", n) for n in (1, 9, 40)] == [1, 1, 1]
        assert _allowed_disruptions(budgets, "Empty", 40) == 4  # upstream's 10% for the other reasons
        assert "terminationGracePeriod" not in obj["spec"]["template"]["spec"]  # do-not-disrupt keeps its node
    # ... and a running Job keeps its node: the pool's example Job carries Karpenter's do-not-disrupt
    contract = next(r for r in stack_preview("azure-karpenter").of_type("elastic-gpu:index:SpotGpuPool"))
    job = job_manifest(WorkloadContract.from_json(contract.inputs["workloadContract"]))
    assert job["spec"]["template"]["metadata"]["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}
    ca = next(r for r in stack_preview("azure-prod").of_type("elastic-gpu:index:SpotGpuPool"))
    assert "metadata" not in job_manifest(WorkloadContract.from_json(ca.inputs["workloadContract"]))["spec"]["template"]


def test_an_on_demand_pool_is_one_node_pool() -> None:
    [only] = node_pools(pool_args(spot=False, on_demand_fallback=False))
    assert only["metadata"]["name"] == "inference-on-demand" and only["spec"]["weight"] == 100


def test_the_objects_validate_against_the_upstream_crds() -> None:
    for obj in node_pools(pool_args()):
        assert validate(obj) == [], obj["metadata"]["name"]
    node_class = {
        "apiVersion": NODE_CLASS_API,
        "kind": NODE_CLASS_KIND,
        "metadata": {"name": "inference"},
        "spec": node_class_spec(200, {"project": "elastic-gpu"}),
    }
    assert validate(node_class) == []
    node_class["spec"]["osDiskSizeGB"] = 20
    assert any("osDiskSizeGB: 20 is less than the minimum of 30" in e for e in validate(node_class))


def test_a_wrong_node_pool_field_or_label_fails_the_crd() -> None:
    [spot] = node_pools(pool_args())
    bad = copy.deepcopy(spot)
    bad["spec"]["disruption"]["consolidateAfter"] = "10 minutes"
    assert any("consolidateAfter: '10 minutes' does not match" in e for e in validate(bad))
    bad = copy.deepcopy(spot)
    bad["spec"]["template"]["spec"]["nodeClass"] = bad["spec"]["template"]["spec"].pop("nodeClassRef")
    assert validate(bad)
    # karpenter-provider-azure's own rule: a karpenter.azure.com label must be one it knows.
    bad = copy.deepcopy(spot)
    bad["spec"]["template"]["spec"]["requirements"][1]["key"] = "karpenter.azure.com/sku-gpus"
    [error] = validate(bad)
    assert "Invalid value" in error and "requirements" in error


def test_the_cluster_profile_turns_nap_on_without_default_node_pools() -> None:
    profile = node_provisioning_profile()
    assert (profile.mode, profile.default_node_pools) == ("Auto", "None")
    assert nap_cluster_problems("AksCluster 'c': ", "azure") == []
    assert nap_cluster_problems("AksCluster 'c': ", "kubenet") == [
        "AksCluster 'c': network_plugin: node auto-provisioning (provisioner karpenter) needs Azure CNI; "
        "allowed: azure (got 'kubenet')"
    ]


def test_what_nap_cannot_do_is_an_error() -> None:
    [problem] = nap_pool_problems("SpotGpuPool 't': SpotGpuPoolArgs.", pool_args(spot_max_price=2.5))
    assert problem.startswith("SpotGpuPool 't': SpotGpuPoolArgs.spot_max_price: NAP always bids -1")
    assert problem.endswith("(got 2.5)")
    assert nap_pool_problems("w: ", pool_args()) == []


@pytest.mark.parametrize(("spot_skus", "best", "worst", "one_zone"), [(1, 3, 31, (1, 31)), (3, 9, 37, (1, 11))])
def test_fallback_comes_after_each_spot_size_failed_within_one_nodeclaim(
    spot_skus: int, best: int, worst: int, one_zone: tuple[int, int]
) -> None:
    """First batch 1-10 s; each SkuNotAvailable is retried within the NodeClaim after 1 s, 2 s, 4 s ... (its
    requeue backoff, lifecycle/launch.go:110-116, controller.go:119); with no size left the NodeClaim is
    deleted and the pod's next loop (1 s to 10 s requeue + 10 s batch) asks the on-demand NodePool."""
    assert nap_sim.retries(3) == 1 + 2 + 4
    assert nap_sim.to_fallback(spot_skus) == nap_sim.Seconds(best, worst)
    figures = nap_sim.first_node(spot=True, fallback=True, spot_skus=spot_skus)
    assert figures == {
        "all spot groups out of capacity": nap_sim.Seconds(best, worst),
        "one zone has spot capacity": nap_sim.Seconds(*one_zone),
        "spot comes back after 60 min": nap_sim.Seconds(best, worst),
        # An async AllocationFailed takes the size off the on-demand fallback too, and the spot NodePool takes it
        # back first when it frees: the fallback never comes while spot fails that way.
        nap_sim.SCENARIO_ALLOCATION_FAILED: None,
    }


def test_a_spot_only_single_size_waits_for_its_sku_not_available_entry() -> None:
    # One zone out: the worst launch goes there and takes the one size off every zone for 60 min.
    figures = nap_sim.first_node(spot=True, fallback=False, spot_skus=1)
    assert list(figures.values()) == [None, nap_sim.Seconds(1, 10 + 3600 + 20), nap_sim.Seconds(3600, 7220), None]
    assert nap_sim.first_node(spot=False, fallback=False, spot_skus=0)["all spot groups out of capacity"] == (
        nap_sim.Seconds(1, 10)
    )


def test_simulate_shows_the_allocation_failed_scenario_for_nap_pools() -> None:
    (inference, _) = simulate(stack_preview("azure-karpenter"))
    assert inference.scenarios[nap_sim.SCENARIO_ALLOCATION_FAILED] == "never"
    assert inference.minutes_to_fallback.to_json() == {"min": 0.13, "max": 0.28}
    assert inference.evidence.kind == "docs"


@pytest.mark.parametrize(("spot_skus", "best", "worst"), [(1, 2, 11), (3, 8, 17)])
def test_a_spot_first_node_pool_falls_back_within_the_same_nodeclaim(spot_skus: int, best: int, worst: int) -> None:
    """One NodePool allowing spot and on-demand: after the last spot size fails, the NodeClaim's next retry
    (1 s, 2 s, 4 s ...) launches an on-demand offering; no deletion and no next loop as with a separate
    on-demand NodePool."""
    assert nap_sim.to_fallback(spot_skus, one_node_pool=True) == nap_sim.Seconds(best, worst)
    assert nap_sim.to_fallback(spot_skus, one_node_pool=True).worst < nap_sim.to_fallback(spot_skus).worst
    figures = nap_sim.first_node(spot=True, fallback=True, spot_skus=spot_skus, one_node_pool=True)
    assert figures["all spot groups out of capacity"] == nap_sim.Seconds(best, worst)


# --- policy: karpenter-gpu-node-pool, karpenter-fallback-ordered ---------------------------------


def _resource(obj: dict) -> PolicyResource:
    opts = PolicyResourceOptions(False, [], False, [], None, [])  # type: ignore[arg-type]
    return PolicyResource(
        NODE_POOL_TYPE, obj, f"urn:{obj['metadata']['name']}", obj["metadata"]["name"], opts, None, None, [], {}
    )


def _node_pool_reports(obj: dict) -> list[str]:
    reports: list[str] = []
    r = _resource(obj)
    args = ResourceValidationArgs(r.resource_type, r.props, r.urn, r.name, r.opts, None)
    validate_gpu_node_pool(args, lambda m, urn=None: reports.append(m))
    return reports


def test_a_gpu_node_pool_with_limits_taint_and_consolidation_passes() -> None:
    for obj in node_pools(pool_args()):
        assert _node_pool_reports(obj) == []


def test_a_gpu_node_pool_without_limits_taint_or_consolidation_fails() -> None:
    [spot] = node_pools(pool_args())
    spot["spec"].pop("limits")
    spot["spec"]["disruption"]["consolidateAfter"] = "Never"
    spot["spec"]["template"]["spec"]["taints"] = [
        t for t in spot["spec"]["template"]["spec"]["taints"] if t["key"] != "nvidia.com/gpu"
    ]
    reports = _node_pool_reports(spot)
    assert [r.split(":")[0] for r in reports] == [
        "GPU NodePool 'inference-spot-first' has no limits.nodes or limits.nvidia.com/gpu",
        "GPU NodePool 'inference-spot-first' does not taint its nodes nvidia.com/gpu=true",
        "GPU NodePool 'inference-spot-first' never consolidates (consolidateAfter",
    ]


def _order_reports(objs: list[dict]) -> list[str]:
    reports: list[str] = []
    validate_fallback_ordered(
        StackValidationArgs([_resource(o) for o in objs], {}), lambda m, urn=None: reports.append(m)
    )
    return reports


def test_spot_above_the_fallback_passes_and_equal_weights_fail() -> None:
    spot, fallback = node_pools(pool_args(fallback_max_size=9))
    assert _order_reports([spot, fallback]) == []
    fallback["spec"]["weight"] = 100
    [report] = _order_reports([spot, fallback])
    assert report.startswith(
        "Pool 'inference': on-demand NodePool 'inference-on-demand' (weight 100) is not below spot NodePool "
        "'inference-spot' (weight 100)"
    )


# --- the azure-karpenter stack: azure-prod's pools under node auto-provisioning ---------------------------

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass"
T4_SIZES = ["Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3", "Standard_NC16as_T4_v3"]
ZONES = ["eastus2-1", "eastus2-2", "eastus2-3"]
TAGS = {"cost-center": "ml-platform", "environment": "prod", "project": "elastic-gpu"}


def nap_stack() -> Preview:
    return copy.deepcopy(stack_preview("azure-karpenter"))


def _nap_node_pool(capacity: str, pool: str, sizes: list[str], nodes: int, weight: int) -> dict:
    """capacity: "spot", "on-demand" or "spot-first" (both, one NodePool)."""
    spot = capacity in ("spot", "spot-first")
    capacities = ["spot", "on-demand"] if capacity == "spot-first" else [capacity]
    labels = {} if capacity == "spot-first" else {"elastic-gpu.io/capacity": capacity}
    taints = [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "true"}]
    if spot:
        taints.insert(0, {"effect": "NoSchedule", "key": "kubernetes.azure.com/scalesetpriority", "value": "spot"})
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": f"{pool}-{capacity}"},
        "spec": {
            "weight": weight,
            "limits": {"nodes": str(nodes), "nvidia.com/gpu": str(nodes)},
            "disruption": {
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": "10m",
                "budgets": [{"nodes": "10%"}, {"nodes": "1", "reasons": ["Drifted"]}],
            },
            "template": {
                "metadata": {
                    "labels": labels
                    | {
                        "elastic-gpu.io/node-class": "gpu",
                        "elastic-gpu.io/pool": pool,
                        "nvidia.com/gpu.present": "true",
                    }
                },
                "spec": {
                    "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": pool},
                    "requirements": [
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacities},
                        {"key": "karpenter.azure.com/sku-name", "operator": "In", "values": sizes},
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ZONES},
                    ],
                    "taints": taints,
                    "expireAfter": "720h",
                },
            },
        },
    }


def test_the_stack_declares_node_auto_provisioning_and_no_gpu_agent_pools() -> None:
    preview = stack_preview("azure-karpenter")
    cluster = preview.one("azure-native:containerservice:ManagedCluster", "gpu-nap-aks").inputs
    assert cluster["nodeProvisioningProfile"] == {"mode": "Auto", "defaultNodePools": "None"}
    assert "autoScalerProfile" not in cluster
    [system] = cluster["agentPoolProfiles"]
    assert (system["enableAutoScaling"], system["count"], "minCount" in system) == (False, 3, False)
    assert (cluster["networkProfile"]["networkPlugin"], cluster["networkProfile"]["networkPluginMode"]) == (
        "azure",
        "overlay",
    )
    [general] = preview.of_type("azure-native:containerservice:AgentPool")  # the general pool alone
    assert (general.name, general.inputs["enableAutoScaling"], general.inputs["count"]) == ("general-pool", False, 2)
    assert "maxCount" not in general.inputs


def test_the_stacks_gpu_pools_are_exactly_these_node_classes_and_node_pools() -> None:
    preview = stack_preview("azure-karpenter")
    classes = {r.name: r.inputs for r in preview.of_type(NODE_CLASS)}
    assert classes == {
        f"{pool}-nodeclass": {
            "apiVersion": "karpenter.azure.com/v1beta1",
            "kind": "AKSNodeClass",
            "metadata": {"name": pool},
            "spec": {"imageFamily": "Ubuntu", "osDiskSizeGB": disk, "tags": TAGS},
        }
        for pool, disk in (("inference", 100), ("training", 200))
    }
    pools = {r.name: r.inputs for r in preview.of_type(NODE_POOL)}
    assert pools == {
        "inference-spot-first": _nap_node_pool("spot-first", "inference", T4_SIZES, 9, 100),
        "training-spot": _nap_node_pool("spot", "training", ["Standard_NC24ads_A100_v4"], 3, 100),
    }
    for obj in [*classes.values(), *pools.values()]:
        assert validate(obj) == []  # the karpenter-provider-azure v1.14.2 CRDs, picked by nodeClassRef.group


def test_the_azure_node_pool_crd_is_picked_by_its_node_class_group() -> None:
    # An unknown karpenter.azure.com requirement is refused by the Azure NodePool CRD's CEL rules only.
    obj = _nap_node_pool("spot", "inference", T4_SIZES, 9, 100)
    obj["spec"]["template"]["spec"]["requirements"][1]["key"] = "karpenter.azure.com/sku-gpus"
    [error] = validate(obj)
    assert 'label domain "karpenter.azure.com" is restricted' in error
    aws = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"}
    obj["spec"]["template"]["spec"]["nodeClassRef"] = aws
    assert validate(obj) == []


def test_the_karpenter_rules_pass_on_the_nap_stack_and_a_broken_node_pool_fails() -> None:
    preview = nap_stack()
    for rule in ("karpenter-gpu-node-pool", "karpenter-fallback-ordered"):
        assert [v.message for v in run_policies(preview).violations if v.policy == rule] == [], rule
    spot = preview.one(NODE_POOL, "inference-spot-first").inputs["spec"]
    del spot["limits"]
    messages = {v.policy: v.message for v in run_policies(preview).violations}
    assert "GPU NodePool 'inference-spot-first' has no limits.nodes" in messages["karpenter-gpu-node-pool"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {},  # azure-prod's training pool caps its spot price
            "gpuPools[1].spotMaxPrice: node auto-provisioning (provisioner karpenter) always bids up to the "
            "on-demand price; leave it unset (got 2.5)",
        ),
        (
            {"networkPlugin": "kubenet"},
            "cluster.networkPlugin: node auto-provisioning (provisioner karpenter) needs Azure CNI; allowed: azure "
            "(got 'kubenet')",
        ),
    ],
)
def test_node_auto_provisioning_refuses_what_it_cannot_do(change: dict, message: str) -> None:
    values = stack_values("azure-prod") | {"elastic-gpu:provisioner": "karpenter"}
    values["elastic-gpu:cluster"] = values["elastic-gpu:cluster"] | change
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    assert message in str(exc.value)
    auto = stack_values("azure-karpenter") | {"elastic-gpu:provisioner": "auto-provisioning"}
    with pytest.raises(ConfigError, match="allowed on azure: cluster-autoscaler, karpenter"):
        load_stack_config(auto)


def test_sizes_the_agent_pools_cannot_autoscale_to_are_a_warning() -> None:
    values = stack_values("azure-prod") | {"elastic-gpu:provisioner": "karpenter"}
    values["elastic-gpu:gpuPools"] = [
        {k: v for k, v in p.items() if k != "spotMaxPrice"} for p in values["elastic-gpu:gpuPools"]
    ]
    assert stack_warnings(load_stack_config(values)) == [
        "cluster.systemPool.maxSize: 5 is not used under provisioner karpenter: AKS creates no autoscaling agent "
        "pool under node auto-provisioning, so the pool keeps 3 nodes (its minSize)",
        "generalPool.maxSize: 6 is not used under provisioner karpenter: AKS creates no autoscaling agent pool "
        "under node auto-provisioning, so the pool keeps 2 nodes (its minSize)",
    ]
    assert stack_warnings(load_stack_config(stack_values("azure-karpenter"))) == []


def test_simulate_reports_nap_next_to_the_autoscaler() -> None:
    nap = {o.pool: o.to_json() for o in simulate(stack_preview("azure-karpenter"))}
    ca = {o.pool: o.to_json() for o in simulate(stack_preview("azure-prod"))}
    assert {p: o["instance_types_eligible"] for p, o in nap.items()} == {"inference": 3, "training": 1}
    assert {p: o["instance_types_eligible"] for p, o in ca.items()} == {"inference": 1, "training": 1}
    inf = nap["inference"]
    # one NodePool: its spot offerings, then its on-demand ones, in the same NodeClaim
    assert (inf["first_choice"], inf["fallback"]) == ("inference-spot-first", "inference-spot-first")
    # One SkuNotAvailable per T4 size (3), retried in the NodeClaim after 1 + 2 + 4 s, after the first 1..10 s
    # batch; the next retry launches on-demand: 8 s .. 17 s.
    assert inf["minutes_to_fallback"] == {"min": 0.13, "max": 0.28}
    assert ca["inference"]["minutes_to_fallback"]["max"] > inf["minutes_to_fallback"]["max"]
    assert nap["training"]["minutes_to_fallback"] is None
    assert nap["training"]["minutes_to_zero"] == 10.42  # consolidateAfter 10m + 10 s poll + 15 s validation
    # one cap per pool (maxSize), the spot-first NodePool priced on-demand (it may fill its limit with it)
    assert (inf["worst_case_nodes"], nap["training"]["worst_case_nodes"]) == (9, 3)


def test_the_readme_table_is_what_simulate_says() -> None:
    from tests.docs_pages import page

    readme = page("azure.md")
    for stack, provisioner in (("azure-prod", "cluster-autoscaler"), ("azure-karpenter", "karpenter")):
        for o in simulate(stack_preview(stack)):
            data = o.to_json()
            row = (
                f"| {stack} | {provisioner} | {o.pool} | {data['instance_types_eligible']} | "
                f"{o.minutes_to_fallback} | {o.worst_case_nodes} nodes, ${o.worst_case_monthly_usd:,.0f}/month |"
            )
            assert row.replace(" min |", " |") in readme, row


def test_an_aks_cluster_takes_only_its_provisioners() -> None:
    from elastic_gpu.azure.cluster import AksClusterArgs, aks_cluster_problems

    args = AksClusterArgs(cluster_name="c1", location="eastus2", zones=["1"], kubernetes_version="1.35")
    assert aks_cluster_problems("c1", args.model_copy(update={"provisioner": "karpenter"})) == []
    assert aks_cluster_problems("c1", args.model_copy(update={"provisioner": "auto-provisioning"})) == [
        "AksCluster 'c1': provisioner: 'auto-provisioning' is not available on AKS; "
        "allowed: None, cluster-autoscaler, karpenter"
    ]
    nap_on_kubenet = args.model_copy(update={"provisioner": "karpenter", "network_plugin": "kubenet"})
    [kubenet] = aks_cluster_problems("c1", nap_on_kubenet)
    assert kubenet.startswith("AksCluster 'c1': network_plugin: node auto-provisioning (provisioner karpenter) needs")
