"""EksCluster: an EKS control plane ready for elastic GPU pools."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from elastic_gpu.aws.iam import CLUSTER_POLICIES, NODE_POLICIES, role_with_policies, service_trust_policy
from elastic_gpu.aws.network import build_network
from elastic_gpu.kubeconfig import exec_kubeconfig

TYPE_TOKEN = "elastic-gpu:index:EksCluster"

#: Control-plane logs worth paying for: who did what (audit), and why auth failed.
DEFAULT_LOG_TYPES = ("api", "audit", "authenticator")


@dataclass
class EksClusterArgs:
    cluster_name: str
    """EKS cluster name (also used in the autoscaler's discovery tag)."""
    region: str
    zones: list[str]
    kubernetes_version: str
    """Kubernetes minor, e.g. "1.33"."""
    network_cidr: str = "10.0.0.0/16"
    """VPC range; split into one private and one public block per zone."""
    protect: bool = False
    """Protect the control plane from deletion (production)."""
    tags: dict[str, str] = field(default_factory=dict)
    log_types: tuple[str, ...] = DEFAULT_LOG_TYPES


class EksCluster(pulumi.ComponentResource):
    """An EKS cluster with no default node group, its VPC, IAM roles and an OIDC provider.

    Creates: a VPC with private node subnets per zone; the cluster role; the node
    role that every pool's node groups share; `aws.eks.Cluster` (API access
    entries, the creator as admin); the IAM OIDC provider for IRSA; a kubeconfig
    (secret) that authenticates with `aws eks get-token`; and a Kubernetes
    provider built from it, which the Kubernetes-side components use.
    """

    cloud = "aws"

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.args = args
        child = pulumi.ResourceOptions(parent=self)

        self.network = build_network(
            name, cluster_name=args.cluster_name, cidr=args.network_cidr, zones=args.zones, tags=args.tags, parent=self
        )
        cluster_role, cluster_role_attachments = role_with_policies(
            f"{name}-cluster-role",
            assume_role_policy=service_trust_policy("eks.amazonaws.com"),
            policy_arns=CLUSTER_POLICIES,
            tags=args.tags,
            parent=self,
        )
        self.node_role, self.node_role_attachments = role_with_policies(
            f"{name}-node-role",
            assume_role_policy=service_trust_policy("ec2.amazonaws.com"),
            policy_arns=NODE_POLICIES,
            tags=args.tags,
            parent=self,
        )
        subnet_ids = [*self.network.private_subnet_ids.values(), *self.network.public_subnet_ids.values()]
        self.cluster = aws.eks.Cluster(
            f"{name}-eks",
            name=args.cluster_name,
            version=args.kubernetes_version,
            role_arn=cluster_role.arn,
            vpc_config=aws.eks.ClusterVpcConfigArgs(
                subnet_ids=subnet_ids, endpoint_private_access=True, endpoint_public_access=True
            ),
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API", bootstrap_cluster_creator_admin_permissions=True
            ),
            enabled_cluster_log_types=list(args.log_types),
            tags=args.tags,
            # The cluster role's policy before the cluster, and (on delete) after it.
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect, depends_on=cluster_role_attachments),
        )
        self.oidc_issuer_url: pulumi.Output[str] = self.cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer)
        self.oidc_provider = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc",
            url=self.oidc_issuer_url,
            client_id_lists=["sts.amazonaws.com"],
            tags=args.tags,
            opts=child,
        )
        self.cluster_name: pulumi.Output[str] = self.cluster.name
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(
            pulumi.Output.all(self.cluster.name, self.cluster.endpoint, self.cluster.certificate_authority.data).apply(
                lambda a: _kubeconfig(a[0], a[1], a[2], args.region)
            )
        )
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "kubeconfig": self.kubeconfig,
                "oidc_provider_arn": self.oidc_provider.arn,
                "node_role_arn": self.node_role.arn,
            }
        )

    @property
    def zones(self) -> list[str]:
        return list(self.args.zones)

    @property
    def kubernetes_version(self) -> str:
        return self.args.kubernetes_version


def _kubeconfig(cluster_name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig that gets a token from `aws eks get-token` (no long-lived credentials)."""
    plugin = {"command": "aws", "args": ["eks", "get-token", "--cluster-name", cluster_name, "--region", region]}
    return exec_kubeconfig(cluster_name, endpoint, ca_data, plugin)
