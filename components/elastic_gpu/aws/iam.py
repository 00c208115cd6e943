"""IAM documents and roles for EKS: cluster role, node role, and IRSA roles."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from elastic_gpu.cluster_handle import raise_if

#: AWS managed policies, as listed in the EKS user guide ("Amazon EKS cluster IAM role",
#: "Amazon EKS node IAM role"); SSM lets operators reach nodes without SSH.
CLUSTER_POLICIES = ("arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",)
NODE_POLICIES = (
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
    "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
)


def service_trust_policy(service: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
        }
    )


def irsa_trust_policy(oidc_provider_arn: str, oidc_issuer_url: str, namespace: str, service_account: str) -> str:
    """Trust one Kubernetes service account through the cluster's OIDC provider (IRSA)."""
    issuer = oidc_issuer_url.removeprefix("https://")
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": oidc_provider_arn},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                            f"{issuer}:aud": "sts.amazonaws.com",
                        }
                    },
                }
            ],
        }
    )


def oidc_provider_problems(where: str, oidc_provider_arn: object, role_of: str) -> list[str]:
    """The cluster's IAM OIDC provider ARN, which an IRSA role trusts, must not be empty (``role_of`` says
    whose role it is)."""
    if isinstance(oidc_provider_arn, str) and oidc_provider_arn.strip():
        return []
    return [
        f"{where}the cluster has no IAM OIDC provider (its oidc_provider_arn is {oidc_provider_arn!r}), so the "
        f'{role_of}\'s IRSA role would trust `"Federated": ""` and its pod could never assume it: build the '
        "pulumi_eks.Cluster with create_oidc_provider=True (EksCluster.from_pulumi_eks), or give the handle "
        "create_oidc_provider=True (from_pulumi_eks, from_cluster) to declare one, or pass "
        "EksCluster.existing(oidc_provider_arn=...) the ARN of the cluster's IAM OIDC provider"
    ]


def checked_irsa_trust_policy(
    component: str,
    role_of: str,
    oidc_provider_arn: str,
    oidc_issuer_url: str,
    namespace: str,
    service_account: str,
) -> str:
    """`irsa_trust_policy`, refusing an empty OIDC provider ARN with a ConfigError from ``component``.

    Called in an apply because it is the earliest point that knows the value: a plain ARN is checked by
    EksCluster.existing, but pulumi-eks gives its `oidcProviderArn` only as an Output ("" without
    create_oidc_provider, cluster.ts), known at preview, so this fails the preview (exit 2 offline). An ARN
    still unknown at preview fails here at `pulumi up`, before the role is created; the policy
    eks-irsa-trusts-an-oidc-provider guards what the preview cannot see."""
    raise_if(oidc_provider_problems(f"{component}: ", oidc_provider_arn, role_of), component)
    return irsa_trust_policy(oidc_provider_arn, oidc_issuer_url, namespace, service_account)


def role_with_policies(
    name: str,
    *,
    assume_role_policy: pulumi.Input[str],
    policy_arns: tuple[str, ...],
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> tuple[aws.iam.Role, list[aws.iam.RolePolicyAttachment]]:
    """The role and its policy attachments: whatever uses the role depends on the attachments, so it is
    created after them and deleted before them (the pulumi-aws NodeGroup example and terraform-aws-eks
    do the same: EKS needs the policies to delete instances and network interfaces)."""
    opts = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(name, assume_role_policy=assume_role_policy, tags=tags, opts=opts)
    attachments = [
        aws.iam.RolePolicyAttachment(f"{name}-{arn.rsplit('/', 1)[-1]}", role=role.name, policy_arn=arn, opts=opts)
        for arn in policy_arns
    ]
    return role, attachments
