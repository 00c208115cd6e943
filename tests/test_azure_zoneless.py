"""AKS in a region without availability zones (westus, ukwest, ...): `zones: []` gives regional agent pools
(no `availabilityZones`, which AKS refuses there), one spot pool per VM size whatever `perZone` says, NAP
NodePools without a zone requirement, and a simulation without zonal scenarios. Other clouds still need zones."""

from __future__ import annotations

import json

import pytest
from conftest import stack_values

from elastic_gpu.__main__ import main
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.tools.simulation.run import SCENARIO_ONE_ZONE, SCENARIO_SPOT_HAS_CAPACITY, simulate

AGENT_POOL = "azure-native:containerservice:AgentPool"
A10 = "Standard_NV36ads_A10_v5"


def westus(stack: str = "azure-dev") -> dict:
    config = stack_values(stack)
    config["elastic-gpu:cluster"] |= {"region": "westus", "zones": []}
    for pool in config["elastic-gpu:gpuPools"]:
        pool |= {"gpu": "a10", "instanceTypes": [A10], "perZone": True}
    return config


def test_a_region_without_zones_gets_regional_agent_pools(program_dir) -> None:
    preview = run_preview("test", program_dir(westus()))
    pools = preview.of_type(AGENT_POOL)
    assert pools and all("availabilityZones" not in p.inputs for p in pools)
    # perZone has no zone to split by: one spot agent pool for the one VM size, and its fallback
    assert sorted(p.inputs["scaleSetPriority"] for p in pools if p.inputs["mode"] == "User") == [
        "Regular",
        "Regular",  # the general pool
        "Spot",
    ]
    (cluster,) = preview.of_type("azure-native:containerservice:ManagedCluster")
    assert all("availabilityZones" not in profile for profile in cluster.inputs["agentPoolProfiles"])


def test_a_regional_pool_is_simulated_without_zonal_scenarios(program_dir) -> None:
    (outcome,) = simulate(run_preview("test", program_dir(westus())))
    assert outcome.fallback is not None
    for figures in outcome.regimes.values():
        assert SCENARIO_SPOT_HAS_CAPACITY in figures and SCENARIO_ONE_ZONE not in figures


def test_node_auto_provisioning_in_a_region_without_zones_sets_no_zone_requirement(program_dir) -> None:
    preview = run_preview("test", program_dir(westus("azure-karpenter")))
    node_pools = [r for r in preview.of_type("kubernetes:karpenter.sh/v1:NodePool")]
    assert node_pools
    for node_pool in node_pools:
        keys = [r["key"] for r in node_pool.inputs["spec"]["template"]["spec"]["requirements"]]
        assert "topology.kubernetes.io/zone" not in keys and "karpenter.azure.com/sku-name" in keys


def test_zones_in_a_region_without_zones_say_to_give_none(program_dir, capsys: pytest.CaptureFixture[str]) -> None:
    config = westus()
    config["elastic-gpu:cluster"]["zones"] = ["1"]
    assert main(["preview", "--program", str(program_dir(config)), "--stack", "test"]) == 2
    assert (
        "cluster.zones: region 'westus' has no availability zones (got zones ['1']); allowed: none (zones: [], "
        "regional agent pools), or a region with zones such as westus2 or westus3"
    ) in capsys.readouterr().err


@pytest.mark.parametrize("stack", ["aws-dev", "gcp-dev"])
def test_other_clouds_need_a_zone(program_dir, capsys: pytest.CaptureFixture[str], stack: str) -> None:
    config = stack_values(stack)
    config["elastic-gpu:cluster"]["zones"] = []
    region = config["elastic-gpu:cluster"]["region"]
    cloud = config["elastic-gpu:cloud"]
    assert main(["preview", "--program", str(program_dir(config)), "--stack", "test"]) == 2
    assert (
        f"cluster.zones: must list at least one zone of region {region!r} (got []); {cloud} places every node "
        "group in zones"
    ) in capsys.readouterr().err


def test_an_existing_cluster_in_a_region_without_zones(run_program) -> None:
    source = """
from elastic_gpu import AksCluster, SpotGpuPool, SpotGpuPoolArgs
aks = AksCluster.existing("aks", cluster_name="aks", resource_group_name="rg", location="westus", zones=[],
                          kubernetes_version="1.35")
SpotGpuPool("a10", SpotGpuPoolArgs(cluster=aks, instance_types=["Standard_NV36ads_A10_v5"], max_size=2))
"""
    pools = run_program(source).of_type(AGENT_POOL)
    assert [p.inputs["scaleSetPriority"] for p in pools] == ["Spot"]
    assert "availabilityZones" not in pools[0].inputs
    with pytest.raises(ConfigError) as exc:
        run_program(source.replace("zones=[]", 'zones=["1"]'))
    assert "AksCluster.existing 'aks': zones: region 'westus' has no availability zones" in str(exc.value)


MULTI_REGION = """
import pulumi
from pulumi_azure_native import containerservice, resources
from elastic_gpu import AksCluster, SpotGpuPool, SpotGpuPoolArgs

group = resources.ResourceGroup("rg", location="eastus")
for name, location in (("east", "eastus"), ("west", "westus2")):
    cluster = containerservice.ManagedCluster(
        f"aks-{name}", resource_group_name=group.name, location=location, dns_prefix=name,
        agent_pool_profiles=[containerservice.ManagedClusterAgentPoolProfileArgs(
            name="system", mode="System", count=1, vm_size="Standard_D4s_v5")])
    handle = AksCluster.from_managed_cluster(f"gpu-{name}", cluster, resource_group_name=group.name, zones=["1"])
    SpotGpuPool(f"t4-{name}", SpotGpuPoolArgs(cluster=handle, instance_types=["Standard_NC4as_T4_v3"], max_size=2))
"""


def test_each_cluster_s_agent_pools_are_priced_where_that_cluster_is(
    run_program, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_program(MULTI_REGION)
    capsys.readouterr()
    main(["preview", "--program", str(tmp_path), "--stack", "test", "--json"])
    rows = {r["pool"]: r for r in json.loads(capsys.readouterr().out)["cost"]["pools"] if r["pool"].startswith("t4")}
    # The provider's location is eastus, but t4-west's agent pools are in its cluster's westus2.
    assert {pool: row["region"] for pool, row in rows.items()} == {"t4-east": "eastus", "t4-west": "westus2"}
