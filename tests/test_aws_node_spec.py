"""EKS: one node spec per pool (aws/node_spec.py) that the node groups and Karpenter's objects read, its
replacement marks, and the program's own node-group inputs (`node_group_args`)."""

from __future__ import annotations

import inspect

import pulumi_aws as aws
import pytest

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.aws.karpenter.nodes import node_class_spec
from elastic_gpu.aws.node_groups import eks_node_group_name
from elastic_gpu.aws.node_spec import AwsNodeSpec, gpu_node_spec
from elastic_gpu.aws.replacement import POOL_REPLACE_FIELDS
from elastic_gpu.errors import ConfigError
from elastic_gpu.node_marks import marked_inputs
from elastic_gpu.settings.aws import OWNED_NODE_GROUP_ARGS
from elastic_gpu.spot_gpu_pool import SpotGpuPool, SpotGpuPoolArgs
from tests.test_components_aws import FakeCluster
from tests.test_karpenter_eks import NODES

PROGRAM = """
import pulumi
from elastic_gpu import EksCluster, EksClusterArgs, SpotGpuPool, SpotGpuPoolArgs

cluster = EksCluster("c", EksClusterArgs(cluster_name="lab", region="eu-west-1", zones=["eu-west-1a", "eu-west-1b"],
                                         kubernetes_version="1.34"))
SpotGpuPool("a", SpotGpuPoolArgs(cluster=cluster, instance_types=["g5.xlarge"], max_size=2, disk_size_gib=300,
                                 tags={"team": "vision"}, node_group_args=NODE_GROUP_ARGS))
"""


def test_the_replace_rows_are_the_spec_marks_in_the_table_order() -> None:
    # each marked field feeds one EKS node group input, and the table lists them between the group's name and
    # cluster and the inputs no spec field feeds: the docs' replace table keeps its order
    marked = marked_inputs(AwsNodeSpec, "replaces")
    assert marked == ("nodeRoleArn", "subnetIds", "instanceTypes", "capacityType", "amiType")
    assert POOL_REPLACE_FIELDS[EKS_NODE_GROUP].fields[2:7] == marked
    # a change of any marked input renames the group (create-before-delete), a rolling one does not
    base = {f: "x" for f in marked}
    for f in marked:
        assert eks_node_group_name("lab-a-spot", base | {f: "y"}) != eks_node_group_name("lab-a-spot", base), f
    with pytest.raises(ValueError, match="not replacement-forcing"):
        eks_node_group_name("lab-a-spot", {"diskSizeGib": 1})


def test_one_spec_feeds_the_node_group_and_the_node_class() -> None:
    args = SpotGpuPoolArgs(cluster=FakeCluster(), instance_types=["g5.xlarge"], max_size=2, disk_size_gib=300)
    spec = gpu_node_spec("a", args)
    assert isinstance(spec, AwsNodeSpec) and spec.disk_size_gib == 300 and spec.disk_type == "gp3"
    assert spec.capacity_types == ("spot",)
    ebs = node_class_spec(spec, NODES)["blockDeviceMappings"][0]["ebs"]
    assert ebs["volumeSize"] == "300Gi" and ebs["volumeType"] == "gp3"
    # the capacity label is each group's: spot, on-demand, or none (a NodePool allowing both)
    assert spec.labels(True)["elastic-gpu.io/capacity"] == "spot"
    assert spec.labels(False)["elastic-gpu.io/capacity"] == "on-demand"
    assert "elastic-gpu.io/capacity" not in spec.labels(None)


def test_a_program_sets_a_node_group_input_the_library_has_no_setting_for(run_program) -> None:
    preview = run_program(
        PROGRAM.replace(
            "NODE_GROUP_ARGS",
            '{"node_repair_config": {"enabled": True}, "tags": {"cost-center": "42"}, '
            '"update_config": {"max_unavailable_percentage": 50}}',
        )
    )
    groups = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    assert len(groups) == 2
    for group in groups:
        assert group.inputs["nodeRepairConfig"] == {"enabled": True}
        assert group.inputs["updateConfig"] == {"maxUnavailablePercentage": 50}
        # the program's tags join the pool's and the autoscaler's node-template tags
        assert group.inputs["tags"]["cost-center"] == "42" and group.inputs["tags"]["team"] == "vision"
        assert any(k.startswith("k8s.io/cluster-autoscaler/node-template/") for k in group.inputs["tags"])
    lt = preview.of_type("aws:ec2/launchTemplate:LaunchTemplate")[0].inputs
    assert lt["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 300


def test_without_node_group_args_the_group_keeps_its_defaults(run_program) -> None:
    group = run_program(PROGRAM.replace("NODE_GROUP_ARGS", "None")).of_type("aws:eks/nodeGroup:NodeGroup")[0]
    assert "nodeRepairConfig" not in group.inputs
    assert group.inputs["updateConfig"] == {"maxUnavailable": 1}


def test_node_group_args_the_pool_owns_or_the_sdk_lacks_are_refused() -> None:
    args = SpotGpuPoolArgs(
        cluster=FakeCluster(),
        instance_types=["g5.xlarge"],
        max_size=2,
        node_group_args={"capacity_type": "ON_DEMAND", "labels": {}, "node_repair": True},
    )
    with pytest.raises(ConfigError) as exc:
        SpotGpuPool("a", args)
    msg = str(exc.value)
    assert (
        "SpotGpuPool 'a': SpotGpuPoolArgs.node_group_args: ['node_repair'] are not arguments of "
        "pulumi_aws.eks.NodeGroupArgs; allowed: [" in msg
    )
    assert "'node_repair_config'" in msg and "'capacity_type'" not in msg.split("allowed:")[1].split("]")[0]
    assert "node_group_args: ['capacity_type', 'labels'] are declared by the pool itself" in msg


def test_every_owned_input_is_a_node_group_argument() -> None:
    # a renamed SDK argument would leave the refusal guarding nothing
    assert set(inspect.signature(aws.eks.NodeGroupArgs.__init__).parameters) >= OWNED_NODE_GROUP_ARGS


def test_every_input_the_spec_marks_is_refused_in_node_group_args() -> None:
    # a program's node_group_args may not set an input the spec sets (its change would replace or roll the group
    # behind the name digest's back): each marked input, as its NodeGroupArgs keyword, is owned
    import re

    from elastic_gpu.node_marks import marks

    marked = {re.sub(r"(?<!^)([A-Z])", r"_\1", m.input.split(".")[0]).lower() for _, m in marks(AwsNodeSpec)}
    assert marked == {"node_role_arn", "subnet_ids", "instance_types", "capacity_type", "ami_type", "launch_template"}
    assert marked <= OWNED_NODE_GROUP_ARGS


def test_karpenter_refuses_node_group_args() -> None:
    args = SpotGpuPoolArgs(
        cluster=FakeCluster(), instance_types=["g5.xlarge"], max_size=2, node_group_args={"tags": {"a": "b"}}
    )
    problems = NODES.pool_problems("SpotGpuPool 'a': SpotGpuPoolArgs.", args)
    assert any("node_group_args: Karpenter makes this pool's nodes" in p for p in problems)
