"""The AKS System pool inline in its ManagedCluster, and who can reach a private AKS cluster's API server."""

from __future__ import annotations

import copy
import shlex
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from elastic_gpu.__main__ import main
from elastic_gpu.aks_cluster import SYSTEM_POOL_NAME
from elastic_gpu.azure import AKS_MANAGED_CLUSTER
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.diff import DiffError, Side, build_diff
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.replacement import inline_pool_table_markdown
from tests.conftest import ROOT, stack_preview, stack_values
from tests.docs_pages import page

P = "elastic-gpu:"


def side(preview: Preview) -> Side:
    return Side("x", {r.urn: r for r in preview.resources}, preview.config)


def with_system_pool(preview: Preview, **changes: Any) -> Preview:
    """A copy of `preview` whose ManagedCluster's System pool has `changes`."""
    head = copy.deepcopy(preview)
    [cluster] = [r for r in head.resources if r.type == AKS_MANAGED_CLUSTER]
    [pool] = cluster.inputs["agentPoolProfiles"]
    pool.update(changes)
    return head


def system_pool(preview: Preview) -> dict[str, Any]:
    [cluster] = [r for r in preview.resources if r.type == AKS_MANAGED_CLUSTER]
    [pool] = cluster.inputs["agentPoolProfiles"]
    return pool


# --- the inline System pool: a change AKS refuses in place is refused, with the rotation --------------------


@pytest.mark.parametrize(
    ("field", "new"),
    [("vmSize", "Standard_D8s_v5"), ("availabilityZones", ["1"]), ("osDiskSizeGB", 256)],
)
def test_a_system_pool_change_aks_refuses_in_place_is_refused_with_the_rotation(field: str, new: Any) -> None:
    base = stack_preview("azure-dev")
    old = system_pool(base).get(field)
    assert old != new
    with pytest.raises(DiffError) as err:
        build_diff(side(base), side(with_system_pool(base, **{field: new})))
    text = str(err.value)
    assert (
        f"{AKS_MANAGED_CLUSTER} gpu-dev-aks: agentPoolProfiles[{SYSTEM_POOL_NAME}].{field}: {old!r} -> {new!r}" in text
    )
    add = "az aks nodepool add --resource-group gpu-dev-rg --cluster-name gpu-dev --mode System"
    assert f"  1. {add}" in text and text.count(add) == 2
    assert "  2. az aks nodepool delete --resource-group gpu-dev-rg --cluster-name gpu-dev --name system " in text
    assert text.endswith(
        "  4. az aks nodepool delete --resource-group gpu-dev-rg --cluster-name gpu-dev --name systemtmp\n"
        "  5. pulumi refresh, then pulumi up"
    )
    flag = {
        "vmSize": "--node-vm-size Standard_D8s_v5",
        "availabilityZones": "--zones 1 ",
        "osDiskSizeGB": "--node-osdisk-size 256",
    }[field]
    assert text.count(flag) == 2, text


def _az_args(command: str) -> dict[str, list[str]]:
    """An `az ...` command line as az parses it: each --flag with its values."""
    out: dict[str, list[str]] = {}
    flag = None
    for word in shlex.split(command):
        if word.startswith("--"):
            flag = word
            out[flag] = []
        elif flag is not None:
            out[flag].append(word)
    return out


@pytest.mark.parametrize("count", [1, 2, 7])
def test_the_printed_rotation_adds_a_pool_az_accepts_with_the_pools_tags(count: int) -> None:
    """az aks nodepool add defaults --node-count to 3 and refuses one outside --min-count..--max-count
    (azure-cli acs agentpool_decorator.py); azure-dev's System pool autoscales 1..2."""
    base = with_system_pool(stack_preview("azure-dev"), count=count)
    pool = system_pool(base)
    with pytest.raises(DiffError) as err:
        build_diff(side(base), side(with_system_pool(base, vmSize="Standard_D8s_v5")))
    adds = [line.split(". ", 1)[1] for line in str(err.value).splitlines() if "az aks nodepool add" in line]
    assert len(adds) == 2
    for add in adds:
        args = _az_args(add)
        [nodes], [lo], [hi] = args["--node-count"], args["--min-count"], args["--max-count"]
        assert (int(lo), int(hi)) == (pool["minCount"], pool["maxCount"]) == (1, 2)
        assert int(lo) <= int(nodes) <= int(hi)
        assert int(nodes) == min(count, 2)
        assert dict(t.split("=", 1) for t in args["--tags"]) == pool["tags"] != {}
        assert dict(t.split("=", 1) for t in args["--labels"]) == pool["nodeLabels"]


def test_a_system_pool_change_aks_makes_in_place_is_an_update() -> None:
    """Scaling bounds and labels update in place (the engine's update works): nothing refused."""
    base = stack_preview("azure-dev")
    head = with_system_pool(base, maxCount=5, nodeLabels={**system_pool(base)["nodeLabels"], "team": "ml"})
    diff = build_diff(side(base), side(head))
    assert [(c.type, c.op, c.changed) for c in diff.changes] == [(AKS_MANAGED_CLUSTER, "update", ["agentPoolProfiles"])]


def test_a_renamed_inline_pool_is_refused() -> None:
    """A ManagedCluster update cannot add (or rename) an inline pool (pulumi-azure-native#579)."""
    base = stack_preview("azure-dev")
    with pytest.raises(DiffError, match=r"agentPoolProfiles\[system2\]: a new inline pool; .*\(was: system\)"):
        build_diff(side(base), side(with_system_pool(base, name="system2")))


def test_diff_against_a_git_ref_refuses_a_new_system_vm_size(tmp_path, capsys) -> None:
    """`diff --base REF` end to end: a stack file's new systemPool.vmSize exits 2 naming the field."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copytree(ROOT / "components", repo / "components", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "stacks", repo / "stacks")
    for item in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / item, repo / item)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=repo, check=True)
    stack_file = repo / "stacks" / "Pulumi.azure-dev.yaml"
    data = yaml.safe_load(stack_file.read_text())
    old = data["config"][P + "cluster"]["systemPool"]["vmSize"]
    data["config"][P + "cluster"]["systemPool"]["vmSize"] = "Standard_D8s_v5"
    stack_file.write_text(yaml.safe_dump(data))
    assert main(["diff", "--stack", "azure-dev", "--program", str(repo), "--base", "HEAD"]) == 2
    err = capsys.readouterr().err
    assert f"agentPoolProfiles[system].vmSize: {old!r} -> 'Standard_D8s_v5'" in err
    assert "temporary_name_for_rotation" in err


def test_the_readme_shows_the_inline_pool_table() -> None:
    table = inline_pool_table_markdown()
    assert "`agentPoolProfiles[].vmSize`, `agentPoolProfiles[].availabilityZones`, " in table
    assert "`agentPoolProfiles[].osDiskSizeGB`" in table
    assert table in page("day-two.md")


# --- a private cluster and the runner ----------------------------------------------------------------------


def private_preview(program_dir, **access: Any) -> Preview:
    from elastic_gpu.tools.offline.runner import run_preview

    values = stack_values("azure-dev")
    subnet = access.pop("subnet", None)
    values[P + "cluster"]["apiAccess"] = {"public": False, **access}
    if subnet:
        values[P + "cluster"]["subnetId"] = subnet
    return run_preview("azure-dev", program_dir(values, stack="azure-dev"))


def runner_warnings(preview: Preview) -> list[str]:
    return [w for w in preview.warnings if "private cluster" in w]


def test_a_private_cluster_warns_that_the_runner_must_reach_its_api_server(program_dir) -> None:
    [warning] = runner_warnings(private_preview(program_dir))
    assert warning.startswith("AksCluster 'gpu-dev': a private cluster (public_access=False; ")
    # the setting, in both spellings, and the ways out
    assert "runner_in_vnet=True (cluster.apiAccess.runnerInVnet: true)" in warning
    assert "self-hosted runner in the VNet" in warning
    assert "authorized_ip_ranges; cluster.apiAccess.publicCidrs" in warning
    assert "`az aks command invoke`" in warning and "Pulumi Kubernetes provider cannot go through it" in warning


SUBNET = "/subscriptions/0/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/corp/subnets/aks"


def test_a_private_cluster_whose_runner_is_in_its_brought_vnet_does_not_warn(program_dir) -> None:
    preview = private_preview(program_dir, runnerInVnet=True, subnet=SUBNET)
    assert runner_warnings(preview) == []
    [cluster] = [r for r in preview.resources if r.type == AKS_MANAGED_CLUSTER]
    assert cluster.inputs["apiServerAccessProfile"] == {"enablePrivateCluster": True}


def test_a_library_user_gets_the_warning_at_declaration(run_program) -> None:
    source = """
from elastic_gpu.aks_cluster import AksCluster, AksClusterArgs
SUBNET = "/subscriptions/0/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/corp/subnets/aks"
base = dict(cluster_name="lab", location="westeurope", zones=["1"], kubernetes_version="1.35", public_access=False)
AksCluster("quiet", AksClusterArgs(**base, runner_in_vnet=True, subnet_id=SUBNET))
AksCluster("loud", AksClusterArgs(**{**base, "cluster_name": "lab2"}))
"""
    warnings = runner_warnings(run_program(source))
    assert [w.split(":")[0] for w in warnings] == ["AksCluster 'loud'"]


@pytest.mark.parametrize("stack", ["azure-dev", "azure-prod"])
def test_the_shipped_azure_stacks_have_public_api_servers_and_no_runner_warning(stack: str) -> None:
    preview = stack_preview(stack)
    assert runner_warnings(preview) == []
    assert system_pool(preview)["name"] == SYSTEM_POOL_NAME  # the System pool keeps its name: no rotation


@pytest.mark.parametrize(
    ("cloud_stack", "access", "message"),
    [
        ("gcp-dev", {"public": False, "runnerInVnet": True}, "got runnerInVnet: True with cloud 'gcp', public: False"),
        (
            "azure-dev",
            {"public": True, "runnerInVnet": True},
            "got runnerInVnet: True with cloud 'azure', public: True",
        ),
    ],
)
def test_runner_in_vnet_is_refused_where_it_does_nothing(cloud_stack: str, access: dict, message: str) -> None:
    values = stack_values(cloud_stack)
    values[P + "cluster"]["apiAccess"] = access
    with pytest.raises(ConfigError) as err:
        load_stack_config(values)
    assert "cluster.apiAccess.runnerInVnet: set only on aws or azure with a private cluster (public: false)" in str(
        err.value
    )
    assert message in str(err.value)


# --- a System pool below the two nodes AKS documents: a preview warning, not an error ---------------------


def small_system_pool_warnings(preview: Preview) -> list[str]:
    return [w for w in preview.warnings if "nodes AKS documents for a System pool" in w]


def test_a_one_node_system_pool_previews_with_a_warning_saying_what_is_lost(program_dir) -> None:
    from elastic_gpu.tools.offline.runner import run_preview

    [warning] = small_system_pool_warnings(stack_preview("azure-dev"))  # azure-dev: minSize 1, still previews
    assert warning.startswith("AksCluster 'gpu-dev': system_min_size 1 (stack config cluster.systemPool.minSize)")
    assert "'System pools must contain at least two nodes'" in warning
    assert "CoreDNS" in warning and "Set minSize: 2" in warning
    assert small_system_pool_warnings(stack_preview("azure-prod")) == []  # 3 nodes
    values = stack_values("azure-dev")
    values[P + "cluster"]["systemPool"]["minSize"] = 2
    assert small_system_pool_warnings(run_preview("test", program_dir(values))) == []
