"""Settings that must work, or say why not, on a stack's first `pulumi up`: a private-only EKS endpoint in the
VPC the stack creates, an Azure spot price cap below the spot price, AKS's DNS prefix, the EKS node template's
ephemeral storage, EKS add-on versions, the AKS maintenance window and GKE's node pool auto-creation."""

from __future__ import annotations

import pytest

from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import stack_preview, stack_values

P = "elastic-gpu:"
EKS_CLUSTER = "aws:eks/cluster:Cluster"


# --- EKS: a private-only endpoint in the VPC the same `up` creates ----------------------------------------------


def endpoint_warnings(preview) -> list[str]:
    return [w for w in preview.warnings if "private-only API endpoint" in w]


def test_aws_dev_with_a_private_only_endpoint_is_warned_with_the_two_step_path(program_dir) -> None:
    values = stack_values("aws-dev")
    values[P + "cluster"]["apiAccess"] = {"public": False}
    preview = run_preview("aws-dev", program_dir(values, stack="aws-dev"))
    (warning,) = endpoint_warnings(preview)
    assert warning.startswith("EksCluster 'gpu-dev': a private-only API endpoint (public_access=False; ")
    assert "in the VPC this cluster creates" in warning and "no runner reaches it" in warning
    assert "Two steps: first `pulumi up` with public_access=True" in warning
    assert "runner_in_vpc=True (cluster.apiAccess.public: false, runnerInVnet: true)" in warning
    (cluster,) = preview.of_type(EKS_CLUSTER)
    assert cluster.inputs["vpcConfig"]["endpointPublicAccess"] is False
    assert cluster.inputs["vpcConfig"]["endpointPrivateAccess"] is True


def test_a_runner_in_the_vpc_silences_it_and_a_public_endpoint_never_warns(program_dir) -> None:
    values = stack_values("aws-dev")
    values[P + "cluster"]["apiAccess"] = {"public": False, "runnerInVnet": True}
    assert endpoint_warnings(run_preview("aws-dev", program_dir(values, stack="aws-dev"))) == []
    assert endpoint_warnings(stack_preview("aws-dev")) == []
    assert endpoint_warnings(stack_preview("aws-prod")) == []


# --- Azure: a spot price cap below the table's spot price ---------------------------------------------------------


def spot_price_warnings(preview) -> list[str]:
    return [w for w in preview.warnings if "spot_max_price (stack config gpuPools[].spotMaxPrice)" in w]


def test_a_spot_max_price_below_the_tables_spot_price_is_warned(program_dir) -> None:
    """azure-prod's training pool caps NC24ads_A100_v4 at 2.5 USD/h, above its eastus2 spot price (0.47749): no
    word. At 0.4 Azure refuses every spot VM (BillingProfile.maxPrice), so the pool never gets a node."""
    assert spot_price_warnings(stack_preview("azure-prod")) == []
    values = stack_values("azure-prod")
    values[P + "gpuPools"][1]["spotMaxPrice"] = 0.4
    (warning,) = spot_price_warnings(run_preview("azure-prod", program_dir(values, stack="azure-prod")))
    assert warning.startswith("SpotGpuPool 'training': spot_max_price (stack config gpuPools[].spotMaxPrice) 0.4")
    assert "below Standard_NC24ads_A100_v4's spot price in eastus2, 0.47749 (elastic_gpu/data/prices.csv" in warning
    values[P + "gpuPools"][1]["spotMaxPrice"] = -1
    assert spot_price_warnings(run_preview("azure-prod", program_dir(values, stack="azure-prod"))) == []


# --- AKS: the cluster name is its dnsPrefix -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cluster_name", "why"),
    [("ml_lab", "no '_'; 6 characters given"), ("a" * 55, "no '_'; 55 characters given")],
)
def test_a_cluster_name_aks_takes_as_a_name_but_not_as_a_dns_prefix_is_refused(run_program, cluster_name, why) -> None:
    """AKS names take '_' and 63 characters; its dnsPrefix (the name, here) takes neither (azurerm's
    KubernetesDNSPrefix rule): refused before anything is declared, not by ARM during `up`."""
    source = f"""
from elastic_gpu.aks_cluster import AksCluster, AksClusterArgs
AksCluster("c", AksClusterArgs(cluster_name={cluster_name!r}, location="westeurope", zones=["1"],
                               kubernetes_version="1.35"))
"""
    with pytest.raises(ConfigError) as err:
        run_program(source)
    assert f"AksCluster 'c': cluster_name: {cluster_name!r} is also the cluster's dnsPrefix" in str(err.value)
    assert why in str(err.value)


def test_a_54_character_name_with_hyphens_is_a_dns_prefix(run_program) -> None:
    name = "a" + "-b" * 26 + "c"  # 54 characters
    source = f"""
from elastic_gpu.aks_cluster import AksCluster, AksClusterArgs
AksCluster("c", AksClusterArgs(cluster_name={name!r}, location="westeurope", zones=["1"], kubernetes_version="1.35"))
"""
    (cluster,) = run_program(source).of_type("azure-native:containerservice:ManagedCluster")
    assert cluster.inputs["dnsPrefix"] == name and len(name) == 54


# --- EKS: the node template's ephemeral storage is what the node offers pods ----------------------------------------

TEMPLATE_STORAGE = "k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage"


def test_the_eks_node_template_offers_the_disk_less_kube_reserved_and_the_eviction_share() -> None:
    """aws-prod: the training pool's 200 GiB root volume offers pods 200 - 1 (kube-reserved) - 20 (nodefs.available
    10%) = 179 GiB; the template said 200Gi, so the autoscaler scaled up for a pod of 190Gi that no node holds."""
    groups = stack_preview("aws-prod").of_type("aws:eks/nodeGroup:NodeGroup")
    by_disk = {}
    for g in groups:
        if TEMPLATE_STORAGE in (g.inputs.get("tags") or {}):
            by_disk.setdefault(g.inputs["tags"][TEMPLATE_STORAGE], []).append(g.name)
    assert "179Gi" in by_disk and "200Gi" not in by_disk
    assert all(not v.endswith("00Gi") for v in by_disk), by_disk


# --- AKS: node image upgrades and NAP's image drift only in a weekly window ----------------------------------------

MAINTENANCE = "azure-native:containerservice:MaintenanceConfiguration"


@pytest.mark.parametrize("stack", ["azure-dev", "azure-prod", "azure-karpenter"])
def test_every_aks_stack_restricts_node_image_upgrades_to_a_weekly_window(stack: str) -> None:
    """Without an aksManagedNodeOSUpgradeSchedule AKS reimages nodes, and NAP drifts its GPU nodes to a new image,
    at any hour (node-auto-provisioning-upgrade-image.md). The default: Saturdays 02:00 UTC, 4 hours."""
    preview = stack_preview(stack)
    (config,) = preview.of_type(MAINTENANCE)
    (cluster,) = preview.of_type("azure-native:containerservice:ManagedCluster")
    assert config.inputs["configName"] == "aksManagedNodeOSUpgradeSchedule"
    assert config.inputs["resourceName"] == cluster.inputs["resourceName"]
    assert config.inputs["maintenanceWindow"] == {
        "schedule": {"weekly": {"dayOfWeek": "Saturday", "intervalWeeks": 1}},
        "startTime": "02:00",
        "durationHours": 4,
        "utcOffset": "+00:00",
    }


def test_the_window_is_a_setting_and_a_window_aks_refuses_is_refused(program_dir) -> None:
    values = stack_values("azure-dev")
    values[P + "cluster"]["maintenanceWindow"] = {"dayOfWeek": "Sunday", "startTime": "23:30", "utcOffset": "+01:00"}
    (config,) = run_preview("azure-dev", program_dir(values, stack="azure-dev")).of_type(MAINTENANCE)
    window = config.inputs["maintenanceWindow"]
    assert window["schedule"]["weekly"]["dayOfWeek"] == "Sunday" and window["startTime"] == "23:30"
    assert window["utcOffset"] == "+01:00" and window["durationHours"] == 4
    values[P + "cluster"]["maintenanceWindow"] = {"durationHours": 2}
    with pytest.raises(ConfigError) as err:
        load_stack_config(values)
    assert "cluster.maintenanceWindow.durationHours: Input should be greater than or equal to 4 (got 2)" in str(
        err.value
    )
    aws = stack_values("aws-dev")
    aws[P + "cluster"]["maintenanceWindow"] = {"dayOfWeek": "Sunday"}
    with pytest.raises(ConfigError) as err:
        load_stack_config(aws)
    assert "cluster.maintenanceWindow: an Azure-only setting; remove it for cloud 'aws'" in str(err.value)
