"""An AKS cluster the pools join, read as it is: with Microsoft Entra ID its cluster-user kubeconfig (as AKS returns
it, offline too) logs in by device code, which is a finding until the program names a login mode a runner can use;
the cluster's Service and Pod ranges are settings, checked, and a finding when a subnet of the user's meets them
at AKS's defaults; the support plan is read."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import UPSTREAM, upstream_copy

from elastic_gpu.azure.entra import RBAC_CLUSTER_ADMIN, STATIC_CREDENTIAL_REFUSED, login_of, non_interactive
from elastic_gpu.azure.network import SERVICE_CIDR_OVERLAP
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.runner import Preview, run_preview

TEMPLATE = "kubernetes-azure-python"
CLUSTER = "azure-native:containerservice:ManagedCluster"


def device_code(preview: Preview) -> list[str]:
    return [w for w in preview.warnings if "kubelogin --login devicecode" in w]


def runner_notes(preview: Preview) -> list[str]:
    return [w for w in preview.warnings if "kubelogin get-token --login" in w]


def range_findings(preview: Preview) -> list[str]:
    return [w for w in preview.warnings if SERVICE_CIDR_OVERLAP in w]


# --- Entra ID ---------------------------------------------------------------------------------------------------


def test_the_azure_template_s_entra_cluster_is_a_device_code_finding() -> None:
    preview = run_preview("dev", UPSTREAM / TEMPLATE)
    [cluster] = preview.of_type(CLUSTER)
    assert cluster.inputs["aadProfile"]["enableAzureRBAC"] is True  # the template's Entra ID with Azure RBAC
    [finding] = device_code(preview)
    assert finding.startswith("AksCluster 'gpu': the cluster uses Microsoft Entra ID")
    assert "`pulumi up` hangs at the first Kubernetes object" in finding and 'entra_login="azurecli"' in finding
    assert runner_notes(preview) == []


USER_KUBECONFIG = """
import pulumi
from elastic_gpu import AksCluster
from pulumi_azure_native import containerservice as cs, resources
rg = resources.ResourceGroup("rg", resource_group_name="RG")
mc = cs.ManagedCluster("mc", resource_name_="NAME", resource_group_name=rg.name, dns_prefix="x",
                       agent_pool_profiles=[{"name": "sys", "mode": "System", "count": 1,
                                             "vm_size": "Standard_D4s_v5"}],
                       AAD)
c = AksCluster.from_managed_cluster("gpu", mc, resource_group_name=rg.name, zones=["1"]LOGIN)
pulumi.export("kubeconfig", pulumi.Output.unsecret(c.kubeconfig))
pulumi.export("plan", c.support_plan)
"""
ENTRA = 'aad_profile={"managed": True, "enable_azure_rbac": True}, disable_local_accounts=True'


def user_kubeconfig(run_program, name: str, aad: str, login: str = "") -> tuple[Preview, dict]:
    source = USER_KUBECONFIG.replace("NAME", name).replace("RG", f"{name}-rg").replace("AAD", aad)
    preview = run_program(source.replace("LOGIN", login))
    return preview, yaml.safe_load(preview.outputs["kubeconfig"].value)


def test_the_mock_returns_aks_s_own_kubeconfigs(run_program) -> None:
    # Entra ID: the exec kubeconfig AKS returns, device code and all (kubelogin-authentication.md).
    preview, entra = user_kubeconfig(run_program, "entra-a", ENTRA)
    [user] = entra["users"]
    assert user["name"] == "clusterUser_entra-a-rg_entra-a"
    exec_ = user["user"]["exec"]
    assert exec_["command"] == "kubelogin" and exec_["args"][-2:] == ["--login", "devicecode"]
    assert exec_["args"][exec_["args"].index("--server-id") + 1] == "6dae42f8-4368-4678-94ff-3960e28e3630"
    assert device_code(preview)
    # Without Entra ID: the local user account's certificate and token, and no finding.
    plain_preview, plain = user_kubeconfig(run_program, "plain-a", "tags={}")
    assert set(plain["users"][0]["user"]) == {"client-certificate-data", "client-key-data", "token"}
    assert device_code(plain_preview) == [] and runner_notes(plain_preview) == []


@pytest.mark.parametrize("login", ["azurecli", "workloadidentity", "msi"])
def test_a_login_mode_makes_the_kubeconfig_non_interactive(run_program, login: str) -> None:
    preview, converted = user_kubeconfig(run_program, f"entra-{login}", ENTRA, f", entra_login={login!r}")
    exec_ = converted["users"][0]["user"]["exec"]
    # as `kubelogin convert-kubeconfig -l <mode>` writes it (Azure/kubelogin convert.go)
    assert exec_["args"] == ["get-token", "--login", login, "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"]
    assert device_code(preview) == []
    [note] = runner_notes(preview)
    assert "needs `kubelogin` on its PATH" in note and RBAC_CLUSTER_ADMIN in note


def test_spn_keeps_the_client_and_tenant_as_kubelogin_does(run_program) -> None:
    _, converted = user_kubeconfig(run_program, "entra-spn", ENTRA, ", entra_login='spn'")
    args = converted["users"][0]["user"]["exec"]["args"]
    assert args[:5] == ["get-token", "--login", "spn", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"]
    assert args[5:] == [
        "--client-id",
        "80faf920-1908-4b52-b5ef-a8e7bedfc67a",
        "--tenant-id",
        "00000000-0000-0000-0000-0000000000aa",
        "--environment",
        "AzurePublicCloud",
    ]


def test_a_login_mode_on_a_cluster_without_entra_changes_nothing(run_program) -> None:
    preview, plain = user_kubeconfig(run_program, "plain-b", "tags={}", ", entra_login='azurecli'")
    assert "token" in plain["users"][0]["user"] and runner_notes(preview) == []


def test_an_interactive_or_unknown_login_mode_is_refused_by_name(run_program) -> None:
    with pytest.raises(ConfigError) as exc:
        user_kubeconfig(run_program, "entra-b", ENTRA, ", entra_login='devicecode'")
    assert "entra_login: 'devicecode' is not a kubelogin login mode a runner can use without a person" in str(exc.value)
    assert "allowed: azurecli, workloadidentity, spn, msi, azd" in str(exc.value)


def test_admin_credentials_are_refused_without_local_accounts_in_aks_s_words(run_program) -> None:
    admin = USER_KUBECONFIG.replace(
        'pulumi.export("kubeconfig", pulumi.Output.unsecret(c.kubeconfig))',
        "cs.list_managed_cluster_admin_credentials_output(resource_group_name=rg.name, resource_name=mc.name)"
        ".kubeconfigs.apply(lambda k: pulumi.export('admin', k[0].value))",
    )
    enabled = run_program(admin.replace("NAME", "local-on").replace("RG", "r1").replace("AAD", "tags={}")
                          .replace("LOGIN", ""))  # fmt: skip
    assert enabled.outputs["admin"].value
    with pytest.raises(Exception, match="Getting static credential isn't allowed"):
        run_program(admin.replace("NAME", "local-off").replace("RG", "r2").replace("AAD", ENTRA).replace("LOGIN", ""))
    assert "disable local accounts" in STATIC_CREDENTIAL_REFUSED


def test_the_template_set_up_right_has_no_device_code_finding(tmp_path: Path) -> None:
    program = upstream_copy(
        TEMPLATE,
        tmp_path,
        ('zones=["1", "2", "3"], tags=TAGS)', 'zones=["1", "2", "3"], tags=TAGS, entra_login="azurecli")'),
    )
    preview = run_preview("dev", program)
    assert device_code(preview) == [] and len(runner_notes(preview)) == 1


def test_the_support_plan_is_read_from_the_cluster(run_program) -> None:
    source = USER_KUBECONFIG.replace(
        "AAD", 'support_plan="AKSLongTermSupport", sku={"name": "Base", "tier": "Premium"}'
    )
    preview = run_program(source.replace("NAME", "lts").replace("RG", "lts-rg").replace("LOGIN", ""))
    assert preview.outputs["plan"].value == "AKSLongTermSupport"


def test_kubelogin_conversion_leaves_a_certificate_kubeconfig_alone() -> None:
    text = yaml.safe_dump({"users": [{"name": "u", "user": {"token": "t"}}]})
    assert login_of(text) is None and non_interactive(text, "azurecli") == text


# --- the Service and Pod ranges ---------------------------------------------------------------------------------

SUBNET = "/subscriptions/s/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/aks"
OWN = """
from elastic_gpu import AksCluster, AksClusterArgs
AksCluster("c", AksClusterArgs(cluster_name="c1", location="westeurope", zones=["1"], kubernetes_version="1.35",
                               subnet_id=SUBNETEXTRA))
""".replace("SUBNET", repr(SUBNET))


def test_a_brought_subnet_with_aks_s_default_ranges_is_a_finding(run_program) -> None:
    # The mock knows the subnet only by its id: the range `az network vnet create` gives it, 10.0.0.0/24.
    preview = run_program(OWN.replace("EXTRA", ""))
    [finding] = range_findings(preview)
    assert "service_cidr 10.0.0.0/16 (AKS's default) overlaps the subnet's 10.0.0.0/24" in finding
    assert 'service_cidr="10.96.0.0/16"' in finding


def test_ranges_outside_the_subnet_are_no_finding_and_reach_the_cluster(run_program) -> None:
    preview = run_program(OWN.replace("EXTRA", ', service_cidr="10.96.0.0/16", pod_cidr="10.240.0.0/16"'))
    assert range_findings(preview) == []
    [cluster] = preview.of_type(CLUSTER)
    profile = cluster.inputs["networkProfile"]
    # the DNS service IP is the service range's .10, as the AKS docs put it
    assert (profile["serviceCidr"], profile["dnsServiceIP"], profile["podCidr"]) == (
        "10.96.0.0/16",
        "10.96.0.10",
        "10.240.0.0/16",
    )


def test_a_subnet_outside_the_defaults_is_no_finding(run_program, tmp_path: Path) -> None:
    (tmp_path / "offline_mocks.py").write_text(
        "INVOKES = {'azure-native:network:getSubnet': lambda a: {'addressPrefix': '172.16.0.0/22'}}\n"
    )
    assert range_findings(run_program(OWN.replace("EXTRA", ""))) == []


def test_without_a_brought_subnet_the_defaults_are_no_finding(run_program) -> None:
    preview = run_program(OWN.replace(f"subnet_id={SUBNET!r}", "subnet_id=None").replace("EXTRA", ""))
    assert range_findings(preview) == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ', dns_service_ip="10.1.0.10"',
            "dns_service_ip: 10.1.0.10 must be an address of the service range 10.0.0.0/16",
        ),
        (', service_cidr="10.96.0.0/16", dns_service_ip="10.96.0.1"', "dns_service_ip: 10.96.0.1 must be an address"),
        (', service_cidr="10.244.0.0/16"', "service_cidr: the service range 10.244.0.0/16 overlaps the pod range"),
        (', pod_cidr="10.0.0.0/33"', "pod_cidr: '10.0.0.0/33' is not an IPv4 range"),
    ],
)
def test_bad_ranges_are_refused_naming_the_field(run_program, extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        run_program(OWN.replace("EXTRA", extra))
    assert message in str(exc.value)


MANAGED = """
from elastic_gpu import AksCluster
from pulumi_azure_native import containerservice as cs
mc = cs.ManagedCluster("mc", resource_name_="mc1", resource_group_name="rg", dns_prefix="x",
                       agent_pool_profiles=[{"name": "sys", "mode": "System", "count": 1, "vm_size": "Standard_D4s_v5",
                                             "vnet_subnet_id": SUBNET}],
                       network_profile={"network_plugin": "azure", "network_plugin_mode": "overlay"PROFILE})
AksCluster.from_managed_cluster("gpu", mc, resource_group_name="rg", zones=["1"])
""".replace("SUBNET", repr(SUBNET))


def test_a_managed_cluster_s_default_ranges_in_its_subnet_are_a_finding(run_program) -> None:
    [finding] = range_findings(run_program(MANAGED.replace("PROFILE", "")))
    assert finding.startswith("AksCluster 'gpu': ") and "pod_cidr 10.244.0.0/16" not in finding
    assert "service_cidr 10.0.0.0/16 (AKS's default) overlaps the subnet's 10.0.0.0/24" in finding
    set_up = MANAGED.replace("PROFILE", ', "service_cidr": "10.96.0.0/16", "dns_service_ip": "10.96.0.10"')
    assert range_findings(run_program(set_up)) == []


def test_the_azure_template_sets_its_service_range_so_no_range_finding() -> None:
    # Its subnet 10.0.0.0/22 and service range 10.96.0.0/16; flat Azure CNI takes no pod range.
    assert range_findings(run_preview("dev", UPSTREAM / TEMPLATE)) == []


def test_the_stack_file_s_ranges_reach_the_cluster(program_dir) -> None:
    from conftest import stack_values

    values = stack_values("azure-dev")
    values["elastic-gpu:cluster"] = {
        **values["elastic-gpu:cluster"],
        "subnetId": SUBNET,
        "serviceCidr": "10.96.0.0/16",
        "podCidr": "10.240.0.0/16",
    }
    preview = run_preview("test", program_dir(values))
    [cluster] = preview.of_type(CLUSTER)
    profile = cluster.inputs["networkProfile"]
    assert (profile["serviceCidr"], profile["dnsServiceIP"], profile["podCidr"]) == (
        "10.96.0.0/16",
        "10.96.0.10",
        "10.240.0.0/16",
    )
    assert range_findings(preview) == []
    del values["elastic-gpu:cluster"]["serviceCidr"]
    [finding] = range_findings(run_preview("test", program_dir(values)))
    assert finding.startswith(f"AksCluster '{values['elastic-gpu:cluster']['name']}': service_cidr 10.0.0.0/16")
