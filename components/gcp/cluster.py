"""GkeCluster: a GKE Standard control plane ready for elastic GPU pools."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

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
from elastic_gpu.gcp import rules as gcp_rules
from elastic_gpu.gcp.autoprovisioning import PROVISIONER
from elastic_gpu.gcp.autoprovisioning.cluster import AutoProvisioningLimits, cluster_autoscaling_args
from elastic_gpu.kubeconfig import exec_kubeconfig
from elastic_gpu.validation import args_type_problems

TYPE_TOKEN = "elastic-gpu:index:GkeCluster"
EXISTING_TYPE_TOKEN = GKE_EXISTING_CLUSTER

#: GKE release channel unless the stack says otherwise.
DEFAULT_RELEASE_CHANNEL = "REGULAR"
#: On GKE the cluster autoscaler is Google's: this profile scales down sooner and
#: packs pods tighter than BALANCED, which suits GPU pools that should return to 0.
AUTOSCALING_PROFILE = "OPTIMIZE_UTILIZATION"
#: The default VPC network; the cluster is VPC-native (alias IPs) in it.
DEFAULT_NETWORK = "default"


@documented
@dataclass
class GkeClusterArgs:
    cluster_name: str
    """GKE cluster name."""
    project: str
    """GCP project of the cluster; its Workload Identity pool is `<project>.svc.id.goog`."""
    region: str
    """GCP region, e.g. "us-central1" (Cloud NAT and a regional control plane live there)."""
    zones: list[str]
    """Zones the node pools span (each `<region>-<letter>`)."""
    kubernetes_version: str
    """Kubernetes minor, e.g. "1.33" (the control plane's minimum version)."""
    regional: bool = False
    """Default false: a zonal control plane in zones[0]; true: regional (replicated across zones)."""
    release_channel: str = DEFAULT_RELEASE_CHANNEL
    """Default REGULAR: GKE upgrades the cluster within this channel."""
    private_nodes: bool = False
    """Default false; true: nodes get no public IP and reach the internet through a Cloud NAT."""
    protect: bool = False
    """Default false; true sets GKE's deletion protection and Pulumi's protect (production)."""
    network: str = DEFAULT_NETWORK
    """Default "default": the VPC network the cluster joins."""
    tags: dict[str, str] = field(default_factory=dict)
    """GCP resource labels on the cluster."""
    public_access: bool = True
    """Default true: a public control-plane endpoint; false: private endpoint only (needs private_nodes)."""
    authorized_networks: list[str] | None = None
    """IPv4 ranges allowed to the control plane (GKE master authorized networks); default: anywhere."""
    control_plane_cidr: str = "172.16.0.0/28"
    """With private_nodes: the control plane's /28; webhook firewall rules (Kueue's) allow it."""
    auto_provisioning: AutoProvisioningLimits | None = None
    """Default None: every pool declares its node pools. Set: node auto-provisioning on within these
    resource limits (they cap every node, auto-created or not), and each spot GPU pool on the cluster
    is a ComputeClass GKE auto-creates node pools for (components/gcp/autoprovisioning)."""

    @property
    def location(self) -> str:
        return self.region if self.regional else self.zones[0]


def gke_cluster_problems(name: str, args: GkeClusterArgs) -> list[str]:
    """The argument types and the zones of the region (the stack config's own rules, components/gcp/rules.py)."""
    where = f"GkeCluster '{name}': GkeClusterArgs."
    if problems := args_type_problems(where, args):
        return problems
    return gcp_rules.zone_problems(lambda i, _: f"{where}zones[{i}]", args.region, args.zones)


@documented_component(GkeClusterArgs, handle=GkeClusterHandle)
class GkeCluster(pulumi.ComponentResource):
    """A GKE Standard cluster with its default node pool removed.

    Creates `gcp.container.Cluster` (regional or zonal, release channel,
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
        least (maxSize + fallbackMaxSize) x GPUs per node (components/gcp/autoprovisioning/cluster.py);
        GKE creates no node pool of a GPU type without a limit. The program cannot see those limits:
        check them with `gcloud container clusters describe <name> --format='value(autoscaling)'`.
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
        opts: pulumi.ResourceOptions | None = None,
    ) -> ExistingGkeCluster:
        """A handle on a `gcp.container.Cluster` (GKE Standard) the program declares: its name, project,
        location, Kubernetes version, endpoint and CA are read from the resource, so nothing is typed twice.

        `zones` (required, plain): the zones the GPU node pools use, within the cluster's location (e.g. the
        program's `gcp:zone`). `kubernetes_version`: default None: the cluster's `min_master_version` when the
        program sets one, else its `master_version` output (the version GKE runs; unknown at preview until the
        cluster exists); the node pools take the cluster's version (GKE's default for a new node pool).
        `k8s_provider`: default: one whose kubeconfig (secret) takes the cluster's endpoint and CA and gets
        tokens from `gke-gcloud-auth-plugin`. `private_nodes`, `provisioner`: as in `GkeCluster.existing`.
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
            kubeconfig=pulumi.Output.all(
                cluster.name, cluster.endpoint, cluster.master_auth.cluster_ca_certificate
            ).apply(lambda a: _kubeconfig(a[0], a[1], a[2])),
            opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(depends_on=[cluster]), opts),
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
        self.cluster = gcp.container.Cluster(
            f"{name}-gke",
            name=args.cluster_name,
            project=args.project,
            location=args.location,
            network=args.network,
            # Pools are separate NodePool resources; GKE needs one node to create the cluster.
            remove_default_node_pool=True,
            initial_node_count=1,
            min_master_version=args.kubernetes_version,
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=args.release_channel),
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=f"{args.project}.svc.id.goog"
            ),
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(),
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
            cluster_autoscaling=cluster_autoscaling_args(args.auto_provisioning, args.zones, AUTOSCALING_PROFILE)
            if args.auto_provisioning
            else gcp.container.ClusterClusterAutoscalingArgs(autoscaling_profile=AUTOSCALING_PROFILE),
            deletion_protection=args.protect,
            resource_labels=args.tags,
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )
        if args.private_nodes:
            router = gcp.compute.Router(
                f"{name}-router", project=args.project, region=args.region, network=args.network, opts=child
            )
            gcp.compute.RouterNat(
                f"{name}-nat",
                project=args.project,
                region=args.region,
                router=router.name,
                nat_ip_allocate_option="AUTO_ONLY",
                source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
                opts=child,
            )
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
        self.provisioner: str | None = PROVISIONER if args.auto_provisioning else None
        self.tags: dict[str, str] = dict(args.tags)
        self.register_outputs(
            {"cluster_name": self.cluster_name, "location": self.location, "kubeconfig": self.kubeconfig}
        )

    @property
    def zones(self) -> list[str]:
        return list(self.args.zones)

    @property
    def kubernetes_version(self) -> str:
        return self.args.kubernetes_version


def _kubeconfig(cluster_name: str, endpoint: str, ca_data: str) -> str:
    """A kubeconfig that gets a token from `gke-gcloud-auth-plugin` (no long-lived credentials)."""
    plugin = {
        "command": "gke-gcloud-auth-plugin",
        "installHint": "gcloud components install gke-gcloud-auth-plugin",
        "provideClusterInfo": True,
    }
    return exec_kubeconfig(cluster_name, f"https://{endpoint}", ca_data, plugin)


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

    `private_nodes`: True when the cluster's nodes are private (the node pools then set
    networkConfig.enablePrivateNodes); False: public node IPs; None (default): the node pools say
    nothing, and the `no-public-node-ips` policy fails for each of them, since it cannot see the
    cluster's own setting.
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
        kubeconfig: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        where = f"GkeCluster.existing '{resource_name}': "
        problems = input_str_problems(where, cluster_name=cluster_name, project=project, location=location)
        problems += zones_problems(where, zones)
        if not problems:
            region = gcp_rules.location_region(location) if isinstance(location, str) else None
            problems += gcp_rules.zone_problems(lambda i, _: f"{where}zones[{i}]", region, list(zones))
        if not isinstance(kubernetes_version, pulumi.Output):  # an Output: the cluster's own (from_cluster)
            problems += version_problems(where, kubernetes_version)
        problems += k8s_provider_problems(where, k8s_provider)
        if provisioner not in (None, *gcp_rules.PROVISIONERS):
            problems.append(
                f"{where}provisioner: {provisioner!r} is not available on gcp; "
                f"allowed: None, {', '.join(gcp_rules.PROVISIONERS)}"
            )
        raise_if(problems, source=f"GkeCluster.existing '{resource_name}'")
        super().__init__(EXISTING_TYPE_TOKEN, resource_name, handle_inputs(zones, kubernetes_version), opts)
        self.cluster_name: pulumi.Output[str] = pulumi.Output.from_input(cluster_name)
        self.project: pulumi.Output[str] = pulumi.Output.from_input(project)
        self.location: pulumi.Output[str] = pulumi.Output.from_input(location)
        self.private_nodes: bool | None = private_nodes
        #: "auto-provisioning": spot pools on this cluster are ComputeClasses (see `GkeCluster.existing`)
        self.provisioner: str | None = provisioner
        self._plain_facts(zones, kubernetes_version, tags)
        self._use_provider(
            resource_name,
            k8s_provider,
            lambda: kubeconfig if kubeconfig is not None else self._kubeconfig_from_cluster(),
        )
        self.register_outputs({"cluster_name": self.cluster_name, "location": self.location})

    def _kubeconfig_from_cluster(self) -> pulumi.Output[str]:
        """As `gcloud container clusters get-credentials`: endpoint and CA from getCluster."""
        found = gcp.container.get_cluster_output(
            name=self.cluster_name,
            location=self.location,
            project=self.project,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        return pulumi.Output.all(self.cluster_name, found.endpoint, found.master_auths[0].cluster_ca_certificate).apply(
            lambda a: _kubeconfig(a[0], a[1], a[2])
        )
