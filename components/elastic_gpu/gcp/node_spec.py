"""One spec of a GKE node, built once from a pool's Args, that every GKE builder reads: the node pools
(gcp/pools.py: general, spot, fallback, reserved, queued) and the ComputeClass GKE auto-creates pools for
(gcp/autoprovisioning/compute_class.py).

Each field is marked with the provider input it sets and what a change of it does (elastic_gpu/node_marks.py):
`replaces` where it forces a new node pool (terraform-provider-google google/services/container/node_config.go
schemaNodeConfig and resource_container_node_pool.go ForceNew, which pulumi-gcp's container.NodePool wraps),
`rolls` where GKE recreates the nodes, `sets` where it is updated in place. From those marks come: the digest in a
node pool's name (`forcing`: a replacing change renames the pool, so GKE gets the new pool before the old one is
deleted), the replace and rolling rows (gcp/replacement.py, docs/day-two.md's table), and the inputs a program's
`node_config` may not set (the ones the spec sets: `owned_node_config_fields`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pulumi

from elastic_gpu.gcp.config_rules import boot_disk_type
from elastic_gpu.gcp.node_config import ACCOUNT_OF_THE_CLUSTER, OAUTH_SCOPES, node_service_account
from elastic_gpu.gpu_catalog import gpu_instance_type, gpu_spec_labels
from elastic_gpu.node_marks import digest_marks, marked_inputs, marks, replaces, rolls, sets
from elastic_gpu.pool_overrides import kubelet_args
from elastic_gpu.scheduling import Taint

if TYPE_CHECKING:
    from elastic_gpu.general_pool import GeneralPoolArgs
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

#: Where a node-pool input is ForceNew: pulumi-gcp container.NodePool = terraform-provider-google.
NODE_POOL_SOURCE = "terraform-provider-google google/services/container/resource_container_node_pool.go: ForceNew"
NODE_CONFIG_SOURCE = "terraform-provider-google google/services/container/node_config.go schemaNodeConfig: ForceNew"
#: Manual changes that recreate the pool's nodes with its upgrade strategy (GKE "Planning for disruptions").
RECREATES_NODES = "GKE managing-clusters.md manual changes that recreate nodes"
#: The node pool's own inputs (outside nodeConfig) that force a new pool and no spec field sets
#: (resource_container_node_pool.go ForceNew; the spec sets queuedProvisioning).
POOL_FORCE_NEW_UNSET = (
    "name",
    "cluster",
    "location",
    "project",
    "initialNodeCount",
    "maxPodsPerNode",
    "placementPolicy",
)
#: nodeConfig inputs that force a new pool and no spec field sets (node_config.go schemaNodeConfig ForceNew:
#: preemptible, metadata, min_cpu_platform, shielded_instance_config, and flex_start, which the pool sets exactly
#: when queuedProvisioning is, so that mark covers it); a program's `node_config` may set all but flexStart.
NODE_CONFIG_FORCE_NEW_UNSET = ("preemptible", "metadata", "minCpuPlatform", "shieldedInstanceConfig", "flexStart")

#: KubeletConfiguration key -> the GKE SDK argument that sets it (NodePoolNodeConfigKubeletConfigArgs).
KUBELET_KEYS: dict[str, str] = {
    "cpuManagerPolicy": "cpu_manager_policy",
    "cpuCFSQuota": "cpu_cfs_quota",
    "cpuCFSQuotaPeriod": "cpu_cfs_quota_period",
    "podPidsLimit": "pod_pids_limit",
    "imageGCHighThresholdPercent": "image_gc_high_threshold_percent",
    "imageGCLowThresholdPercent": "image_gc_low_threshold_percent",
    "containerLogMaxFiles": "container_log_max_files",
    "containerLogMaxSize": "container_log_max_size",
    "allowedUnsafeSysctls": "allowed_unsafe_sysctls",
}
#: GKE GPUSharingConfig.GPUSharingStrategy (container/v1): time-sliced GPUs.
GPU_SHARING_TIME_SHARING = "TIME_SHARING"
#: ReservationAffinity.consumeReservationType (compute/v1, pulumi_gcp NodePoolNodeConfigReservationAffinityArgs).
NO_RESERVATION = "NO_RESERVATION"
SPECIFIC_RESERVATION = "SPECIFIC_RESERVATION"
#: The label key a SPECIFIC_RESERVATION affinity names its reservations by (GKE "Consuming reserved zonal
#: resources": --reservation-affinity=specific --reservation=NAME sets key compute.googleapis.com/reservation-name;
#: pulumi_gcp NodePoolNodeConfigReservationAffinityArgs.key docstring).
RESERVATION_NAME_KEY = "compute.googleapis.com/reservation-name"


@dataclass(frozen=True)
class GkeAccelerator:
    """The GPU a node carries (nodeConfig.guestAccelerators[0]; the whole block is ForceNew)."""

    type: str
    count: int
    #: gpuDriverInstallationConfig.gpuDriverVersion: DEFAULT or LATEST
    driver_version: str
    #: pods per GPU when time-sliced (gpuSharingConfig), 1: not shared
    sharing_clients: int = 1

    def digest_value(self) -> object:
        return {
            "type": self.type,
            "count": self.count,
            "gpuDriverVersion": self.driver_version,
            "gpuSharing": [GPU_SHARING_TIME_SHARING, self.sharing_clients] if self.sharing_clients > 1 else None,
        }


@dataclass(frozen=True)
class GkeReservationAffinity:
    """nodeConfig.reservationAffinity: NO_RESERVATION (queued provisioning), or SPECIFIC_RESERVATION with the
    reservation names (`projects/<p>/reservations/<n>` for a shared one)."""

    consume_type: str
    values: tuple[str, ...] = ()

    def digest_value(self) -> object:
        # The type alone when no names: the queued pools' digest as it was before reservations existed.
        if not self.values:
            return self.consume_type
        return {"type": self.consume_type, "key": RESERVATION_NAME_KEY, "values": list(self.values)}


@dataclass(frozen=True)
class GkeNodeSpec:
    """What one GKE node runs with; each field is marked with the provider input it sets and what a change of it
    does (`sets`, `rolls`, `replaces`)."""

    machine_type: str = field(metadata=rolls("nodeConfig.machineType", source=RECREATES_NODES))
    spot: bool = field(metadata=replaces("nodeConfig.spot", source=NODE_CONFIG_SOURCE))
    disk_size_gib: int = field(metadata=rolls("nodeConfig.diskSizeGb", source=RECREATES_NODES))
    #: the boot disk the machine series takes (gcp/config_rules.py BOOT_DISK_TYPES), from machine_type
    disk_type: str = field(init=False, metadata=rolls("nodeConfig.diskType", source=RECREATES_NODES))
    labels: dict[str, str] = field(metadata=sets("nodeConfig.labels"))
    taints: tuple[Taint, ...] = field(metadata=sets("nodeConfig.taints"))
    accelerator: GkeAccelerator | None = field(
        metadata=replaces("nodeConfig.guestAccelerators", source=NODE_CONFIG_SOURCE)
    )
    #: nodeConfig.flexStart (ForceNew) is set exactly when queuedProvisioning is, so this mark covers it.
    queued: bool = field(metadata=replaces("queuedProvisioning", source=NODE_POOL_SOURCE))
    #: a queued-provisioning node's run time, "<seconds>s"
    max_run_duration: str | None = field(
        metadata=replaces("nodeConfig.maxRunDuration", source=NODE_CONFIG_SOURCE, digest="when_set")
    )
    oauth_scopes: tuple[str, ...] = field(metadata=replaces("nodeConfig.oauthScopes", source=NODE_CONFIG_SOURCE))
    service_account: pulumi.Input[str | None] | None = field(
        metadata=replaces("nodeConfig.serviceAccount", source=NODE_CONFIG_SOURCE, digest="when_set")
    )
    reservation: GkeReservationAffinity | None = field(
        metadata=replaces("nodeConfig.reservationAffinity", source=NODE_CONFIG_SOURCE)
    )
    image_type: pulumi.Input[str] | None = field(metadata=rolls("nodeConfig.imageType", source=RECREATES_NODES))
    #: KubeletConfiguration keys mapped to the SDK's keyword arguments (pools.KUBELET_KEYS)
    kubelet_config: dict[str, Any] = field(metadata=sets("nodeConfig.kubeletConfig"))
    #: a program's own nodeConfig inputs (SpotGpuPoolArgs.node_config), merged over the spec's
    #: (a pulumi_gcp.container.NodePoolNodeConfigArgs: node_config_problems checks it; not spelled here so that
    #: type-checking the library reads no cloud SDK, tests/test_packaging.py)
    overrides: object | None

    def __post_init__(self) -> None:
        object.__setattr__(self, "disk_type", boot_disk_type(self.machine_type))

    def forcing(self) -> dict[str, object]:
        """The values whose change forces a new node pool, as the node-pool name's digest holds them: every
        field marked `replaces` (by its input's last name), and the ForceNew inputs a program's node_config sets."""
        out = {mark.input.rsplit(".", 1)[-1]: _digest_value(mark.input, value) for mark, value in digest_marks(self)}
        if self.overrides is not None:
            force_new = node_config_force_new()
            forced = {k: _plain(v) for k, v in override_values(self.overrides).items() if k in force_new}
            if forced:
                out["nodeConfigOverrides"] = forced
        return out


def node_config_force_new() -> tuple[str, ...]:
    """Every nodeConfig input that forces a new pool (by its name in nodeConfig): the spec's marked ones, then
    those no spec field sets."""
    marked = (i.removeprefix("nodeConfig.") for i in marked_inputs(GkeNodeSpec, "replaces") if "." in i)
    return (*marked, *NODE_CONFIG_FORCE_NEW_UNSET)


def _digest_value(input: str, value: object) -> object:
    if input == "nodeConfig.serviceAccount":
        # The email, or a mark for one known only after deployment (an Output: the digest cannot follow it).
        return value if isinstance(value, str) else ACCOUNT_OF_THE_CLUSTER
    if isinstance(value, GkeAccelerator | GkeReservationAffinity):
        return value.digest_value()
    if isinstance(value, tuple):
        return list(value)
    return value


def _plain(value: object) -> object:
    """A program's input as the digest holds it: an Output is unknown before deployment (its change is not seen)."""
    if isinstance(value, pulumi.Output):
        return "<known after deployment>"
    if type(value).__module__.startswith("pulumi_gcp"):  # a nested input type
        return {k: _plain(v) for k, v in override_values(value).items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def override_kwargs(args: object) -> dict[str, Any]:
    """The inputs set on a pulumi_gcp input type by its Python keyword names (an @input_type keeps the set ones
    in its __dict__, pulumi.set), to merge into the spec's."""
    return {k: v for k, v in vars(args).items() if v is not None}


def override_values(args: object) -> dict[str, Any]:
    """The same by their provider (camelCase) names: pulumi_gcp's Python names are those in snake case."""
    return {re.sub(r"_([a-z0-9])", lambda m: m[1].upper(), k): v for k, v in override_kwargs(args).items()}


def owned_node_config_fields() -> tuple[str, ...]:
    """The nodeConfig inputs the spec sets (its marked fields' inputs) plus those the node pool always sets
    (flexStart, workloadMetadataConfig, tags, resourceLabels): a program's node_config may not set them."""
    mine = [m.input.removeprefix("nodeConfig.") for _, m in marks(GkeNodeSpec) if m.input.startswith("nodeConfig.")]
    return (*mine, "flexStart", "workloadMetadataConfig", "tags", "resourceLabels")


def gpu_accelerator(args: SpotGpuPoolArgs) -> GkeAccelerator:
    """The pool's GPU as GKE attaches it: the catalog's accelerator type of its first machine type, the
    pool's GPUs per node, driver version and time-slicing."""
    row = gpu_instance_type("gcp", args.instance_types[0], args.gpu_spec)
    assert row is not None, "validated before use"
    return GkeAccelerator(
        type=row.accelerator or row.model.accelerator_label,
        count=args.gpus_per_node,
        driver_version=args.gpu_driver_version,
        sharing_clients=args.gpu_sharing_replicas,
    )


def pool_labels(args: GeneralPoolArgs | SpotGpuPoolArgs) -> dict[str, str]:
    """The labels a pool's Args add to the ones each builder gives its nodes (pool, node class, capacity): the
    GPU spec's and the program's `extra_labels`. Read here, once, so that every GKE builder's nodes carry them
    (node pools and ComputeClass alike) and a setting that labels the nodes is read in this one place."""
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

    spec_labels = gpu_spec_labels(args.gpu_spec) if isinstance(args, SpotGpuPoolArgs) else {}
    return spec_labels | dict(args.extra_labels)


def node_spec(
    args: GeneralPoolArgs | SpotGpuPoolArgs,
    *,
    spot: bool,
    labels: dict[str, str],
    taints: list[Taint],
    accelerator: GkeAccelerator | None = None,
    queued: bool = False,
    max_run_duration: str | None = None,
    reservation: GkeReservationAffinity | None = None,
) -> GkeNodeSpec:
    """The spec of a pool's nodes from its Args: the first machine type, its disk, image, service account,
    kubelet settings, the labels the Args add (`pool_labels`) and the program's own node_config; capacity, the
    pool's own labels and taints as the builder says (they differ per node pool of one pool: spot, fallback,
    reserved)."""
    return GkeNodeSpec(
        machine_type=args.instance_types[0],
        spot=spot,
        disk_size_gib=args.disk_size_gib,
        labels=labels | pool_labels(args),
        taints=tuple(taints),
        accelerator=accelerator,
        queued=queued,
        max_run_duration=max_run_duration,
        oauth_scopes=tuple(OAUTH_SCOPES),
        service_account=node_service_account(args),
        reservation=reservation or (GkeReservationAffinity(NO_RESERVATION) if queued else None),
        image_type=args.image,
        kubelet_config=kubelet_args(args, KUBELET_KEYS),
        overrides=getattr(args, "node_config", None),
    )


def node_config_problems(where: str, value: object) -> list[str]:
    """A program's `node_config`: a pulumi_gcp NodePoolNodeConfigArgs that sets none of the inputs the pool
    sets itself (each has its own setting, or is the library's: the pool would not be what it says)."""
    if value is None:
        return []
    import pulumi_gcp as gcp

    if not isinstance(value, gcp.container.NodePoolNodeConfigArgs):
        return [
            f"{where}node_config: must be a pulumi_gcp.container.NodePoolNodeConfigArgs (got {type(value).__name__})"
        ]
    owned = owned_node_config_fields()
    return [
        f"{where}node_config.{key}: set by the pool itself (from its own settings); allowed: any nodeConfig "
        f"input but {', '.join(owned)} (got {key}={_plain(v)!r})"
        for key, v in override_values(value).items()
        if key in owned
    ]
