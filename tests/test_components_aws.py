"""The components imported into another Pulumi program, as a library user would."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from elastic_gpu.aws.asg_tags import managed_node_group_asg_tags, managed_node_group_resource_tags
from elastic_gpu.errors import ConfigError
from elastic_gpu.general_pool import GeneralPool, GeneralPoolArgs
from elastic_gpu.scheduling import Taint
from elastic_gpu.spot_gpu_pool import SpotGpuPool, SpotGpuPoolArgs
from tests.conftest import stem

PROGRAM = """
import pulumi
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster, EksClusterArgs, GeneralPool,
    GeneralPoolArgs, NvidiaDevicePlugin, NvidiaDevicePluginArgs, SpotGpuPool, SpotGpuPoolArgs, Taint)

cluster = EksCluster("c", EksClusterArgs(cluster_name="lab", region="eu-west-1", zones=["eu-west-1a", "eu-west-1b"],
                                         kubernetes_version="{version}"))
general = GeneralPool("general", GeneralPoolArgs(cluster=cluster, instance_types=["m6i.large"], max_size=2))
pools = [
    SpotGpuPool("a", SpotGpuPoolArgs(cluster=cluster, instance_types=["g5.xlarge"], max_size=2,
                                      extra_taints=[Taint("team", "vision", "NoSchedule")])),
    SpotGpuPool("b", SpotGpuPoolArgs(cluster=cluster, instance_types=["g6.xlarge"], max_size=2, per_zone=False,
                                      ami_family="{ami_b}")),
]
NvidiaDevicePlugin("dp", NvidiaDevicePluginArgs(provider=cluster.provider, gpu_pools=pools))
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=cluster, provider=cluster.provider, general_pool=general,
                                              gpu_pools=pools))
"""


def program(version: str = "1.34", ami_b: str = "al2023") -> str:
    return PROGRAM.replace("{version}", version).replace("{ami_b}", ami_b)


def test_device_plugin_tolerates_a_taint_added_to_one_pool(run_program) -> None:
    preview = run_program(program())
    pod = preview.one("kubernetes:apps/v1:DaemonSet", "dp-ds").inputs["spec"]["template"]["spec"]
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "team", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert "affinity" not in pod
    # the pool's nodes and its scale-from-zero template carry the taint too
    group = preview.one("aws:eks/nodeGroup:NodeGroup", "a-spot-eu-west-1a")
    assert {"key": "team", "value": "vision", "effect": "NO_SCHEDULE"} in group.inputs["taints"]
    # the autoscaler reads a valued taint from eks:DescribeNodegroup: no ASG tag repeats it
    assert not [t for t in preview.of_type("aws:autoscaling/tag:Tag") if "/taint/" in t.inputs["tag"]["key"]]


def test_only_what_describe_nodegroup_lacks_becomes_an_asg_tag() -> None:
    taints = [Taint("team", "vision", "NoSchedule"), Taint("dedicated", "", "NoSchedule")]
    # the autoscaler skips a DescribeNodegroup taint without a value (aws_wrapper.go), so that one stays a tag
    assert managed_node_group_asg_tags(taints=taints) == {
        "k8s.io/cluster-autoscaler/node-template/taint/dedicated": ":NoSchedule"
    }
    assert managed_node_group_resource_tags({"ephemeral-storage": "100Gi"}) == {
        "k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage": "100Gi"
    }


def test_names_derive_from_component_names_and_the_cluster(run_program) -> None:
    preview = run_program(program())
    assert sorted(stem(r.inputs["nodeGroupName"]) for r in preview.of_type("aws:eks/nodeGroup:NodeGroup")) == [
        "lab-a-spot-eu-west-1a",
        "lab-a-spot-eu-west-1b",
        "lab-b-spot",
        "lab-general",
    ]
    for token in ("EksCluster", "GeneralPool", "SpotGpuPool", "NvidiaDevicePlugin", "ClusterAutoscaler"):
        assert preview.of_type(f"elastic-gpu:index:{token}")


def test_autoscaler_image_follows_the_cluster_version(run_program) -> None:
    preview = run_program(program(version="1.34"))
    dep = preview.one("kubernetes:apps/v1:Deployment", "ca-deployment").inputs
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"].endswith(":v1.34.5")


def test_bottlerocket_pool_gets_no_second_plugin(run_program) -> None:
    preview = run_program(program(ami_b="bottlerocket"))
    assert preview.one("aws:eks/nodeGroup:NodeGroup", "b-spot").inputs["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA"
    pod = preview.one("kubernetes:apps/v1:DaemonSet", "dp-ds").inputs["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "elastic-gpu.io/pool", "operator": "In", "values": ["a"]}]}]


def test_no_plugin_at_all_when_every_pool_ships_one(run_program) -> None:
    source = program(ami_b="bottlerocket").replace(
        'instance_types=["g5.xlarge"], max_size=2,',
        ('instance_types=["g5.xlarge"], max_size=2, ami_family="bottlerocket",'),
    )
    preview = run_program(source)
    assert preview.of_type("elastic-gpu:index:NvidiaDevicePlugin")
    assert not preview.of_type("kubernetes:apps/v1:DaemonSet")


@dataclass
class FakeCluster:
    """A program's own object with the EKS handle's attributes: validation needs no resource."""

    cloud: str = "aws"
    zones: tuple[str, ...] = ("eu-west-1a", "eu-west-1b")
    kubernetes_version: str = "1.33"
    cluster_name: str = "c"
    provider: object = None
    tags: dict = field(default_factory=dict)
    region: str = "eu-west-1"
    node_role_arn: str = "arn:aws:iam::123456789012:role/nodes"
    subnet_ids: dict = field(default_factory=lambda: {"eu-west-1a": "subnet-a", "eu-west-1b": "subnet-b"})
    oidc_provider_arn: str = "arn"
    oidc_issuer_url: str = "https://oidc"
    node_dependencies: list = field(default_factory=list)


def test_spot_gpu_pool_validates_before_declaring() -> None:
    args = SpotGpuPoolArgs(cluster=FakeCluster(), instance_types=["g5.xlarge", "m5.large"], min_size=3, max_size=2)
    with pytest.raises(ConfigError) as exc:
        SpotGpuPool("a100", args)
    msg = str(exc.value)
    assert "SpotGpuPool 'a100': SpotGpuPoolArgs.max_size: must be >= min_size (got min_size=3, max_size=2)" in msg
    assert "SpotGpuPool 'a100': SpotGpuPoolArgs.instance_types[1]: 'm5.large' carries no GPU we know on aws" in msg


def test_spot_gpu_pool_zone_and_fallback_rules() -> None:
    args = SpotGpuPoolArgs(
        cluster=FakeCluster(),
        instance_types=["g5.xlarge"],
        max_size=4,
        zones=["eu-west-1c"],
        spot=False,
        on_demand_fallback=True,
    )
    with pytest.raises(ConfigError) as exc:
        SpotGpuPool("p", args)
    assert "zones: ['eu-west-1c'] are not zones of the cluster" in str(exc.value)
    assert "on_demand_fallback: only a spot pool can fall back" in str(exc.value)


def test_general_pool_needs_a_node() -> None:
    with pytest.raises(ConfigError, match=r"GeneralPool 'sys': GeneralPoolArgs.min_size: must be >= 1"):
        GeneralPool("sys", GeneralPoolArgs(cluster=FakeCluster(), instance_types=["m6i.large"], min_size=0, max_size=2))
