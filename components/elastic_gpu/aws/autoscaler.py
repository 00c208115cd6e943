"""ClusterAutoscaler on EKS: the upstream autoscaler with an IRSA role, scaling only the groups it is given.

Not tag auto-discovery: EKS tags every managed node group's ASG with the discovery tags
(`k8s.io/cluster-autoscaler/enabled`, `.../<cluster>`), so a second autoscaler on the cluster would
scale the same groups as the cluster's own; a managed node group's own tags are not copied to its
ASG, and the autoscaler merges the tags of every `--node-group-auto-discovery` flag into one filter
(cloudprovider/aws/auto_scaling_groups.go buildAsgTags), so no tag can pick exactly our groups. It
lists them instead: `--nodes=<min>:<max>:<ASG name>` per node group, with the mutating IAM actions
restricted to those ASGs (cloudprovider/aws/README.md "Minimal IAM Permissions Policy").
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from elastic_gpu.autoscaler_workload import Workload, build_workload, general_pool_selector
from elastic_gpu.aws.asg_tags import auto_discovery_cluster_key
from elastic_gpu.aws.iam import checked_irsa_trust_policy
from elastic_gpu.cluster_autoscaler import DEFAULT_NAMESPACE, autoscaler_image, common_flags, nodes_first

if TYPE_CHECKING:
    from elastic_gpu.cluster_autoscaler import ClusterAutoscalerArgs
    from elastic_gpu.cluster_handle import EksClusterHandle
    from elastic_gpu.pool_types import NodeGroupRef

#: Said for a cluster whose handle cannot tell (an existing one) whether its nodes reach the EKS API.
EKS_ENDPOINT_WARNING = (
    "scaling a GPU group up from zero needs eks:DescribeNodegroup (the group's labels, taints and GPU count); "
    "if the cluster's private subnets have no route to the internet, its VPC needs an `eks` interface endpoint "
    "(com.amazonaws.<region>.eks, https://docs.aws.amazon.com/eks/latest/userguide/vpc-interface-endpoints.html) "
    "besides those for autoscaling, ec2 and sts (cluster-autoscaler cloudprovider/aws/README.md)"
)
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
#: ... and the two mutating actions, restricted to the Auto Scaling groups it is given.
MUTATING_ACTIONS = ("autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup")


def asg_arn_pattern(region: str, asg_name: str) -> str:
    """An Auto Scaling group's ARN by name, any partition and account (its id part is a uuid); IAM allows `*`
    in every ARN segment but the service (IAM User Guide, reference_policies_elements_resource)."""
    return f"arn:*:autoscaling:{region}:*:autoScalingGroup:*:autoScalingGroupName/{asg_name}"


def autoscaler_policy(cluster_name: str, region: str, asg_names: list[str]) -> str:
    """The policy document; the mutating actions only on the listed ASGs, and only while EKS tags them as
    this cluster's."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Sid": "Describe", "Effect": "Allow", "Action": list(READ_ACTIONS), "Resource": "*"},
                {
                    "Sid": "ScaleOwnGroups",
                    "Effect": "Allow",
                    "Action": list(MUTATING_ACTIONS),
                    "Resource": [asg_arn_pattern(region, n) for n in asg_names] or "*",
                    "Condition": {
                        "StringEquals": {f"aws:ResourceTag/{auto_discovery_cluster_key(cluster_name)}": "owned"}
                    },
                },
            ],
        },
        indent=2,
    )


def build_autoscaler_role(
    name: str,
    *,
    cluster: EksClusterHandle,
    namespace: str,
    service_account: str,
    groups: list[NodeGroupRef],
    parent: pulumi.Resource,
) -> tuple[aws.iam.Role, aws.iam.RolePolicy]:
    opts = pulumi.ResourceOptions(parent=parent)

    def trust_policy(oidc_provider_arn: str, oidc_issuer_url: str) -> str:
        return checked_irsa_trust_policy(
            f"ClusterAutoscaler '{name}'", "autoscaler", oidc_provider_arn, oidc_issuer_url, namespace, service_account
        )

    trust = pulumi.Output.all(cluster.oidc_provider_arn, cluster.oidc_issuer_url).apply(lambda a: trust_policy(*a))
    role = aws.iam.Role(f"{name}-role", assume_role_policy=trust, tags=cluster.tags, opts=opts)
    policy = pulumi.Output.all(cluster.cluster_name, cluster.region, *[g.autoscaler_group for g in groups]).apply(
        lambda a: autoscaler_policy(a[0], a[1], list(a[2:]))
    )
    role_policy = aws.iam.RolePolicy(f"{name}-policy", role=role.id, policy=policy, opts=opts)
    return role, role_policy


def node_groups_of(args: ClusterAutoscalerArgs) -> list[NodeGroupRef]:
    """The groups this autoscaler scales: the general pool's and the GPU pools' (their ASGs)."""
    pools = [*([args.general_pool] if args.general_pool else []), *args.gpu_pools]
    return [g for p in pools for g in p.node_group_refs if g.autoscaler_group is not None]


def nodes_flag(group: NodeGroupRef) -> pulumi.Output[str]:
    """`--nodes=<min>:<max>:<ASG name>` (cloudprovider/aws/README.md, "Manual configuration")."""
    assert group.autoscaler_group is not None, "node_groups_of: only the groups the autoscaler lists"
    sizes = f"--nodes={group.min_size}:{group.max_size}:"
    return pulumi.Output.from_input(group.autoscaler_group).apply(lambda asg: f"{sizes}{asg}")


def aws_flags(groups: list[NodeGroupRef]) -> list[pulumi.Input[str]]:
    return ["--cloud-provider=aws", *[nodes_flag(g) for g in groups]]


def build_autoscaler(name: str, args: ClusterAutoscalerArgs, parent: pulumi.Resource) -> dict[str, object]:
    """EKS: the upstream autoscaler as a Deployment, with an IRSA role."""
    cluster: EksClusterHandle = args.cluster  # type: ignore[assignment]
    if getattr(cluster, "eks_api_reachable", None) is None:
        pulumi.log.warn(f"ClusterAutoscaler '{name}': {EKS_ENDPOINT_WARNING}")
    image = args.image or autoscaler_image(name, cluster.kubernetes_version)
    groups = node_groups_of(args)
    role, role_policy = build_autoscaler_role(
        name,
        cluster=cluster,
        namespace=args.namespace or DEFAULT_NAMESPACE,
        service_account=args.workload_name,
        groups=groups,
        parent=parent,
    )
    placement = general_pool_selector(args.general_pool.pool_name) if args.general_pool else args.node_selector
    deployment = build_workload(
        name,
        Workload(
            namespace=args.namespace or DEFAULT_NAMESPACE,
            image=image,
            flags=[*common_flags(args), *aws_flags(groups)],
            node_selector=dict(placement or {}),
            tolerations=list(args.tolerations),
            env={"AWS_REGION": cluster.region},
            service_account_annotations={"eks.amazonaws.com/role-arn": role.arn},
            host_ca_bundle=AL2023_CA_BUNDLE,
            name=args.workload_name,
        ),
        pulumi.ResourceOptions(
            parent=parent,
            provider=args.k8s_provider,
            # A renamed autoscaler's own namespace (ClusterAutoscalerArgs.namespace), created first.
            depends_on=[ns] if (ns := getattr(parent, "created_namespace", None)) is not None else None,
        ),
        # Its priorities, its IAM policy (or its first calls are denied) and the node groups (where it
        # runs; on an upgrade the image moves only after the node groups have).
        after=[
            *([priorities] if (priorities := getattr(parent, "priority_config", None)) else []),
            role_policy,
            *nodes_first(args),
        ],
    )
    return {
        "image": image,
        "role": role,
        "role_arn": role.arn,
        "service_account_name": args.workload_name,
        "deployment": deployment,
    }
