"""AWS's own settings of a GPU pool and of the cluster (merged into elastic_gpu.settings' sections; refused on
other clouds)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from elastic_gpu.settings.base import CloudOptions

#: The EKS-optimised AMI family of a GPU pool's nodes.
AmiFamily = Literal["al2023", "bottlerocket"]
DEFAULT_AMI_FAMILY: AmiFamily = "al2023"


#: NAT gateways for an EKS VPC: one per zone (a zone failure cuts no other zone's egress) or one in total.
NatGateways = Literal["perZone", "single"]
DEFAULT_NAT_GATEWAYS: NatGateways = "perZone"
#: The EC2 Spot service-linked role under Karpenter (elastic_gpu.aws.karpenter.spot_role).
SpotRoleMode = Literal["auto", "create", "exists"]
DEFAULT_SPOT_ROLE_MODE: SpotRoleMode = "auto"


class AwsNetworkOptions(CloudOptions):
    """AWS's own settings of the VPC an EKS cluster creates: the stack file's `cluster` and EksClusterArgs."""

    cloud: ClassVar[str] = "aws"

    nat_gateways: NatGateways = DEFAULT_NAT_GATEWAYS
    """AWS only: `perZone` (default: each zone keeps egress when another zone fails) or `single` (dev)."""
    ecr_endpoints: bool = False
    """AWS only: ECR interface endpoints (api, dkr) so image pulls skip the NAT (pays off with heavy pulls
    such as multi-GB CUDA images), and the EKS one (the autoscaler's eks:DescribeNodegroup for scale-from-zero
    stays in the VPC); default false. The S3 gateway endpoint (layers) is always there."""


class KarpenterOptions(CloudOptions):
    """Karpenter's settings (AWS): the stack file's `cluster` and KarpenterArgs."""

    cloud: ClassVar[str] = "aws"

    spot_service_linked_role: SpotRoleMode = DEFAULT_SPOT_ROLE_MODE
    """AWS with provisioner karpenter only: the account's EC2 Spot service-linked role (AWSServiceRoleForEC2Spot),
    without which Karpenter launches no spot node. `auto` (default): created unless the preview finds one this
    stack did not create, which is then used as it is; `create`: always declared (`up` fails where the account
    has one); `exists`: never declared (elastic_gpu.aws.karpenter.spot_role). A declared role is kept on
    `pulumi destroy` (other stacks may use it)."""


class AwsClusterOptions(KarpenterOptions, AwsNetworkOptions):
    """AWS's own `cluster` settings: its network's (EksClusterArgs take them too), then Karpenter's (KarpenterArgs
    take them too)."""

    cloud: ClassVar[str] = "aws"


class AwsGpuPoolOptions(CloudOptions):
    cloud: ClassVar[str] = "aws"

    ami_family: AmiFamily = DEFAULT_AMI_FAMILY
    """AWS only: the EKS-optimised AMI family of the nodes, "al2023" (default) or "bottlerocket" (ships its own
    device plugin)."""


#: The inputs of an EKS managed node group the library declares itself: a program's `node_group_args` may not
#: set them (its name digest, sizes, capacity, taints and labels are the pool's; pulumi-eks's
#: ManagedNodeGroupOptions likewise omits cluster and the node role's wiring).
OWNED_NODE_GROUP_ARGS = frozenset(
    {
        "cluster_name",
        "node_group_name",
        "node_group_name_prefix",
        "node_role_arn",
        "subnet_ids",
        "instance_types",
        "capacity_type",
        "ami_type",
        "scaling_config",
        "labels",
        "taints",
        "launch_template",
        "version",
        "release_version",
    }
)


class AwsGpuPoolArgsOptions(CloudOptions):
    """What a program sets beyond the stack file's AWS settings: provider inputs the library has no setting for."""

    cloud: ClassVar[str] = "aws"

    node_group_args: dict[str, Any] | None = None
    """AWS with the cluster-autoscaler only: keyword arguments of `pulumi_aws.eks.NodeGroupArgs` merged over
    what the pool's node groups declare (e.g. `{"tags": {...}, "update_config": {"max_unavailable_percentage":
    50}, "node_repair_config": {"enabled": True}}`); `tags` are added to the pool's. The inputs the library owns
    (name, sizes, capacity, instance types, taints, labels, launch template, subnets, role) are refused."""
