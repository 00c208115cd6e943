"""The example programs (examples/*) run offline through the CLI, as a user runs them, and pass the gate."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from conftest import ROOT

from elastic_gpu.__main__ import main
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.mocks import MOCK_UUID
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.report import to_json
from elastic_gpu.tools.offline.runner import Preview, run_preview
from elastic_gpu.versions import cluster_autoscaler_image
from tests.docs_pages import page

EXAMPLES = ROOT / "examples"
NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "Pulumi.yaml").exists())


@cache
def example(name: str) -> Preview:
    return run_preview("dev", EXAMPLES / name)


def test_every_example_is_here() -> None:
    assert NAMES == ["existing-aks", "existing-eks", "existing-eks-plain", "existing-gke"]


@pytest.mark.parametrize("name", NAMES)
def test_example_passes_the_gate_through_the_cli(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "--program", str(EXAMPLES / name)]) == 0
    assert main(["preview", "--program", str(EXAMPLES / name), "--stack", "dev", "--json"]) == 0
    text = capsys.readouterr().out
    report = json.loads(text[text.index("{") :])
    assert report["policy"]["passed"] is True
    for marker in ("Calling __str__", "Output[", "<pulumi.output"):
        assert marker not in text


def _unsuffixed(name: str) -> str:
    return re.sub(r"-[0-9a-f]{6}$", "", name)


def _by_type(preview: Preview, type_: str) -> dict[str, dict]:
    return {r.name: r.inputs for r in preview.of_type(type_)}


def test_existing_eks_on_pulumi_eks() -> None:
    preview = example("existing-eks")
    [component] = preview.of_type("eks:index:Cluster")
    children = {r.type for r in preview.children(component)}
    assert {
        "aws:eks/cluster:Cluster",
        "aws:iam/role:Role",
        "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
    } <= children
    groups = _by_type(preview, "aws:eks/nodeGroup:NodeGroup")
    # <cluster>-<pool>-<kind>-<zone>, then the create-before-delete suffix (elastic_gpu/tools/replacement.py)
    assert {_unsuffixed(g["nodeGroupName"]) for g in groups.values()} == {
        f"ml-l4-{kind}-us-west-2{z}" for kind in ("spot", "fallback") for z in "ab"
    }
    # The GPU nodes' own role (not the instance role pulumi-eks's self-managed nodes use), waiting for its
    # policy attachments; the subnets the ones the program mapped.
    assert {g["nodeRoleArn"] for g in groups.values()} == {"arn:aws:mock::123456789012:role/gpu-nodes"}
    [ng] = [r for r in preview.of_type("aws:eks/nodeGroup:NodeGroup") if r.name == "l4-spot-us-west-2a"]
    assert {u.rsplit("::", 1)[-1] for u in ng.depends_on if "rolePolicyAttachment" in u} == {
        f"gpu-nodes-{p}"
        for p in ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly")
    }
    # pulumi-eks's default node group is configured only through nodeGroupOptions (it refuses both).
    assert component.inputs["nodeGroupOptions"]["instanceType"] == "m6i.large"
    assert "instanceType" not in component.inputs
    assert groups["l4-spot-us-west-2a"]["subnetIds"] == ["subnet-0aaaaaaaaaaaaaaa1"]
    # The autoscaler lists and may scale only the pool's groups (by ASG name), still tagged as this cluster's.
    [policy] = _by_type(preview, "aws:iam/rolePolicy:RolePolicy").values()
    assert '"aws:ResourceTag/k8s.io/cluster-autoscaler/ml": "owned"' in policy["policy"]
    [dep] = _by_type(preview, "kubernetes:apps/v1:Deployment").values()
    flags = dep["spec"]["template"]["spec"]["containers"][0]["command"]
    assert sorted(f for f in flags if f.startswith("--nodes=")) == sorted(
        f"--nodes=0:{g['scalingConfig']['maxSize']}:eks-{g['nodeGroupName']}-{MOCK_UUID}" for g in groups.values()
    )
    # IRSA through pulumi-eks's OIDC provider.
    trust = json.loads(_by_type(preview, "aws:iam/role:Role")["autoscaler-role"]["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"]["Federated"].endswith("oidc.eks.example.amazonaws.com/id/ML")
    [cm] = _by_type(preview, "kubernetes:core/v1:ConfigMap").values()
    assert "ml\\-l4\\-fallback\\-us\\-west\\-2a" in cm["data"]["priorities"]
    # The minor is the pulumi-eks cluster's own `version` (the program repeats it nowhere).
    assert (
        component.inputs["version"] == "1.35"
        and "kubernetes_version" not in (EXAMPLES / "existing-eks" / "__main__.py").read_text()
    )
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == cluster_autoscaler_image("1.35")
    assert {g["version"] for g in groups.values()} == {"1.35"}


#: The rules EKS gives the cluster security group it creates (EKS User Guide, "View Amazon EKS security group
#: requirements for clusters", default rules): all traffic from itself in, all traffic out.
EKS_CLUSTER_GROUP_RULES = [
    {"type": "ingress", "protocol": "-1", "fromPort": 0, "toPort": 0, "self": True},
    {"type": "egress", "protocol": "-1", "fromPort": 0, "toPort": 0, "cidrBlocks": ["0.0.0.0/0"]},
]


def _security_group_rules(preview: Preview, eks_group: str) -> list[dict]:
    """Every declared rule (SecurityGroupRule resources, inline ingress/egress) and EKS's own group's."""
    rules = [r.inputs for r in preview.of_type("aws:ec2/securityGroupRule:SecurityGroupRule")]
    for group in preview.of_type("aws:ec2/securityGroup:SecurityGroup"):
        for kind in ("ingress", "egress"):
            rules += [{**rule, "type": kind, "securityGroupId": group.id} for rule in group.inputs.get(kind) or []]
    return rules + [{**rule, "securityGroupId": eks_group} for rule in EKS_CLUSTER_GROUP_RULES]


def _allows(rule: dict, protocol: str, port: int, peers: list[str], everyone: bool) -> bool:
    """Does `rule` let traffic of `protocol`/`port` pass between its group and `peers`?"""
    if rule["protocol"] not in ("-1", "all", protocol):
        return False
    if rule["protocol"] not in ("-1", "all") and not rule["fromPort"] <= port <= rule["toPort"]:
        return False
    if everyone and "0.0.0.0/0" in (rule.get("cidrBlocks") or []):
        return True
    sources = [rule.get("sourceSecurityGroupId"), *(rule.get("securityGroups") or [])]
    if rule.get("self"):
        sources.append(rule["securityGroupId"])
    return any(s in peers for s in sources)


def can_reach(rules: list[dict], src: list[str], dst: list[str], protocol: str, port: int) -> bool:
    """A node in groups `src` reaches `port` of a node in groups `dst`: one of src's groups lets it out and one
    of dst's lets it in (security groups are stateful: the answer needs no rule)."""
    out = any(
        _allows(r, protocol, port, dst, True) for r in rules if r["type"] == "egress" and r["securityGroupId"] in src
    )
    into = any(
        _allows(r, protocol, port, src, False) for r in rules if r["type"] == "ingress" and r["securityGroupId"] in dst
    )
    return out and into


def test_existing_eks_gpu_nodes_reach_coredns_and_the_control_plane_reaches_them() -> None:
    """CoreDNS runs on pulumi-eks's default nodes, in its `nodeSecurityGroup`, which admits only itself and
    pulumi-eks's `clusterSecurityGroup`: a GPU node left in EKS's cluster security group gets no DNS."""
    from elastic_gpu.tools.aws.mocks import _eks_cluster

    preview = example("existing-eks")
    groups = {g.name: g.id for g in preview.of_type("aws:ec2/securityGroup:SecurityGroup")}
    coredns_nodes = [groups["ml-nodeSecurityGroup"]]
    eks_group = _eks_cluster("ml", {})["vpcConfig"]["clusterSecurityGroupId"]
    # The control plane's network interfaces: EKS's cluster group and the groups the cluster is given.
    control_plane = [
        eks_group,
        *preview.one("aws:eks/cluster:Cluster", "ml-eksCluster").inputs["vpcConfig"]["securityGroupIds"],
    ]
    rules = _security_group_rules(preview, eks_group)
    templates = [t for t in preview.of_type("aws:ec2/launchTemplate:LaunchTemplate") if t.name.startswith("l4-")]
    assert len(templates) == 4
    for template in templates:
        # A launch template without groups leaves the node in EKS's cluster security group.
        gpu_node = template.inputs.get("vpcSecurityGroupIds") or [eks_group]
        for protocol in ("udp", "tcp"):
            assert can_reach(rules, gpu_node, coredns_nodes, protocol, 53), (template.name, protocol)
        assert can_reach(rules, gpu_node, control_plane, "tcp", 443), template.name  # the API server
        assert can_reach(rules, control_plane, gpu_node, "tcp", 10250), template.name  # its kubelet
    # The evaluation itself: EKS's cluster group alone is not let into the default nodes' group.
    assert not can_reach(rules, [eks_group], coredns_nodes, "udp", 53)


def test_existing_eks_plain_reads_the_stack_reference_and_its_own_node_group() -> None:
    preview = example("existing-eks-plain")
    groups = _by_type(preview, "aws:eks/nodeGroup:NodeGroup")
    assert _unsuffixed(groups["a10-fallback-eu-west-1a"]["nodeGroupName"]) == "prod-eu-a10-fallback-eu-west-1a"
    assert groups["a10-fallback-eu-west-1a"]["clusterName"] == "prod-eu"
    assert "nodeGroupName" not in groups["system"]  # auto-named: the report still reads it
    pools = {row["node_group"]: row for row in to_json(preview)["pools"]}
    assert pools["system"]["instance_types"] == ["m6i.large"]
    [dep] = _by_type(preview, "kubernetes:apps/v1:Deployment").values()
    assert dep["metadata"]["name"] == "gpu-cluster-autoscaler"
    # In its own namespace, where it reads its own priority ConfigMap (never the cluster autoscaler's).
    [namespace] = _by_type(preview, "kubernetes:core/v1:Namespace").values()
    [priorities] = _by_type(preview, "kubernetes:core/v1:ConfigMap").values()
    assert dep["metadata"]["namespace"] == namespace["metadata"]["name"] == "gpu-cluster-autoscaler"
    assert priorities["metadata"]["namespace"] == "gpu-cluster-autoscaler"
    # Beside the cluster's own autoscaler: this one lists only the program's GPU groups, never the user's
    # "system" group (EKS tags every managed group for auto-discovery, so a tag filter would find it too).
    flags = dep["spec"]["template"]["spec"]["containers"][0]["command"]
    listed = [f.rsplit(":", 1)[1] for f in flags if f.startswith("--nodes=")]
    gpu = [g["nodeGroupName"] for name, g in groups.items() if name != "system"]
    assert sorted(listed) == sorted(f"eks-{n}-{MOCK_UUID}" for n in gpu)
    assert not [f for f in flags if f.startswith("--node-group-auto-discovery")]
    [policy] = _by_type(preview, "aws:iam/rolePolicy:RolePolicy").values()
    resources = json.loads(policy["policy"])["Statement"][1]["Resource"]
    assert sorted(r.rsplit("/", 1)[1] for r in resources) == sorted(listed)
    # The stack config's price override applies to this (non-elastic-gpu) program.
    cost = {_unsuffixed(row["node_group"]): row for row in to_json(preview)["cost"]["pools"]}
    assert cost["prod-eu-a10-fallback-eu-west-1a"]["on_demand_hourly"] == 1.123
    assert cost["prod-eu-a10-spot-eu-west-1a"]["spot_hourly"] == 0.45


def test_the_pack_leaves_the_users_node_group_alone_unless_opted_in() -> None:
    preview = example("existing-eks-plain")
    assert "system" not in {v.name for v in run_policies(preview).violations}
    opted = run_policies(preview, config={"all": {"includeResources": ["system"]}})
    # An untagged node group without a launch template: judged once opted in.
    assert {"cost-allocation-tags", "node-disks-encrypted"} <= {
        v.policy for v in opted.violations if v.name == "system"
    }
    exempt = run_policies(
        preview, config={"all": {"includeResources": ["system"]}, "cost-allocation-tags": {"exemptResources": ["sys*"]}}
    )
    assert "cost-allocation-tags" not in {v.policy for v in exempt.violations if v.name == "system"}


def test_existing_aks_warns_about_the_expander() -> None:
    preview = example("existing-aks")
    assert not preview.of_type("azure-native:containerservice:ManagedCluster")
    pools = _by_type(preview, "azure-native:containerservice:AgentPool")
    assert {p["resourceGroupName"] for p in pools.values()} == {"prod-aks-rg"}
    assert any("az aks update --resource-group prod-aks-rg --name prod-aks" in w for w in preview.warnings)
    # Priced in the provider's location (the agent pools carry none of their own).
    cost = to_json(preview)["cost"]
    assert cost["regions"] == ["eastus"] and all(row["on_demand_hourly"] for row in cost["pools"])


def test_existing_gke_pools_have_private_nodes() -> None:
    preview = example("existing-gke")
    pools = _by_type(preview, "gcp:container/nodePool:NodePool")
    assert {p["cluster"] for p in pools.values()} == {"ml"}
    assert all(p["networkConfig"] == {"enablePrivateNodes": True} for p in pools.values())


def test_a_stack_reference_without_offline_outputs_says_where_they_go(tmp_path: Path) -> None:
    program = tmp_path / "prog"
    program.mkdir()
    for f in ("Pulumi.yaml", "Pulumi.dev.yaml", "__main__.py"):  # the example without its offline_mocks.py
        (program / f).write_text((EXAMPLES / "existing-eks-plain" / f).read_text())
    with pytest.raises(ConfigError) as exc:
        run_preview("dev", program)
    assert "StackReference 'acme/infra/prod' has no offline outputs" in str(exc.value)
    assert "offline_mocks.py as STACK_REFERENCES" in str(exc.value)


#: The section of docs/library.md that holds the smallest program per cloud.
LIBRARY_PROGRAMS = "## A cluster of its own: the smallest program per cloud"


def _readme_block(section: str, index: int = 0, name: str = "library.md") -> str:
    """The `index`th Python block after `section` in the docs page `name` (README.md or docs/<name>)."""
    readme = page(name)
    text = readme[readme.index(section) :]
    return text.split("```python\n")[index + 1].split("```")[0]


#: The smallest program per cloud (docs/library.md), in order, and what each declares as its cluster and pools.
README_PROGRAMS = [
    ("eks", "aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup"),
    ("aks", "azure-native:containerservice:ManagedCluster", "azure-native:containerservice:AgentPool"),
    ("gke", "gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool"),
]


@pytest.mark.parametrize(("index", "cloud"), [(i, p[0]) for i, p in enumerate(README_PROGRAMS)])
def test_the_readme_library_programs_run_offline_and_pass_the_gate(run_program, index: int, cloud: str) -> None:
    source = _readme_block(LIBRARY_PROGRAMS, index)
    assert f"from elastic_gpu.{cloud}_cluster import" in source
    preview = run_program(source)
    _, cluster_type, pool_type = README_PROGRAMS[index]
    assert len(preview.of_type(cluster_type)) == 1
    pools = preview.of_type(pool_type)
    assert {
        r.inputs.get("nodeLabels", r.inputs.get("labels", r.inputs.get("nodeConfig", {}).get("labels")))[
            "elastic-gpu.io/pool"
        ]
        for r in pools
    } == {"general", "l4" if cloud != "aks" else "t4"}
    assert preview.of_type("elastic-gpu:index:ClusterAutoscaler")
    assert preview.outputs["gpuNodeGroups"].value
    assert run_policies(preview).mandatory == []


def test_the_readme_existing_cluster_example_runs(run_program, tmp_path: Path) -> None:
    (tmp_path / "offline_mocks.py").write_text((EXAMPLES / "existing-eks-plain" / "offline_mocks.py").read_text())
    preview = run_program(_readme_block("# A cluster you already have", name="existing-clusters.md"))
    names = {_unsuffixed(r.inputs["nodeGroupName"]) for r in preview.of_type("aws:eks/nodeGroup:NodeGroup")}
    assert "prod-eu-a10-spot-eu-west-1a" in names
    [dep] = preview.of_type("kubernetes:apps/v1:Deployment")
    assert dep.inputs["metadata"]["name"] == "gpu-cluster-autoscaler"
