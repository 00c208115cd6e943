"""AWS's own settings of a GPU pool and of the cluster (merged into elastic_gpu.settings' sections; refused on
other clouds)."""

from __future__ import annotations

from typing import ClassVar, Literal

from elastic_gpu.settings_base import CloudOptions

#: The EKS-optimised AMI family of a GPU pool's nodes.
AmiFamily = Literal["al2023", "bottlerocket"]
DEFAULT_AMI_FAMILY: AmiFamily = "al2023"


#: NAT gateways for an EKS VPC: one per zone (a zone failure cuts no other zone's egress) or one in total.
NatGateways = Literal["perZone", "single"]
DEFAULT_NAT_GATEWAYS: NatGateways = "perZone"
#: The EC2 Spot service-linked role under Karpenter (elastic_gpu.aws.karpenter.spot_role).
SpotRoleMode = Literal["auto", "create", "exists"]
DEFAULT_SPOT_ROLE_MODE: SpotRoleMode = "auto"


class AwsClusterOptions(CloudOptions):
    cloud: ClassVar[str] = "aws"

    nat_gateways: NatGateways = DEFAULT_NAT_GATEWAYS
    """AWS only: `perZone` (default: each zone keeps egress when another zone fails) or `single` (dev)."""
    ecr_endpoints: bool = False
    """AWS only: ECR interface endpoints (api, dkr) so image pulls skip the NAT (pays off with heavy pulls
    such as multi-GB CUDA images), and the EKS one (the autoscaler's eks:DescribeNodegroup); default
    false. The S3 gateway endpoint (layers) is always there."""
    spot_service_linked_role: SpotRoleMode = DEFAULT_SPOT_ROLE_MODE
    """AWS with provisioner karpenter only: the account's EC2 Spot service-linked role, without which Karpenter
    launches no spot node. `auto` (default): created unless the preview finds one this stack did not create,
    which is then used as it is; `create`: always declared (`up` fails where the account has one); `exists`:
    never declared. A declared role is kept on `pulumi destroy` (other stacks may use it)."""


class AwsGpuPoolOptions(CloudOptions):
    cloud: ClassVar[str] = "aws"

    ami_family: AmiFamily = DEFAULT_AMI_FAMILY
    """AWS only: the EKS-optimised AMI family of the nodes, "al2023" (default) or "bottlerocket" (ships its own
    device plugin)."""
