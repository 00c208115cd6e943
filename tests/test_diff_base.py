"""`diff` from any base: a base with policy violations is diffed against, with the violations the change fixes, keeps
and adds; each cluster's Kubernetes version is read from the cluster resource the program declares and follows its
cloud's upgrade rules (AKS's skip from an unsupported minor, GKE's own upgrades at end of support); the order puts
a provider before what is created through it."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import date
from pathlib import Path

import pytest
import yaml

from elastic_gpu import versions
from elastic_gpu.__main__ import main
from elastic_gpu.clouds import get_cloud
from elastic_gpu.tools.offline.diff import DiffError, Side, build_diff
from elastic_gpu.tools.offline.diff_policy import policy_changes
from elastic_gpu.tools.offline.diff_versions import ClusterVersion, version_verdict
from elastic_gpu.tools.offline.policy_run import PolicyReport, Violation
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import UPSTREAM, stack_values

P = "elastic-gpu:"
#: pulumi/templates kubernetes-azure-python with GPU pools on its own ManagedCluster (tests/data/upstream/SOURCE.md)
AKS_TEMPLATE = UPSTREAM / "kubernetes-azure-python"
CLUSTER = "azure-native:containerservice:ManagedCluster managed_cluster: kubernetesVersion"
#: The day the in-process side is judged on: AKS 1.34 reached end of life the day before (2026-11-30).
DAY = date(2026, 12, 1)


@pytest.fixture
def on_day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "today", lambda: DAY)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def template(directory: Path, minor: str, tags: bool = True) -> Path:
    """The AKS template program at `minor`, its GPU lines with or without the cost-allocation tags."""
    directory.mkdir(parents=True, exist_ok=True)
    for item in AKS_TEMPLATE.iterdir():
        shutil.copy(item, directory / item.name)
    project = yaml.safe_load((directory / "Pulumi.yaml").read_text())["name"]
    stack = directory / "Pulumi.dev.yaml"
    values = yaml.safe_load(stack.read_text())
    values["config"][f"{project}:kubernetesVersion"] = minor  # the template's own setting (default 1.33)
    stack.write_text(yaml.safe_dump(values))
    if not tags:
        main_py = directory / "__main__.py"
        main_py.write_text(main_py.read_text().replace(", tags=TAGS", ""))
    return directory


def committed(directory: Path) -> Path:
    git(directory, "init", "-q")
    git(directory, "add", "-A")
    git(directory, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    return directory


def test_a_base_with_mandatory_violations_is_a_base_and_the_new_side_s_verdict_is_the_exit(
    tmp_path, capsys, on_day
) -> None:
    """The committed program lacks tags and runs an end-of-life minor (AKS 1.34); its fix is diffed against it
    (the base's preview exits 1 in its own process: a verdict, not a failure)."""
    repo = committed(template(tmp_path / "repo", "1.34", tags=False))
    template(repo, "1.35", tags=True)  # both fixed
    assert main(["diff", "--stack", "dev", "--program", str(repo), "--base", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert f"Kubernetes: 1.34 -> 1.35 ({CLUSTER})" in out
    assert "Policy against the base (git HEAD): 3 fixed, 4 kept, 0 added" in out
    fixed = [line for line in out.splitlines() if line.startswith("  fixed")]
    assert any("cost-allocation-tags" in line and "AgentPool: t4-t4s0" in line for line in fixed)
    assert any("kubernetes-version-not-end-of-life" in line for line in fixed)
    assert "0 mandatory," in out

    template(repo, "1.35", tags=False)  # the version fixed, the tags still missing: exit 1, the tags kept
    assert main(["diff", "--stack", "dev", "--program", str(repo), "--base", "HEAD", "--json"]) == 1
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert [v["policy"] for v in data["policyChanges"]["fixed"]] == ["kubernetes-version-not-end-of-life"]
    kept = {v["policy"] for v in data["policyChanges"]["kept"] if v["level"] == "mandatory"}
    assert kept == {"cost-allocation-tags"} and data["policyChanges"]["added"] == []
    assert data["clusters"] == [{"cluster": CLUSTER, "base": "1.34", "head": "1.35"}]
    assert "error: diff failed: 2 mandatory policy violation(s)" in out.err


def test_a_base_that_does_not_run_is_still_refused_with_its_reason(tmp_path, capsys) -> None:
    repo = template(tmp_path / "repo", "1.35")
    main_py = repo / "__main__.py"
    main_py.write_text(main_py.read_text() + '\nraise KeyError("availabilityZone")\n')
    committed(repo)
    template(repo, "1.35")
    assert main(["diff", "--stack", "dev", "--program", str(repo), "--base", "HEAD"]) == 2
    err = capsys.readouterr().err
    assert "error: the base (HEAD) does not preview:" in err and "KeyError" in err and "availabilityZone" in err
    # a bad stack file at the base: exit 2 with the config error
    stack = repo / "Pulumi.dev.yaml"
    stack.write_text("config:\n  azure-native:location: westus2\n")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "no config")
    template(repo, "1.35")
    assert main(["diff", "--stack", "dev", "--program", str(repo), "--base", "HEAD"]) == 2
    err = capsys.readouterr().err
    assert "does not preview" in err and "mgmtGroupId" in err


def test_a_base_file_with_an_end_of_life_minor_lists_what_the_change_fixes(program_dir, tmp_path, capsys, on_day):
    base = stack_values("azure-dev")
    base[P + "cluster"]["kubernetesVersion"] = "1.34"  # end of life on AKS since 2026-11-30
    base_file = tmp_path / "base.yaml"
    base_file.write_text(yaml.safe_dump({"config": base}))
    directory = program_dir(stack_values("azure-dev"), stack="azure-dev")
    assert main(["diff", "--stack", "azure-dev", "--program", str(directory), "--base-file", str(base_file)]) == 0
    out = capsys.readouterr().out
    assert "Kubernetes: 1.34 -> 1.35 (azure-native:containerservice:ManagedCluster " in out
    [fixed] = [line for line in out.splitlines() if line.startswith("  fixed")]
    assert "[mandatory]" in fixed and "kubernetes-version-not-end-of-life" in fixed


def test_the_aks_template_s_two_minor_jump_is_read_from_its_cluster_and_refused(tmp_path, capsys, monkeypatch):
    """1.33 -> 1.35 on the template's own ManagedCluster (no elastic-gpu:cluster in its stack file). While 1.34 is
    supported AKS refuses the skip; from the day 1.34 is past its end of life too, 1.35 is the minimum supported
    minor, which AKS lets an unsupported cluster skip to (azure-aks-docs supported-kubernetes-versions.md)."""
    head = template(tmp_path / "head", "1.35")
    base_file = template(tmp_path / "base", "1.33") / "Pulumi.dev.yaml"
    monkeypatch.setattr(versions, "today", lambda: date(2026, 11, 15))
    args = ["diff", "--stack", "dev", "--program", str(head), "--base-file", str(base_file)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"error: {CLUSTER}: 1.33 -> 1.35 jumps 2 minors; AKS upgrades the control plane one minor at a time" in err
    assert "deploy 1.34 first" in err

    monkeypatch.setattr(versions, "today", lambda: DAY)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"Kubernetes: 1.33 -> 1.35 ({CLUSTER})" in out
    assert "AKS skips minors only from an unsupported one back into the minimum supported minor" in out
    assert "excluded from the SLA" in out
    # further than the minimum supported minor is refused even from an unsupported one
    base = build_diff_sides(tmp_path, "1.33", "1.36")
    with pytest.raises(DiffError, match=r"1\.33 -> 1\.36 jumps 3 minors; .* so deploy 1\.35 first"):
        build_diff(*base)


def build_diff_sides(tmp_path: Path, old: str, new: str) -> tuple[Side, Side]:
    sides = []
    for label, minor in (("base", old), ("head", new)):
        preview = run_preview("dev", template(tmp_path / f"{label}-{minor}", minor))
        sides.append(Side(label, {r.urn: r for r in preview.resources}, preview.config))
    return sides[0], sides[1]


EKS_PROGRAM = """
import pulumi
import pulumi_aws as aws
from elastic_gpu import EksCluster, SpotGpuPool, SpotGpuPoolArgs

config = pulumi.Config()
cluster = aws.eks.Cluster("eks", role_arn="arn:aws:iam::123456789012:role/eks", version=config.require("version"),
                          vpc_config=aws.eks.ClusterVpcConfigArgs(subnet_ids=["subnet-a", "subnet-b"]))
TAGS = {"project": "ml-platform", "cost-center": "research"}
handle = EksCluster.from_cluster("gpu", cluster, node_role_arn="arn:aws:iam::123456789012:role/node",
                                 zones=["us-west-2a", "us-west-2b"], create_oidc_provider=True, tags=TAGS)
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=handle, instance_types=["g6.xlarge"], max_size=2, tags=TAGS))
"""


def test_an_eks_program_s_cluster_version_two_minors_up_is_refused(tmp_path, capsys, on_day) -> None:
    (tmp_path / "__main__.py").write_text(EKS_PROGRAM)
    (tmp_path / "Pulumi.yaml").write_text("name: eks-gpu\nruntime: python\n")
    stack = "config:\n  aws:region: us-west-2\n  eks-gpu:version: '{}'\n"
    (tmp_path / "Pulumi.dev.yaml").write_text(stack.format("1.35"))
    (tmp_path / "base.yaml").write_text(stack.format("1.33"))
    args = ["diff", "--stack", "dev", "--program", str(tmp_path), "--base-file", str(tmp_path / "base.yaml")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "error: aws:eks/cluster:Cluster eks: version: 1.33 -> 1.35 jumps 2 minors; EKS upgrades" in err
    (tmp_path / "base.yaml").write_text(stack.format("1.34"))
    main(args)
    assert "Kubernetes: 1.34 -> 1.35 (aws:eks/cluster:Cluster eks: version)" in capsys.readouterr().out


def gke(channel: str | None, minor: str) -> ClusterVersion:
    props = {"releaseChannel": {"channel": channel}} if channel else {}
    where = "gcp:container/cluster:Cluster gke: minMasterVersion"
    return ClusterVersion("urn:gke", where, get_cloud("gcp"), minor, props)


@pytest.mark.parametrize("channel", ["STABLE", "REGULAR", None])
def test_a_gke_floor_raised_two_minors_is_allowed_where_gke_has_moved_the_cluster(channel) -> None:
    """GKE upgrades every control plane at its minor's end of support, on every channel but Extended
    (release-channels docs): on 2026-12-01 a 1.33 floor runs at least 1.35 (1.33 ended 2026-08-03, 1.34
    2026-10-01), so 1.33 -> 1.35 upgrades nothing and 1.33 -> 1.36 is one minor; 1.37 is two."""
    verdict = version_verdict({"k": gke(channel, "1.33")}, {"k": gke(channel, "1.35")}, DAY)
    assert verdict.problems == []
    [note] = verdict.notes
    assert "has already upgraded a cluster whose floor is 1.33 to at least 1.35" in note
    assert version_verdict({"k": gke(channel, "1.33")}, {"k": gke(channel, "1.36")}, DAY).problems == []
    [problem] = version_verdict({"k": gke(channel, "1.33")}, {"k": gke(channel, "1.37")}, DAY).problems
    assert "1.33 -> 1.37 jumps 4 minors" in problem and "deploy 1.36 first" in problem
    # a floor still in standard support (1.35 until 2027-04-11): GKE has moved nothing, two minors is a jump
    [problem] = version_verdict({"k": gke(channel, "1.35")}, {"k": gke(channel, "1.37")}, DAY).problems
    assert "deploy 1.36 first" in problem


def test_on_the_extended_channel_gke_keeps_the_floor_and_a_two_minor_raise_is_refused() -> None:
    [problem] = version_verdict({"k": gke("EXTENDED", "1.33")}, {"k": gke("EXTENDED", "1.35")}, DAY).problems
    assert problem.startswith("gcp:container/cluster:Cluster gke: minMasterVersion: 1.33 -> 1.35 jumps 2 minors")
    assert "GKE upgrades the control plane one minor at a time, so deploy 1.34 first" in problem
    [problem] = version_verdict({"k": gke("STABLE", "1.35")}, {"k": gke("STABLE", "1.34")}, DAY).problems
    assert "is a downgrade" in problem


def test_a_gke_stack_file_on_a_minor_gke_no_longer_offers_is_a_base_that_does_not_run(
    program_dir, tmp_path, capsys, on_day
) -> None:
    """The stack file refuses a minor GKE's calendar no longer lists (1.33), so a base file on it does not run:
    exit 2 with the field, the value and what is allowed (`--base REF` runs such a base with its own library)."""
    base = stack_values("gcp-prod")  # STABLE
    base[P + "cluster"]["kubernetesVersion"] = "1.33"
    base_file = tmp_path / "base.yaml"
    base_file.write_text(yaml.safe_dump({"config": base}))
    directory = program_dir(stack_values("gcp-prod"), stack="gcp-prod")  # 1.35
    assert main(["diff", "--stack", "gcp-prod", "--program", str(directory), "--base-file", str(base_file)]) == 2
    err = capsys.readouterr().err
    assert "cluster.kubernetesVersion: '1.33' is not supported on gcp; allowed: 1.35" in err


def test_every_wave_puts_a_provider_before_what_is_created_through_it(tmp_path, on_day) -> None:
    """GPU pools added to the AKS template: the Kubernetes objects go through the handle's provider, which the
    engine creates first (pulumi/pulumi dependency_graph.go DependenciesOf: the provider is a dependency)."""
    base_dir = template(tmp_path / "base", "1.35")
    main_py = base_dir / "__main__.py"
    main_py.write_text(main_py.read_text().split("# --- elastic-gpu")[0])  # the template as published
    base, head = (run_preview("dev", d) for d in (base_dir, template(tmp_path / "head", "1.35")))
    diff = build_diff(*(Side(x, {r.urn: r for r in p.resources}, p.config) for x, p in (("b", base), ("h", head))))
    wave = {c.urn: i for i, w in enumerate(diff.waves) for c in w}
    through = [r for r in head.resources if r.provider and r.urn in wave]
    assert {r.type for r in through} >= {"kubernetes:apps/v1:DaemonSet", "kubernetes:core/v1:ConfigMap"}
    for r in through:
        provider = r.provider.rsplit("::", 1)[0]
        assert provider in wave and wave[provider] < wave[r.urn], r.name


def violation(policy: str, urn: str | None, message: str, level: str = "mandatory") -> Violation:
    return Violation(policy, level, message, urn, "t" if urn else None, urn)


def test_violations_match_by_policy_and_resource_so_a_changed_message_is_kept() -> None:
    base = PolicyReport("p", [violation("eol", "u1", "1.33 is past"), violation("tags", "u2", "missing a")])
    head = PolicyReport("p", [violation("eol", "u1", "1.34 is past"), violation("tags", "u3", "missing a")])
    changes = policy_changes(base, head)
    assert [(b.message, h.message) for b, h in changes.kept] == [("1.33 is past", "1.34 is past")]
    assert [v.urn for v in changes.fixed] == ["u2"] and [v.urn for v in changes.added] == ["u3"]


def test_a_version_declared_only_on_the_new_side_says_what_to_check() -> None:
    """An EKS cluster created without `version` runs the minor EKS chose then (or one it moved to since): a version
    given now is no known step, and the diff says so instead of showing `not declared` as if nothing ran."""
    where = "aws:eks/cluster:Cluster eks: version"
    old = ClusterVersion("urn:eks", where, get_cloud("aws"), None)
    new = ClusterVersion("urn:eks", where, get_cloud("aws"), "1.35")
    verdict = version_verdict({"k": old}, {"k": new}, DAY)
    assert verdict.problems == []
    [note] = verdict.notes
    assert note.startswith(f"{where}: not declared -> 1.35: the cluster runs the version EKS chose")
    assert "check that the cluster runs 1.34 or 1.35" in note
