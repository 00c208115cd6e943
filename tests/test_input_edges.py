"""Inputs the clouds or Kubernetes would refuse (or silently misuse) fail at preview, naming the field and what is
allowed; and the CLI's own small promises (`--version`, `--stack` help)."""

from __future__ import annotations

import pytest

from elastic_gpu.config import PROJECT, load_stack_config
from elastic_gpu.errors import ConfigError
from tests.conftest import stack_values


def _refused(stack: str, mutate) -> str:
    values = stack_values(stack)
    mutate(values)
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values, project=PROJECT)
    return str(exc.value)


def test_a_public_range_as_the_network_is_refused() -> None:
    message = _refused("aws-dev", lambda v: v[f"{PROJECT}:cluster"].update(networkCidr="8.8.0.0/16"))
    assert "cluster.networkCidr: '8.8.0.0/16' is publicly routable" in message
    assert "10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10" in message
    values = stack_values("aws-dev")
    values[f"{PROJECT}:cluster"]["networkCidr"] = "172.20.0.0/16"
    load_stack_config(values, project=PROJECT)  # a private range passes


def test_a_promise_beyond_a_day_is_refused() -> None:
    message = _refused("aws-dev", lambda v: v[f"{PROJECT}:gpuPools"][0].update(maxMinutesToFallback=1e12))
    assert "gpuPools[0].maxMinutesToFallback" in message and "1440" in message


def test_zones_in_an_azure_region_without_zones_are_refused() -> None:
    def westus(v) -> None:
        v[f"{PROJECT}:cluster"].update(region="westus", zones=["1", "2"])
        v[f"{PROJECT}:gpuPools"][0].update(instanceTypes=["Standard_NC24ads_A100_v4"])
        v[f"{PROJECT}:gpuPools"][0].pop("gpu", None)

    message = _refused("azure-dev", westus)
    assert "cluster.zones: region 'westus' has no availability zones (got zones ['1', '2'])" in message


EKS = """
from elastic_gpu import EksCluster, EksClusterArgs, SpotGpuPool, SpotGpuPoolArgs
c = EksCluster("c", EksClusterArgs(cluster_name="c", region="us-east-1", zones=["us-east-1a", "us-east-1b"],
                                   kubernetes_version="1.35", CLUSTER))
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=c, instance_types=["g6.xlarge"], max_size=2, on_demand_fallback=True,
                                  POOL))
"""


@pytest.mark.parametrize(
    ("cluster", "pool", "expected"),
    [
        (
            "tags={}",
            'extra_labels={"bad key!": "x"}',
            "SpotGpuPoolArgs.extra_labels['bad key!']: not a Kubernetes label key",
        ),
        (
            "tags={}",
            'extra_labels={"team": "a b"}',
            "SpotGpuPoolArgs.extra_labels['team']: 'a b' is not a Kubernetes label value",
        ),
        (
            "tags={}",
            "disk_size_gib=5",
            "SpotGpuPoolArgs.disk_size_gib: 5 GiB is out of range; allowed: 20 to 16384 GiB",
        ),
        (
            "tags={}",
            "max_minutes_to_fallback=1e12",
            "max_minutes_to_fallback: must be at most 1440 minutes",
        ),
        ('network_cidr="8.8.0.0/16"', "tags={}", "EksClusterArgs.network_cidr: '8.8.0.0/16' is publicly routable"),
    ],
)
def test_library_arguments_the_cloud_would_refuse(run_program, cluster: str, pool: str, expected: str) -> None:
    with pytest.raises(ConfigError) as exc:
        run_program(EKS.replace("CLUSTER", cluster).replace("POOL", pool))
    assert expected in str(exc.value)


def test_a_good_label_passes(run_program) -> None:
    preview = run_program(
        EKS.replace("CLUSTER", "tags={}").replace("POOL", 'extra_labels={"team.example.com/name": "gpu-jobs"}')
    )
    groups = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    assert all(g.inputs["labels"]["team.example.com/name"] == "gpu-jobs" for g in groups)


def test_version_and_stack_help(capsys) -> None:
    from elastic_gpu import __version__
    from elastic_gpu.__main__ import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"elastic-gpu {__version__}"
    with pytest.raises(SystemExit):
        main(["preview", "--help"])
    help_text = capsys.readouterr().out
    assert "stacks/Pulumi" not in help_text and "stackConfigDir" in help_text


def test_a_bytes_output_is_one_clear_error_for_preview_and_diff(run_program, tmp_path) -> None:
    """The engine refuses a bytes stack output ("unexpected input of type bytes"): the offline preview (and `diff`,
    which runs the same capture) says so, naming the output, instead of failing to print JSON."""
    source = EKS.replace("CLUSTER", "tags={}").replace("POOL", "tags={}") + (
        'import pulumi\npulumi.export("blob", {"data": b"\\x00abc"})\n'
    )
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    assert "stack output 'blob' holds a bytes value, which Pulumi cannot export" in str(exc.value)


AKS = """
from pulumi_azure_native import containerservice as cs, resources
from elastic_gpu import AksCluster, ClusterAutoscaler, ClusterAutoscalerArgs, SpotGpuPool, SpotGpuPoolArgs
TAGS = {"project": "p", "cost-center": "c"}
rg = resources.ResourceGroup("rg", location="westeurope")
mc = cs.ManagedCluster("mc", resource_group_name=rg.name, location="westeurope", dns_prefix="mc",
    kubernetes_version="1.35",
    agent_pool_profiles=[cs.ManagedClusterAgentPoolProfileArgs(name="system", mode="System", count=1,
                                                               vm_size="Standard_D4s_v5")],
    identity=cs.ManagedClusterIdentityArgs(type="SystemAssigned"),
    auto_scaler_profile=cs.ManagedClusterPropertiesAutoScalerProfileArgs(expander="EXPANDER"))
cluster = AksCluster.existing("prod", cluster_name=NAME, resource_group_name=rg.name, location="westeurope",
                              zones=["1", "2"], kubernetes_version="1.35", tags=TAGS)
t4 = SpotGpuPool("t4", SpotGpuPoolArgs(cluster=cluster, instance_types=["Standard_NC4as_T4_v3"], max_size=4,
                                       on_demand_fallback=True, tags=TAGS))
ClusterAutoscaler("autoscaler", ClusterAutoscalerArgs(cluster=cluster, gpu_pools=[t4]))
"""


@pytest.mark.parametrize(
    ("expander", "name", "warned"),
    [
        ("priority", "mc.name", None),  # the program sets it on that very cluster: nothing to warn about
        ("random", "mc.name", "the program's ManagedCluster sets 'random': set auto_scaler_profile.expander"),
        # no profile at all: unknown at preview (AKS fills it in), so AKS's default
        (None, "mc.name", "the program's ManagedCluster sets none (AKS's default is 'random'): set"),
        ("priority", '"elsewhere"', "Check with `az aks show"),  # a cluster the program does not declare
    ],
)
def test_the_aks_expander_warning_reads_the_programs_own_cluster(run_program, expander, name, warned) -> None:
    source = AKS.replace("NAME", name)
    if expander is None:
        profile = 'auto_scaler_profile=cs.ManagedClusterPropertiesAutoScalerProfileArgs(expander="EXPANDER")'
        source = source.replace(",\n    " + profile, "")
        assert "auto_scaler_profile" not in source
    preview = run_program(source.replace("EXPANDER", str(expander)))
    warnings = [w for w in preview.warnings if "expander to be 'priority'" in w]
    if warned is None:
        assert warnings == []
    else:
        [warning] = warnings
        assert warned in warning


UAI = """
import pulumi
from pulumi_azure_native import containerservice as cs, managedidentity, resources
rg = resources.ResourceGroup("rg", location="westeurope")
uai = managedidentity.UserAssignedIdentity("id", resource_group_name=rg.name, location="westeurope")
mc = cs.ManagedCluster("mc", resource_group_name=rg.name, location="westeurope", dns_prefix="mc",
    kubernetes_version="1.35",
    agent_pool_profiles=[cs.ManagedClusterAgentPoolProfileArgs(name="system", mode="System", count=1,
                                                               vm_size="Standard_D4s_v5")],
    identity=cs.ManagedClusterIdentityArgs(type="UserAssigned", user_assigned_identities=[uai.id]))
pulumi.export("ids", mc.identity.apply(lambda i: sorted(i.user_assigned_identities)))
"""


def test_a_user_assigned_identity_comes_back_as_aks_returns_it(run_program) -> None:
    """The input lists identity ids; ARM (and so the SDK's output type) maps each id to its principal and client."""
    preview = run_program(UAI)
    assert preview.outputs["ids"].value == ["userassignedidentity-id"]


def test_an_output_of_the_wrong_shape_names_the_cause(run_program, tmp_path) -> None:
    """A mock that echoes an input whose output has another type: the runner says what that AssertionError means."""
    (tmp_path / "offline_mocks.py").write_text(
        'RESOURCES = {"azure-native:containerservice:ManagedCluster": lambda name, inputs: {"identity": '
        '{"type": "UserAssigned", "userAssignedIdentities": ["x"]}}}\n'
    )
    with pytest.raises(ConfigError) as exc:
        run_program(UAI)
    message = str(exc.value)
    assert "AssertionError" in message and "an output of another shape than the provider's SDK declares" in message
    assert "offline_mocks.py: RESOURCES = {'<type token>'" in message


def test_a_misspelt_top_level_key_on_gcp_is_refused() -> None:
    """On GKE the autoscaler section is GKE's own; a misspelt section name is still an error, not ignored."""
    message = _refused("gcp-dev", lambda v: v.update({f"{PROJECT}:autoscaller": {"expander": ["priority"]}}))
    assert "autoscaller: unknown key; did you mean 'autoscaler'?" in message
