"""EKS managed node groups for GeneralPool and SpotGpuPool.

One function builds every node group (launch template, node group, ASG tags),
so general, spot and fallback groups differ only in the arguments they pass.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.aws.asg_tags import managed_node_group_asg_tags, managed_node_group_resource_tags
from elastic_gpu.aws.node_spec import AwsNodeSpec
from elastic_gpu.aws.replacement import POOL_NAME_FIELD, POOL_REPLACE_FIELDS
from elastic_gpu.cluster_handle import EksNodeSecurityGroups
from elastic_gpu.pool_names import pool_name
from elastic_gpu.scheduling import API_TAINT_EFFECT

if TYPE_CHECKING:
    from elastic_gpu.cluster_handle import EksClusterHandle

#: amiType per (AMI family, GPU?) from the EKS CreateNodegroup amiType enum.
AMI_TYPES = {
    ("al2023", False): "AL2023_x86_64_STANDARD",
    ("al2023", True): "AL2023_x86_64_NVIDIA",
    ("bottlerocket", False): "BOTTLEROCKET_x86_64",
    ("bottlerocket", True): "BOTTLEROCKET_x86_64_NVIDIA",
}
AMI_TYPE_CUSTOM = "CUSTOM"
#: The volume that holds images and pods: AL2023's root, Bottlerocket's data volume.
DATA_DEVICE = {"al2023": "/dev/xvda", "bottlerocket": "/dev/xvdb"}
#: Bottlerocket's NVIDIA variants run their own device plugin (eksctl skips NVIDIA's there).
AMI_FAMILIES_WITH_DEVICE_PLUGIN = frozenset({"bottlerocket"})

CAPACITY_SPOT = "SPOT"
CAPACITY_ON_DEMAND = "ON_DEMAND"
#: A managed node group of a Capacity Block for ML (EKS CreateNodegroup capacityType; its launch template
#: must ask for market type `capacity-block` and target the block: EKS user guide capacity-blocks-mng.md).
CAPACITY_BLOCK = "CAPACITY_BLOCK"
#: LaunchTemplate instance_market_options.market_type of a Capacity Block (EC2 RequestLaunchTemplateData
#: InstanceMarketOptions.MarketType: spot | capacity-block).
MARKET_CAPACITY_BLOCK = "capacity-block"
#: IMDSv2 only, one hop: pods (IRSA) cannot borrow the node role through the metadata service.
IMDS_HOP_LIMIT = 1
#: EKS node group names: at most 63 characters (CreateNodegroup; pulumi-aws eks.NodeGroup docs).
MAX_NODE_GROUP_NAME = 63


def eks_node_group_name(base: str, replacing: dict[str, object], keep: str = "") -> str:
    """`<base>-<digest>`: the digest covers the base (`<cluster>-<pool>...`) and the value of every input
    that forces a replacement (elastic_gpu.tools.replacement.POOL_REPLACE_FIELDS, the one table: a field we do
    not set counts as None), so such a change renames the group and EKS creates the new group before the
    old one is deleted; under the same name the provider would have to delete first. The priority regex
    and the autoscaler's --nodes list follow the name."""
    fields = [f for f in POOL_REPLACE_FIELDS[EKS_NODE_GROUP].fields if f != POOL_NAME_FIELD[EKS_NODE_GROUP]]
    if unknown := set(replacing) - set(fields):
        raise ValueError(f"not replacement-forcing fields of {EKS_NODE_GROUP}: {sorted(unknown)}")
    forcing = {f: replacing.get(f) for f in fields}
    if isinstance(subnets := forcing.get("subnetIds"), list):
        forcing["subnetIds"] = sorted(subnets)  # a set in the provider: order is no change
    # `keep`: the end of a per-zone group's name (`-<kind>-<zone>`), which a long name is cut before.
    return pool_name(base, forcing, max_len=MAX_NODE_GROUP_NAME, keep=keep)


def asg_name_regex(node_group_name: str) -> str:
    """Matches the Auto Scaling group EKS creates for a node group: `eks-<name>-<uuid>`."""
    return f"^eks-{re.escape(node_group_name)}-[0-9a-f-]+$"


@dataclass(frozen=True)
class NodeGroupSpec:
    """One managed node group: the pool's node spec (aws/node_spec.py) and what is this group's own, all of it
    known before deployment."""

    #: readable stem `<cluster>-<pool>-<kind>[-<zone>]` (an Output, as the cluster's name may be);
    #: the EKS name adds a digest (`node_group_name`)
    base_name: pulumi.Input[str]
    node: AwsNodeSpec
    #: the group's capacityType (CAPACITY_SPOT, CAPACITY_ON_DEMAND, CAPACITY_BLOCK)
    capacity_type: str
    zones: list[str]
    min_size: int
    max_size: int
    #: the end of `base_name` a too long name is cut before (`-<kind>-<zone>` of a per-zone group)
    name_tail: str = ""
    #: the EC2 capacity reservation its launch template targets (an ODCR, or the Capacity Block of a
    #: CAPACITY_BLOCK group); None: open capacity
    capacity_reservation_id: str | None = None

    @property
    def labels(self) -> dict[str, str]:
        return self.node.labels(self.capacity_type == CAPACITY_SPOT)

    @property
    def ami_type(self) -> str:
        # What EKS reports for a custom AMI (DescribeNodegroup amiType); it adds no bootstrap then.
        return AMI_TYPE_CUSTOM if self.node.image_id is not None else AMI_TYPES[(self.node.ami_family, self.node.gpu)]


@dataclass(frozen=True)
class BuiltNodeGroup:
    #: the EKS name, `<base>-<digest>` (eks_node_group_name)
    name: pulumi.Output[str]
    node_group: aws.eks.NodeGroup
    launch_template: aws.ec2.LaunchTemplate
    #: the Auto Scaling group EKS made for the node group
    asg_name: pulumi.Output[str]


def _handle_security_groups(cluster: EksClusterHandle) -> pulumi.Output[list[str]] | None:
    """The handle's node security groups, each once (a pulumi-eks cluster without groups of its own reports EKS's
    cluster security group as its node group too), if it has any; None: EKS puts the nodes in its cluster
    security group (a launch template that names groups replaces it)."""
    if not isinstance(cluster, EksNodeSecurityGroups):
        return None
    return pulumi.Output.all(*cluster.node_security_group_ids).apply(lambda ids: list(dict.fromkeys(ids)))


def build_node_group(
    name: str,
    spec: NodeGroupSpec,
    *,
    cluster: EksClusterHandle,
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> BuiltNodeGroup:
    """A launch template, the managed node group (carrying the autoscaler's node-template resources
    tags), and node-template tags on its ASG only where DescribeNodegroup cannot supply them (asg_tags.py).

    EKS itself tags a managed group's ASG with the auto-discovery tags
    (`k8s.io/cluster-autoscaler/enabled`, `k8s.io/cluster-autoscaler/<cluster>`); declaring them
    again would strip EKS's own tags when a pool is removed, so only the node-template tags are ours.
    """
    opts = pulumi.ResourceOptions(parent=parent)
    node = spec.node
    # The launch template's id is part of the node group's name (its digest), so the template names the
    # group's stem, not its full name.
    instance_tags = {**tags, "Name": spec.base_name}
    launch_template = aws.ec2.LaunchTemplate(
        f"{name}-lt",
        # One apply, not a concat: each part of a concat is an Output of its own (hundreds per stack).
        description=pulumi.Output.from_input(spec.base_name).apply(lambda base: f"elastic-gpu node group {base}"),
        block_device_mappings=[
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=DATA_DEVICE[node.ami_family],
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_size=node.disk_size_gib,
                    volume_type=node.disk_type,
                    encrypted="true",
                    delete_on_termination="true",
                ),
            )
        ],
        image_id=node.image_id,
        user_data=node.user_data,
        vpc_security_group_ids=list(node.security_group_ids or ()) or _handle_security_groups(cluster),
        capacity_reservation_specification=_reservation_target(spec),
        instance_market_options=_market_options(spec),
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
    subnet_ids = [node.subnet_ids.get(z, cluster.subnet_ids[z]) for z in spec.zones]
    node_role_arn = cluster.node_role_arn if node.node_role_arn is None else node.node_role_arn
    node_group_name = pulumi.Output.all(
        spec.base_name, cluster.cluster_name, node_role_arn, launch_template.id, *subnet_ids
    ).apply(
        lambda a: eks_node_group_name(
            a[0],
            {
                "clusterName": a[1],
                "nodeRoleArn": a[2],
                "subnetIds": list(a[4:]),
                "instanceTypes": list(node.instance_types),
                "capacityType": spec.capacity_type,
                "amiType": spec.ami_type,
                "launchTemplate.id": a[3],
            },
            keep=spec.name_tail,
        )
    )
    # The program's own inputs (node_group_args, checked in pools.node_group_args_problems), under the pool's:
    # its tags join the pool's, its update_config replaces the default one.
    own = dict(node.node_group_args)
    own_tags = own.pop("tags", None) or {}
    update_config = own.pop("update_config", None) or aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1)
    node_group = aws.eks.NodeGroup(
        name,
        **own,
        cluster_name=cluster.cluster_name,
        node_group_name=node_group_name,
        node_role_arn=node_role_arn,
        # With a custom AMI, CreateNodegroup takes neither amiType nor version ("or the node group deployment
        # will fail", EKS API reference): the AMI decides both.
        version=cluster.kubernetes_version if node.image_id is None else None,
        subnet_ids=subnet_ids,
        instance_types=list(node.instance_types),
        capacity_type=spec.capacity_type,
        ami_type=spec.ami_type if node.image_id is None else None,
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(
            desired_size=spec.min_size, min_size=spec.min_size, max_size=spec.max_size
        ),
        labels=spec.labels,
        taints=[
            aws.eks.NodeGroupTaintArgs(key=t.key, value=t.value, effect=API_TAINT_EFFECT[t.effect]) for t in node.taints
        ],
        launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
            id=launch_template.id, version=launch_template.latest_version.apply(str)
        ),
        update_config=update_config,
        tags={**tags, **own_tags, **managed_node_group_resource_tags(dict(node.template_resources))},
        opts=pulumi.ResourceOptions(
            parent=parent,
            # The autoscaler owns the current size; `pulumi up` must never reset it.
            ignore_changes=["scalingConfig.desiredSize"],
            # A change that forces a replacement also renames the group: create first, then delete.
            delete_before_replace=False,
            # The node role's policy attachments (before the group, and on delete after it: EKS needs them
            # to remove instances and ENIs) and the route out for image pulls.
            depends_on=cluster.node_dependencies,
        ),
    )
    asg_name = node_group.resources.apply(_asg_name)
    asg_tags = managed_node_group_asg_tags(taints=list(node.taints))
    for key, value in asg_tags.items():
        aws.autoscaling.Tag(
            f"{name}-{_slug(key)}",
            autoscaling_group_name=asg_name,
            tag=aws.autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
            opts=opts,
        )
    return BuiltNodeGroup(node_group_name, node_group, launch_template, asg_name)


def _reservation_target(spec: NodeGroupSpec) -> aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs | None:
    """The group's reservation as its launch template's target (EC2 LaunchTemplateCapacityReservationSpecification
    Request.CapacityReservationTarget): its nodes launch into it; None: open capacity."""
    if spec.capacity_reservation_id is None:
        return None
    return aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
        capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
            capacity_reservation_id=spec.capacity_reservation_id
        )
    )


def _market_options(spec: NodeGroupSpec) -> aws.ec2.LaunchTemplateInstanceMarketOptionsArgs | None:
    """A Capacity Block's market type `capacity-block`, which EKS requires of a CAPACITY_BLOCK group's launch
    template (EKS user guide capacity-blocks-mng.md); None for every other group."""
    if spec.capacity_type != CAPACITY_BLOCK:
        return None
    return aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type=MARKET_CAPACITY_BLOCK)


def _slug(tag_key: str) -> str:
    """A short, stable resource-name suffix for an ASG tag key."""
    short = tag_key.removeprefix("k8s.io/cluster-autoscaler/").replace("node-template/", "")
    return re.sub(r"[^a-z0-9]+", "-", short.lower()).strip("-")


def _asg_name(resources: Sequence[aws.eks.outputs.NodeGroupResource]) -> str:
    """The Auto Scaling group EKS made for a managed node group: one per group."""
    groups = resources[0].autoscaling_groups
    name = groups[0].name if groups else None
    assert name is not None, "EKS makes one Auto Scaling group per managed node group"
    return name
