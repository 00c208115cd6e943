"""The policy pack's rules for EKS's own objects (its provider's `pack()`, elastic_gpu/provider.py), and its
parts of the cloud-neutral rules (elastic_gpu/tools/policy/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pulumi_policy import ResourceValidationArgs

from elastic_gpu.tools.aws.pack.karpenter import karpenter_interruption_handling
from elastic_gpu.tools.aws.pack.node_groups import (
    eks_autoscaler_asg_tags,
    eks_gpu_groups_autoscaled,
    gpu_node_group_one_model,
)
from elastic_gpu.tools.aws.pack.security import (
    eks_irsa_trusts_an_oidc_provider,
    eks_launch_template_imdsv2,
    node_disks_encrypted,
    public_node_ips,
)
from elastic_gpu.tools.policy.pack_parts import PackRules

if TYPE_CHECKING:
    from elastic_gpu.tools.policy.pack_parts import Policy

#: (the cloud-neutral policy each follows in the pack, or None for after all of them; the policy), in order:
#: the Rules table of policy/README.md (elastic_gpu.tools.policy.ALL_POLICIES)
POLICIES: list[tuple[str | None, Policy]] = [
    ("spot-pool-is-spot", eks_autoscaler_asg_tags),  # 4
    ("autoscaler-owned-size-ignored", node_disks_encrypted),  # 7
    ("autoscaler-owned-size-ignored", eks_launch_template_imdsv2),  # 7
    ("gpu-pool-max-size-cap", eks_gpu_groups_autoscaled),  # 14: the autoscaler lists its groups
    ("spot-gpu-pool-fallback-promise", gpu_node_group_one_model),  # 16: one GPU model per labelled group
    ("spot-gpu-pool-fallback-promise", eks_irsa_trusts_an_oidc_provider),  # 17: IRSA needs an OIDC provider
    (None, karpenter_interruption_handling),  # EKS Karpenter has its interruption queue
]

#: AWS resources the stacks declare that bill or hold cost and take `tags`, even when a program omits them.
TAGGABLE = (
    "aws:eks/cluster:Cluster",
    "aws:eks/nodeGroup:NodeGroup",
    "aws:ec2/launchTemplate:LaunchTemplate",
    "aws:ec2/vpc:Vpc",
    "aws:ec2/subnet:Subnet",
    "aws:ec2/natGateway:NatGateway",
    "aws:ec2/eip:Eip",
    "aws:ec2/internetGateway:InternetGateway",
    "aws:ec2/routeTable:RouteTable",
    "aws:iam/role:Role",
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
)


def _tags(args: ResourceValidationArgs) -> tuple[str, set[str]]:
    """Its own tags and its provider's defaultTags (which the AWS provider adds to every resource)."""
    keys = set(args.props.get("tags") or {})
    if args.provider is not None:
        keys |= set(((args.provider.props or {}).get("defaultTags") or {}).get("tags") or {})
    return "tags", keys


#: cost-allocation-tags' EKS part (tools/policy/cost_rules.py): resource type -> (property path, its tag keys)
COST_TAGS = dict.fromkeys(TAGGABLE, _tags)

__all__ = ["COST_TAGS", "POLICIES", "public_node_ips"]


#: The rules above as the tools protocol's record (elastic_gpu/tools/policy/pack_parts.py PackRules).
RULES = PackRules(policies=POLICIES, public_node_ips=public_node_ips, cost_tags=COST_TAGS)
