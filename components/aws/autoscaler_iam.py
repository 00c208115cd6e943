"""The cluster-autoscaler's IAM role on EKS (IRSA) and its AWS flags."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from components.aws.asg_tags import auto_discovery_cluster_key, auto_discovery_flag
from components.aws.iam import irsa_trust_policy

if TYPE_CHECKING:
    from components.eks_cluster import EksCluster

#: kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md#iam-policy
#: ("full" policy): read-only actions on every resource ...
READ_ACTIONS = (
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeAutoScalingInstances",
    "autoscaling:DescribeLaunchConfigurations",
    "autoscaling:DescribeScalingActivities",
    "ec2:DescribeImages",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplateVersions",
    "ec2:GetInstanceTypesFromInstanceRequirements",
    "eks:DescribeNodegroup",
)
#: ... and the two mutating actions, restricted to this cluster's Auto Scaling groups.
MUTATING_ACTIONS = ("autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup")


def autoscaler_policy(cluster_name: str) -> str:
    """The policy document; the mutating actions only where the ASG is tagged as this cluster's."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Sid": "Describe", "Effect": "Allow", "Action": list(READ_ACTIONS), "Resource": "*"},
                {
                    "Sid": "ScaleOwnGroups",
                    "Effect": "Allow",
                    "Action": list(MUTATING_ACTIONS),
                    "Resource": "*",
                    "Condition": {
                        "StringEquals": {f"aws:ResourceTag/{auto_discovery_cluster_key(cluster_name)}": "owned"}
                    },
                },
            ],
        },
        indent=2,
    )


def build_autoscaler_role(
    name: str, *, cluster: EksCluster, namespace: str, service_account: str, parent: pulumi.Resource
) -> aws.iam.Role:
    opts = pulumi.ResourceOptions(parent=parent)
    trust = pulumi.Output.all(cluster.oidc_provider.arn, cluster.oidc_issuer_url).apply(
        lambda a: irsa_trust_policy(a[0], a[1], namespace, service_account)
    )
    role = aws.iam.Role(f"{name}-role", assume_role_policy=trust, tags=cluster.args.tags, opts=opts)
    aws.iam.RolePolicy(f"{name}-policy", role=role.id, policy=autoscaler_policy(cluster.args.cluster_name), opts=opts)
    return role


def aws_flags(cluster: EksCluster) -> list[str]:
    return ["--cloud-provider=aws", auto_discovery_flag(cluster.args.cluster_name)]
