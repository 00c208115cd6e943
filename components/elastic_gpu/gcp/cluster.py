"""GkeCluster: a GKE Standard control plane ready for elastic GPU pools."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
from pydantic import Field

from elastic_gpu.args_doc import documented, documented_component
from elastic_gpu.cluster_handle import (
    ExistingCluster,
    GkeClusterHandle,
    handle_inputs,
    input_str_problems,
    k8s_provider_problems,
    raise_if,
    required_keywords,
    version_problems,
    zones_problems,
)
from elastic_gpu.gcp import GKE_EXISTING_CLUSTER
from elastic_gpu.gcp import config_rules as gcp_rules
from elastic_gpu.gcp.autoprovisioning import PROVISIONER
from elastic_gpu.gcp.autoprovisioning.cluster import AutoProvisioningLimits, cluster_autoscaling_args
from elastic_gpu.gcp.autoprovisioning.spec import AUTO_CREATION_WITHOUT_NAP, auto_creation_needs_nap
from elastic_gpu.gcp.pools import node_network_tag
from elastic_gpu.kubeconfig import exec_kubeconfig
from elastic_gpu.settings import DEFAULT_NETWORK_CIDR, ClusterSettings, ProtectSetting, RegionSetting
from elastic_gpu.settings.base import ArgsModel
from elastic_gpu.settings.gcp import DEFAULT_RELEASE_CHANNEL as DEFAULT_RELEASE_CHANNEL
from elastic_gpu.settings.gcp import GkeClusterOptions
from elastic_gpu.validation import args_type_problems

TYPE_TOKEN = "elastic-gpu:index:GkeCluster"
EXISTING_TYPE_TOKEN = GKE_EXISTING_CLUSTER

#: On GKE the cluster autoscaler is Google's: this profile scales down sooner and
#: packs pods tighter than BALANCED, which suits GPU pools that should return to 0.
AUTOSCALING_PROFILE = "OPTIMIZE_UTILIZATION"
#: Default None: the cluster creates its own VPC network (never the project's `default`); a name or self
#: link joins that network instead.
DEFAULT_NETWORK: str | None = None
#: The nodes' range of the subnetwork the cluster creates (the stack's `cluster.networkCidr` default).
DEFAULT_NODE_CIDR = DEFAULT_NETWORK_CIDR
#: Secondary range names on the cluster's own subnetwork (ip_allocation_policy names them).
PODS_RANGE = "pods"
SERVICES_RANGE = "services"
#: Registries outside Google that GPU workloads and add-ons pull from: NVIDIA's (CUDA, Triton, the GPU operator),
#: Docker Hub, Quay and the Kubernetes project's (Kueue: registry.k8s.io/kueue). A node without an external IP
#: reaches Google's own registries through Private Google Access (Artifact Registry, gcr.io: GKE's NVIDIA driver
#: installer and device plugin come from there), and anything else only through a Cloud NAT (GKE "About private
#: clusters": nodes have no outbound internet access; "Cloud NAT" for egress).
PUBLIC_REGISTRIES = ("nvcr.io", "docker.io", "quay.io", "registry.k8s.io")
#: The finding for private nodes whose network has no Cloud NAT the stack knows of.
NO_NAT_WARNING = (
    "private nodes without a Cloud NAT: they have no external IP, so they pull only from Google's registries "
    "(Private Google Access), not from " + ", ".join(PUBLIC_REGISTRIES) + ". A GPU pod whose image is there "
    "(NVIDIA's CUDA and Triton images, Docker Hub, Kueue's controller) stays in ImagePullBackOff while its node "
    "scales up and bills. Add a Cloud Router and NAT for the nodes' subnetwork in the cluster's region (`gcloud "
    "compute routers nats create <nat> --router=<router> --region=<region> --nat-custom-subnet-ip-ranges="
    "<subnetwork> --auto-allocate-nat-external-ips`), then say so: {setting}; or mirror the images into "
    "Artifact Registry"
)


@documented
class GkeClusterArgs(ArgsModel, GkeClusterOptions, ProtectSetting, ClusterSettings, RegionSetting):
    """A GKE cluster's settings (elastic_gpu.settings' cluster models and GCP's cluster part, a stack file's
    `cluster`) and what only a program gives, or gives under its own name; keyword arguments."""

    model_config = ArgsModel.model_config

    cluster_name: str
    """GKE cluster name; a stack file's `cluster.name`."""
    project: str
    """GCP project of the cluster; its Workload Identity pool is `<project>.svc.id.goog`. Required here; a
    stack file's `cluster.project` (GcpProjectOptions) is optional in its model and required on gcp by its rules."""
    node_cidr: str = DEFAULT_NODE_CIDR
    """Without `network`: the primary range of the created subnetwork (the nodes' addresses); a stack file's
    `cluster.networkCidr`."""
    tags: dict[str, str] = Field(default_factory=dict)
    """GCP resource labels on the cluster."""
    public_access: bool = True
    """Default true: a public control-plane endpoint; false: private endpoint only (needs private_nodes); a stack
    file's `cluster.apiAccess.public`."""
    authorized_networks: list[str] | None = None
    """IPv4 ranges allowed to the control plane (GKE master authorized networks); default: anywhere; a stack
    file's `cluster.apiAccess.publicCidrs`."""
    provisioner: str | None = None
    """Default None (or "cluster-autoscaler"): every pool declares its node pools. "auto-provisioning": each spot
    GPU pool on the cluster is a ComputeClass GKE auto-creates node pools for (elastic_gpu/gcp/autoprovisioning),
    with cluster-wide node auto-provisioning only when `auto_provisioning` gives its limits; a stack file's
    top-level `provisioner`."""
    auto_provisioning: AutoProvisioningLimits | None = None
    """Default None: node auto-provisioning off. Set: on within these resource limits, which cap every node,
    auto-created or not (and GKE may create node pools for any pending Pod within them); implies provisioner
    "auto-provisioning". Required with it where `kubernetes_version` may be below 1.33.3-gke.1136000 (GKE creates a
    ComputeClass's node pools without it only from there on); without it only the project's regional GPU quota
    bounds the classes' pools. A stack file derives it from the pools (`cluster.nodeAutoProvisioning`)."""

    @property
    def auto_creates(self) -> bool:
        """Spot GPU pools are ComputeClasses GKE auto-creates node pools for."""
        return self.provisioner == PROVISIONER or self.auto_provisioning is not None

    @property
    def location(self) -> str:
        return self.region if self.regional else self.zones[0]

    @property
    def node_service_account_email(self) -> str:
        """The email every node runs as: `node_service_account`, or the one the cluster creates (its email
        follows from its id and project, so node-pool names can be derived from it before it exists)."""
        if self.node_service_account is not None:
            return self.node_service_account
        return f"{gcp_rules.node_service_account_id(self.cluster_name)}@{self.project}.iam.gserviceaccount.com"


def gke_cluster_problems(name: str, args: GkeClusterArgs) -> list[str]:
    """The argument types, the zones of the region, the network and the node service account (the stack
    config's own rules, elastic_gpu/gcp/config_rules.py)."""
    where = f"GkeCluster '{name}': GkeClusterArgs."
    if problems := args_type_problems(where, args):
        return problems
    problems = gcp_rules.zone_problems(lambda i, _: f"{where}zones[{i}]", args.region, args.zones)
    problems += gcp_rules.network_problems(
        lambda key: where + ("node_cidr" if key == "network_cidr" else key),
        network=args.network,
        subnetwork=args.subnetwork,
        node_cidr=args.node_cidr,
        node_cidr_set=args.node_cidr != DEFAULT_NODE_CIDR,
        control_plane_cidr=args.control_plane_cidr,
        node_service_account=args.node_service_account,
        ref=lambda key: "node_cidr" if key == "network_cidr" else key,
    )
    if unknown := gcp_rules.provisioner_problems(where, args.provisioner):
        problems += unknown
    elif args.auto_provisioning is not None and args.provisioner not in (None, PROVISIONER):
        problems.append(
            f"{where}auto_provisioning: node auto-provisioning's limits make spot pools ComputeClasses, which "
            f"provisioner {args.provisioner!r} does not; allowed: provisioner None or {PROVISIONER!r}, or no limits"
        )
    elif args.auto_creates and args.auto_provisioning is None and auto_creation_needs_nap(args.kubernetes_version):
        problems.append(
            f"{where}auto_provisioning: None, but kubernetes_version {args.kubernetes_version!r} may run below "
            f"{AUTO_CREATION_WITHOUT_NAP}, where GKE creates a ComputeClass's node pools only with node "
            "auto-provisioning on; allowed: AutoProvisioningLimits(...) (elastic_gpu.gcp.autoprovisioning.cluster), "
            f"or kubernetes_version {AUTO_CREATION_WITHOUT_NAP} or later"
        )
    account_id = gcp_rules.node_service_account_id(args.cluster_name)
    if args.node_service_account is None and not re.fullmatch(gcp_rules.SERVICE_ACCOUNT_ID_PATTERN, account_id):
        problems.append(
            f"{where}cluster_name: the node service account id {account_id!r} derived from it is not 6 to 30 "
            "lowercase letters, digits and '-' starting with a letter; give node_service_account instead"
        )
    return problems


@documented_component(GkeClusterArgs, handle=GkeClusterHandle)
class GkeCluster(pulumi.ComponentResource):
    """A GKE Standard cluster with its default node pool removed.

    Creates, unless the args bring their own, a custom-mode VPC network with one
    subnetwork (Pod and Service ranges) and a node service account holding only
    roles/container.defaultNodeServiceAccount, which every node pool of the cluster
    runs as; with `enable_services` the project APIs it calls. Then
    `gcp.container.Cluster` (regional or zonal, release channel,
    Workload Identity, VPC-native, optional private nodes, cluster autoscaling
    profile OPTIMIZE_UTILIZATION: on GKE the cluster autoscaler is managed, and
    this profile plus each pool's autoscaling is all of it); with private nodes a
    Cloud Router and NAT so nodes can pull images; a kubeconfig (secret) that
    authenticates through `gke-gcloud-auth-plugin`; and a Kubernetes provider
    built from it, which the Kubernetes-side components use.
    """

    args: GkeClusterArgs
    """The arguments the cluster was declared with."""
    cluster: gcp.container.Cluster
    """The GKE Standard control plane."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) that authenticates with gke-gcloud-auth-plugin."""

    cloud = "gcp"

    @classmethod
    def existing(
        cls,
        resource_name: str,
        *,
        cluster_name: pulumi.Input[str],
        project: pulumi.Input[str],
        location: pulumi.Input[str],
        zones: Sequence[str],
        kubernetes_version: str,
        k8s_provider: k8s.Provider | None = None,
        tags: Mapping[str, str] | None = None,
        private_nodes: bool | None = None,
        provisioner: str | None = None,
        node_service_account: str | None = None,
        cloud_nat: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> ExistingGkeCluster:
        """A handle on a GKE Standard cluster this library did not create (see `ExistingGkeCluster`).

        `private_nodes`: set True when the cluster's nodes are private (its
        privateClusterConfig.enablePrivateNodes), so the pools' node pools are private too; False
        gives them public IPs. Left None, the pools inherit a setting the policy pack cannot see, and
        `no-public-node-ips` fails for every pool's node pool.

        `provisioner`: "auto-provisioning" makes each spot GPU pool a ComputeClass that GKE
        auto-creates node pools for, and no node pool. Requirement: the cluster has node
        auto-provisioning enabled (`gcloud container clusters update --enable-autoprovisioning`) with
        `cpu` and `memory` limits that cover every node, and a limit for each pool's GPU type of at
        least (maxSize + fallbackMaxSize) x GPUs per node (elastic_gpu/gcp/autoprovisioning/cluster.py);
        GKE creates no node pool of a GPU type without a limit. The program cannot see those limits:
        check them with `gcloud container clusters describe <name> --format='value(autoscaling)'`.

        `node_service_account`: the email the pools' nodes run as (a pool's own `node_identity` wins);
        None leaves GKE's default, the Compute Engine default account.

        `cloud_nat`: True when a Cloud NAT serves the nodes' subnetwork; default False: on a cluster with private
        nodes (`private_nodes=True`, or its privateClusterConfig read through `gcp.container.getCluster`) the
        preview warns which registries the nodes cannot pull from. The node pools ask for the GKE metadata server
        only when getCluster reports a Workload Identity pool.
        """
        return ExistingGkeCluster(
            resource_name,
            cluster_name=cluster_name,
            project=project,
            location=location,
            zones=zones,
            kubernetes_version=kubernetes_version,
            k8s_provider=k8s_provider,
            tags=tags,
            private_nodes=private_nodes,
            provisioner=provisioner,
            node_service_account=node_service_account,
            cloud_nat=cloud_nat,
            opts=opts,
        )

    @classmethod
    @required_keywords("zones")
    def from_cluster(
        cls,
        resource_name: str,
        cluster: gcp.container.Cluster,
        *,
        zones: Sequence[str] | None = None,
        kubernetes_version: str | None = None,
        k8s_provider: k8s.Provider | None = None,
        tags: Mapping[str, str] | None = None,
        private_nodes: bool | None = None,
        provisioner: str | None = None,
        node_service_account: pulumi.Input[str] | None = None,
        cloud_nat: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> ExistingGkeCluster:
        """A handle on a `gcp.container.Cluster` (GKE Standard) the program declares: its name, project,
        location, Kubernetes version, endpoint and CA are read from the resource, so nothing is typed twice; so
        are its Workload Identity pool (node pools ask for the GKE metadata server only when it has one), its
        private nodes and its nodes' service account.

        `zones` (required, plain): the zones the GPU node pools use, within the cluster's location (e.g. the
        program's `gcp:zone`). `kubernetes_version`: default None: the cluster's `min_master_version` when the
        program sets one, else its `master_version` output (the version GKE runs; unknown at preview until the
        cluster exists); the node pools take the cluster's version (GKE's default for a new node pool).
        `k8s_provider`: default: one whose kubeconfig (secret) takes the cluster's endpoint and CA and gets
        tokens from `gke-gcloud-auth-plugin`. `private_nodes`, `provisioner`: as in `GkeCluster.existing`.
        `node_service_account`: the email the GPU nodes run as (may be an Output, e.g. a `gcp.serviceaccount.Account`'s
        `email`); default: the cluster's `node_config.service_account` when the program declares one, else GKE's
        default (the Compute Engine default account). An Output is not part of the node-pool names: their digest
        marks "the cluster's account", so a later change of that email replaces a node pool under its own name,
        which GKE refuses while the old one exists; pass a plain email to have such a change rename the pools.
        `cloud_nat`: True when a Cloud NAT serves the nodes' subnetwork; default False: a cluster whose
        privateClusterConfig has private nodes gets a preview warning naming the registries they cannot reach.
        """
        where = f"GkeCluster.from_cluster '{resource_name}': "
        problems = []
        if not isinstance(cluster, gcp.container.Cluster):
            problems.append(
                f"{where}cluster: must be a pulumi_gcp.container.Cluster, got {type(cluster).__name__}; for a "
                "cluster the program does not declare use GkeCluster.existing(...)"
            )
        if zones is None:
            problems.append(f'{where}zones: required: the zones the GPU node pools use, e.g. ["us-central1-a"]')
        if kubernetes_version is not None:
            problems += version_problems(where, kubernetes_version)
        raise_if(problems, source=f"GkeCluster.from_cluster '{resource_name}'")
        assert zones is not None
        version: pulumi.Input[str] = kubernetes_version or cluster.min_master_version.apply(
            lambda minimum: minimum or cluster.master_version
        )
        read = ClusterFacts(
            workload_pool=cluster.workload_identity_config.apply(lambda w: w.workload_pool if w else None),
            private_nodes=cluster.private_cluster_config.apply(lambda c: bool(c and c.enable_private_nodes)),
        )
        account: pulumi.Input[str | None] = (
            node_service_account
            if node_service_account is not None
            else cluster.node_config.apply(lambda c: c.service_account if c else None)
        )
        return ExistingGkeCluster(
            resource_name,
            cluster_name=cluster.name,
            project=cluster.project,
            location=cluster.location,
            zones=zones,
            kubernetes_version=version,
            k8s_provider=k8s_provider,
            tags=tags,
            private_nodes=private_nodes,
            provisioner=provisioner,
            node_service_account=account,
            cloud_nat=cloud_nat,
            read=read,
            kubeconfig=pulumi.Output.all(
                cluster.name, cluster.endpoint, cluster.master_auth.cluster_ca_certificate
            ).apply(lambda a: _kubeconfig(a[0], a[1], a[2])),
            opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(depends_on=[cluster]), opts),
            made_by="GkeCluster.from_cluster",
        )

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        raise_if(gke_cluster_problems(name, args), source=f"GkeCluster '{name}'")
        super().__init__(TYPE_TOKEN, name, handle_inputs(args.zones, args.kubernetes_version), opts)
        self.args = args
        child = pulumi.ResourceOptions(parent=self)
        private = (
            gcp.container.ClusterPrivateClusterConfigArgs(
                enable_private_nodes=True,
                enable_private_endpoint=not args.public_access,
                master_ipv4_cidr_block=args.control_plane_cidr,
            )
            if args.private_nodes
            else None
        )
        services = self._services(name, args)
        after_services = pulumi.ResourceOptions(parent=self, depends_on=services)
        self.node_service_account: str = args.node_service_account_email
        node_identity: list[pulumi.Resource] = []
        if args.node_service_account is None:
            account = gcp.serviceaccount.Account(
                f"{name}-nodes",
                account_id=gcp_rules.node_service_account_id(args.cluster_name),
                project=args.project,
                display_name=f"GKE nodes of {args.cluster_name}",
                opts=after_services,
            )
            node_identity.append(
                gcp.projects.IAMMember(
                    f"{name}-nodes-role",
                    project=args.project,
                    role=gcp_rules.NODE_SERVICE_ACCOUNT_ROLE,
                    member=account.email.apply(lambda e: f"serviceAccount:{e}"),
                    opts=child,
                )
            )
        network: pulumi.Input[str]
        subnetwork: pulumi.Input[str] | None
        if args.network is None:
            net = gcp.compute.Network(
                f"{name}-net",
                name=f"{args.cluster_name}-net",
                project=args.project,
                auto_create_subnetworks=False,
                opts=after_services,
            )
            subnet = gcp.compute.Subnetwork(
                f"{name}-subnet",
                name=f"{args.cluster_name}-nodes",
                project=args.project,
                region=args.region,
                network=net.id,
                ip_cidr_range=args.node_cidr,
                # Nodes without public IPs reach Google APIs (image pulls, logging) privately.
                private_ip_google_access=True,
                secondary_ip_ranges=[
                    gcp.compute.SubnetworkSecondaryIpRangeArgs(
                        range_name=PODS_RANGE, ip_cidr_range=gcp_rules.PODS_CIDR
                    ),
                    gcp.compute.SubnetworkSecondaryIpRangeArgs(
                        range_name=SERVICES_RANGE, ip_cidr_range=gcp_rules.SERVICES_CIDR
                    ),
                ],
                opts=child,
            )
            network, subnetwork = net.id, subnet.id
            own_subnetwork: pulumi.Output[str] | None = subnet.id
            ip_allocation = gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=PODS_RANGE, services_secondary_range_name=SERVICES_RANGE
            )
        else:
            network, subnetwork = args.network, args.subnetwork
            own_subnetwork = None
            ip_allocation = gcp.container.ClusterIpAllocationPolicyArgs()
        #: The VPC network the cluster's nodes are in (firewall rules for them target it).
        self.network: pulumi.Output[str] = pulumi.Output.from_input(network)
        self.cluster = gcp.container.Cluster(
            f"{name}-gke",
            name=args.cluster_name,
            project=args.project,
            location=args.location,
            network=network,
            subnetwork=subnetwork,
            # The default node pool lives only until the cluster exists; it too runs as the node account.
            node_config=gcp.container.ClusterNodeConfigArgs(service_account=self.node_service_account),
            # Pools are separate NodePool resources; GKE needs one node to create the cluster.
            remove_default_node_pool=True,
            initial_node_count=1,
            min_master_version=args.kubernetes_version,
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=args.release_channel),
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=workload_pool_of(args.project)
            ),
            ip_allocation_policy=ip_allocation,
            private_cluster_config=private,
            master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=[
                    gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block=c, display_name=c)
                    for c in args.authorized_networks or []
                ]
            )
            if args.authorized_networks
            # A private endpoint only: authorized networks on, none outside the VPC (gcloud refuses
            # --enable-private-endpoint without --enable-master-authorized-networks).
            else gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(cidr_blocks=[])
            if not args.public_access
            else None,
            cluster_autoscaling=cluster_autoscaling_args(
                args.auto_provisioning, args.zones, AUTOSCALING_PROFILE, self.node_service_account
            )
            if args.auto_provisioning
            # Off said, not left out: the provider keeps `enabled` (Optional, Computed) at its last value when the
            # program drops it (gcp/replacement.py KEPT_WHEN_DROPPED), so a cluster that had it would keep it.
            else gcp.container.ClusterClusterAutoscalingArgs(enabled=False, autoscaling_profile=AUTOSCALING_PROFILE),
            # Node pools GKE auto-creates carry the cluster's network tag, as ours do (firewall rules target it);
            # GKE documents nodePoolAutoConfig for node auto-provisioning-enabled clusters.
            node_pool_auto_config=gcp.container.ClusterNodePoolAutoConfigArgs(
                network_tags=gcp.container.ClusterNodePoolAutoConfigNetworkTagsArgs(
                    tags=[node_network_tag(args.cluster_name)]
                )
            )
            if args.auto_creates
            else None,
            deletion_protection=args.protect,
            resource_labels=args.tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                depends_on=[*services, *node_identity],
                # The default node pool's settings matter at creation only (the pool is then removed): a
                # later change must not replace the cluster.
                ignore_changes=["nodeConfig"],
            ),
        )
        if args.private_nodes and own_subnetwork is not None:
            # Egress for the cluster's own subnetwork only, in the network the cluster owns: a NAT on a joined
            # network would clash with one already there (a region's router takes one NAT per subnetwork), take
            # over other tenants' egress, and go with `pulumi destroy`.
            router = gcp.compute.Router(
                f"{name}-router", project=args.project, region=args.region, network=network, opts=child
            )
            gcp.compute.RouterNat(
                f"{name}-nat",
                project=args.project,
                region=args.region,
                router=router.name,
                nat_ip_allocate_option="AUTO_ONLY",
                source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
                subnetworks=[
                    gcp.compute.RouterNatSubnetworkArgs(name=own_subnetwork, source_ip_ranges_to_nats=["ALL_IP_RANGES"])
                ],
                opts=child,
            )
        elif args.private_nodes and not args.cloud_nat:
            setting = "cloud_nat=True (stack config cluster.cloudNat: true)"
            pulumi.log.warn(f"GkeCluster '{name}': {NO_NAT_WARNING.format(setting=setting)}", resource=self)
        self.cluster_name: pulumi.Output[str] = self.cluster.name
        self.location: pulumi.Output[str] = self.cluster.location
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(
            pulumi.Output.all(
                self.cluster.name, self.cluster.endpoint, self.cluster.master_auth.cluster_ca_certificate
            ).apply(lambda a: _kubeconfig(a[0], a[1], a[2]))
        )
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)
        # The cluster handle (elastic_gpu.cluster_handle.GkeClusterHandle).
        self.project: pulumi.Output[str] = pulumi.Output.from_input(args.project)
        #: None: node pools inherit the cluster's privateClusterConfig
        self.private_nodes: bool | None = None
        #: "auto-provisioning": spot pools on this cluster are ComputeClasses (the handle's `provisioner`)
        self.provisioner: str | None = PROVISIONER if args.auto_creates else None
        #: the cluster's Workload Identity pool: node pools ask for the GKE metadata server (the handle's
        #: optional `workload_pool`)
        self.workload_pool: str = workload_pool_of(args.project)
        self.tags: dict[str, str] = dict(args.tags)
        self.register_outputs(
            {"cluster_name": self.cluster_name, "location": self.location, "kubeconfig": self.kubeconfig}
        )

    def _services(self, name: str, args: GkeClusterArgs) -> list[pulumi.Resource]:
        """With `enable_services`: the project's APIs the stack calls, left on at destroy (other users)."""
        if not args.enable_services:
            return []
        apis = [*gcp_rules.REQUIRED_SERVICES, *([gcp_rules.IAM_SERVICE] if args.node_service_account is None else [])]
        return [
            gcp.projects.Service(
                f"{name}-{api.split('.')[0]}-api",
                project=args.project,
                service=api,
                disable_on_destroy=False,
                opts=pulumi.ResourceOptions(parent=self),
            )
            for api in apis
        ]

    @property
    def zones(self) -> list[str]:
        return list(self.args.zones)

    @property
    def kubernetes_version(self) -> str:
        return self.args.kubernetes_version


def workload_pool_of(project: str) -> str:
    """A project's Workload Identity pool (GKE: `<project>.svc.id.goog`)."""
    return f"{project}.svc.id.goog"


def _kubeconfig(cluster_name: str, endpoint: str, ca_data: str) -> str:
    """A kubeconfig that gets a token from `gke-gcloud-auth-plugin` (no long-lived credentials)."""
    plugin = {
        "command": "gke-gcloud-auth-plugin",
        "installHint": "gcloud components install gke-gcloud-auth-plugin",
        "provideClusterInfo": True,
    }
    return exec_kubeconfig(cluster_name, f"https://{endpoint}", ca_data, plugin)


@dataclass(frozen=True)
class ClusterFacts:
    """What a handle reads of a GKE cluster it did not create: from the program's `gcp.container.Cluster`
    (`from_cluster`) or from `gcp.container.getCluster` (`existing`)."""

    #: the Workload Identity pool (`<project>.svc.id.goog`), None on a cluster without Workload Identity
    workload_pool: pulumi.Input[str | None]
    #: privateClusterConfig.enablePrivateNodes
    private_nodes: pulumi.Input[bool]


@documented_component(None, handle=GkeClusterHandle)
class ExistingGkeCluster(ExistingCluster):
    """A GKE Standard cluster this library did not create, as a cluster handle for pools and add-ons.

    Made by `GkeCluster.existing(...)` or `GkeCluster.from_cluster(...)`. Names may be Outputs; `zones`
    (where the node pools go, each `<region>-<letter>`) must be plain, and so must `kubernetes_version`
    except when read from the cluster resource. Declares no GCP resource. Without `k8s_provider` it declares a
    Kubernetes provider whose kubeconfig (secret) is built as `gcloud container
    clusters get-credentials` does: endpoint and CA from `gcp.container.getCluster`,
    tokens from `gke-gcloud-auth-plugin`. GKE's autoscaler is managed per node
    pool, so nothing else about the cluster is needed.

    Arguments: `cluster_name` (the GKE name); `project` (the project that holds it); `location` (the
    cluster's zone or region); `zones` (where the node pools go, each `<region>-<letter>`; plain);
    `kubernetes_version` (the control plane's minor, e.g. "1.33"; plain); `k8s_provider` (default: built as
    above); `tags` (labels on what the add-ons create); `private_nodes` (True when the cluster's nodes are
    private: the node pools then set networkConfig.enablePrivateNodes; False: public node IPs; None (default):
    the node pools say nothing, and the `no-public-node-ips` policy fails for each of them, since it cannot
    see the cluster's own setting); `provisioner` ("auto-provisioning": each spot GPU pool is a ComputeClass
    GKE auto-creates node pools for, on a cluster with node auto-provisioning and limits that cover every
    pool; default: node pools); `node_service_account` (the email the pools' nodes run as; default: GKE's);
    `kubeconfig` (the kubeconfig the Kubernetes provider is built from; default: built as above); `cloud_nat`
    (True when a Cloud NAT serves the nodes' subnetwork; default False: private nodes get a preview warning
    naming the registries they cannot reach); `read` (the cluster's Workload Identity pool and private nodes;
    default: read through `gcp.container.getCluster`).
    """

    cloud = "gcp"

    def __init__(
        self,
        resource_name: str,
        *,
        cluster_name: pulumi.Input[str],
        project: pulumi.Input[str],
        location: pulumi.Input[str],
        zones: Sequence[str],
        kubernetes_version: pulumi.Input[str],
        k8s_provider: k8s.Provider | None = None,
        tags: Mapping[str, str] | None = None,
        private_nodes: bool | None = None,
        provisioner: str | None = None,
        node_service_account: pulumi.Input[str | None] | None = None,
        kubeconfig: pulumi.Input[str] | None = None,
        cloud_nat: bool = False,
        read: ClusterFacts | None = None,
        opts: pulumi.ResourceOptions | None = None,
        made_by: str = "GkeCluster.existing",
    ) -> None:
        where = f"{made_by} '{resource_name}': "
        problems = input_str_problems(where, cluster_name=cluster_name, project=project, location=location)
        problems += zones_problems(where, zones)
        if not problems:
            region = gcp_rules.location_region(location) if isinstance(location, str) else None
            problems += gcp_rules.zone_problems(lambda i, _: f"{where}zones[{i}]", region, list(zones))
        if not isinstance(kubernetes_version, pulumi.Output):  # an Output: the cluster's own (from_cluster)
            problems += version_problems(where, kubernetes_version)
        problems += k8s_provider_problems(where, k8s_provider)
        problems += gcp_rules.provisioner_problems(where, provisioner)
        if node_service_account is not None and not (
            isinstance(node_service_account, pulumi.Output)  # e.g. an Account's email: checked by IAM
            or (
                isinstance(node_service_account, str)
                and re.fullmatch(gcp_rules.SERVICE_ACCOUNT_PATTERN, node_service_account)
            )
        ):
            problems.append(
                f"{where}node_service_account: {node_service_account!r} is not a service account email; allowed: "
                "<name>@<project>.iam.gserviceaccount.com"
            )
        raise_if(problems, source=f"{made_by} '{resource_name}'")
        super().__init__(EXISTING_TYPE_TOKEN, resource_name, handle_inputs(zones, kubernetes_version), opts)
        self.cluster_name: pulumi.Output[str] = pulumi.Output.from_input(cluster_name)
        self.project: pulumi.Output[str] = pulumi.Output.from_input(project)
        self.location: pulumi.Output[str] = pulumi.Output.from_input(location)
        self._found: pulumi.Output[gcp.container.GetClusterResult] | None = None
        self.private_nodes: bool | None = private_nodes
        #: "auto-provisioning": spot pools on this cluster are ComputeClasses (see `GkeCluster.existing`)
        self.provisioner: str | None = provisioner
        #: the email the pools' nodes run as (None: GKE's default; an Output: the cluster's own or the program's)
        self.node_service_account: pulumi.Input[str | None] | None = node_service_account
        read = read or self._read_from_cluster()
        #: the cluster's Workload Identity pool, None without one (the node pools' GKE metadata server)
        self.workload_pool: pulumi.Output[str | None] = pulumi.Output.from_input(read.workload_pool)
        if not cloud_nat:
            # Known at preview when the program declares the cluster's privateClusterConfig, or getCluster answers.
            no_nat = f"GkeCluster '{resource_name}': {NO_NAT_WARNING.format(setting='cloud_nat=True')}"
            pulumi.Output.from_input(read.private_nodes).apply(
                lambda private: pulumi.log.warn(no_nat, resource=self) if private or private_nodes else None
            )
        self._plain_facts(zones, kubernetes_version, tags)
        self._use_provider(
            resource_name,
            k8s_provider,
            lambda: kubeconfig if kubeconfig is not None else self._kubeconfig_from_cluster(),
        )
        self.register_outputs({"cluster_name": self.cluster_name, "location": self.location})

    def _described(self) -> pulumi.Output[gcp.container.GetClusterResult]:
        """The cluster as `gcp.container.getCluster` describes it (one invoke, made when first needed)."""
        if self._found is None:
            self._found = gcp.container.get_cluster_output(
                name=self.cluster_name,
                location=self.location,
                project=self.project,
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
        return self._found

    def _read_from_cluster(self) -> ClusterFacts:
        found = self._described()
        return ClusterFacts(
            workload_pool=found.workload_identity_configs.apply(lambda w: (w[0].workload_pool or None) if w else None),
            private_nodes=found.private_cluster_configs.apply(lambda c: bool(c and c[0].enable_private_nodes)),
        )

    def _kubeconfig_from_cluster(self) -> pulumi.Output[str]:
        """As `gcloud container clusters get-credentials`: endpoint and CA from getCluster."""
        found = self._described()
        return pulumi.Output.all(self.cluster_name, found.endpoint, found.master_auths[0].cluster_ca_certificate).apply(
            lambda a: _kubeconfig(a[0], a[1], a[2])
        )
