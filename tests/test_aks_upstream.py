"""AKS behaviour checked against upstream: zero durations, time-slicing through the scale set's
node-template tag, VM sizes ranked by the cluster region's spot prices."""

from __future__ import annotations

import pytest
import yaml
from conftest import stack_values

from elastic_gpu.aks_cluster import AksClusterArgs, aks_cluster_problems
from elastic_gpu.azure.pools import price_ranks
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.tools.simulation.templates import node_templates

P = "elastic-gpu:"
AGENT_POOL = "azure-native:containerservice:AgentPool"
GPU_TAG = "k8s.io_cluster-autoscaler_node-template_resources_nvidia.com_gpu"


def test_zero_scale_down_durations_reach_the_profile(program_dir) -> None:
    values = stack_values("azure-dev")
    values[P + "autoscaler"].update({"scaleDownDelayAfterAdd": "0m", "scaleDownUnneededTime": "0m"})
    preview = run_preview("t", program_dir(values, stack="t"))
    profile = preview.one("azure-native:containerservice:ManagedCluster", "gpu-dev-aks").inputs["autoScalerProfile"]
    assert (profile["scaleDownDelayAfterAdd"], profile["scaleDownUnneededTime"]) == ("0m", "0m")


def test_aks_args_take_0m_but_not_for_the_provision_time() -> None:
    args = AksClusterArgs(cluster_name="c", location="westeurope", zones=["1"], kubernetes_version="1.35")
    args.scale_down_delay_after_add = "0m"
    assert aks_cluster_problems("c", args) == []
    args.max_node_provision_time = "0m"
    assert aks_cluster_problems("c", args) == [
        "AksCluster 'c': max_node_provision_time: must be longer than 0 (got '0m')"
    ]


def test_time_slicing_tells_the_autoscaler_through_the_pool_tag(program_dir) -> None:
    values = stack_values("azure-dev")
    values[P + "devicePlugin"] = {"timeSlicingReplicas": 3}
    preview = run_preview("t", program_dir(values, stack="t"))
    gpu_pools = [r for r in preview.of_type(AGENT_POOL) if r.inputs["vmSize"] == "Standard_NC4as_T4_v3"]
    assert gpu_pools and all(r.inputs["tags"][GPU_TAG] == "3" for r in gpu_pools)  # 1 T4 x 3 replicas
    assert all(r.inputs["tags"]["project"] == "elastic-gpu" for r in gpu_pools)  # the stack's tags stay
    general = [r for r in preview.of_type(AGENT_POOL) if r.inputs["vmSize"] == "Standard_D4s_v5"]
    assert general and all(GPU_TAG not in r.inputs["tags"] for r in general)
    templates = [t for t in node_templates(preview) if t.pool == "t4"]
    assert templates and all(t.allocatable["nvidia.com/gpu"] == 3 for t in templates)
    [config_map] = [r for r in preview.of_type("kubernetes:core/v1:ConfigMap") if "config.yaml" in r.inputs["data"]]
    assert "replicas: 3" in config_map.inputs["data"]["config.yaml"]


@pytest.mark.parametrize(
    ("sizes", "spot", "region", "ranks"),
    [
        # westus2 spot: the A100 size 0.616/h, the 64-core T4 size 0.510/h (the mean over all regions ranks them
        # the other way round)
        (["Standard_NC24ads_A100_v4", "Standard_NC64as_T4_v3"], True, "westus2", [1, 0]),
        # eastus: the H100 size has no spot price; its on-demand 6.98/h must not stand in for one
        (["Standard_NC40ads_H100_v5", "Standard_NC96ads_A100_v4"], True, "eastus", [1, 0]),
        (["Standard_NC40ads_H100_v5", "Standard_NC96ads_A100_v4"], False, "eastus", [0, 1]),
        # no region known before deployment: the mean over the regions' spot rows only
        (["Standard_NC24ads_A100_v4", "Standard_NV36ads_A10_v5"], True, None, [0, 1]),
    ],
)
def test_vm_sizes_rank_by_the_regions_spot_prices(sizes, spot, region, ranks) -> None:
    assert price_ranks(sizes, spot=spot, region=region) == ranks


def test_the_stack_ranks_by_its_own_region(program_dir) -> None:
    # eastus spot: the A100 size 0.444/h, the A10 size 0.80/h; over all regions, with on-demand prices standing
    # in where a region has no spot price, the A100 size looked dearer
    values = stack_values("azure-dev")
    values[P + "cluster"]["region"] = "eastus"
    values[P + "gpuPools"][0].update(
        {
            "instanceTypes": ["Standard_NV36ads_A10_v5", "Standard_NC24ads_A100_v4"],
            "perZone": False,
            "mixedGpuModels": True,
        }
    )
    values[P + "gpuPools"][0].pop("gpu")
    preview = run_preview("t", program_dir(values, stack="t"))
    [cm] = [r for r in preview.of_type("kubernetes:core/v1:ConfigMap") if "priorities" in r.inputs["data"]]
    priorities = yaml.safe_load(cm.inputs["data"]["priorities"])
    spot = {
        r.inputs["vmSize"]: r.inputs["agentPoolName"]
        for r in preview.of_type(AGENT_POOL)
        if r.inputs.get("scaleSetPriority") == "Spot"
    }
    rank_of = {
        vm: next(p for p, rxs in priorities.items() if any(name in rx for rx in rxs)) for vm, name in spot.items()
    }
    assert rank_of["Standard_NC24ads_A100_v4"] > rank_of["Standard_NV36ads_A10_v5"]
