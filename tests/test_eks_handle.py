"""The EKS handle on a pulumi-eks cluster: the Kubernetes minor read from the cluster, known or
unknown at preview (its OIDC provider: tests/test_library_mistakes.py)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from pulumi.runtime import rpc

from elastic_gpu import versions
from elastic_gpu.__main__ import main
from elastic_gpu.aws.versions import EKS_ADDON_VERSIONS, eks_addon_versions
from elastic_gpu.clouds import get_cloud
from elastic_gpu.cluster_handle import VERSION_INPUT
from elastic_gpu.eks_addons import ADDON_NAMES
from elastic_gpu.eks_cluster import UNKNOWN_VERSION_WARNING
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.diff import Side
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.versions import cluster_autoscaler_image

PROGRAM = """
import pulumi_eks as eks
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, EksAddons, EksAddonsArgs, EksCluster, SpotGpuPool,
                         SpotGpuPoolArgs)

cluster = eks.Cluster("ml", name="ml", vpc_id="vpc-1", private_subnet_ids=["subnet-a"], authentication_mode="API",
                      skip_default_node_group=True, CLUSTER_ARGS)
handle = EksCluster.from_pulumi_eks("h", cluster, subnet_ids={"us-west-2a": "subnet-a"},
                                    node_role_arn="arn:aws:iam::123456789012:role/gpu" HANDLE_ARGS)
l4 = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=handle, instance_types=["g6.xlarge"], max_size=2))
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=handle, gpu_pools=[l4], node_selector={"node-role": "system"}))
ADDONS
"""
ADDONS = 'EksAddons("addons", EksAddonsArgs(cluster=handle))'


def source(cluster_args: str, handle_args: str = "", addons: str = ADDONS) -> str:
    return PROGRAM.replace("CLUSTER_ARGS", cluster_args).replace("HANDLE_ARGS", handle_args).replace("ADDONS", addons)


@pytest.fixture(autouse=True)
def fixed_day(monkeypatch: pytest.MonkeyPatch) -> None:
    """Support warnings are judged on a fixed day (1.33 past standard support, 1.34 and 1.35 within it)."""
    monkeypatch.setattr(versions, "today", lambda: date(2026, 11, 24))


def image(preview: Preview) -> str:
    dep = preview.one("kubernetes:apps/v1:Deployment", "ca-deployment").inputs
    return dep["spec"]["template"]["spec"]["containers"][0]["image"]


def what_uses_the_minor(preview: Preview) -> dict[str, object]:
    """Each place the handle's minor reaches, as the preview declares it."""
    return {
        "image": image(preview),
        "node groups": {g.inputs.get("version") for g in preview.of_type("aws:eks/nodeGroup:NodeGroup")},
        "add-ons": {a.inputs["addonName"]: a.inputs["addonVersion"] for a in preview.of_type("aws:eks/addon:Addon")},
        "handle": preview.one("elastic-gpu:index:ExistingEksCluster", "h").inputs[VERSION_INPUT],
        "diff": Side("head", {r.urn: r for r in preview.resources}, {}).kubernetes_version,
    }


def known(minor: str) -> dict[str, object]:
    return {
        "image": cluster_autoscaler_image(minor),
        "node groups": {minor},
        "add-ons": eks_addon_versions(minor),
        "handle": minor,
        "diff": minor,
    }


@pytest.mark.parametrize(
    ("cluster_args", "handle_args", "minor"),
    [
        ('create_oidc_provider=True, version="1.34"', "", "1.34"),  # read from the pulumi-eks cluster
        ('create_oidc_provider=True, version="1.33"', "", "1.33"),  # ... past standard support: warned
        ('create_oidc_provider=True, version="1.34"', ', kubernetes_version="1.35"', "1.35"),  # given: it wins
        ("create_oidc_provider=True", ', kubernetes_version="1.35"', "1.35"),
    ],
)
def test_the_minor_is_read_from_the_pulumi_eks_cluster(run_program, cluster_args, handle_args, minor) -> None:
    preview = run_program(source(cluster_args, handle_args))
    assert what_uses_the_minor(preview) == known(minor)
    assert not [w for w in preview.warnings if UNKNOWN_VERSION_WARNING in w]
    support = versions.minor_support_warnings("kubernetes_version: ", get_cloud("aws"), minor)
    assert [w for w in preview.warnings if w.startswith("kubernetes_version: ")] == support
    assert bool(support) == (minor == "1.33")


def test_an_existing_cluster_s_version_comes_from_its_state(run_program, tmp_path: Path) -> None:
    """A cluster that exists has a version even when the program sets none: the offline preview gets it from
    the program's offline_mocks.py, as a real preview gets it from the state."""
    (tmp_path / "offline_mocks.py").write_text(
        'RESOURCES = {"aws:eks/cluster:Cluster": lambda name, inputs: {"version": "1.35"}}\n'
    )
    preview = run_program(source("create_oidc_provider=True"))
    assert what_uses_the_minor(preview) == known("1.35")


def test_a_new_cluster_without_version_is_unknown_at_preview_and_says_so(run_program, tmp_path: Path) -> None:
    """EKS gives a new cluster without `version` its default minor when it creates it (CreateCluster API); the
    preview cannot know it, says what follows, and declares the image, node-group and add-on versions unknown."""
    preview = run_program(source("create_oidc_provider=True"))
    assert what_uses_the_minor(preview) == {
        "image": rpc.UNKNOWN,
        "node groups": {rpc.UNKNOWN},
        "add-ons": dict.fromkeys(ADDON_NAMES, rpc.UNKNOWN),
        "handle": rpc.UNKNOWN,
        "diff": None,  # the diff names no minor rather than the engine's marker
    }
    assert f"EksCluster.from_pulumi_eks 'h': {UNKNOWN_VERSION_WARNING}" in preview.warnings
    # It previews (no exit 2); the program sets no cost-allocation tags, a mandatory violation, which fails
    # the preview as it fails `pulumi preview --policy-pack`.
    assert main(["preview", "--program", str(tmp_path), "--stack", "test"]) == 1


def test_every_minor_pins_the_same_add_ons() -> None:
    """An add-on version chosen once the minor is known needs the add-on's name before (eks_addons.py)."""
    assert all(tuple(sorted(row)) == ADDON_NAMES for row in EKS_ADDON_VERSIONS.values())


def test_a_minor_without_a_pinned_autoscaler_fails_the_preview(run_program, tmp_path: Path, capsys) -> None:
    run_program_dir = tmp_path
    (run_program_dir / "stacks").mkdir()
    (run_program_dir / "Pulumi.yaml").write_text("name: consumer\nruntime: python\nstackConfigDir: stacks\n")
    (run_program_dir / "stacks" / "Pulumi.test.yaml").write_text("config: {}\n")
    (run_program_dir / "__main__.py").write_text(source('create_oidc_provider=True, version="1.29"', addons=""))
    assert main(["preview", "--program", str(run_program_dir), "--stack", "test"]) == 2
    err = capsys.readouterr().err
    assert "ClusterAutoscaler 'ca': no cluster-autoscaler release pinned for Kubernetes 1.29; pinned: 1.30," in err
    assert "Traceback" not in err
    # The add-ons alone: with the autoscaler too, which of the two refusals comes first depends on which apply of
    # the cluster's version the engine resolves first.
    without_autoscaler = "\n".join(
        line
        for line in source('create_oidc_provider=True, version="1.29"', addons=ADDONS).splitlines()
        if not line.startswith("ClusterAutoscaler(")
    )
    (run_program_dir / "__main__.py").write_text(without_autoscaler)
    assert main(["preview", "--program", str(run_program_dir), "--stack", "test"]) == 2
    err = capsys.readouterr().err
    # the add-ons' versions are pinned per minor too (aws/versions.py EKS_ADDON_VERSIONS): refused first, naming
    # the minors the table has
    assert "EksAddons 'addons': no EKS add-on versions pinned for Kubernetes 1.29; pinned: 1.3" in err
    assert "Traceback" not in err
    # Offline, EKS's add-on versions come from the table, which names the minors it has.
    from elastic_gpu.tools.aws.mocks import INVOKE_MOCKS

    with pytest.raises(ValueError, match=r"no EKS add-on versions pinned for Kubernetes 1\.29; pinned: 1\.3"):
        INVOKE_MOCKS["aws:eks/getAddonVersion:getAddonVersion"]({"addonName": "coredns", "kubernetesVersion": "1.29"})


def test_help_says_where_the_minor_comes_from() -> None:
    import pydoc

    from elastic_gpu import EksCluster

    doc = " ".join(pydoc.render_doc(EksCluster.from_pulumi_eks, renderer=pydoc.plaintext).split())
    assert "`kubernetes_version`: default None: the EKS cluster's own `version` (an Output)" in doc
    assert "a new cluster without `version` gets EKS's default minor when it is created" in doc
    assert "`node_role_arn` (required)" in doc


ADDON_PROGRAM = """
from elastic_gpu import EksAddons, EksAddonsArgs, EksCluster
c = EksCluster.existing("x", cluster_name="c", kubernetes_version="1.35", node_role_arn="r",
    subnet_ids={"us-east-1a": "subnet-1"}, oidc_provider_arn="a", oidc_provider_url="u", region="us-east-1")
EksAddons("addons", EksAddonsArgs(cluster=c VERSIONS))
"""
#: EKS's answer as a test account gives it: a version naming what it was asked for.
EKS_ANSWERS = """
INVOKES = {"aws:eks/getAddonVersion:getAddonVersion": lambda a: {
    "version": a["addonName"] + "@" + a["kubernetesVersion"] + ("-newest" if a.get("mostRecent") else "-default")}}
"""


def _addon_versions(preview: Preview) -> dict[str, str]:
    return {a.inputs["addonName"]: a.inputs["addonVersion"] for a in preview.of_type("aws:eks/addon:Addon")}


def test_add_on_versions_are_pinned_and_do_not_follow_what_eks_offers_newest(run_program, tmp_path: Path) -> None:
    """An account whose EKS now offers newer builds (its getAddonVersion answers "-newest") does not move the
    add-ons: they stay at the table's versions for the cluster's minor, so an unrelated `pulumi up` replaces
    nothing; another minor moves them."""
    (tmp_path / "offline_mocks.py").write_text(EKS_ANSWERS)
    preview = run_program(ADDON_PROGRAM.replace(" VERSIONS", ""))
    assert _addon_versions(preview) == EKS_ADDON_VERSIONS["1.35"]
    assert not any("newest" in v for v in _addon_versions(preview).values())
    older = run_program(ADDON_PROGRAM.replace(" VERSIONS", "").replace('"1.35"', '"1.34"'))
    assert _addon_versions(older) == EKS_ADDON_VERSIONS["1.34"]


def test_an_add_on_version_given_wins_and_the_others_stay_pinned(run_program, tmp_path: Path) -> None:
    (tmp_path / "offline_mocks.py").write_text(EKS_ANSWERS)
    preview = run_program(ADDON_PROGRAM.replace(" VERSIONS", ', versions={"coredns": "v1.13.2-eksbuild.11"}'))
    assert _addon_versions(preview) == {
        addon: "v1.13.2-eksbuild.11" if addon == "coredns" else EKS_ADDON_VERSIONS["1.35"][addon]
        for addon in ADDON_NAMES
    }


def test_offline_the_table_answers_and_an_unknown_add_on_is_refused(run_program) -> None:
    assert _addon_versions(run_program(ADDON_PROGRAM.replace(" VERSIONS", ""))) == EKS_ADDON_VERSIONS["1.35"]
    with pytest.raises(ConfigError) as exc:
        run_program(ADDON_PROGRAM.replace(" VERSIONS", ', versions={"core-dns": "v1"}'))
    assert exc.value.problems == [
        "EksAddons 'addons': EksAddonsArgs.versions: 'core-dns' is not an add-on this component manages; allowed: "
        "coredns, eks-pod-identity-agent, kube-proxy, vpc-cni"
    ]
