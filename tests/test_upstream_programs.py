"""Other people's Pulumi programs (tests/data/upstream, SOURCE.md there), each with only the lines that add GPU
pools, their cluster resource passed straight to the library: they preview, gate, simulate and cost offline, the
pools follow the control plane's version, and an end-of-life minor fails the gate."""

from __future__ import annotations

import inspect
import json
import pydoc
from datetime import date
from functools import cache
from pathlib import Path

import pytest
from conftest import UPSTREAM, upstream_copy
from pulumi.runtime import rpc

from elastic_gpu import AksCluster, EksCluster, GkeCluster, versions
from elastic_gpu.__main__ import main
from elastic_gpu.cluster_handle import VERSION_INPUT
from elastic_gpu.eks_cluster import UNKNOWN_VERSION_WARNING
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.report import render_text, to_json
from elastic_gpu.tools.offline.runner import Preview, run_preview
from elastic_gpu.versions import cluster_autoscaler_image

#: program -> how the GPU lines take its cluster resource
PROGRAMS = {
    "aws-py-eks": "EksCluster.from_cluster(",
    "managed-nodegroups-py": "EksCluster.from_pulumi_eks(",
    "nodegroup-py": "EksCluster.from_pulumi_eks(",
    "kubernetes-aws-python": "EksCluster.from_pulumi_eks(",
    "azure-py-aks": "AksCluster.from_managed_cluster(",
    "azure-py-aks-managed-identity": "AksCluster.from_managed_cluster(",
    "azure-py-aks-multicluster": "AksCluster.from_managed_cluster(",
    "gcp-py-gke": "GkeCluster.from_cluster(",
    "kubernetes-azure-python": "AksCluster.from_managed_cluster(",
    "kubernetes-gcp-python": "GkeCluster.from_cluster(",
}
ADDED = "# --- elastic-gpu: the lines a user adds"
#: The gate's verdict on each program as published: the AKS programs run Kubernetes 1.26 (end of life), and the
#: kubernetes-azure-python template 1.33 on AKS's standard support plan (end of life 2026-07-31); aws-py-eks's
#: only subnets are the public ones it declares (map_public_ip_on_launch=True), which the GPU node groups join
#: (no-public-node-ips: the handle's read of those subnets is answered from what the program declares).
GATE = {
    "azure-py-aks": 1,
    "azure-py-aks-managed-identity": 1,
    "azure-py-aks-multicluster": 1,
    "kubernetes-azure-python": 1,
    "aws-py-eks": 1,
}


@pytest.fixture(autouse=True)
def fixed_day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "today", lambda: date(2026, 11, 24))


@cache
def preview_of(name: str) -> Preview:
    return run_preview("dev", UPSTREAM / name)


def test_every_program_is_here_with_its_source() -> None:
    assert sorted(p.name for p in UPSTREAM.iterdir() if p.is_dir()) == sorted(PROGRAMS)
    source = (UPSTREAM / "SOURCE.md").read_text()
    assert all(f"`{name}`" in source for name in PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_program_runs_every_offline_command(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    program = str(UPSTREAM / name)
    text = (UPSTREAM / name / "__main__.py").read_text()
    added = text[text.index(ADDED) :]
    # The cluster resource goes straight to the library: no version typed again.
    assert PROGRAMS[name] in added and "kubernetes_version" not in added
    config = UPSTREAM / name / "policy-config.yaml"
    configured = [str(config)] if config.exists() else []
    # preview runs the pack as `pulumi preview --policy-pack` does: the gate's verdict is its exit code too
    preview = ["preview", "--program", program, "--stack", "dev"]
    assert main(preview + (["--policy-config", *configured] if configured else [])) == GATE.get(name, 0)
    assert [p for p in to_json(preview_of(name))["pools"] if p["capacity"] == "spot"]
    gate = ["policy", "--program", program, "--stack", "dev"] + (["--config", *configured] if configured else [])
    assert main(gate) == GATE.get(name, 0)
    err = capsys.readouterr().err
    assert main(["simulate", "--program", program, "--stack", "dev"]) == 0
    simulated = capsys.readouterr()
    # A region the program leaves unknown until deployment is said so, never printed as None; a value known only
    # after deployment (an autoscaler image chosen from the cluster's minor) never as the engine's marker.
    assert " in None" not in simulated.out and rpc.UNKNOWN not in simulated.out
    assert main(["cost", "--program", program, "--stack", "dev", "--gpu-hours", "100"]) == 0
    err += simulated.err + capsys.readouterr().err
    assert "Traceback" not in err and "Task was destroyed" not in err


def test_the_aks_programs_end_of_life_minor_fails_the_gate_and_reaches_the_pools(tmp_path: Path) -> None:
    for name in ("azure-py-aks", "azure-py-aks-managed-identity"):
        preview = preview_of(name)
        [handle] = preview.of_type("elastic-gpu:index:ExistingAksCluster")
        assert handle.inputs[VERSION_INPUT] == "1.26.3"  # the ManagedCluster's own kubernetes_version
        pools = preview.of_type("azure-native:containerservice:AgentPool")
        assert pools and {p.inputs["orchestratorVersion"] for p in pools} == {"1.26.3"}
        [violation] = [v for v in run_policies(preview).mandatory if v.policy == "kubernetes-version-not-end-of-life"]
        assert violation.name == "gpu"
        assert violation.message.startswith("Kubernetes 1.26 on azure is past its end of life")
    # On a supported minor the same program passes the gate, and its pools follow the new version.
    program = upstream_copy("azure-py-aks", tmp_path, ('kubernetes_version="1.26.3"', 'kubernetes_version="1.35.1"'))
    assert main(["policy", "--program", str(program), "--stack", "dev"]) == 0
    pools = run_preview("dev", program).of_type("azure-native:containerservice:AgentPool")
    assert {p.inputs["orchestratorVersion"] for p in pools} == {"1.35.1"}


def test_a_gke_cluster_without_location_is_where_the_provider_s_zone_puts_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # gcp-py-gke sets no location: the provider's gcp:zone (us-central1-a) places the cluster, so its pools are
    # priced in us-central1, not "region unknown".
    program = str(UPSTREAM / "gcp-py-gke")
    assert main(["cost", "--program", program, "--stack", "dev", "--gpu-hours", "100", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["pools"]
    assert rows and all(row["region"] == "us-central1" and row["on_demand_hourly"] for row in rows)


def test_the_eks_node_groups_follow_the_control_plane(tmp_path: Path) -> None:
    # aws-py-eks's cluster sets no version: unknown at preview, and said so.
    preview = preview_of("aws-py-eks")
    groups = [g for g in preview.of_type("aws:eks/nodeGroup:NodeGroup") if g.name.startswith("l4-")]
    assert len(groups) == 6  # spot and fallback in each of the program's three zones
    assert {g.inputs["clusterName"] for g in groups} == {"eks-cluster"}
    assert {g.inputs["nodeRoleArn"] for g in groups} == {"arn:aws:mock::123456789012:role/ec2-nodegroup-iam-role"}
    # Each zone's group in the program's own subnet of that zone.
    assert {g.name.split("-", 2)[2]: g.inputs["subnetIds"] for g in groups if "-spot-" in g.name} == {
        f"us-east-2{z}": [f"subnet-vpc-subnet-us-east-2{z}"] for z in "abc"
    }
    assert any(UNKNOWN_VERSION_WARNING in w for w in preview.warnings)
    [oidc] = preview.of_type("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    assert oidc.inputs["url"] == "https://oidc.eks.example.amazonaws.com/id/EKS-CLUSTER"
    # With a version on the cluster, the node groups and the autoscaler image take it.
    program = upstream_copy(
        "aws-py-eks",
        tmp_path,
        ("    role_arn=iam.eks_role.arn,\n", '    role_arn=iam.eks_role.arn,\n    version="1.35",\n'),
    )
    preview = run_preview("dev", program)
    groups = [g for g in preview.of_type("aws:eks/nodeGroup:NodeGroup") if g.name.startswith("l4-")]
    assert {g.inputs.get("version") for g in groups} == {"1.35"}
    [dep] = preview.of_type("kubernetes:apps/v1:Deployment")
    assert dep.inputs["spec"]["template"]["spec"]["containers"][0]["image"] == cluster_autoscaler_image("1.35")


def test_the_gke_handle_reads_the_cluster(tmp_path: Path) -> None:
    preview = preview_of("gcp-py-gke")
    pools = preview.of_type("gcp:container/nodePool:NodePool")
    assert {p.inputs["cluster"] for p in pools} == {"gke-cluster"}
    assert {tuple(p.inputs["nodeLocations"]) for p in pools} == {("us-central1-a",)}
    # The program's master_version config reaches the handle (its min_master_version), and 1.34 is past end of life.
    program = upstream_copy("gcp-py-gke", tmp_path)
    stack = program / "Pulumi.dev.yaml"
    stack.write_text(stack.read_text() + "  gcp-py-gke:master_version: '1.34'\n")
    preview = run_preview("dev", program)
    assert preview.one("elastic-gpu:index:ExistingGkeCluster", "gpu").inputs[VERSION_INPUT] == "1.34"
    assert [v.policy for v in run_policies(preview).mandatory if v.name == "gpu"] == [
        "kubernetes-version-not-end-of-life"
    ]


def test_pulumi_eks_node_groups_run_offline_as_pulumi_eks_declares_them() -> None:
    preview = preview_of("managed-nodegroups-py")
    groups = {g.name: g for g in preview.of_type("aws:eks/nodeGroup:NodeGroup")}
    for name in ("example-managed-ng0", "example-managed-ng1", "example-managed-ng2"):
        [component] = [r for r in preview.of_type("eks:index:ManagedNodeGroup") if r.name == name]
        assert groups[name].parent == component.urn
        assert groups[name].inputs["clusterName"] == "example-managed-nodegroups-eksCluster-mock"
    assert groups["example-managed-ng0"].inputs["nodeRoleArn"] == "arn:aws:mock::123456789012:role/example-role0"
    assert groups["example-managed-ng0"].inputs["scalingConfig"] == {"desiredSize": 2, "minSize": 1, "maxSize": 2}
    assert groups["example-managed-ng2"].inputs["scalingConfig"] == {"desiredSize": 1, "minSize": 1, "maxSize": 2}
    assert groups["example-managed-ng2"].inputs["nodeGroupName"] == "aws-managed-ng2"
    gpu = [g for name, g in groups.items() if name.startswith("l4-")]
    assert {g.inputs["nodeRoleArn"] for g in gpu} == {"arn:aws:mock::123456789012:role/gpu-nodes"}


PULUMI_EKS = """
import pulumi, pulumi_aws as aws, pulumi_eks as eks
role = aws.iam.Role("r", assume_role_policy="{}")
other = aws.iam.Role("o", assume_role_policy="{}")
cluster = eks.Cluster("c", skip_default_node_group=True, instance_roles=[role], AUTH)
BODY
"""


def pulumi_eks(run_program, body: str, auth: str = "authentication_mode='API'") -> Preview:
    return run_program(PULUMI_EKS.replace("AUTH", auth).replace("BODY", body))


@pytest.mark.parametrize(
    ("body", "auth", "error"),
    [
        (
            'eks.ManagedNodeGroup("m", cluster=cluster, node_role=role, node_role_arn=role.arn)',
            "authentication_mode='API'",
            "You cannot specify both nodeRole and nodeRoleArn when creating a managed node group.",
        ),
        (
            'eks.ManagedNodeGroup("m", cluster=cluster)',
            "authentication_mode='API'",
            "An IAM role, or role ARN must be provided to create a managed node group",
        ),
        (
            'eks.ManagedNodeGroup("m", cluster=cluster, node_role=other)',
            "version='1.35'",
            "A managed node group cannot be created without first setting its role in the cluster's instanceRoles",
        ),
        (
            'eks.NodeGroupV2("n", cluster=cluster, instance_profile_name="p", node_security_group_id="sg-1",'
            " node_security_group=aws.ec2.SecurityGroup('sg'))",
            "authentication_mode='API'",
            "nodeSecurityGroup and nodeSecurityGroupId are mutually exclusive",
        ),
    ],
)
def test_pulumi_eks_refusals_are_kept(run_program, body: str, auth: str, error: str) -> None:
    with pytest.raises(ConfigError) as exc:
        pulumi_eks(run_program, body, auth)
    assert error in str(exc.value)


def test_pulumi_eks_node_group_v2_and_addon(run_program) -> None:
    preview = pulumi_eks(
        run_program,
        'ng = eks.NodeGroupV2("n", cluster=cluster, instance_profile_name="p", instance_type="m6i.large", max_size=3)\n'
        'addon = eks.Addon("a", cluster=cluster, addon_name="coredns", configuration_values={"b": 1, "a": 2})\n'
        'pulumi.export("asg", ng.auto_scaling_group.name)\n',
    )
    [template] = preview.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert (template.name, template.inputs["instanceType"]) == ("n-launchTemplate", "m6i.large")
    [group] = preview.of_type("aws:autoscaling/group:Group")
    assert (group.name, group.inputs["maxSize"], group.inputs["minSize"]) == ("n", 3, 1)
    assert {
        "key": "kubernetes.io/cluster/c-eksCluster-mock",
        "value": "owned",
        "propagateAtLaunch": True,
    } in group.inputs["tags"]
    [addon] = preview.of_type("aws:eks/addon:Addon")
    assert addon.inputs["clusterName"] == "c-eksCluster-mock"
    assert addon.inputs["configurationValues"] == '{"a":2,"b":1}'
    assert addon.parent == preview.one("eks:index:Addon", "a").urn
    assert preview.outputs["asg"].value == "n"


REMOTE = """
import pulumi

class Thing(pulumi.ComponentResource):
    size: pulumi.Output[int]
    def __init__(self, name, role, opts=None):
        super().__init__("acme:index:Thing", name, {"role": role, "size": None}, opts, remote=True)

import pulumi_aws as aws
role = aws.iam.Role("r", assume_role_policy="{}")
thing = Thing("t", role)
pulumi.export("size", thing.size)
"""
HOOK = """
def thing(name, inputs, children):
    role = children.state(inputs["role"])
    children("aws:s3/bucket:Bucket", f"{name}-bucket", {"tags": {"role": role["arn"]}})
    return {"size": 3}

REMOTE_COMPONENTS = {"acme:index:Thing": thing}
"""


def test_a_remote_component_of_ones_own_is_mocked_in_offline_mocks(run_program, tmp_path: Path) -> None:
    preview = run_program(REMOTE)
    assert any("remote component acme:index:Thing 't' has no offline mock" in w for w in preview.warnings)
    assert any("offline_mocks.py as REMOTE_COMPONENTS" in w for w in preview.warnings)
    (tmp_path / "offline_mocks.py").write_text(HOOK)
    preview = run_program(REMOTE)
    [bucket] = preview.of_type("aws:s3/bucket:Bucket")
    assert bucket.inputs["tags"] == {"role": "arn:aws:mock::123456789012:role/r"}
    assert bucket.parent == preview.one("acme:index:Thing", "t").urn
    assert preview.outputs["size"].value == 3


def test_from_pulumi_eks_without_its_node_role_says_so(tmp_path: Path) -> None:
    program = upstream_copy("managed-nodegroups-py", tmp_path, ("node_role_arn=gpu_role.arn,", ""))
    with pytest.raises(ConfigError) as exc:
        run_preview("dev", program)
    assert "EksCluster.from_pulumi_eks 'gpu': node_role_arn: required" in str(exc.value)
    for method in (EksCluster.from_pulumi_eks, EksCluster.from_cluster):
        param = inspect.signature(method).parameters["node_role_arn"]
        assert param.default is inspect.Parameter.empty and "None" not in str(param.annotation)
    for method, names in (
        (AksCluster.from_managed_cluster, ("resource_group_name", "zones")),
        (GkeCluster.from_cluster, ("zones",)),
    ):
        assert all(inspect.signature(method).parameters[n].default is inspect.Parameter.empty for n in names)


def test_help_of_existing_says_what_each_argument_is() -> None:
    doc = " ".join(pydoc.render_doc(EksCluster.existing, renderer=pydoc.plaintext).split())
    assert "see ExistingEksCluster" not in doc
    for words in (
        "`node_role_arn`: the IAM role the GPU node groups use",
        "`subnet_ids`: zone -> private subnet id",
        "`kubernetes-version-not-end-of-life` fails one past end of life",
        "EksCluster.from_cluster",
    ):
        assert words in doc


def test_from_cluster_refuses_what_it_cannot_read(run_program, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        run_program(
            "import pulumi_aws as aws\nfrom elastic_gpu import EksCluster\n"
            'c = aws.eks.Cluster("c", role_arn="arn:aws:iam::1:role/x", vpc_config={"subnet_ids": ["s"]})\n'
            'EksCluster.from_cluster("h", c, node_role_arn="arn:aws:iam::1:role/n", subnet_ids={"us-east-1a": "s"},'
            ' zones=["us-east-1a"])\n'
        )
    text = str(exc.value)
    assert "oidc_provider_arn: required unless create_oidc_provider=True" in text
    assert "subnet_ids and zones: give one" in text

    # zones are checked against the provider's region (aws:region) before anything is declared
    program = upstream_copy(
        "aws-py-eks",
        tmp_path,
        ("subnet_ids=dict(zip(vpc.zones.names, vpc.subnet_ids, strict=True))", 'zones=["eu-west-1a"]'),
    )
    with pytest.raises(ConfigError) as exc:
        run_preview("dev", program)
    assert "EksCluster.from_cluster 'gpu': zones['eu-west-1a']" in str(exc.value)


@pytest.mark.parametrize(
    "handle",
    [
        'EksCluster.existing("old", cluster_name="c", kubernetes_version="1.30", node_role_arn="arn:aws:iam::1:role/n",'
        ' subnet_ids={"us-east-1a": "subnet-1"}, oidc_provider_arn="arn:aws:iam::1:oidc-provider/x",'
        ' oidc_provider_url="https://x", region="us-east-1")',
        'AksCluster.existing("old", cluster_name="c", resource_group_name="rg", location="eastus", zones=["1"],'
        ' kubernetes_version="1.26")',
    ],
)
def test_an_existing_cluster_on_an_end_of_life_minor_fails_the_gate(run_program, handle: str) -> None:
    preview = run_program(f"from elastic_gpu import AksCluster, EksCluster\n{handle}\n")
    [violation] = run_policies(preview).mandatory
    assert (violation.policy, violation.name) == ("kubernetes-version-not-end-of-life", "old")
    assert "is past its end of life: it is older than every minor" in violation.message
    assert any("is past its end of life" in w for w in preview.warnings)


def test_a_managed_node_group_follows_the_cluster_version_unless_told(run_program) -> None:
    preview = pulumi_eks(
        run_program,
        'eks.ManagedNodeGroup("follows", cluster=cluster, node_role=role)\n'
        'eks.ManagedNodeGroup("pinned", cluster=cluster, node_role=role, version="1.34")\n',
        "authentication_mode='API', version='1.35'",
    )
    groups = {g.name: g.inputs for g in preview.of_type("aws:eks/nodeGroup:NodeGroup")}
    assert (groups["follows"]["version"], groups["pinned"]["version"]) == ("1.35", "1.34")


def test_an_aks_cluster_that_may_pick_the_fallback_first_is_reported() -> None:
    """azure-py-aks sets no autoScalerProfile: AKS's expander is random, so the on-demand fallback ranks with
    the spot agent pools; the gate says so (advisory: AKS's autoscaler is documented, not run as is)."""
    found = run_policies(preview_of("azure-py-aks")).of("spot-gpu-pool-fallback-promise-advisory")
    assert [v.name for v in found] == ["t4"]
    assert "the autoscaler may ask its on-demand group(s)" in found[0].message
    assert "expander random (from the AKS autoScalerProfile)" in found[0].message


def test_each_cluster_of_a_multi_cluster_program_gets_its_own_pools_in_its_region() -> None:
    """azure-py-aks-multicluster: one cluster in eastus, one in westus (no availability zones)."""
    preview = preview_of("azure-py-aks-multicluster")
    pools = {p.name: p for p in preview.of_type("azure-native:containerservice:AgentPool")}
    west = [p for name, p in pools.items() if name.startswith("a10-west")]
    assert sorted(p.inputs["scaleSetPriority"] for p in west) == ["Regular", "Spot"]
    assert all("availabilityZones" not in p.inputs for p in west)
    rows = {(r["pool"], r["region"]) for r in to_json(preview)["cost"]["pools"] if r["pool"].startswith("a10")}
    assert rows == {("a10-east", "eastus"), ("a10-west", "westus")}


def test_two_clusters_inline_pools_of_one_name_are_told_apart_by_their_cluster() -> None:
    """Each cluster of azure-py-aks-multicluster has an inline system pool `aksagentpool`: the Pools and Cost
    tables name the cluster that declares each, and a name that is unique stays as it is."""
    text = render_text(preview_of("azure-py-aks-multicluster"))
    pools, cost = text.split("\nCost (")
    for table in (pools, cost):
        rows = [line.split() for line in table.splitlines() if line.strip().startswith("aksagentpool")]
        assert sorted(r[1:4] for r in rows) == [
            ["aksagentpool", "(in", "aksCluster-east[0])"],
            ["aksagentpool", "(in", "aksCluster-west[0])"],
        ]
        assert "a10wes94efbf " in table and "a10wes94efbf (in" not in table


def test_a_preview_prints_the_program_s_warnings_in_one_order() -> None:
    """The expander warning and the version warning come from Outputs' applies, and a remote component's missing
    mock from its registration, in no fixed order: the preview sorts them, so two previews of one program print
    the same."""
    logged = [w for w in preview_of("azure-py-aks").warnings if not w.startswith("Pulumi.yaml")]
    assert len(logged) >= 2 and logged == sorted(logged)
    missing = [w for w in preview_of("nodegroup-py").warnings if "has no offline mock" in w]
    assert len(missing) == 5 and missing == sorted(missing)
