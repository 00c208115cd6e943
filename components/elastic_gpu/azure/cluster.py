"""AksCluster: an AKS cluster ready for elastic GPU pools."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

import pulumi
import pulumi_azure_native as azure_native
import pulumi_kubernetes as k8s
from pulumi_azure_native import containerservice as cs
from pydantic import Field

from elastic_gpu.args_doc import documented, documented_component
from elastic_gpu.azure import AKS_EXISTING_CLUSTER
from elastic_gpu.azure.entra import (
    INTERACTIVE_LOGINS,
    device_code_finding,
    entra_login_problems,
    login_of,
    non_interactive,
    runner_note,
)
from elastic_gpu.azure.network import (
    NETWORK_CONTRIBUTOR_ROLE,
    SUBNET_ID_PATTERN,
    default_range_finding,
    dns_ip_for,
    network_profile_problems,
    subnet_parts,
    subscription_of,
    vnet_of,
)
from elastic_gpu.azure.node_provisioning import PROVISIONER as NAP
from elastic_gpu.azure.node_provisioning.cluster import nap_cluster_problems, node_provisioning_profile
from elastic_gpu.azure.pools import vmss_name_regex
from elastic_gpu.azure.reservations import CONTRIBUTOR_ROLE, GROUP_ID_SHAPE, parse_group_id
from elastic_gpu.azure.system_pool import system_pool_size_warning
from elastic_gpu.cluster_handle import (
    AksClusterHandle,
    ExistingCluster,
    ManagedAutoscalerProfile,
    handle_inputs,
    input_str_problems,
    k8s_provider_problems,
    raise_if,
    required_keywords,
    version_problems,
    zones_problems,
)
from elastic_gpu.errors import ConfigError
from elastic_gpu.scheduling import NODE_CLASS_GENERAL, node_labels
from elastic_gpu.settings import AutoscalerSettings, ClusterSettings, ProtectSetting
from elastic_gpu.settings.azure import (
    DEFAULT_AKS_NETWORK_PLUGIN,
    DEFAULT_AKS_SYSTEM_MAX,
    DEFAULT_AKS_SYSTEM_MIN,
    DEFAULT_AKS_SYSTEM_VM_SIZE,
    NODE_OS_MAINTENANCE_CONFIG,
    AksNetworkOptions,
    AksNetworkPluginOptions,
    MaintenanceWindowConfig,
    NetworkPlugin,
)
from elastic_gpu.settings.base import ArgsModel
from elastic_gpu.validation import args_type_problems, said

TYPE_TOKEN = "elastic-gpu:index:AksCluster"
EXISTING_TYPE_TOKEN = AKS_EXISTING_CLUSTER

#: The System pool's agent-pool name (AKS: lowercase alphanumeric, <= 12 characters).
SYSTEM_POOL_NAME = "system"
#: Expanders the AKS autoScalerProfile accepts (one value, not a chain).
AKS_EXPANDERS = ("least-waste", "most-pods", "priority", "random")
NETWORK_PLUGINS: tuple[str, ...] = get_args(NetworkPlugin)
#: AKS autoscaler durations: "Values must be an integer followed by an 'm'" (ManagedClusterAutoScalerProfile).
#: "0m" included: the AKS docs' bursty-workload profile sets scale-down-delay-after-add=0m (cluster-autoscaler.md).
AKS_DURATION_PATTERN = r"(0|[1-9][0-9]*)m"
AZURE_ZONES = ("1", "2", "3")

#: Azure regions without availability zones (learn.microsoft.com/azure/reliability/regions-list: "N/A"): a pool
#: there takes no zones (`zones: []`, regional agent pools), and AKS refuses `availabilityZones` in them.
REGIONS_WITHOUT_ZONES = (
    "westus", "northcentralus", "westcentralus", "canadaeast", "ukwest", "koreasouth", "southindia", "westindia",
    "australiasoutheast", "australiacentral",
)  # fmt: skip


def zoneless_region_problems(where: str, region: object, zones: Sequence[str]) -> list[str]:
    """Zones given in a region that has none (a region only known after deployment is not judged)."""
    if region in REGIONS_WITHOUT_ZONES and zones:
        return [
            f"{where}zones: region {region!r} has no availability zones (got zones {list(zones)}); allowed: none "
            "(zones: [], regional agent pools), or a region with zones such as westus2 or westus3"
        ]
    return []


#: The taint the AKS docs recommend for a dedicated System pool (use-system-pools.md).
CRITICAL_ADDONS_ONLY_TAINT = "CriticalAddonsOnly=true:NoSchedule"
#: A private cluster's API server answers only inside its VNet (private-clusters.md: connect from the cluster
#: VNet or a connected network; no Microsoft-hosted Azure DevOps agents, use self-hosted ones; without a
#: network path, `az aks command invoke` runs commands through the Azure API, which a Pulumi provider can't use).
PRIVATE_CLUSTER_RUNNER_WARNING = (
    "a private cluster (public_access=False; stack config cluster.apiAccess.public: false): its API server "
    "answers only inside the cluster's VNet, and this library declares Kubernetes objects through it (the "
    "NVIDIA device plugin, the autoscaler's priority ConfigMap, ...), so `pulumi up` from a runner outside "
    "the VNet fails on them. Put the cluster in a subnet of a VNet you own (subnet_id; cluster.subnetId) and run "
    "it from a self-hosted runner in the VNet or in a network connected to it (peering, VPN, ExpressRoute) "
    "that resolves the cluster's private DNS zone (hosted CI runners are outside it), or keep a public API "
    "server limited to your runner's ranges (authorized_ip_ranges; cluster.apiAccess.publicCidrs). "
    "`az aks command invoke` runs kubectl through the Azure API for a look "
    "inside, but the Pulumi Kubernetes provider cannot go through it. When the runner does reach the API "
    "server, say so: runner_in_vnet=True (cluster.apiAccess.runnerInVnet: true) with subnet_id"
)
#: The warning when the runner is said to reach a private cluster that AKS puts in a VNet of its own: that VNet
#: (and the private DNS zone linked only to it) is made during the same `pulumi up`, so no runner is in it yet.
PRIVATE_CLUSTER_OWN_VNET_WARNING = (
    "a private cluster (public_access=False) in the VNet AKS creates: runner_in_vnet=True "
    "(cluster.apiAccess.runnerInVnet: true) cannot hold on the first `pulumi up`, as that VNet and the private "
    "DNS zone linked to it are created by it, so the Kubernetes objects fail. Bring a subnet of a VNet your "
    "runner is in or peered with: subnet_id (cluster.subnetId), optionally with API Server VNet Integration "
    "(api_server_subnet_id; cluster.apiServerSubnetId)"
)
#: AKS cluster names: 1-63 letters, digits, '-' and '_', starting and ending alphanumeric.
CLUSTER_NAME_PATTERN = r"^[a-zA-Z0-9]([a-zA-Z0-9_-]{0,61}[a-zA-Z0-9])?$"
#: The cluster's dnsPrefix, which is its name here: 1-54 letters, digits and hyphens, starting and ending with a
#: letter or digit (ManagedCluster.dnsPrefix, as terraform-provider-azurerm's KubernetesDNSPrefix checks it:
#: internal/services/containers/validate): stricter than the name (no '_', 54 not 63).
DNS_PREFIX_PATTERN = r"^[a-zA-Z0-9]([a-zA-Z0-9-]{0,52}[a-zA-Z0-9])?$"
#: AksClusterArgs.provisioner values besides None (the managed cluster-autoscaler).
PROVISIONERS = ("cluster-autoscaler", NAP)


@documented
class AksClusterArgs(
    ArgsModel, AksNetworkOptions, AksNetworkPluginOptions, AutoscalerSettings, ProtectSetting, ClusterSettings
):
    """An AKS cluster's settings (elastic_gpu.settings' cluster models, the managed autoscaler's profile of a stack
    file's `autoscaler`, and Azure's network parts of its `cluster`) and what only a program gives, or gives under
    its own name; keyword arguments."""

    model_config = ArgsModel.model_config

    cluster_name: str
    """AKS cluster name (also the DNS prefix); a stack file's `cluster.name`."""
    location: str
    """Azure region, e.g. "westeurope"; a stack file's `cluster.region`."""
    resource_group_name: str | None = None
    """Default: f"{cluster_name}-rg"; a stack file's `cluster.resourceGroup.name`."""
    create_resource_group: bool = True
    """Default true: create the group; false: use an existing group of that name."""
    system_vm_size: str = DEFAULT_AKS_SYSTEM_VM_SIZE
    """VM size of the System pool (system pods; on AKS the autoscaler is managed, not a pod); a stack file's
    `cluster.systemPool.vmSize`."""
    system_min_size: int = DEFAULT_AKS_SYSTEM_MIN
    """Default 1; AKS requires >= 1 in a System pool and documents at least 2 (below that, a preview
    warning: system_pool.SYSTEM_POOL_MIN_NODES)."""
    system_max_size: int = DEFAULT_AKS_SYSTEM_MAX
    """Upper bound of the System pool's autoscaling."""
    system_critical_addons_only: bool = False
    """Default false; true keeps application pods off the System pool (CriticalAddonsOnly taint)."""
    tags: dict[str, str] = Field(default_factory=dict)
    """Azure tags on the resource group and cluster (cost allocation)."""
    public_access: bool = True
    """Default true: a public API server; false: a private cluster (API server in the VNet only); a stack file's
    `cluster.apiAccess.public`."""
    authorized_ip_ranges: list[str] | None = None
    """IPv4 ranges allowed to the public API server (AKS API server authorized IP ranges); default: anywhere; a
    stack file's `cluster.apiAccess.publicCidrs`."""
    runner_in_vnet: bool = False
    """Default false: with public_access=False, warn that `pulumi up` must run where the private API server
    is reachable (this library's Kubernetes objects go through it); true: the runner is in the cluster's
    VNet or a network connected to it, no warning. Read only with public_access=False."""
    provisioner: str | None = None
    """Default None: GPU pools are agent pools scaled by AKS's managed cluster-autoscaler. "karpenter": node
    auto-provisioning (`nodeProvisioningProfile` mode Auto, no default NodePools): each SpotGpuPool becomes
    an AKSNodeClass and NodePools, no agent pool; the System pool (and a GeneralPool) keep a fixed count of
    their min size, as AKS creates no autoscaling agent pool under NAP, and no autoScalerProfile is set."""
    capacity_reservation_group_ids: list[str] = Field(default_factory=list)
    """Default none. The capacity reservation groups the cluster's GPU pools reserve from (their
    `reservations.ids`; a stack file's are gathered from its pools). AKS uses a group only through a user-assigned
    control-plane identity with Contributor on the group's resource group (use-capacity-reservation-groups.md):
    with any, `<cluster_name>-identity` is created and granted that role before the cluster."""

    @property
    def network_plugin_used(self) -> NetworkPlugin:
        """The plugin the cluster runs: `network_plugin`, or AKS's default for None."""
        return self.network_plugin or DEFAULT_AKS_NETWORK_PLUGIN

    @property
    def maintenance_window_used(self) -> MaintenanceWindowConfig:
        """The node-OS window the cluster gets: `maintenance_window`, or the default for None."""
        return self.maintenance_window or MaintenanceWindowConfig()


def aks_cluster_problems(name: str, args: AksClusterArgs) -> list[str]:
    where = f"AksCluster '{name}': "
    if problems := args_type_problems(f"{where}AksClusterArgs.", args):
        return problems  # the rules below compare and iterate the values
    if not re.fullmatch(CLUSTER_NAME_PATTERN, args.cluster_name):
        problems.append(f"{where}cluster_name: {args.cluster_name!r} is not a valid AKS name ({CLUSTER_NAME_PATTERN})")
    elif not re.fullmatch(DNS_PREFIX_PATTERN, args.cluster_name):
        problems.append(
            f"{where}cluster_name: {args.cluster_name!r} is also the cluster's dnsPrefix, which AKS takes as 1-54 "
            "letters, digits and hyphens, starting and ending with a letter or digit (no '_'; "
            f"{len(args.cluster_name)} characters given)"
        )
    if bad := [z for z in args.zones if z not in AZURE_ZONES]:
        problems.append(f"{where}zones: {bad} are not Azure zones; allowed: {', '.join(AZURE_ZONES)}")
    for i, group in enumerate(args.capacity_reservation_group_ids):
        if parse_group_id(group) is None:
            problems.append(
                f"{where}capacity_reservation_group_ids[{i}]: {said(group)} is not a capacity reservation group id; "
                f"allowed: {GROUP_ID_SHAPE}"
            )
    problems += zoneless_region_problems(f"{where}AksClusterArgs.", args.location, args.zones)
    if args.system_min_size < 1:
        problems.append(f"{where}system_min_size: a System pool needs >= 1 node (got {args.system_min_size})")
    if args.system_max_size < args.system_min_size:
        problems.append(
            f"{where}system_max_size: must be >= system_min_size "
            f"(got system_min_size={args.system_min_size}, system_max_size={args.system_max_size})"
        )
    for field_name in ("scale_down_unneeded_time", "scale_down_delay_after_add", "max_node_provision_time"):
        value = getattr(args, field_name)
        if not re.fullmatch(AKS_DURATION_PATTERN, value):
            problems.append(
                f"{where}{field_name}: AKS takes whole minutes, an integer followed by 'm' such as '10m' "
                f"(ManagedClusterAutoScalerProfile); got {said(value)}"
            )
        elif field_name == "max_node_provision_time" and value == "0m":
            problems.append(f"{where}{field_name}: must be longer than 0 (got {said(value)})")
    if args.provisioner not in (None, *PROVISIONERS):
        problems.append(
            f"{where}provisioner: {args.provisioner!r} is not available on AKS; "
            f"allowed: None, {', '.join(PROVISIONERS)}"
        )
    elif args.provisioner == NAP:
        problems += nap_cluster_problems(where, args.network_plugin_used)
    if not args.expander or args.expander[0] not in AKS_EXPANDERS:
        first = args.expander[0] if args.expander else None
        problems.append(f"{where}expander: AKS takes one of {', '.join(AKS_EXPANDERS)} first (got {said(first)})")
    problems += network_profile_problems(f"{where}", args.service_cidr, args.dns_service_ip, args.pod_cidr)
    return problems + subnet_problems(where, args)


def subnet_problems(where: str, args: AksClusterArgs) -> list[str]:
    """Subnet ids are ARM subnet ids; the API server's subnet only with, and in the VNet of, the nodes' one.
    Node auto-provisioning in a VNet of yours needs no API server subnet: AKS's own page creates such a cluster
    with the node subnet alone (MicrosoftDocs/azure-aks-docs articles/aks/node-auto-provisioning-custom-vnet.md,
    ms.date 2026-08-06, which dropped the delegated API server subnet the page required before)."""
    problems = []
    for field_name in ("subnet_id", "api_server_subnet_id"):
        value = getattr(args, field_name)
        if value is not None and not re.fullmatch(SUBNET_ID_PATTERN, value):
            problems.append(
                f"{where}{field_name}: {value!r} is not a subnet id; allowed: /subscriptions/<id>/resourceGroups/"
                "<group>/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>"
            )
    if args.api_server_subnet_id is not None and args.subnet_id is None:
        problems.append(
            f"{where}api_server_subnet_id: API Server VNet Integration here needs the nodes' subnet of the same "
            f"VNet; set subnet_id (cluster.subnetId) too (got api_server_subnet_id={args.api_server_subnet_id!r})"
        )
    elif (
        not problems
        and args.api_server_subnet_id is not None
        and args.subnet_id is not None
        and vnet_of(args.api_server_subnet_id) != vnet_of(args.subnet_id)
    ):
        problems.append(
            f"{where}api_server_subnet_id: must be in the VNet of subnet_id ({vnet_of(args.subnet_id)}); "
            f"got {said(args.api_server_subnet_id)}"
        )
    return problems


def autoscaler_profile(args: AksClusterArgs) -> cs.ManagedClusterPropertiesAutoScalerProfileArgs:
    """The managed autoscaler's settings: ours where we have one, the rest left to AKS's defaults."""
    return cs.ManagedClusterPropertiesAutoScalerProfileArgs(
        # AKS takes a single expander; `priority` reads the cluster-autoscaler-priority-expander
        # ConfigMap in kube-system that ClusterAutoscaler declares.
        expander=args.expander[0],
        scale_down_unneeded_time=args.scale_down_unneeded_time,
        scale_down_delay_after_add=args.scale_down_delay_after_add,
        max_node_provision_time=args.max_node_provision_time,
        # Per-zone GPU pools are not balanced against each other: a scale-up goes to the pool the expander
        # picks (the cheapest spot one first), not spread over the zones to keep their sizes even.
        balance_similar_node_groups="false",
        # GPU pods often use emptyDir scratch space; do not pin their nodes forever.
        skip_nodes_with_local_storage="false",
    )


def api_server_access(args: AksClusterArgs) -> cs.ManagedClusterAPIServerAccessProfileArgs | None:
    """Private cluster, or authorized IP ranges on the public API server (AKS takes one or the other)."""
    # API server VNet integration in the subnet given; None leaves both fields unset.
    subnet_id = args.api_server_subnet_id or None
    integration = True if subnet_id else None
    if not args.public_access:
        return cs.ManagedClusterAPIServerAccessProfileArgs(
            enable_private_cluster=True, enable_vnet_integration=integration, subnet_id=subnet_id
        )
    if args.authorized_ip_ranges:
        return cs.ManagedClusterAPIServerAccessProfileArgs(
            authorized_ip_ranges=list(args.authorized_ip_ranges),
            enable_vnet_integration=integration,
            subnet_id=subnet_id,
        )
    if subnet_id:
        return cs.ManagedClusterAPIServerAccessProfileArgs(enable_vnet_integration=True, subnet_id=subnet_id)
    return None


def runner_warning(args: AksClusterArgs) -> str | None:
    """Why `pulumi up` may not reach a private API server, or None."""
    if args.public_access:
        return None
    if not args.runner_in_vnet:
        return PRIVATE_CLUSTER_RUNNER_WARNING
    return None if args.subnet_id else PRIVATE_CLUSTER_OWN_VNET_WARNING


def network_identity(
    name: str, args: AksClusterArgs, resource_group_name: pulumi.Input[str], parent: pulumi.Resource
) -> tuple[cs.ManagedClusterIdentityArgs, list[pulumi.Resource]]:
    """The cluster's identity, and what the cluster must wait for. In a subnet of yours, AKS's control-plane
    identity needs Network Contributor on it (use-managed-identity.md: outside the node resource group the
    role must be granted; az does so, ARM templates and Pulumi must); a system-assigned identity exists only
    with the cluster, so a user-assigned one is declared first, granted the role, then the cluster."""
    if args.subnet_id is None and not args.capacity_reservation_group_ids:
        return cs.ManagedClusterIdentityArgs(type=cs.ResourceIdentityType.SYSTEM_ASSIGNED), []
    opts = pulumi.ResourceOptions(parent=parent, protect=args.protect)
    identity = azure_native.managedidentity.UserAssignedIdentity(
        f"{name}-identity",
        resource_name_=f"{args.cluster_name}-identity",
        resource_group_name=resource_group_name,
        location=args.location,
        tags=args.tags,
        opts=opts,
    )
    # Node auto-provisioning's Karpenter also reads the VNet: the role on the VNet (node-auto-provisioning-
    # custom-vnet.md; Azure/karpenter-provider-azure#332), else on each subnet (use-managed-identity.md).
    scopes: list[tuple[str, str | None]] = []
    if args.subnet_id is not None:
        scopes = (
            [("vnet", args.subnet_id.rsplit("/subnets/", 1)[0])]
            if args.provisioner == NAP
            else [("subnet", args.subnet_id), ("apiserver-subnet", args.api_server_subnet_id)]
        )
    scopes = [(kind, scope) for kind, scope in scopes if scope is not None]
    subscription = subscription_of(args.subnet_id) if args.subnet_id else ""
    role = f"/subscriptions/{subscription}/providers/Microsoft.Authorization/roleDefinitions/"
    grants: list[pulumi.Resource] = reservation_grants(name, args, identity, parent) + [
        azure_native.authorization.RoleAssignment(
            f"{name}-{kind}-network-contributor",
            scope=subnet,
            role_definition_id=role + NETWORK_CONTRIBUTOR_ROLE,
            principal_id=identity.principal_id,
            principal_type=azure_native.authorization.PrincipalType.SERVICE_PRINCIPAL,
            opts=pulumi.ResourceOptions(parent=parent),
        )
        for kind, subnet in scopes
    ]
    return (
        cs.ManagedClusterIdentityArgs(
            type=cs.ResourceIdentityType.USER_ASSIGNED, user_assigned_identities=[identity.id]
        ),
        grants,
    )


def reservation_grants(
    name: str,
    args: AksClusterArgs,
    identity: azure_native.managedidentity.UserAssignedIdentity,
    parent: pulumi.Resource,
) -> list[pulumi.Resource]:
    """Contributor for the control-plane identity on the resource group of each capacity reservation group the
    pools use, as AKS use-capacity-reservation-groups.md grants it (one per resource group)."""
    scopes = dict.fromkeys(g.resource_group_id for i in args.capacity_reservation_group_ids if (g := parse_group_id(i)))
    return [
        azure_native.authorization.RoleAssignment(
            f"{name}-reservations{i}-contributor",
            scope=scope,
            role_definition_id=f"{scope.split('/resourceGroups/')[0]}/providers/Microsoft.Authorization/"
            f"roleDefinitions/{CONTRIBUTOR_ROLE}",
            principal_id=identity.principal_id,
            principal_type=azure_native.authorization.PrincipalType.SERVICE_PRINCIPAL,
            opts=pulumi.ResourceOptions(parent=parent),
        )
        for i, scope in enumerate(scopes)
    ]


@documented_component(AksClusterArgs, handle=AksClusterHandle)
class AksCluster(pulumi.ComponentResource):
    """An AKS cluster with a System-mode pool, managed identity, RBAC and the managed autoscaler's profile.

    Creates (or uses) a resource group; `containerservice.ManagedCluster` with a
    SystemAssigned identity, Kubernetes RBAC, the configured network plugin, one
    on-demand System pool (autoscaled, min >= 1), and `autoScalerProfile` filled
    from our autoscaler settings (on AKS the cluster autoscaler is this managed
    one, enabled per pool); a kubeconfig (secret) from
    `listManagedClusterUserCredentials`; and a Kubernetes provider built from it.
    User pools (GeneralPool, SpotGpuPool) are separate AgentPool resources.
    """

    args: AksClusterArgs
    """The arguments the cluster was declared with."""
    resource_group: azure_native.resources.ResourceGroup | None
    """The resource group it created; None when it uses an existing one."""
    cluster: cs.ManagedCluster
    """The AKS cluster (with its System pool)."""
    kubeconfig: pulumi.Output[str]
    """The cluster-user kubeconfig (secret)."""
    kubelet_identity_object_id: pulumi.Output[str | None]
    """The identity the nodes act as (grant it AcrPull, storage, ...)."""

    cloud = "azure"

    @classmethod
    def existing(
        cls,
        resource_name: str,
        *,
        cluster_name: pulumi.Input[str],
        resource_group_name: pulumi.Input[str],
        location: pulumi.Input[str],
        zones: Sequence[str],
        kubernetes_version: str,
        k8s_provider: k8s.Provider | None = None,
        tags: Mapping[str, str] | None = None,
        entra_login: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> ExistingAksCluster:
        """A handle on an AKS cluster this library did not create, known by its name (e.g. another stack's).

        Declares no Azure resource. `cluster_name`, `resource_group_name`, `location`: the cluster's (may be
        Outputs). `zones`: the zones ("1", "2", "3") the GPU agent pools use (plain; [] for regional pools, as
        in a region without zones). `kubernetes_version`: the
        control plane's minor, e.g. "1.35" (plain): the agent pools' `orchestratorVersion`; a minor past end of
        standard support warns, and the policy pack's `kubernetes-version-not-end-of-life` fails one past end of
        life. `k8s_provider`: default: one from the cluster-user credentials, as `az aks get-credentials`.
        `tags`: on what the add-ons create. For a `ManagedCluster` the program declares itself, use
        `AksCluster.from_managed_cluster`, which reads these from the resource. `entra_login`: on a cluster with
        Microsoft Entra ID (its aadProfile, read through getManagedCluster), the kubelogin login mode the
        Kubernetes provider uses instead of the device code AKS's kubeconfig asks for (see `ExistingAksCluster`).
        """
        return ExistingAksCluster(
            resource_name,
            cluster_name=cluster_name,
            resource_group_name=resource_group_name,
            location=location,
            zones=zones,
            kubernetes_version=kubernetes_version,
            k8s_provider=k8s_provider,
            tags=tags,
            entra_login=entra_login,
            opts=opts,
        )

    @classmethod
    @required_keywords("resource_group_name", "zones")
    def from_managed_cluster(
        cls,
        resource_name: str,
        cluster: cs.ManagedCluster,
        *,
        resource_group_name: pulumi.Input[str] | None = None,
        zones: Sequence[str] | None = None,
        kubernetes_version: str | None = None,
        k8s_provider: k8s.Provider | None = None,
        tags: Mapping[str, str] | None = None,
        entra_login: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> ExistingAksCluster:
        """A handle on an `azure_native.containerservice.ManagedCluster` the program declares: its name,
        Kubernetes version, location and kubelet identity are read from the resource, so nothing is typed twice;
        so are its Entra ID settings (aadProfile, disableLocalAccounts), its support plan and its network profile.

        `resource_group_name` (required): the cluster's resource group, as the program gave it to the cluster
        (the resource does not output it). `zones` (required, plain): the zones ("1", "2", "3") the GPU agent
        pools use ([] for regional pools, as in a region without zones). `kubernetes_version`: default None:
        the cluster's `kubernetesVersion` output (the version
        the program asked for, else the one AKS chose), which the agent pools then follow as their
        `orchestratorVersion`; a plain minor here is used instead. `k8s_provider`: default: one from the
        cluster-user credentials. `entra_login`: with Entra ID (aadProfile), the kubelogin login mode the
        Kubernetes provider uses ("azurecli", "workloadidentity", "spn", "msi", "azd"); without it the preview
        warns that AKS's kubeconfig logs in by device code, which hangs `pulumi up`. A subnet of the program's
        (an agent pool's vnetSubnetID) with the service or pod range left at AKS's default is a finding too.
        """
        where = f"AksCluster.from_managed_cluster '{resource_name}': "
        problems = []
        if not isinstance(cluster, cs.ManagedCluster):
            problems.append(
                f"{where}cluster: must be a pulumi_azure_native.containerservice.ManagedCluster, got "
                f"{type(cluster).__name__}; for a cluster the program does not declare use AksCluster.existing(...)"
            )
        if resource_group_name is None:
            problems.append(
                f"{where}resource_group_name: required: the resource group the program gave the cluster, e.g. "
                "resource_group.name"
            )
        if zones is None:
            problems.append(f'{where}zones: required: the zones the GPU agent pools use, e.g. ["1", "2"]')
        if kubernetes_version is not None:
            problems += version_problems(where, kubernetes_version)
        raise_if(problems, source=f"AksCluster.from_managed_cluster '{resource_name}'")
        assert resource_group_name is not None and zones is not None
        # The version asked for when the program sets one (known at preview), else the one AKS runs.
        version: pulumi.Input[str] = kubernetes_version or cluster.kubernetes_version.apply(
            lambda asked: asked or cluster.current_kubernetes_version
        )
        return ExistingAksCluster(
            resource_name,
            cluster_name=cluster.name,
            resource_group_name=resource_group_name,
            location=cluster.location,
            zones=zones,
            kubernetes_version=version,
            k8s_provider=k8s_provider,
            tags=tags,
            kubelet_identity_object_id=cluster.identity_profile.apply(kubelet_object_id),
            entra_login=entra_login,
            read=ManagedClusterFacts(
                aad_profile=cluster.aad_profile,
                disable_local_accounts=cluster.disable_local_accounts,
                support_plan=cluster.support_plan,
                network_profile=cluster.network_profile,
                agent_pool_profiles=cluster.agent_pool_profiles,
            ),
            opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(depends_on=[cluster]), opts),
            made_by="AksCluster.from_managed_cluster",
        )

    def __init__(self, name: str, args: AksClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        if problems := aks_cluster_problems(name, args):
            raise ConfigError(problems, source=f"AksCluster '{name}'")
        super().__init__(TYPE_TOKEN, name, handle_inputs(args.zones, args.kubernetes_version), opts)
        self.args = args
        child = pulumi.ResourceOptions(parent=self)
        rg_name = args.resource_group_name or f"{args.cluster_name}-rg"
        self.resource_group: azure_native.resources.ResourceGroup | None = None
        if args.create_resource_group:
            self.resource_group = azure_native.resources.ResourceGroup(
                f"{name}-rg",
                resource_group_name=rg_name,
                location=args.location,
                tags=args.tags,
                opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
            )
            self.resource_group_name: pulumi.Output[str] = self.resource_group.name
        else:
            self.resource_group_name = pulumi.Output.from_input(rg_name)

        # The System pool is inline (ARM creates a cluster only with one) and named `system` for good: AKS
        # refuses a change of its VM size, zones or disk in place, and an update of the cluster can neither
        # rename an inline pool nor add one (pulumi-azure-native#579). Rotating it through a separate System
        # AgentPool would leave the inline one behind, and ignoring agentPoolProfiles breaks later cluster
        # updates (pulumi-azure-native#2719). So `diff` refuses such a change with the hand rotation that
        # terraform-provider-azurerm automates (elastic_gpu.tools.replacement.INLINE_POOL_REFUSED_FIELDS).
        # Under node auto-provisioning AKS creates no autoscaling agent pool: the System pool keeps its min size.
        nap = args.provisioner == NAP
        system_pool = cs.ManagedClusterAgentPoolProfileArgs(
            name=SYSTEM_POOL_NAME,
            mode=cs.AgentPoolMode.SYSTEM,
            type=cs.AgentPoolType.VIRTUAL_MACHINE_SCALE_SETS,
            os_type=cs.OSType.LINUX,
            vm_size=args.system_vm_size,
            count=args.system_min_size,
            enable_auto_scaling=not nap,
            min_count=None if nap else args.system_min_size,
            max_count=None if nap else args.system_max_size,
            availability_zones=list(args.zones) or None,
            node_labels=node_labels(pool=SYSTEM_POOL_NAME, node_class=NODE_CLASS_GENERAL, spot=False),
            node_taints=[CRITICAL_ADDONS_ONLY_TAINT] if args.system_critical_addons_only else None,
            tags=args.tags,
            vnet_subnet_id=args.subnet_id,
        )
        identity, grants = network_identity(name, args, self.resource_group_name, self)
        #: the capacity reservation groups the control-plane identity may use (its pools' reserved tiers)
        self.capacity_reservation_group_ids: list[str] = list(args.capacity_reservation_group_ids)
        #: the VNet subnet the pools join by default (None: the VNet AKS creates, where no pool may set its own)
        self.vnet_subnet_id: str | None = args.subnet_id
        self.cluster = cs.ManagedCluster(
            f"{name}-aks",
            resource_name_=args.cluster_name,
            resource_group_name=self.resource_group_name,
            location=args.location,
            dns_prefix=args.cluster_name,
            kubernetes_version=args.kubernetes_version,
            enable_rbac=True,
            identity=identity,
            agent_pool_profiles=[system_pool],
            network_profile=cs.ContainerServiceNetworkProfileArgs(
                network_plugin=args.network_plugin_used,
                network_plugin_mode=cs.NetworkPluginMode.OVERLAY if args.network_plugin_used == "azure" else None,
                load_balancer_sku=cs.LoadBalancerSku.STANDARD,
                service_cidr=args.service_cidr,
                dns_service_ip=args.dns_service_ip
                or (dns_ip_for(args.service_cidr) if args.service_cidr is not None else None),
                pod_cidr=args.pod_cidr,
            ),
            auto_scaler_profile=None if nap else autoscaler_profile(args),
            node_provisioning_profile=node_provisioning_profile() if nap else None,
            api_server_access_profile=api_server_access(args),
            tags=args.tags,
            # The autoscaler owns the System pool's node count (under NAP the count is ours).
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                ignore_changes=[] if nap else ["agentPoolProfiles[0].count"],
                depends_on=grants,
            ),
        )
        if unreachable := runner_warning(args):
            pulumi.log.warn(f"AksCluster '{name}': {unreachable}", resource=self)
        if small_system_pool := system_pool_size_warning(args.system_min_size):
            pulumi.log.warn(f"AksCluster '{name}': {small_system_pool}", resource=self)
        if args.subnet_id is not None:
            _warn_default_ranges(
                f"AksCluster '{name}': ",
                args.service_cidr,
                args.pod_cidr,
                args.network_plugin_used in ("azure", "kubenet"),  # overlay (as declared above) and kubenet
                subnet_prefixes(args.subnet_id, self),
                self,
            )
        self.maintenance = node_os_maintenance(name, args, self.resource_group_name, self.cluster, self)
        self.cluster_name: pulumi.Output[str] = self.cluster.name
        self.kubeconfig: pulumi.Output[str] = user_kubeconfig(self.resource_group_name, self.cluster.name, self)
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)
        # The cluster handle (elastic_gpu.cluster_handle.AksClusterHandle).
        self.location: pulumi.Output[str] = pulumi.Output.from_input(args.location)
        #: The location as a plain value (prices rank the VM sizes before deployment).
        self.plain_location: str | None = args.location
        self.autoscaler_profile: ManagedAutoscalerProfile | None = (
            None
            if nap
            else ManagedAutoscalerProfile(
                expander=args.expander[0],
                scale_down_unneeded_time=args.scale_down_unneeded_time,
                scale_down_delay_after_add=args.scale_down_delay_after_add,
                max_node_provision_time=args.max_node_provision_time,
                # The System pool autoscales too (enable_auto_scaling above)
                cluster_group_regexes=(vmss_name_regex(SYSTEM_POOL_NAME),),
            )
        )
        #: "karpenter": node auto-provisioning makes the GPU pools' nodes (the handle's optional `provisioner`)
        self.provisioner: str | None = args.provisioner
        #: the idle time before NAP removes an empty GPU node (its NodePools' consolidateAfter)
        self.consolidate_after: str = args.scale_down_unneeded_time
        self.tags: dict[str, str] = dict(args.tags)
        self.kubelet_identity_object_id: pulumi.Output[str | None] = self.cluster.identity_profile.apply(
            kubelet_object_id
        )
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "resource_group_name": self.resource_group_name,
                "kubeconfig": self.kubeconfig,
            }
        )

    @property
    def zones(self) -> list[str]:
        return list(self.args.zones)

    @property
    def kubernetes_version(self) -> str:
        return self.args.kubernetes_version


def node_os_maintenance(
    name: str,
    args: AksClusterArgs,
    resource_group_name: pulumi.Input[str],
    cluster: cs.ManagedCluster,
    parent: pulumi.Resource,
) -> cs.MaintenanceConfiguration:
    """The weekly window for node image upgrades and NAP's image drift (AksClusterArgs.maintenance_window)."""
    window = args.maintenance_window_used
    return cs.MaintenanceConfiguration(
        f"{name}-node-os-maintenance",
        config_name=NODE_OS_MAINTENANCE_CONFIG,
        resource_group_name=resource_group_name,
        resource_name_=cluster.name,
        maintenance_window=cs.MaintenanceWindowArgs(
            schedule=cs.ScheduleArgs(weekly=cs.WeeklyScheduleArgs(day_of_week=window.day_of_week, interval_weeks=1)),
            start_time=window.start_time,
            duration_hours=window.duration_hours,
            utc_offset=window.utc_offset,
        ),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[cluster]),
    )


def subnet_prefixes(subnet_id: str, parent: pulumi.Resource) -> pulumi.Output[list[str] | None]:
    """The address prefixes of a subnet given by its ARM id, read through `network.getSubnet` at preview (None
    when the id is no ARM subnet id, as a mock's id)."""
    parts = subnet_parts(subnet_id)
    if parts is None:
        return pulumi.Output.from_input(None)
    found = azure_native.network.get_subnet_output(
        resource_group_name=parts[0],
        virtual_network_name=parts[1],
        subnet_name=parts[2],
        opts=pulumi.InvokeOutputOptions(parent=parent),
    )
    return pulumi.Output.all(found.address_prefix, found.address_prefixes).apply(
        lambda a: [a[0]] if a[0] else list(a[1] or []) or None
    )


def _warn_default_ranges(
    where: str,
    service_cidr: str | None,
    pod_cidr: str | None,
    uses_pod_cidr: bool,
    prefixes: pulumi.Input[list[str] | None],
    resource: pulumi.Resource,
) -> None:
    """The finding for ranges left at AKS's defaults in a subnet of the user's (network.default_range_finding)."""

    def warn(found: list[str] | None) -> None:
        if message := default_range_finding(service_cidr, pod_cidr, uses_pod_cidr, found):
            pulumi.log.warn(where + message, resource=resource)

    pulumi.Output.from_input(prefixes).apply(warn)


def _field(value: Any, name: str) -> Any:
    """A field of an SDK output value, which `Output.all` hands over as a plain dict (snake_case keys)."""
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def kubelet_object_id(profile: Mapping[str, Any] | None) -> str | None:
    """The kubelet identity's object id from a cluster's `identityProfile` (None without one)."""
    identity = (profile or {}).get("kubeletidentity")
    return None if identity is None else identity.object_id


def user_kubeconfig(
    resource_group_name: pulumi.Input[str], cluster_name: pulumi.Input[str], parent: pulumi.Resource
) -> pulumi.Output[str]:
    """The cluster-user kubeconfig (secret), as `az aks get-credentials` fetches it."""
    creds = cs.list_managed_cluster_user_credentials_output(
        resource_group_name=resource_group_name,
        resource_name=cluster_name,
        opts=pulumi.InvokeOutputOptions(parent=parent),
    )
    return pulumi.Output.secret(creds.kubeconfigs.apply(lambda kcs: base64.b64decode(kcs[0].value).decode()))


@dataclass(frozen=True)
class ManagedClusterFacts:
    """What a handle reads of an AKS cluster it did not create: from the program's `ManagedCluster`
    (`from_managed_cluster`) or from `getManagedCluster` (`existing`), as the SDK's output types."""

    aad_profile: pulumi.Input[Any]
    disable_local_accounts: pulumi.Input[bool | None]
    support_plan: pulumi.Input[str | None]
    network_profile: pulumi.Input[Any]
    #: the agent pools the program declares with the cluster (their vnetSubnetID); None: not judged
    agent_pool_profiles: pulumi.Input[Any] | None


@documented_component(None, handle=AksClusterHandle)
class ExistingAksCluster(ExistingCluster):
    """An AKS cluster this library did not create, as a cluster handle for pools and add-ons.

    Made by `AksCluster.existing(...)` or `AksCluster.from_managed_cluster(...)`. Names may be Outputs;
    `zones` ("1", "2", "3") must be plain, and so must `kubernetes_version` (e.g. "1.33") except when
    read from the cluster resource. Declares no Azure
    resource. Without `k8s_provider` it declares a Kubernetes provider from the
    cluster-user credentials (`listManagedClusterUserCredentials`, as
    `az aks get-credentials`). The managed autoscaler's profile is not ours to
    read: with spot pools that fall back, ClusterAutoscaler warns that the
    expander must be `priority` and prints the `az aks update` command.

    Arguments: `cluster_name` (the AKS name); `resource_group_name` (the cluster's resource group);
    `location` (its Azure region, e.g. "eastus"; given plain, the pools rank VM sizes by its prices); `zones`
    (the zones "1", "2", "3" the GPU agent pools use, or [] for regional pools; plain); `kubernetes_version`
    (the control plane's minor,
    e.g. "1.35": the agent pools' orchestratorVersion; plain); `k8s_provider` (default: built from the
    cluster-user credentials, as above); `tags` (on what the add-ons create); `kubelet_identity_object_id`
    (the identity the nodes act as; default: read from the cluster); `entra_login` (on a cluster with Microsoft
    Entra ID, whose cluster-user kubeconfig logs in by device code, the kubelogin login mode the Kubernetes
    provider uses instead: "azurecli", "workloadidentity", "spn", "msi" or "azd"; default None: the kubeconfig
    as AKS returns it, and a preview warning that it hangs `pulumi up`); `read` (the cluster's Entra ID settings,
    support plan and network profile; default: read through `getManagedCluster`).
    """

    cloud = "azure"

    def __init__(
        self,
        resource_name: str,
        *,
        cluster_name: pulumi.Input[str],
        resource_group_name: pulumi.Input[str],
        location: pulumi.Input[str],
        zones: Sequence[str],
        kubernetes_version: pulumi.Input[str],
        k8s_provider: k8s.Provider | None = None,
        tags: Mapping[str, str] | None = None,
        kubelet_identity_object_id: pulumi.Input[str | None] | None = None,
        entra_login: str | None = None,
        read: ManagedClusterFacts | None = None,
        opts: pulumi.ResourceOptions | None = None,
        made_by: str = "AksCluster.existing",
    ) -> None:
        where = f"{made_by} '{resource_name}': "
        problems = input_str_problems(
            where, cluster_name=cluster_name, resource_group_name=resource_group_name, location=location
        )
        problems += zones_problems(where, zones, AZURE_ZONES, may_be_empty=True)
        if isinstance(location, str) and isinstance(zones, list | tuple):
            problems += zoneless_region_problems(where, location, zones)
        if not isinstance(kubernetes_version, pulumi.Output):  # an Output: the cluster's own (from_managed_cluster)
            problems += version_problems(where, kubernetes_version)
        problems += k8s_provider_problems(where, k8s_provider)
        problems += entra_login_problems(where, entra_login)
        raise_if(problems, source=f"{made_by} '{resource_name}'")
        super().__init__(EXISTING_TYPE_TOKEN, resource_name, handle_inputs(zones, kubernetes_version), opts)
        self.cluster_name: pulumi.Output[str] = pulumi.Output.from_input(cluster_name)
        self.resource_group_name: pulumi.Output[str] = pulumi.Output.from_input(resource_group_name)
        self.location: pulumi.Output[str] = pulumi.Output.from_input(location)
        #: The location as a plain value when given as one (prices rank the VM sizes before deployment).
        self.plain_location: str | None = location if isinstance(location, str) else None
        self.autoscaler_profile: ManagedAutoscalerProfile | None = None
        found: pulumi.Output[cs.GetManagedClusterResult] | None = None
        if kubelet_identity_object_id is None or read is None:
            found = cs.get_managed_cluster_output(
                resource_group_name=self.resource_group_name,
                resource_name=self.cluster_name,
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
        #: the identity the nodes act as, read from the cluster
        self.kubelet_identity_object_id: pulumi.Output[str | None] = (
            found.identity_profile.apply(kubelet_object_id)
            if kubelet_identity_object_id is None and found is not None
            else pulumi.Output.from_input(kubelet_identity_object_id)
        )
        if read is None:
            assert found is not None
            read = ManagedClusterFacts(
                aad_profile=found.aad_profile,
                disable_local_accounts=found.disable_local_accounts,
                support_plan=found.support_plan,
                network_profile=found.network_profile,
                agent_pool_profiles=None,  # a cluster that exists already: AKS accepted its ranges
            )
        #: the cluster's support plan ("KubernetesOfficial", or "AKSLongTermSupport" on Premium), as read
        self.support_plan: pulumi.Output[str | None] = pulumi.Output.from_input(read.support_plan)
        #: the cluster's Entra ID profile (aadProfile; None without Entra ID) and disableLocalAccounts, as read:
        #: the kubeconfig itself is judged by how AKS's cluster-user kubeconfig logs in (`_kubeconfig`)
        self.aad_profile: pulumi.Output[Any] = pulumi.Output.from_input(read.aad_profile)
        self.local_accounts_disabled: pulumi.Output[bool | None] = pulumi.Output.from_input(read.disable_local_accounts)
        self._plain_facts(zones, kubernetes_version, tags)
        self._use_provider(resource_name, k8s_provider, lambda: self._kubeconfig(resource_name, entra_login))
        if read.agent_pool_profiles is not None:
            self._check_ranges(resource_name, read)
        self.register_outputs({"cluster_name": self.cluster_name, "resource_group_name": self.resource_group_name})

    def _kubeconfig(self, name: str, login: str | None) -> pulumi.Output[str]:
        """The cluster-user kubeconfig; on an Entra ID cluster (its user runs kubelogin) converted to `login`, or
        left as AKS returns it with the finding that its interactive login hangs `pulumi up`."""
        where = f"AksCluster '{name}': "

        def convert(kubeconfig: str) -> str:
            mode = login_of(kubeconfig)
            if mode is None:  # a local account's certificate: no Entra ID
                return kubeconfig
            if login is not None:
                pulumi.log.warn(where + runner_note(login), resource=self)
                return non_interactive(kubeconfig, login)
            if mode in INTERACTIVE_LOGINS:
                pulumi.log.warn(where + device_code_finding(mode), resource=self)
            return kubeconfig

        # Read from the kubeconfig AKS returns, which says how it logs in (an unset aadProfile or
        # disableLocalAccounts is unknown at preview, so they would hold the kubeconfig back).
        return user_kubeconfig(self.resource_group_name, self.cluster_name, self).apply(convert)

    def _check_ranges(self, name: str, read: ManagedClusterFacts) -> None:
        """A subnet of the program's with the service or pod range left at AKS's default: the finding."""

        def check(profile: Any, pools: Any) -> None:
            subnets = [s for p in pools or [] if (s := _field(p, "vnet_subnet_id"))]
            if not subnets:
                return
            plugin, mode = _field(profile, "network_plugin"), _field(profile, "network_plugin_mode")
            # kubenet and Azure CNI Overlay take Pod IPs from pod_cidr; flat Azure CNI from the subnet
            uses_pods = plugin in (None, "kubenet") or (plugin == "azure" and mode == "overlay")
            _warn_default_ranges(
                f"AksCluster '{name}': ",
                _field(profile, "service_cidr"),
                _field(profile, "pod_cidr"),
                uses_pods,
                subnet_prefixes(subnets[0], self),
                self,
            )

        pulumi.Output.all(read.network_profile, read.agent_pool_profiles).apply(lambda a: check(a[0], a[1]))
