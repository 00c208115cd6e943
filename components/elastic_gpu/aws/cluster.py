"""EksCluster: an EKS control plane ready for elastic GPU pools."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import Field

from elastic_gpu.args_doc import documented, documented_component
from elastic_gpu.aws import DEFAULT_AUTHENTICATION_MODE, EKS_EXISTING_CLUSTER, PUBLIC_SUBNET_IDS_INPUT
from elastic_gpu.aws import config_rules as aws_rules
from elastic_gpu.aws.iam import CLUSTER_POLICIES, NODE_POLICIES, role_with_policies, service_trust_policy
from elastic_gpu.aws.karpenter.release import DISCOVERY_TAG_KEY as KARPENTER_DISCOVERY_TAG_KEY
from elastic_gpu.aws.network import Network, build_network
from elastic_gpu.cluster_handle import (
    EksClusterHandle,
    ExistingCluster,
    handle_inputs,
    input_str_problems,
    is_input_str,
    k8s_provider_problems,
    raise_if,
    required_keywords,
    version_problems,
    zones_problems,
)
from elastic_gpu.config import CIDR_PREFIXES
from elastic_gpu.errors import ConfigError
from elastic_gpu.kubeconfig import exec_kubeconfig
from elastic_gpu.settings import ClusterSettings, NetworkCidrSetting, ProtectSetting, RegionSetting
from elastic_gpu.settings.aws import AwsNetworkOptions
from elastic_gpu.settings.base import ArgsModel
from elastic_gpu.validation import args_type_problems, private_cidr_problems, shown_value

if TYPE_CHECKING:
    import pulumi_eks

TYPE_TOKEN = "elastic-gpu:index:EksCluster"
EXISTING_TYPE_TOKEN = EKS_EXISTING_CLUSTER

#: What happens to a node role the GPU node groups share with a pulumi-eks cluster's self-managed nodes.
SHARED_NODE_ROLE_RISK = (
    "When the last managed node group using a node IAM role is deleted, EKS removes that role from the aws-auth "
    'ConfigMap, and self-managed nodes using the same role move to NotReady (EKS User Guide, "Delete a managed '
    'node group from your cluster", https://docs.aws.amazon.com/eks/latest/userguide/delete-managed-node-group.html). '
    "Scaling to zero deletes no group; removing the last pool on the role does, and so does moving the groups to "
    "another role later (node-group names carry a digest of the fields EKS replaces on, node role included, so "
    "the new group is created and the old one deleted; a replacement that keeps the role leaves it in use)"
)
#: How to give the GPU nodes a role of their own, or share the instance role knowingly.
NODE_ROLE_HINT = (
    "pass node_role_arn= a role of the GPU nodes' own (AmazonEKSWorkerNodePolicy, AmazonEKS_CNI_Policy, "
    "AmazonEC2ContainerRegistryReadOnly; examples/existing-eks), or share the instance role knowingly "
    "(e.g. GPU groups already deployed on it, which moving would delete): "
    "node_role_arn=cluster.instance_roles.apply(lambda roles: roles[0].arn)"
)

#: A pulumi-eks cluster whose `version` is unknown at preview: a new one that sets none.
UNKNOWN_VERSION_WARNING = (
    "kubernetes_version: not given, and the cluster's version is unknown until it is created (it "
    "sets no `version`, so EKS gives it its default minor). The autoscaler image, the node groups' version and "
    "EKS add-on versions are chosen from that minor during `pulumi up`, and a minor this library pins no "
    "autoscaler release for fails the update then. Set version= on the cluster (or "
    "kubernetes_version= here) to know it at preview"
)

#: Control-plane logs worth paying for: who did what (audit), and why auth failed.
DEFAULT_LOG_TYPES = ("api", "audit", "authenticator")


@documented
class EksClusterArgs(ArgsModel, AwsNetworkOptions, ProtectSetting, NetworkCidrSetting, ClusterSettings, RegionSetting):
    """An EKS cluster's settings (elastic_gpu.settings' cluster models and AWS's network part, a stack file's
    `cluster`) and what only a program gives, or gives under its own name; keyword arguments."""

    model_config = ArgsModel.model_config

    cluster_name: str
    """EKS cluster name (also used in the autoscaler's discovery tag); a stack file's `cluster.name`."""
    tags: dict[str, str] = Field(default_factory=dict)
    """Tags on every taggable resource (cost allocation)."""
    log_types: tuple[str, ...] = DEFAULT_LOG_TYPES
    """Control-plane log types sent to CloudWatch."""
    public_access: bool = True
    """Default true: a public API endpoint besides the private one (nodes use the private one); a stack file's
    `cluster.apiAccess.public`."""
    public_access_cidrs: list[str] | None = None
    """IPv4 ranges allowed on the public endpoint; default None: anywhere (EKS's 0.0.0.0/0); a stack file's
    `cluster.apiAccess.publicCidrs`."""
    runner_in_vpc: bool = False
    """With public_access=False: default false warns that no runner can reach the private-only endpoint of a
    VPC this cluster creates (PRIVATE_ENDPOINT_WARNING, with the two-step path); true says `pulumi up` runs in
    that VPC or a network connected to it, as it can from the second `up` on; a stack file's
    `cluster.apiAccess.runnerInVnet`."""
    karpenter_discovery: bool = False
    """Default false; true tags the private subnets and the cluster security group (the nodes') with
    `karpenter.sh/discovery: <cluster_name>`, which Karpenter's default EC2NodeClass selectors look for (a stack
    file's `provisioner: karpenter`)."""


#: The warning for a private-only endpoint (EKS endpointPublicAccess false) in the VPC the cluster creates: the
#: endpoint answers only inside that VPC (EKS "Cluster API server endpoint": "you must ... from within the
#: cluster's VPC or a connected network"), which the same `up` creates, so no runner is in it yet.
PRIVATE_ENDPOINT_WARNING = (
    "a private-only API endpoint (public_access=False; stack config cluster.apiAccess.public: false) in the VPC "
    "this cluster creates: `pulumi up` declares the device plugin and the autoscaler through that endpoint, and "
    "it answers only inside the VPC, which the same `up` creates, so no runner reaches it and they fail. Two "
    "steps: first `pulumi up` with public_access=True and public_access_cidrs your runner's ranges "
    "(cluster.apiAccess.public: true, publicCidrs); then, from a runner in that VPC or a network connected to it "
    "(a self-hosted runner in the VPC, VPN, peering or Transit Gateway), set public_access=False and "
    "runner_in_vpc=True (cluster.apiAccess.public: false, runnerInVnet: true) and `pulumi up` again"
)


def runner_warning(args: EksClusterArgs) -> str | None:
    """Why `pulumi up` cannot reach the cluster's API endpoint, or None."""
    return PRIVATE_ENDPOINT_WARNING if not args.public_access and not args.runner_in_vpc else None


def eks_cluster_problems(name: str, args: EksClusterArgs) -> list[str]:
    """The argument types, the region and its zones (the stack config's own rules, elastic_gpu/aws/config_rules.py)."""
    where = f"EksCluster '{name}': EksClusterArgs."
    if problems := args_type_problems(where, args):
        return problems
    if args.region not in aws_rules.REGIONS:
        return [f"{where}region: {args.region!r} is not an AWS region; allowed: {', '.join(aws_rules.REGIONS)}"]
    return aws_rules.zone_problems(lambda i, _: f"{where}zones[{i}]", args.region, args.zones) + private_cidr_problems(
        f"{where}network_cidr", args.network_cidr, CIDR_PREFIXES
    )


def _provider_region_problems(name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None) -> list[str]:
    """The default AWS provider's region (`aws:region`) is where the VPC, the cluster and its node groups go:
    another region than `region` would put them where its zones do not exist. A provider the program passes
    (`opts`) is its own choice, not known before deployment."""
    explicit = opts is not None and (opts.provider is not None or bool(opts.providers))
    configured = known_region(None)
    if explicit or configured is None or configured == args.region:
        return []
    return [
        f"EksCluster '{name}': EksClusterArgs.region: {args.region!r}, but the AWS provider deploys to "
        f"{configured!r} (aws:region), where the VPC, the cluster and its node groups would go; set aws:region to "
        f"{args.region!r}, or pass a provider of that region (opts=pulumi.ResourceOptions(providers="
        f'{{"aws": aws.Provider("...", region="{args.region}")}}))'
    ]


@documented_component(EksClusterArgs, handle=EksClusterHandle)
class EksCluster(pulumi.ComponentResource):
    """An EKS cluster with no default node group, its VPC, IAM roles and an OIDC provider.

    Creates: a VPC with private node subnets per zone; the cluster role; the node
    role that every pool's node groups share; `aws.eks.Cluster` (API access
    entries, the creator as admin); the IAM OIDC provider for IRSA; a kubeconfig
    (secret) that authenticates with `aws eks get-token`; and a Kubernetes
    provider built from it, which the Kubernetes-side components use.
    """

    args: EksClusterArgs
    """The arguments the cluster was declared with."""
    cluster: aws.eks.Cluster
    """The EKS control plane."""
    network: Network
    """The VPC, its subnets per zone, NAT gateways and endpoints."""
    node_role: aws.iam.Role
    """The IAM role every pool's node groups use (unless a pool sets its own)."""
    oidc_provider: aws.iam.OpenIdConnectProvider
    """The IAM OIDC provider (IRSA)."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) that gets tokens from `aws eks get-token`."""

    cloud = "aws"

    @classmethod
    def existing(
        cls,
        resource_name: str,
        *,
        cluster_name: pulumi.Input[str],
        kubernetes_version: str,
        node_role_arn: pulumi.Input[str],
        subnet_ids: Mapping[str, pulumi.Input[str]],
        oidc_provider_arn: pulumi.Input[str],
        oidc_provider_url: pulumi.Input[str],
        k8s_provider: k8s.Provider | None = None,
        region: pulumi.Input[str] | None = None,
        tags: Mapping[str, str] | None = None,
        authentication_mode: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> ExistingEksCluster:
        """A handle on an EKS cluster this library did not create, known by its name (e.g. another stack's).

        Declares no cloud resource. `cluster_name`: the EKS name. `kubernetes_version`: the control plane's
        minor, e.g. "1.35" (plain: it picks the autoscaler image and the node groups' version; a minor past
        end of standard support warns, and the policy pack's `kubernetes-version-not-end-of-life` fails one past
        end of life). `node_role_arn`: the IAM role the GPU node groups use (EKS worker, CNI and ECR read policies,
        an EC2_LINUX access entry). `subnet_ids`: zone -> private subnet id, the zones pools may use.
        `oidc_provider_arn` / `oidc_provider_url`: the cluster's IAM OIDC provider (the autoscaler's IRSA role).
        `k8s_provider`: default: one built as `aws eks update-kubeconfig` does (endpoint and CA from
        `aws.eks.getCluster`, tokens from `aws eks get-token`). `region`: default: the AWS provider's.
        `tags`: on what the add-ons create. `authentication_mode`: the cluster's (`aws eks describe-cluster --query
        cluster.accessConfig.authenticationMode`); CONFIG_MAP takes no access entry, so Karpenter on it is refused
        with the fix; default None: not checked. For a cluster the program declares itself, use
        `EksCluster.from_cluster` (aws.eks.Cluster) or `EksCluster.from_pulumi_eks` (pulumi_eks.Cluster), which
        read these from the cluster. Every name and ARN may be an Output.
        """
        return ExistingEksCluster(
            resource_name,
            cluster_name=cluster_name,
            kubernetes_version=kubernetes_version,
            node_role_arn=node_role_arn,
            subnet_ids=subnet_ids,
            oidc_provider_arn=oidc_provider_arn,
            oidc_provider_url=oidc_provider_url,
            k8s_provider=k8s_provider,
            region=region,
            tags=tags,
            authentication_mode=authentication_mode,
            opts=opts,
        )

    @classmethod
    @required_keywords("node_role_arn")
    def from_cluster(
        cls,
        resource_name: str,
        cluster: aws.eks.Cluster,
        *,
        node_role_arn: pulumi.Input[str] | None = None,
        subnet_ids: Mapping[str, pulumi.Input[str]] | None = None,
        zones: list[str] | None = None,
        kubernetes_version: str | None = None,
        oidc_provider_arn: pulumi.Input[str] | None = None,
        create_oidc_provider: bool = False,
        k8s_provider: k8s.Provider | None = None,
        tags: Mapping[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> ExistingEksCluster:
        """A handle on an `aws.eks.Cluster` the program declares: its name, Kubernetes version, subnets, OIDC
        issuer and endpoint are read from the resource, so nothing is typed twice.

        `node_role_arn` (required): the IAM role the GPU node groups use. Subnets: `subnet_ids` (zone -> subnet
        id), or `zones` (plain zone names, e.g. the program's own list), each then given the cluster's subnet in
        that zone (the first by id where it has several; `aws.ec2.getSubnets` over the cluster's
        `vpc_config.subnet_ids`). `kubernetes_version`: default None: the cluster's `version` output, which EKS
        fills in when the cluster sets none (unknown at preview until the cluster exists; see
        `from_pulumi_eks`); the node groups follow it. IRSA for the autoscaler needs the cluster's IAM OIDC
        provider: `oidc_provider_arn` when it exists, or `create_oidc_provider=True` to declare one for the
        cluster's issuer (as pulumi-eks's `create_oidc_provider` does; an account holds one per issuer).
        `k8s_provider`: default: a provider whose kubeconfig (secret) takes the cluster's endpoint and CA
        and gets tokens from `aws eks get-token`. The region is the AWS provider's (`aws:region`).
        """
        where = f"EksCluster.from_cluster '{resource_name}': "
        source = f"EksCluster.from_cluster '{resource_name}'"
        problems = []
        if not isinstance(cluster, aws.eks.Cluster):
            problems.append(
                f"{where}cluster: must be a pulumi_aws.eks.Cluster, got {type(cluster).__name__}; for a "
                "pulumi_eks.Cluster use EksCluster.from_pulumi_eks(...)"
            )
        if oidc_provider_arn is not None and create_oidc_provider:
            problems.append(f"{where}oidc_provider_arn and create_oidc_provider=True: give one, not both")
        elif oidc_provider_arn is None and not create_oidc_provider:
            problems.append(
                f"{where}oidc_provider_arn: required unless create_oidc_provider=True: an aws.eks.Cluster comes "
                "with no IAM OIDC provider, which the autoscaler's IRSA role trusts"
            )
        problems += _zones_or_subnets_problems(where, subnet_ids, zones)
        if node_role_arn is None:
            problems.append(
                f"{where}node_role_arn: required: the IAM role the GPU node groups use (AmazonEKSWorkerNodePolicy, "
                "AmazonEKS_CNI_Policy, AmazonEC2ContainerRegistryReadOnly), e.g. the role of the program's own "
                "node group"
            )
        raise_if(problems, source=source)
        assert node_role_arn is not None, "reported above"
        version = _version_of(where, kubernetes_version, cluster.version)
        issuer = cluster.identities.apply(oidc_issuer)
        region = aws.get_region_output(opts=pulumi.InvokeOutputOptions(parent=cluster)).region
        return ExistingEksCluster(
            resource_name,
            cluster_name=cluster.name,
            kubernetes_version=version,
            node_role_arn=node_role_arn,
            subnet_ids=subnet_ids
            or _subnets_in_zones(
                zones or [], cluster.vpc_config.subnet_ids, pulumi.InvokeOutputOptions(parent=cluster)
            ),
            oidc_provider_arn=oidc_provider_arn,
            oidc_provider_url=issuer,
            k8s_provider=k8s_provider,
            kubeconfig=pulumi.Output.all(
                cluster.name, cluster.endpoint, cluster.certificate_authority.data, region
            ).apply(lambda a: _kubeconfig(a[0], a[1], a[2], a[3])),
            region=region,
            tags=tags,
            authentication_mode=cluster.access_config.apply(authentication_mode_of),
            opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(depends_on=[cluster]), opts),
            made_by="EksCluster.from_cluster",
        )

    @classmethod
    @required_keywords("node_role_arn")
    def from_pulumi_eks(
        cls,
        resource_name: str,
        cluster: pulumi_eks.Cluster,
        *,
        node_role_arn: pulumi.Input[str] | None = None,
        subnet_ids: Mapping[str, pulumi.Input[str]] | None = None,
        zones: list[str] | None = None,
        kubernetes_version: str | None = None,
        create_oidc_provider: bool = False,
        tags: Mapping[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> ExistingEksCluster:
        """A handle on a `pulumi_eks.Cluster` (built with `create_oidc_provider=True` for IRSA, or give this
        handle `create_oidc_provider=True` to declare the IAM OIDC provider for the cluster's issuer itself:
        without either pulumi-eks reports an empty OIDC provider ARN, known at preview, and a
        `ClusterAutoscaler` on this handle refuses it, naming `create_oidc_provider`, before its IRSA role
        would trust `"Federated": ""`).

        Reads its EKS cluster's name, its OIDC provider and its kubeconfig (which runs
        `aws eks get-token`). Subnets: `subnet_ids` maps each zone the pools may use to a private
        subnet of the cluster's VPC; or `zones` (plain zone names) gives each zone the cluster's
        subnet there (as `from_cluster` does). `kubernetes_version`: default None: the EKS cluster's
        own `version` (an Output), from which the autoscaler image, the node groups' version
        and EKS add-on versions are chosen once it is known: at preview when the cluster
        exists or sets `version=` (an unpinned minor then fails the preview), else only at
        `pulumi up`, because a new cluster without `version` gets EKS's default minor when it
        is created (a preview warning says so, `UNKNOWN_VERSION_WARNING`); a plain minor here
        (e.g. "1.35") is used instead. `node_role_arn` (required): the role the GPU node
        groups use. A role of their own is safest: one the cluster's self-managed nodes
        also use (its instance role) loses its aws-auth mapping when the last managed
        node group using it is deleted, and those nodes go NotReady (`SHARED_NODE_ROLE_RISK`;
        passing the instance role anyway gives a warning). The GPU node groups join the
        cluster's `nodeSecurityGroup` (its default and self-managed nodes') and EKS's cluster security
        group (its managed node groups'), so they reach CoreDNS wherever it runs; a pool's
        `security_group_ids` overrides them.
        """
        source = f"EksCluster.from_pulumi_eks '{resource_name}'"
        if type(cluster).__module__.split(".")[0] != "pulumi_eks" or not hasattr(cluster, "eks_cluster"):
            raise_if(
                [
                    f"{source}: cluster: must be a pulumi_eks.Cluster, "
                    f"got {type(cluster).__name__}; for a plain aws.eks.Cluster use EksCluster.from_cluster(...)"
                ],
                source=source,
            )
        where = f"{source}: "
        problems = _zones_or_subnets_problems(where, subnet_ids, zones)
        if node_role_arn is None:
            # An error, not a default: the shared role's failure comes at a later removal, long after a
            # preview's warning, and moving off the role then triggers it (pulumi-eks's own ManagedNodeGroup
            # takes no default role either: nodejs/eks/nodes/nodegroup.ts).
            problems.append(
                f"{where}node_role_arn: required; without it the GPU node groups would share the pulumi-eks "
                f"cluster's instance role with its self-managed nodes. {SHARED_NODE_ROLE_RISK}. {NODE_ROLE_HINT}"
            )
        raise_if(problems, source=source)
        assert node_role_arn is not None, "reported above"
        warn_if_shared_role(where, node_role_arn, cluster)
        version = _version_of(where, kubernetes_version, cluster.eks_cluster.apply(lambda c: c.version))
        return ExistingEksCluster(
            resource_name,
            cluster_name=cluster.eks_cluster.apply(lambda c: c.name),
            kubernetes_version=version,
            node_role_arn=node_role_arn,
            subnet_ids=subnet_ids
            or _subnets_in_zones(
                zones or [],
                cluster.eks_cluster.apply(lambda c: c.vpc_config.subnet_ids),
                pulumi.InvokeOutputOptions(parent=cluster),
            ),
            oidc_provider_arn=None if create_oidc_provider else cluster.oidc_provider_arn,
            oidc_provider_url=cluster.oidc_provider_url,
            kubeconfig=pulumi.Output.secret(cluster.kubeconfig_json),
            tags=tags,
            # The GPU nodes join both groups CoreDNS may run in: pulumi-eks's `nodeSecurityGroup`, its default and
            # self-managed nodes' (it admits only itself and pulumi-eks's `clusterSecurityGroup`,
            # nodejs/eks/nodes/securitygroup.ts:127-167 at v4.3.0, so nodes outside it could not reach CoreDNS
            # there: pulumi-eks#1275), and EKS's cluster security group, where managed node groups' nodes run (it
            # admits only itself, EKS User Guide "View Amazon EKS security group requirements for clusters").
            # `nodeSecurityGroupId` is EKS's cluster group when pulumi-eks made none (cluster.ts:2198): joined once.
            node_security_group_ids=[
                cluster.node_security_group_id,
                cluster.eks_cluster.apply(lambda c: c.vpc_config.cluster_security_group_id),
            ],
            # pulumi-eks gives EKS an accessConfig only with `authentication_mode` (cluster.ts)
            authentication_mode=cluster.eks_cluster.apply(_access_config).apply(authentication_mode_of),
            opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(depends_on=[cluster]), opts),
            made_by="EksCluster.from_pulumi_eks",
        )

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        raise_if(
            eks_cluster_problems(name, args) + _provider_region_problems(name, args, opts),
            source=f"EksCluster '{name}'",
        )
        super().__init__(TYPE_TOKEN, name, handle_inputs(args.zones, args.kubernetes_version), opts)
        self.args = args
        child = pulumi.ResourceOptions(parent=self)

        self.network = build_network(
            name,
            cluster_name=args.cluster_name,
            cidr=args.network_cidr,
            zones=args.zones,
            tags=args.tags,
            parent=self,
            region=args.region,
            nat_gateways=args.nat_gateways,
            ecr_endpoints=args.ecr_endpoints,
            private_subnet_tags=self._discovery_tags(args),
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
                subnet_ids=subnet_ids,
                # Nodes always reach the API privately; the public endpoint is optional and can be narrowed.
                endpoint_private_access=True,
                endpoint_public_access=args.public_access,
                public_access_cidrs=args.public_access_cidrs if args.public_access else None,
            ),
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API", bootstrap_cluster_creator_admin_permissions=True
            ),
            enabled_cluster_log_types=list(args.log_types),
            tags=args.tags,
            # The cluster role's policy before the cluster, and (on delete) after it.
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect, depends_on=cluster_role_attachments),
        )
        if args.karpenter_discovery:
            # EKS creates the cluster security group (the managed nodes' one); a tag resource marks it.
            for key, value in self._discovery_tags(args).items():
                aws.ec2.Tag(
                    f"{name}-node-sg-discovery",
                    resource_id=self.cluster.vpc_config.cluster_security_group_id,
                    key=key,
                    value=value,
                    opts=child,
                )
        if unreachable := runner_warning(args):
            pulumi.log.warn(f"EksCluster '{name}': {unreachable}", resource=self)
        self.oidc_issuer_url: pulumi.Output[str] = self.cluster.identities.apply(oidc_issuer)
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
        # The cluster handle (elastic_gpu.cluster_handle.EksClusterHandle).
        self.region: pulumi.Output[str] = pulumi.Output.from_input(args.region)
        self.node_role_arn: pulumi.Output[str] = self.node_role.arn
        self.subnet_ids: Mapping[str, pulumi.Input[str]] = self.network.private_subnet_ids
        self.oidc_provider_arn: pulumi.Output[str] = self.oidc_provider.arn
        # What node groups wait for: the node role's policy attachments (EKS needs them to join nodes, and
        # on delete to remove instances and ENIs) and the private route out (image pulls).
        self.node_dependencies: list[pulumi.Resource] = [*self.node_role_attachments, *self.network.egress]
        self.tags: dict[str, str] = dict(args.tags)
        #: the nodes reach the EKS API (the autoscaler's eks:DescribeNodegroup): through the NAT, and the
        #: `eks` interface endpoint with `ecr_endpoints`
        self.eks_api_reachable: bool | None = True
        #: how the cluster admits nodes and users (access entries: its access_config above)
        self.authentication_mode: pulumi.Output[str] | None = pulumi.Output.from_input("API")
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "kubeconfig": self.kubeconfig,
                "oidc_provider_arn": self.oidc_provider.arn,
                "node_role_arn": self.node_role.arn,
            }
        )

    @staticmethod
    def _discovery_tags(args: EksClusterArgs) -> dict[str, str]:
        return {KARPENTER_DISCOVERY_TAG_KEY: args.cluster_name} if args.karpenter_discovery else {}

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


@documented_component(None, handle=EksClusterHandle)
class ExistingEksCluster(ExistingCluster):
    """An EKS cluster this library did not create, as a cluster handle for pools and add-ons.

    Made by `EksCluster.existing(...)`, `EksCluster.from_cluster(...)` or `EksCluster.from_pulumi_eks(...)`; every
    name and ARN may be an Output (another resource's, or a StackReference's).
    Declares no cloud resource, except the IAM OIDC provider `from_cluster(create_oidc_provider=True)` asks for.
    Without `k8s_provider` it declares a Kubernetes
    provider whose kubeconfig (secret) is built as `aws eks update-kubeconfig`
    does: endpoint and CA from `aws.eks.getCluster`, tokens from `aws eks get-token`.

    Arguments: `cluster_name` (the EKS name); `kubernetes_version` (the minor,
    e.g. "1.33": picks the autoscaler image; `EksCluster.existing` takes it plain,
    `from_pulumi_eks` and `from_cluster` may pass the cluster's `version` Output); `node_role_arn` (the IAM role the
    new node groups use; it needs the EKS worker, CNI and ECR read policies and an
    access entry of type EC2_LINUX); `subnet_ids` (zone -> private subnet id, the
    zones pools may use); `oidc_provider_arn` / `oidc_provider_url` (the cluster's
    IAM OIDC provider, for the autoscaler's IRSA role; `from_cluster(create_oidc_provider=True)` passes no ARN,
    and the handle declares the provider `<name>-oidc` for the issuer); `k8s_provider` (default:
    built as above); `region` (default: the AWS provider's region); `kubeconfig` (the kubeconfig that
    provider is built from; default: built as above); `tags` (on what the add-ons create, e.g. the autoscaler's
    IAM role); `node_security_group_ids` (the security groups the pools' nodes join; default: EKS's cluster
    security group); `authentication_mode` (the cluster's: API, API_AND_CONFIG_MAP or CONFIG_MAP, where EKS takes no
    access entry, so Karpenter is refused; default None: not checked); `made_by` (the constructor the user called,
    which its error messages name).
    """

    cloud = "aws"

    def __init__(
        self,
        resource_name: str,
        *,
        cluster_name: pulumi.Input[str],
        kubernetes_version: pulumi.Input[str],
        node_role_arn: pulumi.Input[str],
        subnet_ids: Mapping[str, pulumi.Input[str]],
        oidc_provider_arn: pulumi.Input[str] | None,
        oidc_provider_url: pulumi.Input[str],
        k8s_provider: k8s.Provider | None = None,
        region: pulumi.Input[str] | None = None,
        kubeconfig: pulumi.Input[str] | None = None,
        tags: Mapping[str, str] | None = None,
        node_security_group_ids: Sequence[pulumi.Input[str]] | None = None,
        authentication_mode: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
        made_by: str = "EksCluster.existing",
    ) -> None:
        where = f"{made_by} '{resource_name}': "
        problems = input_str_problems(
            where,
            cluster_name=cluster_name,
            node_role_arn=node_role_arn,
            oidc_provider_url=oidc_provider_url,
            **({} if oidc_provider_arn is None else {"oidc_provider_arn": oidc_provider_arn}),
        )
        if not isinstance(kubernetes_version, pulumi.Output):
            problems += version_problems(where, kubernetes_version)
        problems += subnet_ids_problems(where, subnet_ids, known_region(region))
        if region is not None and not is_input_str(region):
            problems.append(f"{where}region: must be a string or an Output, got {shown_value(region)}")
        problems += k8s_provider_problems(where, k8s_provider)
        raise_if(problems, source=f"{made_by} '{resource_name}'")
        inputs = handle_inputs(list(subnet_ids), kubernetes_version, subnet_ids)
        # The subnets that give instances a public IP, for the policy pack's no-public-node-ips.
        inputs[PUBLIC_SUBNET_IDS_INPUT] = public_subnet_ids(list(subnet_ids.values()), region)
        super().__init__(EXISTING_TYPE_TOKEN, resource_name, inputs, opts)
        invoke_opts = pulumi.InvokeOutputOptions(parent=self)
        self.cluster_name: pulumi.Output[str] = pulumi.Output.from_input(cluster_name)
        self.region: pulumi.Output[str] = (
            pulumi.Output.from_input(region) if region is not None else aws.get_region_output(opts=invoke_opts).region
        )
        self.node_role_arn: pulumi.Output[str] = pulumi.Output.from_input(node_role_arn)
        self.subnet_ids: Mapping[str, pulumi.Input[str]] = dict(subnet_ids)
        self.oidc_issuer_url: pulumi.Output[str] = pulumi.Output.from_input(oidc_provider_url)
        if oidc_provider_arn is None:  # EksCluster.from_cluster(create_oidc_provider=True)
            oidc_provider_arn = aws.iam.OpenIdConnectProvider(
                f"{resource_name}-oidc",
                url=self.oidc_issuer_url,
                client_id_lists=["sts.amazonaws.com"],
                tags=dict(tags or {}),
                opts=pulumi.ResourceOptions(parent=self),
            ).arn
        self.oidc_provider_arn: pulumi.Output[str] = pulumi.Output.from_input(oidc_provider_arn)
        self.node_dependencies: list[pulumi.Resource] = []
        if node_security_group_ids is not None:
            #: The security groups the pools' nodes join (EksNodeSecurityGroups); absent: EKS's cluster group.
            self.node_security_group_ids: list[pulumi.Input[str]] = list(node_security_group_ids)
        #: unknown here: whether the nodes reach the EKS API (a route out, or an `eks` interface endpoint)
        self.eks_api_reachable: bool | None = None
        #: API, API_AND_CONFIG_MAP or CONFIG_MAP: whether access entries admit nodes (Karpenter's); None: not known
        self.authentication_mode: pulumi.Output[str] | None = (
            None if authentication_mode is None else pulumi.Output.from_input(authentication_mode)
        )
        self._plain_facts(list(subnet_ids), kubernetes_version, tags)

        def from_cluster() -> pulumi.Input[str]:
            if kubeconfig is not None:
                return kubeconfig
            found = aws.eks.get_cluster_output(name=self.cluster_name, opts=invoke_opts)
            return pulumi.Output.all(
                self.cluster_name, found.endpoint, found.certificate_authorities[0].data, self.region
            ).apply(lambda a: _kubeconfig(a[0], a[1], a[2], a[3]))

        self._use_provider(resource_name, k8s_provider, from_cluster)
        self.register_outputs({"cluster_name": self.cluster_name, "node_role_arn": self.node_role_arn})


def public_subnet_ids(
    subnet_ids: list[pulumi.Input[str]], region: pulumi.Input[str] | None
) -> pulumi.Output[list[str]]:
    """The ids among `subnet_ids` whose subnet maps public IPs on launch (aws.ec2.get_subnet)."""
    read = [aws.ec2.get_subnet_output(id=s, region=region) for s in subnet_ids]
    return pulumi.Output.all(*[r.apply(lambda x: x.id if x.map_public_ip_on_launch else "") for r in read]).apply(
        lambda ids: [i for i in ids if i]
    )


def _access_config(cluster: aws.eks.Cluster) -> Any:
    """The EKS cluster's access_config output (an Output, which the caller's apply unwraps)."""
    return cluster.access_config


def authentication_mode_of(access_config: Any) -> str:
    """The cluster's authentication mode as EKS reports it; a cluster created without one is in EKS's default
    (DEFAULT_AUTHENTICATION_MODE: CONFIG_MAP through the API, an SDK or CloudFormation)."""
    mode = getattr(access_config, "authentication_mode", None) if access_config is not None else None
    return mode or DEFAULT_AUTHENTICATION_MODE


def oidc_issuer(identities: Sequence[aws.eks.outputs.ClusterIdentity]) -> str:
    """The cluster's OIDC issuer URL: EKS gives a cluster one identity with one OIDC issuer."""
    oidcs = identities[0].oidcs
    issuer = oidcs[0].issuer if oidcs else None
    assert issuer is not None, "an EKS cluster has an OIDC issuer"
    return issuer


def warn_if_shared_role(where: str, node_role_arn: pulumi.Input[str], cluster: pulumi_eks.Cluster) -> None:
    """Warn when the node role given is one of the pulumi-eks cluster's instance roles (known at preview
    for roles that exist or are declared with a name; a warning can come late without harm)."""

    def arns_of(roles: Sequence[aws.iam.Role]) -> pulumi.Output[list[str]]:
        return pulumi.Output.all(*[r.arn for r in roles])

    instance_role_arns: pulumi.Output[list[str]] = cluster.instance_roles.apply(arns_of)

    def warn(arns: list[Any]) -> None:
        if arns[0] in arns[1]:
            pulumi.log.warn(
                f"{where}node_role_arn: the pulumi-eks cluster's instance role, which its self-managed nodes use "
                f"too. {SHARED_NODE_ROLE_RISK}"
            )

    pulumi.Output.all(node_role_arn, instance_role_arns).apply(warn)


def when_unknown(value: pulumi.Output[Any], act: Callable[[], None]) -> None:
    """Call `act` once `value` turns out unknown (in a preview); an `apply` would skip it instead."""

    async def check() -> None:
        if not await value.is_known():
            act()

    # An Output of the check, so that the program waits for it (Pulumi tracks every Output).
    _checked: pulumi.Output[None] = pulumi.Output.from_input(check())


def subnet_ids_problems(where: str, subnet_ids: Any, region: str | None = None) -> list[str]:
    """A map of zone name -> private subnet id, each zone a zone of `region` (when known before deployment)."""
    if not isinstance(subnet_ids, Mapping) or not subnet_ids:
        hint = " (a list has no zones: the node groups are per zone)" if isinstance(subnet_ids, list | tuple) else ""
        return [
            f"{where}subnet_ids: must map each zone to a private subnet id, e.g. "
            f'{{"us-east-1a": "subnet-0abc..."}}{hint}, got {shown_value(subnet_ids)}'
        ]
    problems = [f"{where}subnet_ids: zone {z!r} must be a plain string" for z in subnet_ids if not isinstance(z, str)]
    problems += [
        f"{where}subnet_ids[{z!r}]: must be a subnet id (a string or an Output), got {shown_value(v)}"
        for z, v in subnet_ids.items()
        if not is_input_str(v)
    ]
    if not problems:
        problems += aws_rules.zone_problems(lambda _, z: f"{where}subnet_ids[{z!r}]", region, list(subnet_ids))
    return problems


def known_region(region: object) -> str | None:
    """The region when it is known before deployment: the argument, else the AWS provider's `aws:region`
    config (an Output region, or none configured: None)."""
    if isinstance(region, str):
        return region
    return pulumi.Config("aws").get("region") if region is None else None


def _version_of(where: str, kubernetes_version: str | None, cluster_version: pulumi.Output[Any]) -> pulumi.Input[str]:
    """The handle's minor: the one given, else the cluster's `version` output (warned about when unknown)."""
    if kubernetes_version is not None:
        return kubernetes_version
    when_unknown(cluster_version, lambda: pulumi.log.warn(where + UNKNOWN_VERSION_WARNING))
    return cluster_version


def _zones_or_subnets_problems(where: str, subnet_ids: object, zones: list[str] | None) -> list[str]:
    """A handle read from a cluster takes `subnet_ids` (zone -> subnet) or `zones` (the cluster's subnet there)."""
    if subnet_ids is not None and zones is not None:
        return [f"{where}subnet_ids and zones: give one (zones picks the cluster's own subnet in each zone)"]
    if subnet_ids is None and zones is None:
        return [
            f"{where}subnet_ids or zones: required: the zones the GPU node groups use (one group per zone), as a "
            'zone -> subnet id map, or as zone names, e.g. zones=["us-west-2a", "us-west-2b"], each given the '
            "cluster's own subnet in that zone"
        ]
    if zones is not None:
        # zones of the AWS provider's region (`aws:region`), where the cluster's subnets are
        return zones_problems(where, zones) or aws_rules.zone_problems(
            lambda _, z: f"{where}zones[{z!r}]", known_region(None), list(zones)
        )
    return []


def _subnets_in_zones(
    zones: list[str], cluster_subnet_ids: pulumi.Input[list[str]], opts: pulumi.InvokeOutputOptions
) -> dict[str, pulumi.Output[str]]:
    """Zone -> the cluster's private subnet in that zone (the first by id among the private ones), read with
    `aws.ec2.getSubnets` and each candidate's `public_reason`. A cluster gets public subnets too (pulumi-eks passes
    `[...publicIds, ...privateIds]`, cluster.ts createCore), and GPU nodes in a public one get a public IP, or
    none and no way out; a zone with only public subnets is refused (known at preview once the subnets exist)."""

    def private(zone: str, ids: list[str]) -> pulumi.Output[tuple[str | None, str | None]]:
        if not ids:
            raise ValueError(f"the cluster has no subnet in zone {zone}; give subnet_ids= or other zones")
        reasons = [pulumi.Output.from_input(public_reason(i, opts)) for i in sorted(ids)]
        return pulumi.Output.all(*reasons).apply(lambda why: _first_private(zone, sorted(ids), why))

    def subnet_in(zone: str) -> pulumi.Output[tuple[str | None, str | None]]:
        filters = pulumi.Output.from_input(cluster_subnet_ids).apply(
            lambda ids: [
                aws.ec2.GetSubnetsFilterArgs(name="subnet-id", values=ids),
                aws.ec2.GetSubnetsFilterArgs(name="availability-zone", values=[zone]),
            ]
        )
        return aws.ec2.get_subnets_output(filters=filters, opts=opts).ids.apply(lambda ids: private(zone, ids))

    # Every zone is judged before any is refused, so the error names each zone without a private subnet, in the
    # zones' order (one apply per zone would raise whichever the engine resolved first).
    judged = pulumi.Output.all(*[subnet_in(zone) for zone in zones]).apply(_all_private)
    picked = {zone: judged.apply(_nth(i)) for i, zone in enumerate(zones)}
    if picked:
        when_unknown(
            pulumi.Output.all(*picked.values()),
            lambda: pulumi.log.warn(
                "zones: the cluster's subnets are not known until they are created, so which of them are private "
                "(no public IP on launch, no route to an internet gateway) is judged during `pulumi up`, which "
                "fails for a zone with only public subnets; give subnet_ids= to know it at preview"
            ),
        )
    return picked


def _first_private(zone: str, ids: list[str], reasons: list[str | None]) -> tuple[str | None, str | None]:
    """(the zone's first private subnet, None), or (None, why the zone has none)."""
    picked = [i for i, why in zip(ids, reasons, strict=True) if why is None]
    if picked:
        return picked[0], None
    public = "; ".join(f"{i} {why}" for i, why in zip(ids, reasons, strict=True))
    return None, (
        f"zones: the cluster has no private subnet in {zone} ({public}): GPU nodes there would get a public IP "
        "(or none, and no way out). Give subnet_ids= {zone: private subnet id} of subnets that reach the "
        "internet through a NAT gateway, or leave the zone out"
    )


def _nth(i: int) -> Callable[[list[str]], str]:
    """The i-th of the zones' subnets."""
    return lambda ids: ids[i]


def _all_private(judged: list[tuple[str | None, str | None]]) -> list[str]:
    """Each zone's private subnet, or one ConfigError naming every zone that has none."""
    problems = [why for _, why in judged if why is not None]
    if problems:
        raise ConfigError(problems, source="EksCluster handle")
    return [subnet for subnet, _ in judged if subnet is not None]


def _routes_to_internet(routes: Sequence[Any]) -> str | None:
    """The internet gateway a route table sends non-private addresses to (pulumi-eks nodegroup.ts
    computeWorkerSubnets: a route with a gateway to a CIDR outside 10/8, 172.16/12, 192.168/16), or None."""
    private = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
    for route in routes:
        gateway, cidr = getattr(route, "gateway_id", None) or "", getattr(route, "cidr_block", None) or ""
        if not gateway or gateway == "local" or not cidr:
            continue
        net = ipaddress.ip_network(cidr, strict=False)
        if not any(net.version == p.version and net.subnet_of(p) for p in private):  # type: ignore[arg-type]
            return gateway
    return None


def public_reason(subnet_id: str, opts: pulumi.InvokeOutputOptions | None = None) -> pulumi.Output[str | None]:
    """Why the subnet is public (it maps a public IP on launch, or its route table, explicit or else the VPC's
    main one, routes to an internet gateway: pulumi-eks's own test, nodegroup.ts getRouteTableAsync), or None
    for a private one. A route table that cannot be read leaves mapPublicIpOnLaunch to decide."""
    subnet = aws.ec2.get_subnet_output(id=subnet_id, opts=opts)

    def judge(found: Any) -> str | None:
        if found.map_public_ip_on_launch:
            return "maps a public IP on launch"
        try:
            table = aws.ec2.get_route_table(subnet_id=subnet_id)
        except Exception:  # no explicit table: the VPC's main one ("no matching EC2 Route Table found")
            try:
                main = aws.ec2.get_route_tables(
                    vpc_id=found.vpc_id,
                    filters=[aws.ec2.GetRouteTablesFilterArgs(name="association.main", values=["true"])],
                )
                table = aws.ec2.get_route_table(route_table_id=main.ids[0])
            except Exception:
                return None
        gateway = _routes_to_internet(table.routes or [])
        return None if gateway is None else f"routes to the internet gateway {gateway}"

    return subnet.apply(judge)
