"""An AKS cluster in a subnet of the user's: every pool in it, the role its identity needs, API Server VNet
Integration, and a private cluster that one `pulumi up` from a runner in that network can create."""

from __future__ import annotations

from typing import Any

import pytest

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_MANAGED_CLUSTER
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.runner import Preview
from tests.conftest import stack_values

P = "elastic-gpu:"
VNET = "/subscriptions/0000-1111/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/corp"
NODES = f"{VNET}/subnets/aks-nodes"
API = f"{VNET}/subnets/aks-apiserver"
ROLE = "/subscriptions/0000-1111/providers/Microsoft.Authorization/roleDefinitions/4d97b98b-1d4f-4787-a291-c67834d212e7"
ROLE_TYPE = "azure-native:authorization:RoleAssignment"


def preview_with(program_dir, access: dict[str, Any] | None = None, **cluster: Any) -> Preview:
    from elastic_gpu.tools.offline.runner import run_preview

    values = stack_values("azure-dev")
    values[P + "cluster"].update(cluster)
    if access is not None:
        values[P + "cluster"]["apiAccess"] = access
    return run_preview("azure-dev", program_dir(values, stack="azure-dev"))


def runner_warnings(preview: Preview) -> list[str]:
    return [w for w in preview.warnings if "private cluster" in w]


def the_cluster(preview: Preview):
    [cluster] = [r for r in preview.resources if r.type == AKS_MANAGED_CLUSTER]
    return cluster


def test_a_private_cluster_in_a_brought_subnet_previews_with_every_pool_in_it_and_no_warning(program_dir) -> None:
    preview = preview_with(program_dir, {"public": False, "runnerInVnet": True}, subnetId=NODES)
    cluster = the_cluster(preview)
    [system] = cluster.inputs["agentPoolProfiles"]
    pools = [r for r in preview.resources if r.type == AKS_AGENT_POOL]
    assert len(pools) >= 3  # the general pool and the GPU pools' agent pools
    assert system["vnetSubnetID"] == NODES
    assert {p.name: p.inputs.get("vnetSubnetID") for p in pools} == {p.name: NODES for p in pools}
    # a user-assigned identity, granted Network Contributor on the subnet before the cluster is created
    [role] = [r for r in preview.resources if r.type == ROLE_TYPE]
    assert role.inputs["scope"] == NODES
    assert role.inputs["roleDefinitionId"] == ROLE
    assert role.inputs["principalType"] == "ServicePrincipal"
    [identity] = [r for r in preview.resources if r.type == "azure-native:managedidentity:UserAssignedIdentity"]
    assert identity.urn in role.depends_on
    assert role.urn in cluster.depends_on
    assert cluster.inputs["identity"]["type"] == "UserAssigned"
    assert cluster.inputs["apiServerAccessProfile"] == {"enablePrivateCluster": True}
    assert runner_warnings(preview) == []


def test_a_private_cluster_in_the_vnet_aks_creates_still_warns_though_the_runner_is_said_to_be_in_it(
    program_dir,
) -> None:
    preview = preview_with(program_dir, {"public": False, "runnerInVnet": True})
    [warning] = runner_warnings(preview)
    assert "in the VNet AKS creates" in warning and "cluster.subnetId" in warning
    assert not [r for r in preview.resources if r.type == ROLE_TYPE]
    assert the_cluster(preview).inputs["identity"]["type"] == "SystemAssigned"


def test_api_server_vnet_integration_sets_the_profile_and_grants_both_subnets(program_dir) -> None:
    preview = preview_with(program_dir, {"public": False, "runnerInVnet": True}, subnetId=NODES, apiServerSubnetId=API)
    assert the_cluster(preview).inputs["apiServerAccessProfile"] == {
        "enablePrivateCluster": True,
        "enableVnetIntegration": True,
        "subnetId": API,
    }
    assert sorted(r.inputs["scope"] for r in preview.resources if r.type == ROLE_TYPE) == sorted([NODES, API])
    assert runner_warnings(preview) == []


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        ({"apiServerSubnetId": API}, "api_server_subnet_id: API Server VNet Integration here needs the nodes' subnet"),
        ({"subnetId": "aks-nodes"}, "subnet_id: 'aks-nodes' is not a subnet id"),
        (
            {"subnetId": NODES, "apiServerSubnetId": API.replace("/corp/", "/other/")},
            "api_server_subnet_id: must be in the VNet of subnet_id",
        ),
    ],
)
def test_bad_subnets_are_refused_before_anything_is_declared(program_dir, cluster: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        preview_with(program_dir, **cluster)
    assert message in str(err.value)


def test_subnet_settings_are_azure_only() -> None:
    values = stack_values("aws-dev")
    values[P + "cluster"]["subnetId"] = NODES
    with pytest.raises(ConfigError) as err:
        load_stack_config(values)
    assert "cluster.subnetId: an Azure-only setting" in str(err.value)


POOL_PROGRAM = """
from elastic_gpu.aks_cluster import AksCluster, AksClusterArgs
from elastic_gpu import GeneralPool, GeneralPoolArgs
cluster = AksCluster("lab", AksClusterArgs(cluster_name="lab", location="westeurope", zones=["1"],
                                          kubernetes_version="1.35"{cluster_subnet}))
GeneralPool("general", GeneralPoolArgs(cluster=cluster, instance_types=["Standard_D4s_v5"], min_size=1,
                                       max_size=2, subnet_ids={pool_subnet!r}))
"""


def test_a_pool_subnet_on_a_cluster_without_one_is_refused_naming_the_field(run_program) -> None:
    with pytest.raises(ConfigError) as err:
        run_program(POOL_PROGRAM.format(cluster_subnet="", pool_subnet=NODES))
    assert "GeneralPool 'general': GeneralPoolArgs.subnet_ids: the cluster is in the VNet AKS creates" in str(err.value)
    assert "cluster's subnet_id (stack config cluster.subnetId)" in str(err.value)


def test_a_pool_subnet_in_the_clusters_vnet_is_used_and_another_vnet_is_refused(run_program) -> None:
    other = f"{VNET}/subnets/gpu"
    preview = run_program(POOL_PROGRAM.format(cluster_subnet=f", subnet_id={NODES!r}", pool_subnet=other))
    [pool] = [r for r in preview.resources if r.type == AKS_AGENT_POOL]
    assert pool.inputs["vnetSubnetID"] == other
    with pytest.raises(ConfigError) as err:
        run_program(
            POOL_PROGRAM.format(cluster_subnet=f", subnet_id={NODES!r}", pool_subnet=other.replace("corp", "lab"))
        )
    assert "subnet_ids: every AKS pool must be in the cluster's VNet" in str(err.value)


def test_node_auto_provisioning_in_a_brought_vnet_needs_no_vnet_integration_and_gets_the_role_on_the_vnet(
    program_dir,
) -> None:
    """AKS creates a NAP cluster in your VNet with the node subnet alone (node-auto-provisioning-custom-vnet.md,
    2026-08-06): no API server subnet is asked for, the identity gets Network Contributor on the VNet, and the
    API server stays outside the VNet. API Server VNet Integration is still taken when given."""
    from elastic_gpu.tools.offline.runner import run_preview

    values = stack_values("azure-karpenter")
    values[P + "cluster"]["subnetId"] = NODES
    preview = run_preview("azure-karpenter", program_dir(values, stack="azure-karpenter"))
    assert [r.inputs["scope"] for r in preview.resources if r.type == ROLE_TYPE] == [VNET]
    classes = [r for r in preview.resources if r.type.endswith("AKSNodeClass")]
    assert classes and all(c.inputs["spec"]["vnetSubnetID"] == NODES for c in classes)
    (cluster,) = [r for r in preview.resources if r.type == "azure-native:containerservice:ManagedCluster"]
    assert cluster.inputs["nodeProvisioningProfile"]["mode"] == "Auto"
    assert cluster.inputs["agentPoolProfiles"][0]["vnetSubnetID"] == NODES
    assert not (cluster.inputs.get("apiServerAccessProfile") or {}).get("enableVnetIntegration")
    values[P + "cluster"]["apiServerSubnetId"] = API
    preview = run_preview("azure-karpenter", program_dir(values, stack="azure-karpenter"))
    (cluster,) = [r for r in preview.resources if r.type == "azure-native:containerservice:ManagedCluster"]
    assert cluster.inputs["apiServerAccessProfile"]["enableVnetIntegration"] is True
