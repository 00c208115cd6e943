"""The user's own cluster read as it is: a pulumi-eks cluster's public and private subnets (pulumi-eks passes both
to EKS), its default node group, and which subnets `zones=` may give GPU nodes."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

from elastic_gpu.errors import ConfigError
from elastic_gpu.preflight import FINDINGS_INPUT, TYPE_TOKEN
from elastic_gpu.tools.aws.mocks import _eks_cluster
from elastic_gpu.tools.offline.account import described_account
from elastic_gpu.tools.offline.report import to_json
from elastic_gpu.tools.offline.runner import Preview, run_preview

#: A pulumi-eks cluster on a VPC with a public and a private subnet per zone. The public ones sort first by id
#: (`a-...`), as a coin toss may have them on a real cluster; the one in us-east-1b maps no public IP but routes
#: to the internet gateway (how a public subnet may be built by hand), so only its route table says it is public.
PULUMI_EKS = """
import pulumi_aws as aws
import pulumi_eks as eks
from elastic_gpu import EksCluster, SpotGpuPool, SpotGpuPoolArgs

vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
igw = aws.ec2.InternetGateway("igw", vpc_id=vpc.id)
public_rt = aws.ec2.RouteTable("public", vpc_id=vpc.id,
                               routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)])
public, private = [], []
for i, zone in enumerate(["us-east-1a", "us-east-1b"]):
    pub = aws.ec2.Subnet(f"a-public-{zone}", vpc_id=vpc.id, cidr_block=f"10.0.{i}.0/24", availability_zone=zone,
                         map_public_ip_on_launch=MAP_PUBLIC and zone == "us-east-1a")
    aws.ec2.RouteTableAssociation(f"public-{zone}", route_table_id=public_rt.id, subnet_id=pub.id)
    priv = aws.ec2.Subnet(f"b-private-{zone}", vpc_id=vpc.id, cidr_block=f"10.0.{i + 10}.0/24",
                          availability_zone=zone)
    public.append(pub.id)
    private.append(priv.id)
cluster = eks.Cluster("eks", vpc_id=vpc.id, public_subnet_ids=public, private_subnet_ids=PRIVATE,
                      authentication_mode=eks.AuthenticationMode.API, create_oidc_provider=True, version="1.33")
role = aws.iam.Role("gpu-nodes", assume_role_policy="{}")
handle = EksCluster.from_pulumi_eks("gpu", cluster, node_role_arn=role.arn, zones=["us-east-1a", "us-east-1b"])
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=handle, instance_types=["g6.xlarge"], max_size=2))
"""


def program(tmp_path: Path, map_public: bool = True, private: str = "private") -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: own\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    source = PULUMI_EKS.replace("MAP_PUBLIC", str(map_public)).replace("PRIVATE", private)
    (tmp_path / "__main__.py").write_text(source)
    return tmp_path


def eks_cluster_security_group(preview: Preview) -> str:
    """The security group EKS made for the cluster, as the mock of aws.eks.Cluster answers it."""
    [eks] = preview.of_type("aws:eks/cluster:Cluster")
    return str(_eks_cluster(eks.inputs["name"], {})["vpcConfig"]["clusterSecurityGroupId"])


def gpu_subnets(preview: Preview) -> dict[str, list[str]]:
    return {
        g.name: g.inputs["subnetIds"]
        for g in preview.of_type("aws:eks/nodeGroup:NodeGroup")
        if g.name.startswith("l4-")
    }


def test_pulumi_eks_gives_the_eks_cluster_its_public_and_private_subnets(tmp_path: Path) -> None:
    preview = run_preview("dev", program(tmp_path))
    [eks] = preview.of_type("aws:eks/cluster:Cluster")
    # cluster.ts createCore: [...publicIds, ...privateIds]
    assert eks.inputs["vpcConfig"]["subnetIds"] == [
        "subnet-a-public-us-east-1a",
        "subnet-a-public-us-east-1b",
        "subnet-b-private-us-east-1a",
        "subnet-b-private-us-east-1b",
    ]


def test_zones_put_gpu_nodes_only_in_the_private_subnets(tmp_path: Path) -> None:
    subnets = gpu_subnets(run_preview("dev", program(tmp_path)))
    assert subnets == {
        "l4-spot-us-east-1a": ["subnet-b-private-us-east-1a"],  # the public one maps a public IP
        "l4-spot-us-east-1b": ["subnet-b-private-us-east-1b"],  # the public one routes to the internet gateway
    }


def test_a_zone_with_only_public_subnets_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        run_preview("dev", program(tmp_path, private="[]"))
    # every zone without a private subnet, in the zones' order, in one error (whichever zone resolves first)
    problem, other = exc.value.problems
    assert problem.startswith("zones: the cluster has no private subnet in us-east-1a (subnet-a-public-us-east-1a")
    assert other.startswith("zones: the cluster has no private subnet in us-east-1b (subnet-a-public-us-east-1b")
    assert "maps a public IP on launch" in problem and "give subnet_ids=" in problem.lower()
    # the public subnet of us-east-1b maps no public IP: its route table to the internet gateway refuses it
    with pytest.raises(ConfigError) as exc:
        run_preview("dev", program(tmp_path, map_public=False, private="[]"))
    assert "routes to the internet gateway internetgateway-igw" in str(exc.value)


def test_the_default_node_group_is_declared_and_priced(tmp_path: Path) -> None:
    preview = run_preview("dev", program(tmp_path))
    # cluster.ts createNodeGroupV2(name, core.nodeGroupOptions): a self-managed group named as the cluster, its
    # launch template of t3.medium (nodes/instances.ts DEFAULT_INSTANCE_TYPE), 2 nodes (nodegroup.ts), in the
    # private subnets
    group = preview.one("aws:autoscaling/group:Group", "eks")
    assert group.inputs["desiredCapacity"] == 2
    assert group.inputs["vpcZoneIdentifiers"] == ["subnet-b-private-us-east-1a", "subnet-b-private-us-east-1b"]
    assert preview.one("aws:ec2/launchTemplate:LaunchTemplate", "eks-launchTemplate").inputs["instanceType"] == (
        "t3.medium"
    )
    [row] = [p for p in to_json(preview)["pools"] if p["node_group"] == "eks"]
    assert (row["capacity"], row["min_size"], row["max_size"]) == ("on-demand", 2, 2)
    [cost] = [c for c in to_json(preview)["cost"]["pools"] if c["node_group"] == "eks"]
    # two always-on nodes at t3.medium's us-east-1 list price (elastic_gpu/data/prices.csv: 0.0416 USD/h)
    assert cost["idle_monthly"] == pytest.approx(2 * 0.0416 * 730, abs=0.01)


def test_skip_default_node_group_declares_none(tmp_path: Path) -> None:
    source = (program(tmp_path) / "__main__.py").read_text()
    (tmp_path / "__main__.py").write_text(
        source.replace('version="1.33")', 'version="1.33", skip_default_node_group=True)')
    )
    assert run_preview("dev", tmp_path).of_type("aws:autoscaling/group:Group") == []


def test_gpu_nodes_join_both_groups_coredns_may_run_in(tmp_path: Path) -> None:
    preview = run_preview("dev", program(tmp_path))
    cluster_sg = eks_cluster_security_group(preview)
    for template in preview.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        if template.name.startswith("l4-"):
            # pulumi-eks's nodeSecurityGroup (its own nodes') and EKS's cluster security group (managed groups')
            assert template.inputs["vpcSecurityGroupIds"] == ["securitygroup-eks-nodeSecurityGroup", cluster_sg]
    # Without pulumi-eks's own groups both are EKS's cluster security group: joined once.
    source = (tmp_path / "__main__.py").read_text()
    (tmp_path / "__main__.py").write_text(
        source.replace('version="1.33")', 'version="1.33", skip_default_security_groups=True)')
    )
    preview = run_preview("dev", tmp_path)
    groups = {
        tuple(t.inputs["vpcSecurityGroupIds"])
        for t in preview.of_type("aws:ec2/launchTemplate:LaunchTemplate")
        if t.name.startswith("l4-")
    }
    assert groups == {(eks_cluster_security_group(preview),)}


KARPENTER = """
from elastic_gpu import GeneralPool, GeneralPoolArgs
from elastic_gpu.aws.karpenter.controller import Karpenter, KarpenterArgs
general = GeneralPool("general", GeneralPoolArgs(cluster=handle, instance_types=["m6i.large"], max_size=2))
karpenter = Karpenter("karpenter", KarpenterArgs(cluster=handle, general_pool=general))
"""


def karpenter_program(tmp_path: Path, mode: str | None) -> Path:
    path = program(tmp_path)
    source = (path / "__main__.py").read_text()
    setting = "" if mode is None else f"authentication_mode=eks.AuthenticationMode.{mode}, "
    source = source.replace("authentication_mode=eks.AuthenticationMode.API, ", setting)
    (path / "__main__.py").write_text(source + KARPENTER)
    return path


def test_karpenter_on_a_config_map_cluster_is_refused_with_the_fix(tmp_path: Path) -> None:
    # pulumi-eks without authentication_mode gives EKS no accessConfig: CONFIG_MAP, where no access entry is taken
    with pytest.raises(ConfigError) as exc:
        run_preview("dev", karpenter_program(tmp_path, None))
    [problem] = exc.value.problems
    assert problem.startswith("Karpenter 'karpenter': the cluster's authentication mode is CONFIG_MAP")
    assert "authentication_mode=eks.AuthenticationMode.API_AND_CONFIG_MAP" in problem
    assert "aws eks update-cluster-config --name <cluster> --access-config authenticationMode=API_AND_CONFIG_MAP" in (
        problem
    )


@pytest.mark.parametrize("mode", ["API", "API_AND_CONFIG_MAP"])
def test_karpenter_on_a_cluster_with_access_entries_declares_its_node_entry(tmp_path: Path, mode: str) -> None:
    preview = run_preview("dev", karpenter_program(tmp_path, mode))
    [entry] = preview.of_type("aws:eks/accessEntry:AccessEntry")
    assert entry.inputs["type"] == "EC2_LINUX" and entry.inputs["clusterName"] == "eks-eksCluster-mock"


def test_an_existing_cluster_in_config_map_mode_is_refused_too(run_program) -> None:
    source = """
from elastic_gpu import EksCluster, GeneralPool, GeneralPoolArgs
from elastic_gpu.aws.karpenter.controller import Karpenter, KarpenterArgs
c = EksCluster.existing("x", cluster_name="c", kubernetes_version="1.35", node_role_arn="r",
    subnet_ids={"us-east-1a": "subnet-1"}, oidc_provider_arn="a", oidc_provider_url="u", region="us-east-1",
    authentication_mode="CONFIG_MAP")
general = GeneralPool("general", GeneralPoolArgs(cluster=c, instance_types=["m6i.large"], max_size=2))
Karpenter("karpenter", KarpenterArgs(cluster=c, general_pool=general))
"""
    with pytest.raises(ConfigError, match="authentication mode is CONFIG_MAP"):
        run_program(source)
    assert run_program(source.replace('"CONFIG_MAP"', '"API"')).of_type("aws:eks/accessEntry:AccessEntry")


TEMPLATE = ROOT / "tests" / "data" / "upstream" / "kubernetes-aws-python"


def test_the_kubernetes_aws_python_template_meets_a_new_accounts_quotas_and_none_once_set_up() -> None:
    preview = run_preview("dev", TEMPLATE)
    found = [f for c in preview.of_type(TYPE_TOKEN) for f in c.inputs[FINDINGS_INPUT]]
    assert sorted((f["pool"], f["check"]) for f in found) == [("l4", "on-demand-quota"), ("l4", "spot-quota")]
    assert all("--region us-west-2" in f["fix"] and "--desired-value 16" in f["fix"] for f in found)
    # its GPU nodes only in awsx's private subnets, though pulumi-eks gives EKS the public ones first
    assert set(map(tuple, gpu_subnets(preview).values())) == {
        ("subnet-eks-vpc-private-1",),
        ("subnet-eks-vpc-private-2",),
    }
    # the template's three always-on t3.medium nodes (its desiredClusterSize default), in Pools and Cost
    [row] = [p for p in to_json(preview)["pools"] if p["node_group"] == "eks-cluster"]
    assert (row["min_size"], row["max_size"], row["instance_types"]) == (3, 3, ["t3.medium"])
    ready = described_account({"aws": {"quotas": {"L-3819A6DF": 16, "L-DB2E81BA": 16}}})
    assert run_preview("dev", TEMPLATE, ready).of_type(TYPE_TOKEN) == []
