"""Bad Azure stack config fails with one ConfigError naming field, value and what is allowed."""

from __future__ import annotations

import re

import pytest

from elastic_gpu.azure.pools import agent_pool_name_problems, agent_pool_stem, aks_agent_pool_name, vmss_name_regex
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import stack_values

P = "elastic-gpu:"


def errors_for(mutate, stack: str = "azure-dev") -> str:
    values = stack_values(stack)
    mutate(values)
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return str(exc.value)


def test_shipped_azure_stacks_parse() -> None:
    dev, prod = (load_stack_config(stack_values(s)) for s in ("azure-dev", "azure-prod"))
    assert dev.cloud == prod.cloud == "azure"
    assert prod.cluster.protect and any(p.on_demand_fallback for p in prod.gpu_pools)


def test_vm_size_without_gpu_in_a_gpu_pool() -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"][0].update({"instanceTypes": ["Standard_D4s_v5"]}))
    assert "gpuPools[0].instanceTypes[0]: 'Standard_D4s_v5' carries no GPU we know on azure" in msg


def test_vm_size_of_another_gpu() -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"][0].update({"instanceTypes": ["Standard_NC24ads_A100_v4"]}))
    assert "gpuPools[0].instanceTypes[0]: 'Standard_NC24ads_A100_v4' has NVIDIA A100 80GB, not gpu 't4'" in msg


def test_spot_general_pool() -> None:
    msg = errors_for(lambda v: v[P + "generalPool"].update({"spot": True}))
    assert "generalPool.spot: the general pool runs system add-ons and must be on-demand on AKS" in msg


def test_spot_system_pool() -> None:
    msg = errors_for(lambda v: v[P + "cluster"]["systemPool"].update({"spot": True}))
    assert "cluster.systemPool.spot: AKS does not allow a spot System pool; allowed: false (got true)" in msg


def test_min_zero_on_the_system_pool() -> None:
    msg = errors_for(lambda v: v[P + "cluster"]["systemPool"].update({"minSize": 0}))
    assert "cluster.systemPool.minSize: an AKS System pool needs at least 1 node; allowed: >= 1 (got 0)" in msg


def test_region_where_the_vm_size_is_not_sold() -> None:
    msg = errors_for(lambda v: v[P + "cluster"].update({"region": "norwayeast"}))
    assert "gpuPools[0].instanceTypes[0]: 'Standard_NC4as_T4_v3' is not sold in region 'norwayeast'" in msg
    assert "allowed regions: australiaeast," in msg


def test_region_check_names_gpu_when_sizes_are_picked_from_it() -> None:
    def mutate(v):
        v[P + "cluster"]["region"] = "norwayeast"
        del v[P + "gpuPools"][0]["instanceTypes"]

    msg = errors_for(mutate)
    assert "gpuPools[0].gpu ('t4' picks Standard_NC4as_T4_v3): 'Standard_NC4as_T4_v3' is not sold" in msg


def test_zones_must_be_azure_zones() -> None:
    msg = errors_for(lambda v: v[P + "cluster"].update({"zones": ["westeurope-1", "2"]}))
    assert "cluster.zones[0]: 'westeurope-1' is not an Azure zone; allowed: 1, 2, 3" in msg


def test_general_pool_has_one_vm_size() -> None:
    msg = errors_for(lambda v: v[P + "generalPool"].update({"instanceTypes": ["Standard_D4s_v5", "Standard_D4as_v5"]}))
    assert "generalPool.instanceTypes: an AKS agent pool has exactly one VM size" in msg


def test_long_pool_names_are_cut_and_stay_distinct() -> None:
    """Agent-pool names are <stem[:5]><kind><digest>: a long pool name is cut, the digest (over the whole
    stem and the replacement-forcing fields) keeps pools apart and changes when such a field changes."""
    forcing = {"vmSize": "Standard_NC4as_T4_v3", "availabilityZones": ["1"]}
    a = aks_agent_pool_name("inferencelarge", "s", forcing)
    b = aks_agent_pool_name("inferencesmall", "s", forcing)
    assert a[:6] == b[:6] == "infers" and a != b and len(a) == len(b) == 12
    assert aks_agent_pool_name("inferencelarge", "s", forcing | {"vmSize": "Standard_NC8as_T4_v3"}) != a
    assert agent_pool_name_problems("gpuPools[0].", "inference-large") == []


def test_expander_aks_does_not_have() -> None:
    msg = errors_for(lambda v: v[P + "autoscaler"].update({"expander": ["price", "least-waste"]}))
    assert "autoscaler.expander[0]: 'price' is not an AKS expander; allowed first: least-waste, most-pods" in msg


@pytest.mark.parametrize("price", [0, 0.123456, -2])
def test_bad_spot_max_price(price: float) -> None:
    msg = errors_for(lambda v: v[P + "gpuPools"][0].update({"spotMaxPrice": price}))
    assert f"gpuPools[0].spotMaxPrice: {float(price)!r} is not allowed; allowed: -1" in msg


def test_azure_only_settings_are_rejected_on_aws() -> None:
    def mutate(v):
        v[P + "cluster"]["networkPlugin"] = "azure"
        v[P + "cluster"]["resourceGroup"] = {"name": "rg"}
        v[P + "gpuPools"][0]["spotMaxPrice"] = 0.5

    msg = errors_for(mutate, stack="aws-dev")
    assert "cluster.networkPlugin: an Azure-only setting; remove it for cloud 'aws'" in msg
    assert "cluster.resourceGroup: an Azure-only setting; remove it for cloud 'aws'" in msg
    assert "gpuPools[0].spotMaxPrice: an Azure-only setting; remove it for cloud 'aws'" in msg


def test_kubernetes_version_aks_does_not_offer() -> None:
    msg = errors_for(lambda v: v[P + "cluster"].update({"kubernetesVersion": "1.29"}))
    assert (
        "cluster.kubernetesVersion: '1.29' is not supported on azure; allowed: 1.32, 1.33, 1.34, 1.35, 1.36, 1.37"
        in msg
    )


def test_bad_config_fails_before_any_resource(program_dir) -> None:
    values = stack_values("azure-dev")
    values[P + "cluster"]["systemPool"]["minSize"] = 0
    with pytest.raises(ConfigError, match=r"cluster\.systemPool\.minSize"):
        run_preview("test", program_dir(values))


def test_agent_pool_names_and_vmss_regex() -> None:
    assert agent_pool_stem("t4-Spot") == "t4spot"
    assert agent_pool_name_problems("", "a100x") == []
    assert agent_pool_name_problems("", "4gpu")  # must start with a letter
    rx = vmss_name_regex("t4s01")
    assert re.fullmatch(rx, "aks-t4s01-30195312-vmss")
    assert not re.fullmatch(rx, "aks-t4s012-30195312-vmss")


def test_aks_autoscaler_settings_must_match_the_cluster_profile() -> None:
    """On AKS ClusterAutoscaler declares no workload; settings differing from the cluster's profile are an error."""
    from types import SimpleNamespace

    from elastic_gpu.aks_cluster import AksClusterArgs
    from elastic_gpu.azure.autoscaler import build_autoscaler
    from elastic_gpu.cluster_handle import ManagedAutoscalerProfile

    c = AksClusterArgs(cluster_name="c", location="westeurope", zones=["1"], kubernetes_version="1.33")
    profile = ManagedAutoscalerProfile(
        c.expander[0], c.scale_down_unneeded_time, c.scale_down_delay_after_add, c.max_node_provision_time
    )
    args = SimpleNamespace(
        cluster=SimpleNamespace(autoscaler_profile=profile),  # only the handle's profile is read
        gpu_pools=[],
        scale_down_unneeded_time=c.scale_down_unneeded_time,
        scale_down_delay_after_add=c.scale_down_delay_after_add,
        max_node_provision_time=c.max_node_provision_time,
        expander=list(c.expander),
        image=None,
        namespace="kube-system",
    )
    assert build_autoscaler("ca", args, parent=None) == {"image": None, "role_arn": None, "service_account_name": None}
    args.scale_down_unneeded_time = "1h"
    args.image = "registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.6"
    with pytest.raises(ConfigError) as exc:
        build_autoscaler("ca", args, parent=None)
    assert (
        "ClusterAutoscaler 'ca': ClusterAutoscalerArgs.scale_down_unneeded_time: on AKS the autoscaler's settings live"
        in str(exc.value)
    )
    assert "image: AKS runs its own managed autoscaler; leave image unset" in str(exc.value)
