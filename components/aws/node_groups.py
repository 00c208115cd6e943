"""EKS managed node groups for GeneralPool and SpotGpuPool.

One function builds every node group (launch template, node group, ASG tags),
so general, spot and fallback groups differ only in the arguments they pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from elastic_gpu.aws.asg_tags import auto_discovery_tag_items, node_template_tags
from elastic_gpu.scheduling import API_TAINT_EFFECT, Taint

if TYPE_CHECKING:
    from elastic_gpu.cluster_handle import EksClusterHandle

#: amiType per (AMI family, GPU?) from the EKS CreateNodegroup amiType enum.
AMI_TYPES = {
    ("al2023", False): "AL2023_x86_64_STANDARD",
    ("al2023", True): "AL2023_x86_64_NVIDIA",
    ("bottlerocket", False): "BOTTLEROCKET_x86_64",
    ("bottlerocket", True): "BOTTLEROCKET_x86_64_NVIDIA",
}
#: The volume that holds images and pods: AL2023's root, Bottlerocket's data volume.
DATA_DEVICE = {"al2023": "/dev/xvda", "bottlerocket": "/dev/xvdb"}
#: Bottlerocket's NVIDIA variants run their own device plugin (eksctl skips NVIDIA's there).
AMI_FAMILIES_WITH_DEVICE_PLUGIN = frozenset({"bottlerocket"})

CAPACITY_SPOT = "SPOT"
CAPACITY_ON_DEMAND = "ON_DEMAND"
#: IMDSv2 only, one hop: pods (IRSA) cannot borrow the node role through the metadata service.
IMDS_HOP_LIMIT = 1


@dataclass(frozen=True)
class NodeGroupSpec:
    """Everything one managed node group needs, all of it known before deployment."""

    #: `<cluster>-<pool>...`: an Output, as the cluster's name may be
    node_group_name: pulumi.Input[str]
    capacity_type: str
    instance_types: list[str]
    zones: list[str]
    min_size: int
    max_size: int
    labels: dict[str, str]
    taints: list[Taint]
    ami_family: str
    gpu: bool
    disk_size_gib: int
    #: extra node-template resources for scale-from-zero, e.g. {"nvidia.com/gpu": "1"}
    template_resources: dict[str, str]

    @property
    def asg_name_regex(self) -> pulumi.Output[str]:
        """Matches the Auto Scaling group EKS creates for this group: `eks-<name>-<uuid>`."""
        return pulumi.Output.from_input(self.node_group_name).apply(lambda n: f"^eks-{re.escape(n)}-[0-9a-f-]+$")


@dataclass(frozen=True)
class BuiltNodeGroup:
    node_group: aws.eks.NodeGroup
    launch_template: aws.ec2.LaunchTemplate
    #: the Auto Scaling group EKS made for the node group
    asg_name: pulumi.Output[str]


def build_node_group(
    name: str,
    spec: NodeGroupSpec,
    *,
    cluster: EksClusterHandle,
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> BuiltNodeGroup:
    """A launch template, the managed node group, and the autoscaler tags on its ASG."""
    opts = pulumi.ResourceOptions(parent=parent)
    instance_tags = {**tags, "Name": spec.node_group_name}
    launch_template = aws.ec2.LaunchTemplate(
        f"{name}-lt",
        description=pulumi.Output.concat("elastic-gpu node group ", spec.node_group_name),
        block_device_mappings=[
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=DATA_DEVICE[spec.ami_family],
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_size=spec.disk_size_gib,
                    volume_type="gp3",
                    encrypted="true",
                    delete_on_termination="true",
                ),
            )
        ],
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_endpoint="enabled",
            http_tokens="required",
            http_put_response_hop_limit=IMDS_HOP_LIMIT,
        ),
        tag_specifications=[
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=instance_tags)
            for kind in ("instance", "volume")
        ],
        tags=tags,
        opts=opts,
    )
    node_group = aws.eks.NodeGroup(
        name,
        cluster_name=cluster.cluster_name,
        node_group_name=spec.node_group_name,
        node_role_arn=cluster.node_role_arn,
        version=cluster.kubernetes_version,
        subnet_ids=[cluster.subnet_ids[z] for z in spec.zones],
        instance_types=spec.instance_types,
        capacity_type=spec.capacity_type,
        ami_type=AMI_TYPES[(spec.ami_family, spec.gpu)],
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(
            desired_size=spec.min_size, min_size=spec.min_size, max_size=spec.max_size
        ),
        labels=spec.labels,
        taints=[
            aws.eks.NodeGroupTaintArgs(key=t.key, value=t.value, effect=API_TAINT_EFFECT[t.effect]) for t in spec.taints
        ],
        launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
            id=launch_template.id, version=launch_template.latest_version.apply(str)
        ),
        update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
        tags=tags,
        opts=pulumi.ResourceOptions(
            parent=parent,
            # The autoscaler owns the current size; `pulumi up` must never reset it.
            ignore_changes=["scalingConfig.desiredSize"],
            depends_on=cluster.node_dependencies,
        ),
    )
    asg_name = node_group.resources.apply(lambda rs: rs[0].autoscaling_groups[0].name)
    asg_tags = auto_discovery_tag_items(cluster.cluster_name) + [
        (_slug(key), key, value)
        for key, value in node_template_tags(
            labels=spec.labels, taints=spec.taints, resources=spec.template_resources
        ).items()
    ]
    for suffix, key, value in asg_tags:
        aws.autoscaling.Tag(
            f"{name}-{suffix}",
            autoscaling_group_name=asg_name,
            tag=aws.autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
            opts=opts,
        )
    return BuiltNodeGroup(node_group, launch_template, asg_name)


def _slug(tag_key: str) -> str:
    """A short, stable resource-name suffix for an ASG tag key."""
    short = tag_key.removeprefix("k8s.io/cluster-autoscaler/").replace("node-template/", "")
    return re.sub(r"[^a-z0-9]+", "-", short.lower()).strip("-")
