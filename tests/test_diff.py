"""`diff`: replacements that create first, the general pool never absent, upgrade order, minor jumps."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from elastic_gpu.__main__ import main
from elastic_gpu.tools.node_group_reading import pools_of
from elastic_gpu.tools.offline.diff import Side, build_diff, is_general_pool
from elastic_gpu.tools.offline.runner import Preview, run_preview
from elastic_gpu.tools.replacement import POOL_NAME_FIELD, POOL_REPLACE_FIELDS
from tests.conftest import ROOT, stack_preview, stack_values

P = "elastic-gpu:"


def side(preview: Preview, label: str = "x") -> Side:
    return Side(label, {r.urn: r for r in preview.resources}, preview.config)


def head_with(program_dir, stack: str, change: Callable[[dict[str, Any]], None]) -> Preview:
    values = stack_values(stack)
    change(values)
    return run_preview(stack, program_dir(values, stack=stack))


def gpu_pool(values: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in values[P + "gpuPools"] if p["name"] == name)


def pool_kind(r) -> str:
    """general, spot or fallback (an on-demand GPU pool): which kind of pool a node-pool resource is."""
    if is_general_pool(r):
        return "general"
    [view] = pools_of(r.type, r.name, r.inputs)
    return "spot" if view.spot else "fallback"


# (stack, pool kind, a change that forces that kind's pools to be replaced)
CASES = [
    ("aws-prod", "general", lambda v: v[P + "generalPool"].update({"instanceTypes": ["m6i.xlarge", "m6a.xlarge"]})),
    ("aws-prod", "spot", lambda v: gpu_pool(v, "inference").update({"instanceTypes": ["g4dn.2xlarge"]})),
    ("aws-prod", "fallback", lambda v: gpu_pool(v, "inference").update({"instanceTypes": ["g4dn.2xlarge"]})),
    ("azure-prod", "general", lambda v: v[P + "generalPool"].update({"diskSizeGib": 128})),
    ("azure-prod", "spot", lambda v: gpu_pool(v, "inference").update({"diskSizeGib": 150})),
    ("azure-prod", "fallback", lambda v: gpu_pool(v, "inference").update({"diskSizeGib": 150})),
    ("gcp-prod", "general", lambda v: v[P + "generalPool"].update({"spot": True})),
    ("gcp-prod", "spot", lambda v: gpu_pool(v, "inference").update({"gpuDriverVersion": "LATEST"})),
    ("gcp-prod", "fallback", lambda v: gpu_pool(v, "inference").update({"gpuDriverVersion": "LATEST"})),
]


@pytest.fixture(scope="module")
def heads(tmp_path_factory) -> dict[tuple[str, int], Preview]:
    """Each case's head preview, run once (a case's head is shared by its kinds with the same change)."""
    out: dict[tuple[str, int], Preview] = {}
    for i, (stack, _, change) in enumerate(CASES):
        values = stack_values(stack)
        change(values)
        key = (stack, i)
        directory = tmp_path_factory.mktemp(f"head{i}")
        (directory / "stacks").mkdir()
        (directory / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
        (directory / "__main__.py").write_text((ROOT / "__main__.py").read_text())
        (directory / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": values}))
        out[key] = run_preview(stack, directory)
    return out


@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{s}-{k}" for s, k, _ in CASES])
def test_a_replacing_change_creates_first_and_keeps_a_general_pool(heads, case: int) -> None:
    stack, kind, _ = CASES[case]
    base, head = stack_preview(stack), heads[(stack, case)]
    diff = build_diff(side(base), side(head))
    replaced = [c for c in diff.of("replace") if c.type in POOL_REPLACE_FIELDS]
    mine = [c for c in replaced if pool_kind(side(head).resources[c.urn]) == kind]
    assert mine, f"no {kind} pool replaced in {stack}"
    for c in replaced:
        assert not c.delete_first and POOL_NAME_FIELD[c.type] in c.changed, c.name
    assert not diff.of("delete") and min(diff.general_alive) >= 1


@pytest.mark.parametrize("case", [0, 3, 6], ids=["aws", "azure", "gcp"])
def test_control_the_same_change_under_fixed_names_deletes_the_general_pool_first(heads, case: int) -> None:
    """Without the digest the pool keeps its name, the provider must delete it first, and the plan has a step
    with no general pool: the check above would catch a regression to fixed names."""
    stack, kind, _ = CASES[case]
    assert kind == "general"
    base = stack_preview(stack)
    head = copy.deepcopy(heads[(stack, case)])
    old = side(base).resources
    for r in head.resources:
        if r.type in POOL_NAME_FIELD and r.urn in old:
            field = POOL_NAME_FIELD[r.type]
            r.inputs[field] = old[r.urn].inputs[field]  # a fixed name, as before this change
    diff = build_diff(side(base), side(head))
    general = [c for c in diff.of("replace") if is_general_pool(side(head).resources[c.urn])]
    assert general and all(c.delete_first for c in general)
    assert min(diff.general_alive) == 0


def test_diff_text_names_replacements_and_the_general_pool(program_dir, capsys, tmp_path) -> None:
    base_file = tmp_path / "base.yaml"
    base_file.write_text((ROOT / "stacks" / "Pulumi.aws-dev.yaml").read_text())
    values = stack_values("aws-dev")
    values[P + "generalPool"]["instanceTypes"] = ["m6i.large", "m6a.large"]
    directory = program_dir(values, stack="aws-dev")
    assert main(["diff", "--stack", "aws-dev", "--program", str(directory), "--base-file", str(base_file)]) == 0
    out = capsys.readouterr().out
    assert "+- replace  aws:eks/nodeGroup:NodeGroup  general-ng  (create first; forced by: instanceTypes" in out
    assert "General pool: never absent (fewest node groups alive at any step: 1)" in out
    assert "0 to create, " in out and "0 to delete" in out


def test_a_base_file_runs_the_program_where_it_is_with_its_own_modules(capsys, tmp_path) -> None:
    """`--base-file` swaps the stack file, not the program: a program that imports its own modules (pulumi-eks's
    nodegroup-py imports its iam.py) runs on both sides."""
    program = ROOT / "tests" / "data" / "upstream" / "nodegroup-py"
    base_file = tmp_path / "base.yaml"
    base_file.write_text((program / "Pulumi.dev.yaml").read_text())
    assert main(["diff", "--stack", "dev", "--program", str(program), "--base-file", str(base_file)]) == 0
    out = capsys.readouterr().out
    assert f"file {base_file} -> working tree" in out and "no changes" in out


def test_a_two_minor_jump_is_refused(program_dir, capsys, tmp_path) -> None:
    base = stack_values("aws-prod")
    base[P + "cluster"]["kubernetesVersion"] = "1.32"
    base_file = tmp_path / "base.yaml"
    base_file.write_text(yaml.safe_dump({"config": base}))
    head = stack_values("aws-prod")
    head[P + "cluster"]["kubernetesVersion"] = "1.34"
    directory = program_dir(head, stack="aws-prod")
    assert main(["diff", "--stack", "aws-prod", "--program", str(directory), "--base-file", str(base_file)]) == 2
    err = capsys.readouterr().err
    assert "cluster.kubernetesVersion: 1.32 -> 1.34 jumps 2 minors" in err and "deploy 1.33 first" in err


def test_a_downgrade_is_refused(program_dir, capsys, tmp_path) -> None:
    base_file = tmp_path / "base.yaml"
    base_file.write_text((ROOT / "stacks" / "Pulumi.gcp-prod.yaml").read_text())
    head = stack_values("gcp-prod")
    head[P + "cluster"]["kubernetesVersion"] = "1.32"
    directory = program_dir(head, stack="gcp-prod")
    assert main(["diff", "--stack", "gcp-prod", "--program", str(directory), "--base-file", str(base_file)]) == 2
    assert "is a downgrade" in capsys.readouterr().err


def test_base_ref_runs_the_refs_own_program(tmp_path, capsys) -> None:
    """--base REF previews the program as committed at REF (its code and stack file) in a subprocess; links
    out of the tree in the ref (a symlink to an absolute path, as many repositories hold) are left out, not a
    tarfile.AbsoluteLinkError traceback."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for item in ("components", "stacks"):
        shutil.copytree(ROOT / item, repo / item, ignore=shutil.ignore_patterns("__pycache__"))
    for item in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / item, repo / item)
    (repo / "shared-docs").symlink_to(tmp_path)  # absolute
    (repo / "outside").symlink_to("../..")  # relative, out of the tree

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    stack_file = repo / "stacks" / "Pulumi.aws-dev.yaml"
    data = yaml.safe_load(stack_file.read_text())
    data["config"][P + "generalPool"]["instanceTypes"] = ["m6i.large", "m6a.large"]
    stack_file.write_text(yaml.safe_dump(data))
    assert main(["diff", "--stack", "aws-dev", "--program", str(repo), "--base", "HEAD", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["base"] == "git HEAD"
    ops = {(c["name"], c["op"]) for c in out["changes"]}
    assert ("general-ng", "replace") in ops and out["generalPoolMinAlive"] == 1
    assert main(["diff", "--stack", "aws-dev", "--program", str(repo), "--base", "no-such-ref"]) == 2


def test_diff_against_itself_is_empty() -> None:
    p = stack_preview("azure-prod")
    diff = build_diff(side(p), side(p))
    assert diff.changes == [] and diff.waves == []


def test_unchanged_sides_need_a_base(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["diff", "--stack", "aws-dev"])
    assert "--base" in capsys.readouterr().err


def test_upgrade_order_control_plane_then_node_groups_then_autoscaler(program_dir) -> None:
    head = head_with(program_dir, "aws-prod", lambda v: v[P + "cluster"].update({"kubernetesVersion": "1.36"}))
    diff = build_diff(side(stack_preview("aws-prod")), side(head))
    wave_of = {c.name: i for i, wave in enumerate(diff.waves) for c in wave}
    groups = [c.name for c in diff.changes if c.type == "aws:eks/nodeGroup:NodeGroup"]
    assert groups and all(c.op == "update" for c in diff.changes if c.name in groups)  # version: in place
    assert all(wave_of["gpu-prod-eks"] < wave_of[g] for g in groups)
    assert all(wave_of[g] < wave_of["cluster-autoscaler-deployment"] for g in groups)
    addons = [c for c in diff.changes if c.type == "aws:eks/addon:Addon"]
    # kube-proxy follows the minor (the other add-ons' newest versions are the same for 1.35 and 1.36)
    assert [c.name for c in addons] == ["eks-addons-kube-proxy"]
    assert all(c.op == "update" and c.changed == ["addonVersion"] for c in addons)
    assert all(wave_of[g] < wave_of[a.name] for g in groups for a in addons)
    assert min(diff.general_alive) >= 1


def test_aks_upgrade_moves_the_control_plane_then_each_agent_pool_in_turn(program_dir) -> None:
    head = head_with(program_dir, "azure-prod", lambda v: v[P + "cluster"].update({"kubernetesVersion": "1.36"}))
    diff = build_diff(side(stack_preview("azure-prod")), side(head))
    wave_of = {c.name: i for i, wave in enumerate(diff.waves) for c in wave}
    pools = [c for c in diff.changes if c.type == "azure-native:containerservice:AgentPool"]
    assert pools and all(c.op == "update" and c.changed == ["orchestratorVersion"] for c in pools)
    assert all(wave_of["gpu-prod-aks"] < wave_of[c.name] for c in pools)
    # one pool per wave: AKS upgrades one agent pool at a time (the pools are chained)
    pool_waves = sorted(wave_of[c.name] for c in pools)
    assert pool_waves == list(range(pool_waves[0], pool_waves[0] + len(pools)))


def test_gke_upgrade_moves_the_control_plane_and_leaves_node_versions_to_gke(program_dir) -> None:
    head = head_with(program_dir, "gcp-prod", lambda v: v[P + "cluster"].update({"kubernetesVersion": "1.36"}))
    diff = build_diff(side(stack_preview("gcp-prod")), side(head))
    [cluster] = [c for c in diff.changes if c.type == "gcp:container/cluster:Cluster"]
    assert cluster.op == "update" and cluster.changed == ["minMasterVersion"]
    # node pools auto-upgrade after the control plane within the release channel (management.autoUpgrade)
    assert not [c for c in diff.changes if c.type == "gcp:container/nodePool:NodePool"]


def test_turning_gke_node_auto_provisioning_off_says_enabled_false_and_what_the_provider_keeps(
    program_dir, capsys, tmp_path
) -> None:
    # The provider keeps an Optional+Computed input the program drops (terraform-provider-google
    # resource_container_cluster.go cluster_autoscaling): only `enabled: false` turns it off, and the plan says so.
    base = stack_values("gcp-autoprovision")
    base[P + "cluster"]["nodeAutoProvisioning"] = True
    base_file = tmp_path / "base.yaml"
    base_file.write_text(yaml.safe_dump({"config": base}))
    directory = program_dir(stack_values("gcp-autoprovision"), stack="gcp-autoprovision")
    argv = ["diff", "--stack", "gcp-autoprovision", "--program", str(directory), "--base-file", str(base_file)]
    assert main([*argv, "--json"]) == 0
    [cluster] = [c for c in json.loads(capsys.readouterr().out)["changes"] if c["type"].endswith("cluster:Cluster")]
    assert cluster["op"] == "update"
    assert cluster["values"] == [{"path": "clusterAutoscaling.enabled", "old": True, "new": False}]
    assert cluster["keptByProvider"] == [
        "clusterAutoscaling.autoProvisioningDefaults",
        "clusterAutoscaling.autoProvisioningLocations",
        "clusterAutoscaling.resourceLimits",
    ]
    assert main(argv) == 0
    assert "dropped, kept by the provider as they are" in capsys.readouterr().out


def test_an_input_given_as_the_value_the_provider_stored_at_creation_is_no_change() -> None:
    from elastic_gpu.tools.replacement import kept_by_provider

    cluster = "gcp:container/cluster:Cluster"
    # A cluster created without node auto-provisioning holds enabled: false; saying so changes nothing.
    assert kept_by_provider(cluster, "clusterAutoscaling.enabled", None, False)
    # Saying true does, and so does true -> false; a path outside the rule is a change as ever.
    assert not kept_by_provider(cluster, "clusterAutoscaling.enabled", None, True)
    assert not kept_by_provider(cluster, "clusterAutoscaling.enabled", True, False)
    assert not kept_by_provider(cluster, "clusterAutoscaling.autoscalingProfile", "BALANCED", None)
    assert not kept_by_provider("gcp:container/nodePool:NodePool", "clusterAutoscaling.enabled", True, None)
