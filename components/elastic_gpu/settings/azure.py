"""Azure's own settings of a GPU pool and of the cluster (merged into elastic_gpu.settings' sections; refused
on other clouds)."""

from __future__ import annotations

from decimal import Decimal
from typing import ClassVar, Literal

from pydantic import Field

from elastic_gpu.settings.base import MAX_NODES, MAX_USD_PER_HOUR, CloudOptions, Spelling, StackModel

#: The AKS network plugins (ContainerServiceNetworkProfile.networkPlugin): Azure CNI, kubenet, or none (your own).
NetworkPlugin = Literal["azure", "kubenet", "none"]
#: Azure CNI (in overlay mode): kubenet is being retired by Azure.
DEFAULT_AKS_NETWORK_PLUGIN: NetworkPlugin = "azure"
#: System-pool VM size: the AKS docs want >= 4 vCPUs for system pools and no B-series.
DEFAULT_AKS_SYSTEM_VM_SIZE = "Standard_D4s_v5"
#: AKS's System pool never scales below 1 (its count range is 1..1000); docs recommend 3 in production.
DEFAULT_AKS_SYSTEM_MIN = 1
DEFAULT_AKS_SYSTEM_MAX = 3


class ResourceGroupConfig(StackModel):
    """Azure only: the resource group the cluster lives in."""

    name: str = Field(pattern=r"^[-\w.()]{0,89}[-\w()]$")
    """The group's name (Azure's rule: up to 90 letters, digits, '-', '_', '.', '(' and ')', not ending in '.')."""
    create: bool = True
    """Default true: create the group; false: use an existing one (it is never deleted by us)."""


class SystemPoolConfig(StackModel):
    """Azure only: the AKS System-mode pool (on-demand, >= 1 node) for kube-system pods."""

    vm_size: str = DEFAULT_AKS_SYSTEM_VM_SIZE
    """The System pool's VM size (default DEFAULT_AKS_SYSTEM_VM_SIZE)."""
    min_size: int = Field(default=DEFAULT_AKS_SYSTEM_MIN, ge=0, le=MAX_NODES)
    """Default 1; must stay >= 1 (AKS requires a node in a System pool)."""
    max_size: int = Field(default=DEFAULT_AKS_SYSTEM_MAX, ge=0, le=MAX_NODES)
    """Default 3: the most System nodes the autoscaler may run."""
    spot: bool = False
    """Must stay false: AKS does not allow spot System pools."""
    critical_addons_only: bool = False
    """Default false; true taints it CriticalAddonsOnly=true:NoSchedule (system pods only)."""


#: AKS's node-OS maintenance configuration: the one name AKS reads for node image upgrades (its NodeImage and
#: SecurityPatch channels) and for the node images node auto-provisioning picks up and drifts its nodes to
#: (AKS planned-maintenance.md; node-auto-provisioning-upgrade-image.md: without it "AKS might use a fallback
#: schedule ... at unexpected times").
NODE_OS_MAINTENANCE_CONFIG = "aksManagedNodeOSUpgradeSchedule"
#: Days MaintenanceWindow.schedule.weekly.dayOfWeek takes (azure-native WeekDay).
WEEK_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class MaintenanceWindowConfig(StackModel):
    """Azure only: the weekly window in which AKS may reimage nodes with a new node image, and node
    auto-provisioning may pick one up and replace (drift) its GPU nodes: outside it, running GPU jobs are left
    alone. Default: Saturdays 02:00 UTC for 4 hours, the shortest window AKS takes (MaintenanceWindow.durationHours
    4-24) and the one its NAP page recommends at least. NAP still forces an image older than 90 days."""

    day_of_week: Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] = "Saturday"
    """Default Saturday: the day the window opens, each week."""
    start_time: str = Field(default="02:00", pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
    """Default "02:00": when it opens, HH:MM in `utc_offset`."""
    duration_hours: int = Field(default=4, ge=4, le=24)
    """Default 4 (AKS's minimum): how long it stays open."""
    utc_offset: str = Field(default="+00:00", pattern=r"^[+-]([01][0-9]|2[0-3]):[0-5][0-9]$")
    """Default "+00:00" (UTC): the offset `start_time` is in, e.g. "+01:00"."""


class AksResourceGroupOptions(CloudOptions):
    """The stack file's resource group (AksClusterArgs spell it resource_group_name and create_resource_group)."""

    cloud: ClassVar[str] = "azure"

    resource_group: ResourceGroupConfig | None = None
    """Azure only: default: create `<name>-rg` in `region`."""


class AksNetworkPluginOptions(CloudOptions):
    """The AKS network plugin: the stack file's `cluster` and AksClusterArgs."""

    cloud: ClassVar[str] = "azure"

    network_plugin: NetworkPlugin | None = DEFAULT_AKS_NETWORK_PLUGIN
    """Azure only: the AKS network plugin: "azure" (default: Azure CNI in overlay mode), "kubenet", or "none"
    (bring your own CNI); None: the default."""


class AksSystemPoolOptions(CloudOptions):
    """The stack file's System pool (AksClusterArgs spell it system_vm_size, system_min_size, ...)."""

    cloud: ClassVar[str] = "azure"

    system_pool: SystemPoolConfig | None = None
    """Azure only: the System-mode pool (default SystemPoolConfig())."""


class AksNetworkOptions(CloudOptions):
    """The AKS cluster's network and maintenance settings: the stack file's `cluster` and AksClusterArgs."""

    cloud: ClassVar[str] = "azure"

    subnet_id: str | None = None
    """Azure only: the ARM id of a VNet subnet you own for the System pool, the general pool and every GPU
    pool (default: AKS creates a VNet; a pool's own subnets must be in the same VNet). A user-assigned
    control-plane identity `<name>-identity` is created with Network Contributor on it before the cluster. A
    private cluster's DNS zone is then linked to your VNet, so a runner in it or peered with it reaches the API
    on the first `pulumi up`."""
    api_server_subnet_id: str | None = None
    """Azure only, with `subnetId`: API Server VNet Integration, the API server's endpoint in this subnet of the
    same VNet (delegated to Microsoft.ContainerService/managedClusters, /28 or larger); the identity gets Network
    Contributor on it too."""
    maintenance_window: MaintenanceWindowConfig | None = MaintenanceWindowConfig()
    """Azure only: the only time AKS reimages nodes with a new node image and node auto-provisioning picks one up
    and replaces its GPU nodes (the `aksManagedNodeOSUpgradeSchedule` MaintenanceConfiguration); without one AKS
    does so at any hour, under running GPU jobs. Default (and None): MaintenanceWindowConfig(), Saturdays 02:00
    UTC for 4 hours."""
    service_cidr: str | None = None
    """Azure only: the cluster's Service range (default: AKS's 10.0.0.0/16). With `subnetId`, put it outside
    the VNet's address space: AKS refuses one that overlaps a subnet of it (ServiceCidrOverlapExistingSubnetsCidr;
    the preview warns on a default that overlaps your subnet)."""
    dns_service_ip: str | None = None
    """Azure only: the kube-dns Service IP, inside `serviceCidr` (default: its .10; AKS's 10.0.0.10)."""
    pod_cidr: str | None = None
    """Azure only: the Pods' range with Azure CNI Overlay or kubenet, which take Pod IPs from it, not from the
    VNet (default: AKS's 10.244.0.0/16); with `subnetId`, outside the VNet's address space."""


class AzureClusterOptions(AksNetworkOptions, AksSystemPoolOptions, AksNetworkPluginOptions, AksResourceGroupOptions):
    """Azure's own `cluster` settings, in the stack file's order; AksClusterArgs take the network plugin's and the
    network's parts too."""

    cloud: ClassVar[str] = "azure"


class AzureGpuPoolOptions(CloudOptions):
    cloud: ClassVar[str] = "azure"

    spot_max_price: float | None = Field(default=None, le=MAX_USD_PER_HOUR)
    """Azure only: max USD/hour per spot VM; default None: -1, up to the on-demand price (never evicted for
    price, only for capacity; azure/pools.py DEFAULT_SPOT_MAX_PRICE)."""


#: AKS's rule for an agent pool's spotMaxPrice: "the value must be -1 or a positive value with up to five decimal
#: places" (learn.microsoft.com/azure/aks/spot-node-pool, "Limitations"; ARM: "any decimal value greater than
#: zero or -1", ManagedClusterAgentPoolProfileProperties.spotMaxPrice).
SPOT_PRICE_DECIMALS = 5


def spot_max_price_problems(spell: Spelling, price: float | None) -> list[str]:
    """`spot_max_price` against AKS's rule, the one rule a stack file's `gpuPools[].spotMaxPrice`
    (azure/config_rules.py) and a program's `SpotGpuPoolArgs.spot_max_price` (azure/pools.py pool_problems) run,
    before any resource is declared; `spell` names it as the caller does. Unset (None) is AKS's default, -1."""
    if price is None or price == -1:
        return []
    exponent = Decimal(str(price)).as_tuple().exponent
    if price <= 0 or (isinstance(exponent, int) and -exponent > SPOT_PRICE_DECIMALS):
        return [
            f"{spell.path('spot_max_price')}: {price!r} is not allowed; allowed: -1 (up to the on-demand price) "
            f"or a positive USD/hour with at most {SPOT_PRICE_DECIMALS} decimals"
        ]
    return []
