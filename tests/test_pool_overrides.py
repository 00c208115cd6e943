"""Per-pool node settings (subnets, node identity, security groups, image, user data, kubelet) as each cloud
declares them, and an error where a cloud has no place for one."""

from __future__ import annotations

import base64
import email

import pytest
import yaml

from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.runner import Preview
from tests.conftest import stem

EKS = """
import pulumi
from elastic_gpu import EksCluster, GeneralPool, GeneralPoolArgs, SpotGpuPool, SpotGpuPoolArgs
cluster = EksCluster.existing("c", cluster_name="c", kubernetes_version="1.33", region="us-east-1",
    node_role_arn="arn:aws:iam::123456789012:role/cluster-nodes",
    subnet_ids={"us-east-1a": "subnet-a", "us-east-1b": "subnet-b"},
    oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/x", oidc_provider_url="https://x")
POOLS
"""

AKS = """
from elastic_gpu import AksCluster, GeneralPool, GeneralPoolArgs, SpotGpuPool, SpotGpuPoolArgs
cluster = AksCluster.existing("c", cluster_name="c", resource_group_name="rg", location="westeurope",
                              zones=["1", "2"], kubernetes_version="1.33")
POOLS
"""

GKE = """
from elastic_gpu import GkeCluster, GeneralPool, GeneralPoolArgs, SpotGpuPool, SpotGpuPoolArgs
cluster = GkeCluster.existing("c", cluster_name="c", project="p", location="us-central1",
                              zones=["us-central1-a", "us-central1-b"], kubernetes_version="1.33")
POOLS
"""

SCRIPT = "#!/bin/bash\necho hello > /etc/motd\n"


def _program(cloud: str, pools: str) -> str:
    return cloud.replace("POOLS", pools)


def _by_name(preview: Preview, type_: str) -> dict[str, dict]:
    return {r.name: r.inputs for r in preview.of_type(type_)}


def _mime_parts(user_data_b64: str) -> list[tuple[str, str]]:
    message = email.message_from_string(base64.b64decode(user_data_b64).decode())
    assert message.is_multipart()
    return [(part.get_content_type(), part.get_payload()) for part in message.get_payload()]


# --- EKS ----------------------------------------------------------------------------------------------


def test_eks_pool_settings_reach_the_node_group_and_its_launch_template(run_program) -> None:
    preview = run_program(
        _program(
            EKS,
            """
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g6.xlarge"], max_size=2,
    subnet_ids={"us-east-1a": "subnet-own-a"},
    node_identity="arn:aws:iam::123456789012:role/gpu-nodes",
    security_group_ids=["sg-cluster", "sg-gpu"],
    kubelet_config={"maxPods": 30, "cpuManagerPolicy": "static"},
    user_data=SCRIPT))
pulumi.export("role", pulumi.Output.from_input(cluster.node_role_arn))
""".replace("SCRIPT", repr(SCRIPT)),
        )
    )
    groups = _by_name(preview, "aws:eks/nodeGroup:NodeGroup")
    assert groups["l4-spot-us-east-1a"]["subnetIds"] == ["subnet-own-a"]
    assert groups["l4-spot-us-east-1b"]["subnetIds"] == ["subnet-b"]  # a zone the map leaves out
    assert {g["nodeRoleArn"] for g in groups.values()} == {"arn:aws:iam::123456789012:role/gpu-nodes"}
    assert {g["amiType"] for g in groups.values()} == {"AL2023_x86_64_NVIDIA"}
    templates = _by_name(preview, "aws:ec2/launchTemplate:LaunchTemplate")
    lt = templates["l4-spot-us-east-1a-lt"]
    assert lt["vpcSecurityGroupIds"] == ["sg-cluster", "sg-gpu"]
    assert "imageId" not in lt
    parts = _mime_parts(lt["userData"])
    assert [kind for kind, _ in parts] == ["application/node.eks.aws", "text/x-shellscript"]
    node_config = yaml.safe_load(parts[0][1])
    assert node_config["kind"] == "NodeConfig"
    assert node_config["spec"]["kubelet"]["config"] == {"maxPods": 30, "cpuManagerPolicy": "static"}
    assert parts[1][1].strip() == SCRIPT.strip()


def test_eks_general_pool_and_defaults_keep_the_clusters_settings(run_program) -> None:
    preview = run_program(
        _program(
            EKS,
            """
GeneralPool("sys", GeneralPoolArgs(cluster=cluster, instance_types=["m6i.large"], max_size=2,
                                   node_identity="arn:aws:iam::123456789012:role/sys-nodes"))
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g6.xlarge"], max_size=2))
""",
        )
    )
    groups = _by_name(preview, "aws:eks/nodeGroup:NodeGroup")
    assert groups["sys-ng"]["nodeRoleArn"] == "arn:aws:iam::123456789012:role/sys-nodes"
    assert groups["l4-spot-us-east-1a"]["nodeRoleArn"] == "arn:aws:iam::123456789012:role/cluster-nodes"
    assert groups["l4-spot-us-east-1a"]["subnetIds"] == ["subnet-a"]
    lt = _by_name(preview, "aws:ec2/launchTemplate:LaunchTemplate")["l4-spot-us-east-1a-lt"]
    assert "userData" not in lt and "vpcSecurityGroupIds" not in lt


def test_eks_custom_ami_is_custom_and_carries_the_users_bootstrap(run_program) -> None:
    node_config = "---\\napiVersion: node.eks.aws/v1alpha1\\nkind: NodeConfig\\nspec:\\n  cluster:\\n    name: c\\n"
    preview = run_program(
        _program(
            EKS,
            f"""
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g6.xlarge"], max_size=2, per_zone=False,
    image="ami-0123456789abcdef0", user_data="{node_config}"))
""",
        )
    )
    [group] = _by_name(preview, "aws:eks/nodeGroup:NodeGroup").values()
    # CreateNodegroup with a custom AMI in the launch template: no amiType and no version, or it fails.
    assert "amiType" not in group and "version" not in group
    [lt] = _by_name(preview, "aws:ec2/launchTemplate:LaunchTemplate").values()
    assert lt["imageId"] == "ami-0123456789abcdef0"
    [(kind, text)] = _mime_parts(lt["userData"])
    assert kind == "application/node.eks.aws" and yaml.safe_load(text)["spec"]["cluster"]["name"] == "c"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ('image="ami-0123456789abcdef0"', "image: a custom AMI gets no bootstrap from EKS"),
        ('subnet_ids="subnet-x"', "subnet_ids: on EKS a node group's subnet follows its zone"),
        ('subnet_ids={"us-east-1c": "subnet-x"}', "subnet_ids: ['us-east-1c'] are not zones of the cluster"),
        ('ami_family="bottlerocket", kubelet_config={"maxPods": 30}', "kubelet_config: set through nodeadm"),
        (
            'kubelet_config={"maxPods": 30}, user_data=pulumi.Output.from_input("#!/bin/sh")',
            "user_data: an Output cannot be combined with kubelet_config",
        ),
        ("security_group_ids=[]", "security_group_ids: must be a non-empty list"),
        ("node_identity=42", "node_identity: must be a non-empty string or an Output, got 42"),
    ],
)
def test_eks_settings_in_a_shape_eks_cannot_take_are_errors(run_program, args: str, message: str) -> None:
    program = _program(
        EKS, f'SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g6.xlarge"], max_size=2, {args}))'
    )
    with pytest.raises(
        ConfigError, match="SpotGpuPool 'l4': SpotGpuPoolArgs." + message.replace("[", r"\[").replace("]", r"\]")
    ):
        run_program(program)


# --- AKS ----------------------------------------------------------------------------------------------


def test_aks_pool_subnet_and_kubelet_settings(run_program) -> None:
    pools = """
SpotGpuPool("t4", SpotGpuPoolArgs(cluster=cluster, instance_types=["Standard_NC4as_T4_v3"], max_size=2,
    subnet_ids="/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/gpu",
    kubelet_config={"cpuManagerPolicy": "static", "podPidsLimit": 4096}))
"""
    preview = run_program(_program(AKS, pools))
    plain = run_program(
        _program(
            AKS,
            'SpotGpuPool("t4", SpotGpuPoolArgs(cluster=cluster, instance_types=["Standard_NC4as_T4_v3"], max_size=2))',
        )
    )
    agent_pools = _by_name(preview, "azure-native:containerservice:AgentPool")
    assert {p["vnetSubnetID"] for p in agent_pools.values()} == {
        "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/gpu"
    }
    assert {str(p["kubeletConfig"]) for p in agent_pools.values()} == {
        str({"cpuManagerPolicy": "static", "podMaxPids": 4096})
    }
    # Both force a replacement, so they are in the agent-pool name: a change is a new, create-first pool.
    names = {p["agentPoolName"] for p in agent_pools.values()}
    assert names.isdisjoint(
        p["agentPoolName"] for p in _by_name(plain, "azure-native:containerservice:AgentPool").values()
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ('node_identity="x"', "node_identity: not available on azure: AKS nodes act as the cluster's kubelet"),
        ('security_group_ids=["nsg"]', "security_group_ids: not available on azure"),
        ('image="ubuntu"', "image: not available on azure"),
        ('user_data="#!/bin/sh"', "user_data: not available on azure"),
        ('subnet_ids={"1": "s"}', "subnet_ids: on AKS one VNet subnet id"),
        ('kubelet_config={"maxPods": 30}', r"kubelet_config: \['maxPods'\] cannot be set on azure; allowed: "),
    ],
)
def test_aks_settings_it_has_no_place_for_are_errors(run_program, args: str, message: str) -> None:
    program = _program(
        AKS,
        f'GeneralPool("sys", GeneralPoolArgs(cluster=cluster, instance_types=["Standard_D4s_v5"], max_size=2, {args}))',
    )
    with pytest.raises(ConfigError, match="GeneralPool 'sys': GeneralPoolArgs." + message):
        run_program(program)


# --- GKE ----------------------------------------------------------------------------------------------


def test_gke_pool_service_account_image_and_kubelet(run_program) -> None:
    pools = """
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g2-standard-4"], max_size=2,
    node_identity="gpu-nodes@p.iam.gserviceaccount.com", image="UBUNTU_CONTAINERD",
    kubelet_config={"cpuManagerPolicy": "static", "podPidsLimit": 4096}))
"""
    preview = run_program(_program(GKE, pools))
    [pool] = _by_name(preview, "gcp:container/nodePool:NodePool").values()
    node = pool["nodeConfig"]
    assert node["serviceAccount"] == "gpu-nodes@p.iam.gserviceaccount.com"
    assert node["imageType"] == "UBUNTU_CONTAINERD"
    assert node["kubeletConfig"] == {"cpuManagerPolicy": "static", "podPidsLimit": 4096}
    plain = run_program(
        _program(
            GKE,
            'SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g2-standard-4"], max_size=2,'
            ' image="UBUNTU_CONTAINERD", kubelet_config={"cpuManagerPolicy": "static", "podPidsLimit": 4096}))',
        )
    )
    [plain_pool] = _by_name(plain, "gcp:container/nodePool:NodePool").values()
    # The service account forces a replacement (nodeConfig.serviceAccount), so it is in the name.
    assert stem(pool["name"]) == stem(plain_pool["name"]) and pool["name"] != plain_pool["name"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ('subnet_ids={"us-central1-a": "s"}', "subnet_ids: not available on gcp"),
        ('security_group_ids=["sg"]', "security_group_ids: not available on gcp"),
        ('user_data="#!/bin/sh"', "user_data: not available on gcp"),
        ('node_identity=pulumi.Output.from_input("sa@p")', "node_identity: on GKE a plain service account email"),
        ('kubelet_config={"maxPods": 30}', r"kubelet_config: \['maxPods'\] cannot be set on gcp"),
    ],
)
def test_gke_settings_it_has_no_place_for_are_errors(run_program, args: str, message: str) -> None:
    program = "import pulumi\n" + _program(
        GKE,
        f'SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g2-standard-4"], max_size=2, {args}))',
    )
    with pytest.raises(ConfigError, match="SpotGpuPool 'l4': SpotGpuPoolArgs." + message):
        run_program(program)
