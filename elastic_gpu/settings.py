"""The settings of each section, declared once: the general pool, a GPU pool and the autoscaler.

Each model is both the stack file's section (elastic_gpu/config.py adds what only a stack file has: a pool's
`name`, `gpu`, ...) and the base of the component's Args (`GeneralPoolArgs`, `SpotGpuPoolArgs`,
`ClusterAutoscalerArgs` add what only a program has: the cluster handle, a provisioner, extra taints ...).
A GPU pool's cloud-only settings are each cloud's `<cloud>/options.py` part, merged here; a new one is
declared there and read by that cloud's builder.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

# The one cloud-neutral module that imports the clouds' folders (their SDK-free `options` alone): a typed
# merge, so that the type checker and an editor know every setting of a pool.
from elastic_gpu.aws.options import AwsGpuPoolOptions
from elastic_gpu.azure.options import AzureGpuPoolOptions
from elastic_gpu.durations import DURATION_PATTERN
from elastic_gpu.gcp.options import GcpGpuPoolArgsOptions, GcpGpuPoolOptions
from elastic_gpu.settings_base import MAX_DISK_GIB, MAX_NODES, SettingsModel, cloud_only_settings

Expander = Literal["priority", "least-waste", "most-pods", "random", "price"]
#: A cluster-autoscaler duration, a Go `time.Duration`: "90s", "14m30s", "1h30m" (elastic_gpu.durations
#: parses it).
Duration = Annotated[str, Field(pattern=DURATION_PATTERN)]

#: The longest fallback promise: a day. A pool that may wait longer for on-demand capacity has no promise to keep
#: (leave it unset); larger figures only hide a typo (1e12).
MAX_MINUTES_TO_FALLBACK = 1440
#: The smallest node disk any cloud's node image boots from; the clouds' own bounds are in their rules.
MIN_DISK_GIB = 20

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
    per_zone: bool = True
    """Default true: one node group per zone, so spot reclaims and rebalancing stay zonal."""
    disk_size_gib: int = Field(default=DEFAULT_GPU_DISK_GIB, ge=MIN_DISK_GIB, le=MAX_DISK_GIB)
    """Disk per node for images and scratch (GiB)."""
    mixed_gpu_models: bool = False
    """Default false: all instance types carry one GPU model (their accelerator label). True: the pool takes
    any of their GPUs; its nodes get no accelerator label, so workloads select the pool, not a model."""


class GpuPoolSettings(GcpGpuPoolOptions, AzureGpuPoolOptions, AwsGpuPoolOptions, GpuPoolCore):
    """A GPU pool's settings: every cloud's, then each cloud's own (aws, azure, gcp, in that order)."""


class GpuPoolArgsSettings(GpuPoolSettings, GcpGpuPoolArgsOptions):
    """A GPU pool's settings as a program gives them (SpotGpuPoolArgs): a stack file's, and the clouds' own
    settings that a stack file derives (GCP's `gpu_count`, from `gpusPerNode`)."""


#: GPU-pool settings that mean something on one cloud only (SpotGpuPoolArgs and gpuPools[] alike): the
#: cloud, and the value that leaves them unset (the clouds' `options.py`).
CLOUD_ONLY_POOL_SETTINGS = cloud_only_settings(GpuPoolSettings)


class AutoscalerSettings(SettingsModel):
    """The cluster-autoscaler's settings (where the cloud's autoscaler takes them)."""

    scale_down_unneeded_time: Duration = DEFAULT_SCALE_DOWN_UNNEEDED
    """How long a node must be unneeded before it is removed."""
    scale_down_delay_after_add: Duration = DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD
    """How long after a scale-up before scale-down is considered again."""
    expander: list[Expander] = Field(default_factory=lambda: list(DEFAULT_EXPANDER), min_length=1)
    """Expander chain: priority (spot groups first, from the ConfigMap), then the cheapest fit; with an
    on-demand fallback pool it must contain priority (where the cloud's autoscaler has it). Allowed:
    priority, least-waste, most-pods, random, price."""
    max_node_provision_time: Duration = DEFAULT_MAX_NODE_PROVISION_TIME
    """How long a group may take to deliver a node before the autoscaler tries the next (the fallback)."""


#: The autoscaler's durations, checked against the cloud's AUTOSCALER_DURATIONS.
DURATION_KEYS = ("scale_down_unneeded_time", "scale_down_delay_after_add", "max_node_provision_time")
