"""SpotGpuPool: GPU nodes on spot capacity that scale from zero, with an on-demand fallback."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from elastic_gpu.args_doc import documented, documented_component
from elastic_gpu.clouds import get_cloud
from elastic_gpu.cluster_handle import handle_problems
from elastic_gpu.config import DEFAULT_GPU_DRIVER_VERSION, MAX_MINUTES_TO_FALLBACK, AmiFamily, GpuDriverVersion
from elastic_gpu.errors import ConfigError
from elastic_gpu.gpu_catalog import GpuSpec, declare_instance_types, gpu_instance_type
from elastic_gpu.pool_overrides import NodeOverrides, override_type_problems
from elastic_gpu.pool_types import BuiltPool, ClusterHandle, PoolComponent, PoolProvisioner
from elastic_gpu.scheduling import Taint
from elastic_gpu.validation import (
    CLOUD_ONLY_POOL_SETTINGS,
    NODES_PER_CLUSTER,
    args_type_problems,
    bounds_problems,
    cloud_args_problems,
    cloud_only_problems,
    gpu_instance_type_problems,
    label_problems,
    size_problems,
)
from elastic_gpu.workload import CONTRACT_INPUT, WorkloadContract

TYPE_TOKEN = "elastic-gpu:index:SpotGpuPool"
#: The component input that records the pool's promise (read back by the simulator and the policy).
PROMISE_INPUT = "maxMinutesToFallback"

DEFAULT_MIN_SIZE = 0
DEFAULT_DISK_SIZE_GIB = 100


@documented
@dataclass
class SpotGpuPoolArgs(NodeOverrides):
    cluster: ClusterHandle
    """The cluster component (EksCluster, ...) the pool joins."""
    instance_types: list[str]
    """GPU instance types (several diversify the spot request); all with one GPU count."""
    max_size: int
    """The most nodes on the pool's own capacity, in total over its node groups (zones, and VM
    sizes on AKS): split between the groups, never per group."""
    min_size: int = DEFAULT_MIN_SIZE
    """Default 0: scale to zero when no GPU pod is pending."""
    spot: bool = True
    """Default true: spot / low-priority capacity."""
    on_demand_fallback: bool = False
    """Default false: add on-demand groups (min 0) the autoscaler tries after the spot ones."""
    fallback_max_size: int | None = None
    """The most on-demand fallback nodes, in total over the fallback's groups; default: max_size. Under a
    Karpenter provisioner, default None: one NodePool allowing spot and on-demand (spot first), max_size
    for both; set: a separate on-demand NodePool of lower weight, capped at this."""
    max_minutes_to_fallback: float | None = None
    """With on_demand_fallback: the most minutes a pending GPU pod may wait, every spot group out
    of capacity, until the autoscaler asks the fallback; the `policy` gate refuses a pool whose
    simulated worst case exceeds it. Default None: the cloud's (aws 10, azure 20, gcp 10)."""
    per_zone: bool = True
    """Default true: one node group per zone (seed 002: no cross-zone rebalancing of GPU nodes)."""
    zones: list[str] | None = None
    """Default: the cluster's zones."""
    extra_taints: list[Taint] = field(default_factory=list)
    """Taints on top of the GPU taint (which is always there); the device plugin tolerates them."""
    extra_labels: dict[str, str] = field(default_factory=dict)
    """Node labels on top of the pool's own (GPU, pool, node class, capacity, accelerator)."""
    disk_size_gib: int = DEFAULT_DISK_SIZE_GIB
    """Disk per node for images and scratch (GiB)."""
    mixed_gpu_models: bool = False
    """Default false: all instance_types carry one GPU model (their accelerator label). True: the pool
    takes any of their GPUs; no accelerator label is set, so workloads select the pool, not a model."""
    gpu_spec: GpuSpec | None = None
    """The GPU of the instance_types the catalog (elastic_gpu/gpu_catalog.py) lacks: model (a catalog GPU
    key), count per node, vCPUs and memory GiB, as the cloud's instance-type page gives them. Default None:
    every type must be in the catalog."""
    ami_family: AmiFamily = "al2023"
    """AWS only: "al2023" (default) or "bottlerocket" (ships its own device plugin)."""
    gpu_count: int | None = None
    """GCP N1 only: GPUs attached per node (1, 2, 4 or 8 by the catalog's `gpu_counts`);
    default None: the catalog's count for the machine type."""
    gpu_driver_version: GpuDriverVersion = DEFAULT_GPU_DRIVER_VERSION
    """GCP only: NVIDIA driver GKE installs, "DEFAULT" (default) or "LATEST"."""
    queued_provisioning: bool = False
    """GCP only: Dynamic Workload Scheduler queued provisioning (flex-start, not spot; min 0)."""
    max_run_hours: int | None = None
    """GCP only, with queued_provisioning: hours a node runs before GKE removes it (nodeConfig.maxRunDuration),
    1 to 168; default None: 168, GKE's most for flex-start."""
    spot_max_price: float | None = None
    """Azure only: max USD/hour per spot VM; default None: -1 (capped at the on-demand price)."""
    provisioner: PoolProvisioner | None = None
    """Default None: the cloud's node groups, scaled by the ClusterAutoscaler. A provisioner that makes the
    nodes itself (EKS: `Karpenter(...).nodes`) declares the pool's objects instead (no node groups)."""
    gpu_sharing_replicas: int = 1
    """Pods per physical GPU when the device plugin time-slices (scales the advertised GPU count)."""
    tags: dict[str, str] = field(default_factory=dict)
    """Tags/labels on the cloud resources (cost allocation)."""

    @property
    def pool_zones(self) -> list[str]:
        return list(self.zones or self.cluster.zones)

    @property
    def fallback_total(self) -> int:
        """The fallback's total max (0 without a fallback)."""
        if not self.on_demand_fallback:
            return 0
        return self.max_size if self.fallback_max_size is None else self.fallback_max_size

    @property
    def fallback_promise(self) -> float | None:
        """max_minutes_to_fallback, or the cloud's default; None without a fallback."""
        if not self.on_demand_fallback:
            return None
        if self.max_minutes_to_fallback is not None:
            return float(self.max_minutes_to_fallback)
        return float(get_cloud(self.cluster.cloud).pool_builder().default_max_minutes_to_fallback)

    @property
    def gpus_per_node(self) -> int:
        row = gpu_instance_type(self.cluster.cloud, self.instance_types[0])
        assert row is not None, "validated before use"
        return self.gpu_count or row.gpus

    @property
    def advertised_gpus_per_node(self) -> int:
        """What the device plugin advertises as nvidia.com/gpu per node."""
        return self.gpus_per_node * self.gpu_sharing_replicas

    @property
    def accelerator(self) -> str | None:
        """The accelerator label's value: the one GPU model of the types; None with mixed_gpu_models
        and types of several models (no label then: it would be wrong on some nodes)."""
        rows = [gpu_instance_type(self.cluster.cloud, t) for t in self.instance_types]
        labels = {row.model.accelerator_label for row in rows if row is not None}
        assert labels, "validated before use"
        return labels.pop() if len(labels) == 1 else None


def spot_gpu_pool_problems(name: str, args: SpotGpuPoolArgs) -> list[str]:
    """Every problem with `args`, each naming the argument (`SpotGpuPoolArgs.max_size`)."""
    where = f"SpotGpuPool '{name}': SpotGpuPoolArgs."
    if problems := handle_problems(where, args.cluster) + args_type_problems(where, args):
        return problems  # the rest reads the cluster and compares the values
    problems = size_problems(where, "min_size", args.min_size, "max_size", args.max_size)
    if args.fallback_max_size is not None and args.fallback_max_size > NODES_PER_CLUSTER.high:
        problems += bounds_problems(f"{where}fallback_max_size", args.fallback_max_size, NODES_PER_CLUSTER)
    if not args.instance_types:
        problems.append(f"{where}instance_types: at least one GPU instance type is required")
    # A bad spec is the cause of its types' "no GPU we know": report it alone.
    spec_problems = declare_instance_types(f"{where}gpu_spec", args.cluster.cloud, args.instance_types, args.gpu_spec)
    problems += spec_problems or gpu_instance_type_problems(
        where,
        args.cluster.cloud,
        args.instance_types,
        types_field="instance_types",
        mixed_models=args.mixed_gpu_models,
        mixed_field="mixed_gpu_models=True",
        spec_field="gpu_spec=GpuSpec(model, count, vcpus, memory_gib)",
    )
    zones = args.pool_zones
    if unknown := [z for z in zones if z not in args.cluster.zones]:
        problems.append(f"{where}zones: {unknown} are not zones of the cluster; allowed: {args.cluster.zones}")
    if len(set(args.instance_types)) != len(args.instance_types):
        problems.append(f"{where}instance_types: each type may appear once (got {args.instance_types})")
    problems += cloud_args_problems(where, args.cluster.cloud, args.tags, args.disk_size_gib)
    problems += label_problems(f"{where}extra_labels", args.extra_labels)
    problems += cloud_only_problems(
        lambda key: f"{where}{key}",
        args.cluster.cloud,
        {key: getattr(args, key) for key in CLOUD_ONLY_POOL_SETTINGS},
    )
    if args.on_demand_fallback and not args.spot:
        problems.append(f"{where}on_demand_fallback: only a spot pool can fall back to on-demand (spot=False)")
    if args.fallback_max_size is not None and not args.on_demand_fallback:
        problems.append(f"{where}fallback_max_size: set only with on_demand_fallback (got {args.fallback_max_size})")
    problems += override_type_problems(where, args)
    problems += promise_problems(where, args)
    if problems:
        return problems  # the group counts below need valid types and zones
    pools = get_cloud(args.cluster.cloud).pool_builder()
    problems += pools.override_problems(where, args)
    problems += pools.pool_problems(where, args)
    if args.provisioner is not None:
        if not isinstance(args.provisioner, PoolProvisioner):
            problems.append(
                f"{where}provisioner: must have build_pool(name, args, parent), such as Karpenter(...).nodes "
                f"(got {type(args.provisioner).__name__})"
            )
        return problems + getattr(args.provisioner, "pool_problems", lambda *_: [])(where, args)
    primary, fallback = pools.node_group_counts(args)
    for field_name, total, groups in (
        ("max_size", args.max_size, primary),
        ("fallback_max_size", args.fallback_total, fallback),
    ):
        if groups and total < groups:
            problems.append(
                f"{where}{field_name}: it is the total over the {groups} node groups it is split into, and each "
                f"needs a max of at least 1, so it must be >= {groups} (got {total})"
            )
    return problems


def promise_problems(where: str, args: SpotGpuPoolArgs) -> list[str]:
    value = args.max_minutes_to_fallback
    if value is None:
        return []
    if value <= 0:  # its type (a finite number) is args_type_problems'
        return [f"{where}max_minutes_to_fallback: must be a number of minutes > 0 (got {value!r})"]
    if value > MAX_MINUTES_TO_FALLBACK:
        return [
            f"{where}max_minutes_to_fallback: must be at most {MAX_MINUTES_TO_FALLBACK} minutes (a day; leave it "
            f"unset for no promise) (got {value!r})"
        ]
    if not args.on_demand_fallback:
        return [f"{where}max_minutes_to_fallback: set only with on_demand_fallback (got {value!r})"]
    return []


@documented_component(SpotGpuPoolArgs)
class SpotGpuPool(PoolComponent):
    """GPU node groups on spot capacity, scaling 0..max, tainted for GPU work only.

    Per cloud it creates the cloud's node groups (per zone when `per_zone`) with
    the GPU taint and labels, node-template hints so the autoscaler can scale
    them up from zero, and the node count left to the autoscaler
    (`ignore_changes`). With `on_demand_fallback`, an on-demand group that the
    ClusterAutoscaler's priority expander ranks below the spot groups.
    """

    args: SpotGpuPoolArgs
    """The arguments the pool was declared with."""
    workload: WorkloadContract
    """What a pod needs to land on this pool: tolerations, node selector, Job labels (`job_manifest`)."""
    ships_device_plugin: bool
    """The node image runs its own NVIDIA device plugin (GKE, Bottlerocket): NvidiaDevicePlugin skips it."""

    def __init__(self, name: str, args: SpotGpuPoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        if problems := spot_gpu_pool_problems(name, args):
            raise ConfigError(problems, source=f"SpotGpuPool '{name}'")
        pools = get_cloud(args.cluster.cloud).pool_builder()
        #: what a pod needs to land on this pool (tolerations, node selector, Job labels)
        self.workload: WorkloadContract = pools.workload_contract(name, args)
        #: the pool's promise: minutes to the on-demand fallback (None without one)
        self.max_minutes_to_fallback = args.fallback_promise
        # Recorded as inputs, so the offline simulator and the policy read them from the captured resources.
        inputs = {CONTRACT_INPUT: self.workload.to_json()}
        if self.max_minutes_to_fallback is not None:
            inputs[PROMISE_INPUT] = self.max_minutes_to_fallback
        super().__init__(TYPE_TOKEN, name, inputs, opts)
        builder = pools.build_spot_gpu_pool if args.provisioner is None else args.provisioner.build_pool
        built = builder(name, args, self)
        self.args = args
        self.ships_device_plugin = built.ships_device_plugin
        self._publish(name, built)


__all__ = ["BuiltPool", "SpotGpuPool", "SpotGpuPoolArgs", "WorkloadContract"]
