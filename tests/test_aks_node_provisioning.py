"""AKS node auto-provisioning: the NodePools and AKSNodeClass a GPU pool becomes, checked against
karpenter-provider-azure v1.14.2's CRDs, the sizes it may take, and NAP's scale-up model."""

from __future__ import annotations

import copy
import dataclasses

import pytest
from pulumi_policy import PolicyResource, ResourceValidationArgs, StackValidationArgs
from pulumi_policy.policy import PolicyResourceOptions

from elastic_gpu.azure.node_provisioning import simulation as nap_sim
from elastic_gpu.azure.node_provisioning.cluster import nap_cluster_problems, node_provisioning_profile
from elastic_gpu.azure.node_provisioning.objects import (
    NODE_CLASS_API,
    NODE_CLASS_KIND,
    NODE_POOL_API,
    NODE_POOL_KIND,
    node_class_spec,
)
from elastic_gpu.azure.node_provisioning.pools import nap_pool_problems, node_pool_specs
from elastic_gpu.azure.node_provisioning.skus import NAP_GPU_SKUS, eligible_skus
from elastic_gpu.compose import PlannedCluster
from elastic_gpu.gpu_catalog import gpu_instance_types
from elastic_gpu.policy_rules.karpenter_rules import NODE_POOL_TYPE, validate_fallback_ordered, validate_gpu_node_pool
from elastic_gpu.scheduling import AKS_SPOT_TAINT, GPU_TAINT
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs
from tests.crd_schemas import validate

CLUSTER = PlannedCluster("azure", "gpu-prod", ["1", "2", "3"], "1.35", {})


def pool_args(**changes: object) -> SpotGpuPoolArgs:
    """azure-prod's inference pool: T4, 9 spot nodes, on-demand fallback."""
    base = SpotGpuPoolArgs(
        cluster=CLUSTER, instance_types=["Standard_NC4as_T4_v3"], max_size=9, on_demand_fallback=True
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


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


def test_spot_node_pool_outranks_the_fallback_over_the_same_sizes() -> None:
    spot, fallback = node_pools(pool_args())
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
    assert spot["spec"]["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"}
    assert spot["spec"]["template"]["spec"]["expireAfter"] == "720h"


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
    [spot, _] = node_pools(pool_args())
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


@pytest.mark.parametrize(("spot_skus", "best", "worst"), [(1, 2, 30), (3, 4, 70)])
def test_fallback_comes_after_one_failed_launch_per_spot_size(spot_skus: int, best: int, worst: int) -> None:
    # First batch 1-10 s, then per SkuNotAvailable a retry of 1 s (deletion trigger) to 20 s (requeue + batch).
    assert nap_sim.to_fallback(spot_skus) == nap_sim.Seconds(best, worst)
    assert nap_sim.to_first_node() == nap_sim.Seconds(1, 10)
    assert nap_sim.minutes_to_zero(600) == (10.0, 10.17)


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
    [spot, _] = node_pools(pool_args())
    spot["spec"].pop("limits")
    spot["spec"]["disruption"]["consolidateAfter"] = "Never"
    spot["spec"]["template"]["spec"]["taints"] = [
        t for t in spot["spec"]["template"]["spec"]["taints"] if t["key"] != "nvidia.com/gpu"
    ]
    reports = _node_pool_reports(spot)
    assert [r.split(":")[0] for r in reports] == [
        "GPU NodePool 'inference-spot' has no limits.nodes or limits.nvidia.com/gpu",
        "GPU NodePool 'inference-spot' does not taint its nodes nvidia.com/gpu=true",
        "GPU NodePool 'inference-spot' never consolidates (consolidateAfter",
    ]


def _order_reports(objs: list[dict]) -> list[str]:
    reports: list[str] = []
    validate_fallback_ordered(
        StackValidationArgs([_resource(o) for o in objs], {}), lambda m, urn=None: reports.append(m)
    )
    return reports


def test_spot_above_the_fallback_passes_and_equal_weights_fail() -> None:
    spot, fallback = node_pools(pool_args())
    assert _order_reports([spot, fallback]) == []
    fallback["spec"]["weight"] = 100
    [report] = _order_reports([spot, fallback])
    assert report.startswith(
        "Pool 'inference': on-demand NodePool 'inference-on-demand' (weight 100) is not below spot NodePool "
        "'inference-spot' (weight 100)"
    )
