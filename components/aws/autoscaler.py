"""ClusterAutoscaler on EKS: the upstream autoscaler with an IRSA role and ASG auto-discovery."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from elastic_gpu.autoscaler_workload import Workload, build_workload, general_pool_selector
from elastic_gpu.aws.asg_tags import auto_discovery_cluster_key, auto_discovery_flag
from elastic_gpu.aws.iam import irsa_trust_policy
from elastic_gpu.cluster_autoscaler import autoscaler_image, common_flags, nodes_first

if TYPE_CHECKING:
    from elastic_gpu.cluster_autoscaler import ClusterAutoscalerArgs
    from elastic_gpu.cluster_handle import EksClusterHandle

#: The AL2023 node's CA bundle, mounted as the official example does.
AL2023_CA_BUNDLE = "/etc/ssl/certs/ca-bundle.crt"

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
    name: str, *, cluster: EksClusterHandle, namespace: str, service_account: str, parent: pulumi.Resource
) -> tuple[aws.iam.Role, aws.iam.RolePolicy]:
    opts = pulumi.ResourceOptions(parent=parent)
    trust = pulumi.Output.all(cluster.oidc_provider_arn, cluster.oidc_issuer_url).apply(
        lambda a: irsa_trust_policy(a[0], a[1], namespace, service_account)
    )
    role = aws.iam.Role(f"{name}-role", assume_role_policy=trust, tags=cluster.tags, opts=opts)
    policy = pulumi.Output.from_input(cluster.cluster_name).apply(autoscaler_policy)
    role_policy = aws.iam.RolePolicy(f"{name}-policy", role=role.id, policy=policy, opts=opts)
    return role, role_policy


def aws_flags(cluster: EksClusterHandle) -> list[pulumi.Input[str]]:
    return ["--cloud-provider=aws", auto_discovery_flag(cluster.cluster_name)]


def build_autoscaler(name: str, args: ClusterAutoscalerArgs, parent: pulumi.Resource) -> dict[str, object]:
    """EKS: the upstream autoscaler as a Deployment, with an IRSA role."""
    cluster: EksClusterHandle = args.cluster  # type: ignore[assignment]
    image = args.image or autoscaler_image(name, cluster.kubernetes_version)
    role, role_policy = build_autoscaler_role(
        name, cluster=cluster, namespace=args.namespace, service_account=args.workload_name, parent=parent
    )
    placement = general_pool_selector(args.general_pool.pool_name) if args.general_pool else args.node_selector
    build_workload(
        name,
        Workload(
            namespace=args.namespace,
            image=image,
            flags=[*common_flags(args), *aws_flags(cluster)],
            node_selector=dict(placement or {}),
            tolerations=list(args.tolerations),
            env={"AWS_REGION": cluster.region},
            service_account_annotations={"eks.amazonaws.com/role-arn": role.arn},
            host_ca_bundle=AL2023_CA_BUNDLE,
            name=args.workload_name,
        ),
        pulumi.ResourceOptions(parent=parent, provider=args.k8s_provider),
        # Its priorities, its IAM policy (or its first calls are denied) and the node groups (where it
        # runs; on an upgrade the image moves only after the node groups have).
        after=[
            *([parent.priority_config] if getattr(parent, "priority_config", None) else []),
            role_policy,
            *nodes_first(args),
        ],
    )
    return {"image": image, "role_arn": role.arn, "service_account_name": args.workload_name}
