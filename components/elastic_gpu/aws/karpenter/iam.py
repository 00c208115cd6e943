"""The Karpenter controller's IAM policy, its IRSA role, the node role and the node role's access entry.

The policy is upstream's, statement for statement: the six managed policies of the getting-started
CloudFormation template (website/content/en/docs/getting-started/getting-started-with-karpenter/
cloudformation.yaml at v1.14.1: NodeLifecyclePolicy, IAMIntegrationPolicy, EKSIntegrationPolicy,
InterruptionPolicy, ZonalShiftPolicy, ResourceDiscoveryPolicy), with its `${...}` filled in for this
cluster: its name in every tag condition, its ARN, the interruption queue's ARN, and the node role as the
only role it may pass. Partition and account come from the node role's ARN, so no lookup is needed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_aws as aws

from elastic_gpu.aws import ACCESS_ENTRY_MODES
from elastic_gpu.aws.iam import checked_irsa_trust_policy, role_with_policies, service_trust_policy
from elastic_gpu.aws.karpenter.release import NAMESPACE, SERVICE_ACCOUNT
from elastic_gpu.errors import ConfigError

if TYPE_CHECKING:
    from elastic_gpu.cluster_handle import EksClusterHandle

#: The node role's managed policies (cloudformation.yaml KarpenterNodeRole.ManagedPolicyArns at v1.14.1:
#: upstream moved from AmazonEC2ContainerRegistryReadOnly to the narrower ...PullOnly) plus nothing else.
NODE_POLICIES = (
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
    "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
)
#: Upstream's six managed policies, in the template's order (each becomes one aws.iam.Policy).
POLICY_NAMES = (
    "NodeLifecyclePolicy",
    "IAMIntegrationPolicy",
    "EKSIntegrationPolicy",
    "InterruptionPolicy",
    "ZonalShiftPolicy",
    "ResourceDiscoveryPolicy",
)
#: Nodes Karpenter launches join through an access entry of this type (EKS CreateAccessEntry `type`).
ACCESS_ENTRY_TYPE = "EC2_LINUX"


def partition_and_account(role_arn: str) -> tuple[str, str]:
    """`arn:<partition>:iam::<account>:role/<name>` -> (partition, account)."""
    parts = role_arn.split(":")
    return parts[1], parts[4]


def _policy_json(policy_name: str) -> Callable[[dict[str, dict[str, Any]]], str]:
    """The JSON of one of the controller's policy documents (controller_policies)."""
    return lambda documents: json.dumps(documents[policy_name], indent=2)


def controller_policies(cluster: str, region: str, node_role_arn: str, queue_arn: str) -> dict[str, dict[str, Any]]:
    """Upstream's six policy documents for this cluster, by their CloudFormation resource name."""
    partition, account = partition_and_account(node_role_arn)
    ec2 = f"arn:{partition}:ec2:{region}"
    cluster_arn = f"arn:{partition}:eks:{region}:{account}:cluster/{cluster}"
    profiles = f"arn:{partition}:iam::{account}:instance-profile/*"
    owned = {f"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"}
    request_owned = {
        f"aws:RequestTag/kubernetes.io/cluster/{cluster}": "owned",
        "aws:RequestTag/eks:eks-cluster-name": cluster,
    }
    created = [f"{ec2}:*:{r}/*" for r in ("fleet", "instance", "volume", "network-interface", "launch-template")]
    created.append(f"{ec2}:*:spot-instances-request/*")
    region_tag = {"aws:ResourceTag/topology.kubernetes.io/region": region}

    def doc(*statements: dict[str, Any]) -> dict[str, Any]:
        return {"Version": "2012-10-17", "Statement": list(statements)}

    return {
        "NodeLifecyclePolicy": doc(
            {
                "Sid": "AllowScopedEC2InstanceAccessActions",
                "Effect": "Allow",
                "Resource": [
                    f"{ec2}::image/*",
                    f"{ec2}::snapshot/*",
                    *(
                        f"{ec2}:*:{r}/*"
                        for r in ("security-group", "subnet", "capacity-reservation", "placement-group")
                    ),
                ],
                "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
            },
            {
                "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
                "Effect": "Allow",
                "Resource": f"{ec2}:*:launch-template/*",
                "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
                "Condition": {"StringEquals": owned, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}},
            },
            {
                "Sid": "AllowScopedEC2InstanceActionsWithTags",
                "Effect": "Allow",
                "Resource": created,
                "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
                "Condition": {
                    "StringEquals": request_owned,
                    "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                },
            },
            {
                "Sid": "AllowScopedResourceCreationTagging",
                "Effect": "Allow",
                "Resource": created,
                "Action": "ec2:CreateTags",
                "Condition": {
                    "StringEquals": {
                        **request_owned,
                        "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
                    },
                    "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                },
            },
            {
                "Sid": "AllowScopedResourceTagging",
                "Effect": "Allow",
                "Resource": f"{ec2}:*:instance/*",
                "Action": "ec2:CreateTags",
                "Condition": {
                    "StringEquals": owned,
                    "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
                    "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": cluster},
                    "ForAllValues:StringEquals": {
                        "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                    },
                },
            },
            {
                "Sid": "AllowScopedDeletion",
                "Effect": "Allow",
                "Resource": [f"{ec2}:*:instance/*", f"{ec2}:*:launch-template/*"],
                "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
                "Condition": {"StringEquals": owned, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}},
            },
        ),
        "IAMIntegrationPolicy": doc(
            {
                "Sid": "AllowPassingInstanceRole",
                "Effect": "Allow",
                "Resource": node_role_arn,
                "Action": "iam:PassRole",
                "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}},
            },
            {
                "Sid": "AllowScopedInstanceProfileCreationActions",
                "Effect": "Allow",
                "Resource": profiles,
                "Action": ["iam:CreateInstanceProfile"],
                "Condition": {
                    "StringEquals": {**request_owned, "aws:RequestTag/topology.kubernetes.io/region": region},
                    "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                },
            },
            {
                "Sid": "AllowScopedInstanceProfileTagActions",
                "Effect": "Allow",
                "Resource": profiles,
                "Action": ["iam:TagInstanceProfile"],
                "Condition": {
                    "StringEquals": {
                        **owned,
                        **region_tag,
                        **request_owned,
                        "aws:RequestTag/topology.kubernetes.io/region": region,
                    },
                    "StringLike": {
                        "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
                        "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*",
                    },
                },
            },
            {
                "Sid": "AllowScopedInstanceProfileActions",
                "Effect": "Allow",
                "Resource": profiles,
                "Action": [
                    "iam:AddRoleToInstanceProfile",
                    "iam:RemoveRoleFromInstanceProfile",
                    "iam:DeleteInstanceProfile",
                ],
                "Condition": {
                    "StringEquals": {**owned, **region_tag},
                    "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                },
            },
        ),
        "EKSIntegrationPolicy": doc(
            {
                "Sid": "AllowAPIServerEndpointDiscovery",
                "Effect": "Allow",
                "Resource": cluster_arn,
                "Action": "eks:DescribeCluster",
            }
        ),
        "InterruptionPolicy": doc(
            {
                "Sid": "AllowInterruptionQueueActions",
                "Effect": "Allow",
                "Resource": queue_arn,
                "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
            }
        ),
        "ZonalShiftPolicy": doc(
            {
                "Sid": "AllowZonalShiftStatusReadOnly",
                "Effect": "Allow",
                "Resource": "*",
                "Action": ["arc-zonal-shift:GetManagedResource"],
                "Condition": {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": cluster_arn}},
            }
        ),
        "ResourceDiscoveryPolicy": doc(
            {
                "Sid": "AllowRegionalReadActions",
                "Effect": "Allow",
                "Resource": "*",
                "Action": [
                    "ec2:DescribeCapacityReservations",
                    "ec2:DescribeImages",
                    "ec2:DescribeInstances",
                    "ec2:DescribeInstanceStatus",
                    "ec2:DescribeInstanceTypeOfferings",
                    "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplates",
                    "ec2:DescribePlacementGroups",
                    "ec2:DescribeSecurityGroups",
                    "ec2:DescribeSpotPriceHistory",
                    "ec2:DescribeSubnets",
                ],
                "Condition": {"StringEquals": {"aws:RequestedRegion": region}},
            },
            {
                "Sid": "AllowSSMReadActions",
                "Effect": "Allow",
                "Resource": f"arn:{partition}:ssm:{region}::parameter/aws/service/*",
                "Action": "ssm:GetParameter",
            },
            {"Sid": "AllowPricingReadActions", "Effect": "Allow", "Resource": "*", "Action": "pricing:GetProducts"},
            {
                "Sid": "AllowUnscopedInstanceProfileListAction",
                "Effect": "Allow",
                "Resource": "*",
                "Action": "iam:ListInstanceProfiles",
            },
            {
                "Sid": "AllowInstanceProfileReadActions",
                "Effect": "Allow",
                "Resource": profiles,
                "Action": "iam:GetInstanceProfile",
            },
        ),
    }


def build_node_role(
    name: str, cluster: EksClusterHandle, parent: pulumi.Resource
) -> tuple[aws.iam.Role, list[pulumi.Resource]]:
    """The role Karpenter's nodes run as (its own: a managed node group's role gets an access entry from EKS,
    and a second entry for the same principal would be refused) and its EC2_LINUX access entry."""
    role, attachments = role_with_policies(
        f"{name}-node-role",
        assume_role_policy=service_trust_policy("ec2.amazonaws.com"),
        policy_arns=NODE_POLICIES,
        tags=cluster.tags,
        parent=parent,
    )
    entry = aws.eks.AccessEntry(
        f"{name}-node-access",
        cluster_name=_admitting_cluster(f"Karpenter '{name}'", cluster),
        principal_arn=role.arn,
        type=ACCESS_ENTRY_TYPE,
        tags=cluster.tags,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=attachments),
    )
    return role, [*attachments, entry]


def config_map_refusal(where: str) -> str:
    """Why Karpenter cannot run on a CONFIG_MAP cluster here, and the fix."""
    return (
        f"{where}: the cluster's authentication mode is CONFIG_MAP, where EKS takes no access entry "
        f"(CreateAccessEntry needs one of {', '.join(ACCESS_ENTRY_MODES)}), so the {ACCESS_ENTRY_TYPE} entry of "
        "Karpenter's node role cannot be created and its nodes would never join. Move the cluster to "
        "API_AND_CONFIG_MAP, which keeps its aws-auth mappings and takes access entries, without interruption: "
        "pulumi-eks `authentication_mode=eks.AuthenticationMode.API_AND_CONFIG_MAP`, aws.eks.Cluster "
        '`access_config=aws.eks.ClusterAccessConfigArgs(authentication_mode="API_AND_CONFIG_MAP")`, or for a '
        "cluster of another stack `aws eks update-cluster-config --name <cluster> --access-config "
        "authenticationMode=API_AND_CONFIG_MAP` (then pass authentication_mode= to EksCluster.existing)"
    )


def _admitting_cluster(where: str, cluster: EksClusterHandle) -> pulumi.Input[str]:
    """The cluster's name for the node role's access entry, once its authentication mode is known to take one
    (a ConfigError otherwise, failing the preview where the mode is known then; a warning where it is not)."""
    from elastic_gpu.aws.cluster import when_unknown  # the handle's module, which imports Karpenter's release

    mode: pulumi.Output[str] | None = getattr(cluster, "authentication_mode", None)
    if mode is None:
        return cluster.cluster_name

    def admitted(args: list[Any]) -> str:
        if args[1] not in ACCESS_ENTRY_MODES:
            raise ConfigError([config_map_refusal(where)], source=where)
        return str(args[0])

    def unknown() -> None:
        pulumi.log.warn(
            f"{where}: the cluster's authentication mode is unknown until it is created; Karpenter's nodes join "
            f"through an access entry, which a CONFIG_MAP cluster (EKS's default without access_config) refuses "
            f"during `pulumi up`: give the cluster an authentication mode of {' or '.join(ACCESS_ENTRY_MODES)}"
        )

    when_unknown(mode, unknown)
    return pulumi.Output.all(cluster.cluster_name, mode).apply(admitted)


def build_controller_role(
    name: str,
    cluster: EksClusterHandle,
    node_role_arn: pulumi.Output[str],
    queue_arn: pulumi.Output[str],
    parent: pulumi.Resource,
) -> tuple[aws.iam.Role, list[pulumi.Resource]]:
    """The controller's IRSA role (trusting only kube-system/karpenter through the cluster's OIDC provider,
    as the cluster-autoscaler's role does) with upstream's six policies as managed policies."""
    opts = pulumi.ResourceOptions(parent=parent)
    trust = pulumi.Output.all(cluster.oidc_provider_arn, cluster.oidc_issuer_url).apply(
        lambda a: checked_irsa_trust_policy(
            f"Karpenter '{name}'", "Karpenter controller", a[0], a[1], NAMESPACE, SERVICE_ACCOUNT
        )
    )
    role = aws.iam.Role(f"{name}-controller-role", assume_role_policy=trust, tags=cluster.tags, opts=opts)
    documents = pulumi.Output.all(cluster.cluster_name, cluster.region, node_role_arn, queue_arn).apply(
        lambda a: controller_policies(a[0], a[1], a[2], a[3])
    )
    attached: list[pulumi.Resource] = []
    for policy_name in POLICY_NAMES:
        suffix = policy_name.removesuffix("Policy").lower()
        policy = aws.iam.Policy(
            f"{name}-{suffix}",
            policy=documents.apply(_policy_json(policy_name)),
            tags=cluster.tags,
            opts=opts,
        )
        attached.append(
            aws.iam.RolePolicyAttachment(f"{name}-{suffix}", role=role.name, policy_arn=policy.arn, opts=opts)
        )
    return role, attached
