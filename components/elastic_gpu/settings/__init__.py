"""The settings of each section, declared once: the general pool, a GPU pool and the autoscaler (and the clouds'
own parts of the stack file's `cluster`).

Each model is both the stack file's section (elastic_gpu/config.py adds what only a stack file has: a pool's
`name`, `gpu`, ...) and the base of the component's Args (`GeneralPoolArgs`, `SpotGpuPoolArgs`,
`ClusterAutoscalerArgs` add what only a program has: the cluster handle, a provisioner, extra taints ...).
A cloud-only setting is each cloud's part, `settings/<cloud>.py` beside this module, merged here; a new one is
declared there and read by that cloud's builder. The clouds' folders import these modules, never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from elastic_gpu.durations import DURATION_PATTERN

# The clouds' own parts (SDK-free), merged by type, so that the type checker and an editor know every setting.
from elastic_gpu.settings.aws import AwsClusterOptions, AwsGpuPoolArgsOptions, AwsGpuPoolOptions
from elastic_gpu.settings.azure import AzureClusterOptions, AzureGpuPoolOptions
from elastic_gpu.settings.base import MAX_DISK_GIB, MAX_NODES, MIN_DISK_GIB, SettingsModel, cloud_only_settings
from elastic_gpu.settings.base import Spelling as Spelling
from elastic_gpu.settings.gcp import GcpClusterOptions, GcpGpuPoolArgsOptions, GcpGpuPoolOptions
from elastic_gpu.validation import (
    NODES_PER_CLUSTER,
    bounds_problems,
    cloud_only_problems,
    disk_problems,
    general_pool_problems,
    said,
    size_problems,
)
from elastic_gpu.versions import KUBERNETES_MINOR_PATTERN

if TYPE_CHECKING:
    from elastic_gpu.cloud_facts import RuledCloud

Expander = Literal["priority", "least-waste", "most-pods", "random", "price"]
#: A cluster-autoscaler duration, a Go `time.Duration`: "90s", "14m30s", "1h30m" (elastic_gpu.durations
#: parses it).
Duration = Annotated[str, Field(pattern=DURATION_PATTERN)]

#: The longest fallback promise: a day. A pool that may wait longer for on-demand capacity has no promise to keep
#: (leave it unset); larger figures only hide a typo (1e12).
MAX_MINUTES_TO_FALLBACK = 1440

# Defaults, named once. Each is documented on the field that uses it.
DEFAULT_GENERAL_MIN = 1
DEFAULT_GPU_MIN = 0
DEFAULT_GENERAL_DISK_GIB = 50
DEFAULT_GPU_DISK_GIB = 100
DEFAULT_SCALE_DOWN_UNNEEDED = "10m"
DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD = "10m"
#: How long the autoscaler waits for a requested node to become Ready before it gives up on the
#: group and tries the next one. A cold GPU node needs VM start plus driver install: 15m is the
#: upstream default (cluster-autoscaler FAQ), AKS's default (autoScalerProfile), and what a
#: maintainer measured in kubernetes/autoscaler#3464 ("15 minutes until the node is fully ready,
#: this includes both VM creation and GPU driver installation"). Shorter gives up on spot nodes
#: that were coming and pays for the fallback too.
DEFAULT_MAX_NODE_PROVISION_TIME = "15m"
DEFAULT_EXPANDER: tuple[Expander, ...] = ("priority", "least-waste")


class ClusterOptions(GcpClusterOptions, AzureClusterOptions, AwsClusterOptions):
    """Each cloud's own `cluster` settings (aws, azure, gcp, in that order), merged into config.ClusterConfig."""


class GeneralPoolSettings(SettingsModel):
    """The general (CPU) pool: system pods, the autoscaler and everything that is not a GPU job."""

    instance_types: list[str] = Field(min_length=1)
    """CPU instance types; several of similar size, so capacity is easier to find."""
    min_size: int = Field(default=DEFAULT_GENERAL_MIN, ge=0, le=MAX_NODES)
    """Default 1, and never less: system pods and the autoscaler need a node."""
    max_size: int = Field(ge=0, le=MAX_NODES)
    """The most nodes the autoscaler may run."""
    spot: bool = False
    """Default false (on-demand): the autoscaler runs here and must not be evicted."""
    disk_size_gib: int = Field(default=DEFAULT_GENERAL_DISK_GIB, ge=MIN_DISK_GIB, le=MAX_DISK_GIB)
    """Root disk per node (GiB)."""


class Reservations(SettingsModel):
    """Capacity the team already holds, used before spot and on-demand: the pool's reserved tier. Each cloud reads
    `ids` its own way and checks them at preview against what the cloud describes (type, zone, count, window)."""

    ids: list[str] = Field(default_factory=list)
    """The reservations the pool may use. AWS: EC2 capacity reservation ids (`cr-...`; an On-Demand Capacity
    Reservation or a Capacity Block for ML). Azure: capacity reservation group resource ids. GCP: reservation
    names (`projects/<project>/reservations/<name>` for one shared from another project;
    `zones/<zone>/reservations/<name>` to name its zone in a pool across several)."""
    tags: dict[str, str] = Field(default_factory=dict)
    """AWS only, under Karpenter: the reservations carrying all of these tags (its
    `capacityReservationSelectorTerms`), besides `ids`."""
    nodes: int = Field(ge=1, le=MAX_NODES)
    """The reserved tier: how many of the pool's nodes come from the reservations, before its spot tier
    (`maxSize`) and its on-demand fallback (`fallbackMaxSize`); at most what the reservations hold."""
    only: bool = False
    """Default false: reserved first, then spot, then on-demand as the pool's other settings say. True: only the
    reservations (the pool then sets `maxSize: 0` and no on-demand fallback)."""


class GpuPoolCore(SettingsModel):
    """A GPU pool's settings every cloud has."""

    min_size: int = Field(default=DEFAULT_GPU_MIN, ge=0, le=MAX_NODES)
    """Default 0: the pool scales to zero when no GPU pod is pending."""
    max_size: int = Field(ge=0, le=MAX_NODES)
    """The most nodes of the pool's own capacity (spot, or on-demand when spot is false), in total over all
    its node groups (zones, and VM sizes on AKS): split between them, never per group."""
    fallback_max_size: int | None = Field(default=None, ge=1, le=MAX_NODES)
    """With the on-demand fallback: the most on-demand fallback nodes, in total over the fallback's groups
    (default: the max size). The pool's worst case is both maxima together. Under a Karpenter provisioner,
    default: one NodePool allowing spot and on-demand (spot first), the max size capping both; set: a
    separate on-demand NodePool of lower weight, capped at this."""
    max_minutes_to_fallback: float | None = Field(default=None, gt=0, le=MAX_MINUTES_TO_FALLBACK)
    """With the on-demand fallback: the most minutes a pending GPU pod may wait, every spot group out of
    capacity, until the autoscaler asks the fallback (`simulate`'s worst case; the `policy` gate refuses a
    pool that cannot keep it). Default: the cloud's (aws 10, azure 20, gcp 10)."""
    spot: bool = True
    """Default true: spot / low-priority capacity."""
    on_demand_fallback: bool = False
    """Default false. True: on-demand groups (min 0) the autoscaler tries only after the spot ones."""
    per_zone: bool | None = None
    """True: one node group per zone (and VM size); false: one spanning the zones. Default: the cloud's
    (its config_rules' DEFAULT_PER_ZONE): true on EKS, where the autoscaler backs off a zone's group and asks
    the next zone (spot reclaims and rebalancing stay zonal); false on AKS, where zonal spot agent pools take
    turns in backoff on a scale-set-level error and reach the fallback only after ~93 min (`simulate`); GKE's
    one node pool spans the zones either way."""
    disk_size_gib: int = Field(default=DEFAULT_GPU_DISK_GIB, ge=MIN_DISK_GIB, le=MAX_DISK_GIB)
    """Disk per node for images and scratch (GiB)."""
    mixed_gpu_models: bool = False
    """Default false: all instance types carry one GPU model (their accelerator label). True: the pool takes
    any of their GPUs; its nodes get no accelerator label, so workloads select the pool, not a model."""
    reservations: Reservations | None = None
    """Default none. Reserved capacity (EC2 capacity reservations and Capacity Blocks, Azure capacity reservation
    groups, GCP reservations) the pool uses first, before spot and on-demand."""

    @property
    def fallback_total(self) -> int:
        """The on-demand fallback's total max: `fallback_max_size`, else `max_size`; 0 without a fallback."""
        if not self.on_demand_fallback:
            return 0
        return self.max_size if self.fallback_max_size is None else self.fallback_max_size


class GpuPoolSettings(GcpGpuPoolOptions, AzureGpuPoolOptions, AwsGpuPoolOptions, GpuPoolCore):
    """A GPU pool's settings: every cloud's, then each cloud's own (aws, azure, gcp, in that order)."""


class GpuPoolArgsSettings(GpuPoolSettings, GcpGpuPoolArgsOptions, AwsGpuPoolArgsOptions):
    """A GPU pool's settings as a program gives them (SpotGpuPoolArgs): a stack file's, and the clouds' own
    settings that a stack file derives (GCP's `gpu_count`, from `gpusPerNode`)."""


#: GPU-pool settings that mean something on one cloud only (SpotGpuPoolArgs and gpuPools[] alike): the
#: cloud, and the value that leaves them unset (settings/<cloud>.py).
CLOUD_ONLY_POOL_SETTINGS = cloud_only_settings(GpuPoolSettings)


class AutoscalerSettings(SettingsModel):
    """The cluster-autoscaler's settings (where the cloud's autoscaler takes them)."""

    scale_down_unneeded_time: Duration = DEFAULT_SCALE_DOWN_UNNEEDED
    """How long a node must be unneeded before it is removed."""
    scale_down_delay_after_add: Duration = DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD
    """How long after a scale-up before scale-down is considered again."""
    expander: list[Expander] = Field(default=list(DEFAULT_EXPANDER), min_length=1)  # copied for each instance
    """Expander chain: priority (spot groups first, from the ConfigMap), then the cheapest fit; with an
    on-demand fallback pool it must contain priority (where the cloud's autoscaler has it). Allowed:
    priority, least-waste, most-pods, random, price."""
    max_node_provision_time: Duration = DEFAULT_MAX_NODE_PROVISION_TIME
    """How long a group may take to deliver a node before the autoscaler tries the next (the fallback)."""


#: The autoscaler's durations, checked against the cloud's AUTOSCALER_DURATIONS.
DURATION_KEYS = ("scale_down_unneeded_time", "scale_down_delay_after_add", "max_node_provision_time")


# --- the rules over the settings, for the stack file and the Args alike ------------------------


def general_pool_settings_problems(spell: Spelling, cloud: RuledCloud, pool: GeneralPoolSettings) -> list[str]:
    """The general pool's settings against each other and the cloud's types (values of their declared types)."""
    problems = size_problems(spell.where, spell.word("min_size"), pool.min_size, spell.word("max_size"), pool.max_size)
    if pool.min_size < 1:
        problems.append(
            f"{spell.path('min_size')}: must be >= 1 so system pods and the autoscaler have a node "
            f"(got {pool.min_size})"
        )
    if not pool.instance_types:
        problems.append(f"{spell.path('instance_types')}: at least one instance type is required")
    problems += disk_problems(spell.path("disk_size_gib"), cloud, pool.disk_size_gib)
    return problems + general_pool_problems(spell.where, cloud, list(pool.instance_types), spell.word("instance_types"))


def gpu_pool_settings_problems(
    spell: Spelling,
    cloud: RuledCloud,
    pool: GpuPoolSettings,
    owners: Mapping[str, tuple[str, object]] = CLOUD_ONLY_POOL_SETTINGS,
    given: Callable[[str], bool] = lambda _: False,
) -> list[str]:
    """A GPU pool's settings against each other and the cloud (values of their declared types): sizes, the
    fallback and its promise, another cloud's settings (`owners`; `given`: set, even to the default)."""
    word, path = spell.word, spell.path
    problems = size_problems(spell.where, word("min_size"), pool.min_size, word("max_size"), pool.max_size)
    fallback_max = pool.fallback_max_size
    if fallback_max is not None and fallback_max > NODES_PER_CLUSTER.high:
        problems += bounds_problems(path("fallback_max_size"), fallback_max, NODES_PER_CLUSTER)
    if fallback_max is not None and not pool.on_demand_fallback:
        problems.append(
            f"{path('fallback_max_size')}: only a pool with {word('on_demand_fallback')} has a fallback "
            f"(got {word('fallback_max_size')}={fallback_max}, {word('on_demand_fallback')}={spell.flag(False)})"
        )
    if pool.on_demand_fallback and not pool.spot:
        problems.append(
            f"{path('on_demand_fallback')}: only a spot pool can fall back to on-demand "
            f"({word('spot')} is {spell.flag(False)})"
        )
    problems += _promise_problems(spell, pool)
    problems += _reservation_only_problems(spell, pool)
    problems += disk_problems(path("disk_size_gib"), cloud, pool.disk_size_gib)
    return problems + cloud_only_problems(path, cloud.name, owners, {key: getattr(pool, key) for key in owners}, given)


def _reservation_only_problems(spell: Spelling, pool: GpuPoolSettings) -> list[str]:
    """`reservations.only`: the reservations alone, so no spot tier (`max_size` 0) and no on-demand fallback."""
    if pool.reservations is None or not pool.reservations.only:
        return []
    where = f"{spell.path('reservations')}.{spell.word('only')}: {spell.flag(True)} uses the reservations alone"
    problems = []
    if pool.max_size != 0:
        problems.append(f"{where}, so {spell.path('max_size')} must be 0 (got {pool.max_size})")
    if pool.on_demand_fallback:
        problems.append(
            f"{where}, so {spell.path('on_demand_fallback')} must be {spell.flag(False)} (got {spell.flag(True)})"
        )
    return problems


def _promise_problems(spell: Spelling, pool: GpuPoolSettings) -> list[str]:
    value = pool.max_minutes_to_fallback
    where = spell.path("max_minutes_to_fallback")
    if value is None:
        return []
    if value <= 0:
        return [f"{where}: must be a number of minutes > 0 (got {said(value)})"]
    if value > MAX_MINUTES_TO_FALLBACK:
        return [
            f"{where}: must be at most {MAX_MINUTES_TO_FALLBACK} minutes (a day; leave it unset for no promise) "
            f"(got {said(value)})"
        ]
    if not pool.on_demand_fallback:
        return [f"{where}: set only with {spell.word('on_demand_fallback')} (got {said(value)})"]
    return []


# --- the cluster's, the device plugin's and Kueue's settings --------------------------------------------------
#
# The stack file's `cluster`, `devicePlugin` and `kueue` (elastic_gpu/config.py) and the components' Args
# (EksClusterArgs, AksClusterArgs, GkeClusterArgs, NvidiaDevicePluginArgs, KueueDwsArgs) build on these; a cloud's
# own cluster settings are its `settings/<cloud>.py` parts (AwsNetworkOptions, KarpenterOptions, AksNetworkOptions,
# GkeClusterOptions, ...). The cluster's are small models, not one: each cluster's Args take only the settings
# their cloud has under the stack file's name (AKS calls the region `location`, GKE the network range
# `node_cidr`), and the stack file keeps its keys' order, which its messages list the allowed keys in.

#: The network range a stack creates unless told (AWS: the VPC; GCP: the subnetwork of the nodes).
DEFAULT_NETWORK_CIDR = "10.0.0.0/16"
#: Pods sharing one GPU by time-slicing, at most: each replica is a pod on the node.
MAX_TIME_SLICING_REPLICAS = 1000


class RegionSetting(SettingsModel):
    """The cluster's region: the stack file's `cluster`, EksClusterArgs and GkeClusterArgs (AksClusterArgs call it
    `location`)."""

    region: str = Field(min_length=1)
    """Cloud region, e.g. "us-west-2", "westeurope", "us-central1"; one of the cloud's table in
    elastic_gpu/<cloud>/config_rules.py (GCP: Cloud NAT and a regional control plane live there)."""


class ClusterSettings(SettingsModel):
    """The cluster's settings every cloud has: the stack file's `cluster` and every cluster's Args."""

    zones: list[str]
    """Zones the node pools span, each in the region (AWS: each gets a private and a public subnet of the VPC;
    GCP: `<region>-<letter>`; Azure: "1", "2", "3", or [] for regional pools in a region without zones)."""
    kubernetes_version: str = Field(pattern=KUBERNETES_MINOR_PATTERN)
    """Kubernetes minor, e.g. "1.33"; picks the matching cluster-autoscaler image. AKS takes its latest GA patch;
    on GKE it is the cluster's initial version and a floor (minMasterVersion) that the RAPID, REGULAR and STABLE
    channels upgrade past."""


class NetworkCidrSetting(SettingsModel):
    """The range of the network the stack creates: the stack file's `cluster` and EksClusterArgs (GkeClusterArgs
    call it `node_cidr`)."""

    network_cidr: str = DEFAULT_NETWORK_CIDR
    """Address range of the network the stack creates (AWS: the VPC, split into one private and one public block
    per zone; GCP: the subnetwork, unless `network` brings one), /16 to /24; default 10.0.0.0/16. AKS creates its
    own (refused on azure)."""


class ProtectSetting(SettingsModel):
    """Protection from deletion: the stack file's `cluster` and every cluster's Args."""

    protect: bool = False
    """Protect the cluster from `pulumi destroy` (production stacks set true): Pulumi's protect on the control
    plane (AKS: and a resource group it creates; GKE: and GKE's deletion protection)."""


class DevicePluginSettings(SettingsModel):
    """NVIDIA's device plugin: the stack file's `devicePlugin` and NvidiaDevicePluginArgs."""

    time_slicing_replicas: int | None = Field(default=None, ge=2, le=MAX_TIME_SLICING_REPLICAS)
    """Share each GPU between this many pods (NVIDIA time-slicing), 2 or more; unset (None): no sharing."""


def device_plugin_settings_problems(path: str, plugin: DevicePluginSettings) -> list[str]:
    """A program's time-slicing replicas within the bounds the field declares (a stack file's are checked by the
    model itself); `path` spells the field."""
    replicas = plugin.time_slicing_replicas
    if replicas is None or 2 <= replicas <= MAX_TIME_SLICING_REPLICAS:
        return []
    bound = ">= 2" if replicas < 2 else f"<= {MAX_TIME_SLICING_REPLICAS}"
    return [f"{path}: must be {bound} (got {replicas})"]


class KueueSettings(SettingsModel):
    """Kueue's queues (GCP, with a queued-provisioning pool): the stack file's `kueue` and KueueDwsArgs."""

    queue_namespaces: list[str] = Field(
        default_factory=lambda: ["default"], min_length=1, validation_alias="namespaces"
    )
    """The namespaces that get a LocalQueue named dws-local-queue (created unless built in); default
    ["default"]."""
