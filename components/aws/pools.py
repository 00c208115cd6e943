"""AWS builders for GeneralPool and SpotGpuPool: which node groups, with what."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from elastic_gpu.aws.node_groups import (
    AMI_FAMILIES_WITH_DEVICE_PLUGIN,
    CAPACITY_ON_DEMAND,
    CAPACITY_SPOT,
    NodeGroupSpec,
    build_node_group,
)
from elastic_gpu.pool_types import BuiltPool, NodeGroupRef
from elastic_gpu.scheduling import (
    AWS_ACCELERATOR_LABEL,
    EPHEMERAL_STORAGE,
    GPU_RESOURCE,
    GPU_TAINT,
    NODE_CLASS_GENERAL,
    NODE_CLASS_GPU,
    POOL_LABEL,
    Taint,
    node_labels,
    split_total,
)
from elastic_gpu.workload import WorkloadContract

if TYPE_CHECKING:
    from elastic_gpu.eks_cluster import EksCluster
    from elastic_gpu.general_pool import GeneralPoolArgs
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs


def _eks(cluster: object) -> EksCluster:
    from elastic_gpu.eks_cluster import EksCluster

    if not isinstance(cluster, EksCluster):
        raise TypeError(f"an AWS pool needs an EksCluster, got {type(cluster).__name__}")
    return cluster


def build_general_pool(name: str, args: GeneralPoolArgs, parent: pulumi.Resource) -> BuiltPool:
    cluster = _eks(args.cluster)
    labels = node_labels(pool=name, node_class=NODE_CLASS_GENERAL, spot=args.spot) | args.extra_labels
    spec = NodeGroupSpec(
        node_group_name=f"{cluster.args.cluster_name}-{name}",
        capacity_type=CAPACITY_SPOT if args.spot else CAPACITY_ON_DEMAND,
        instance_types=list(args.instance_types),
        zones=cluster.zones,
        min_size=args.min_size,
        max_size=args.max_size,
        labels=labels,
        taints=[],
        ami_family="al2023",
        gpu=False,
        disk_size_gib=args.disk_size_gib,
        template_resources={EPHEMERAL_STORAGE: f"{args.disk_size_gib}Gi"},
    )
    group = build_node_group(f"{name}-ng", spec, cluster=cluster, tags=args.tags, parent=parent)
    ref = NodeGroupRef(spec.node_group_name, "spot" if args.spot else "on-demand", spec.asg_name_regex)
    return BuiltPool(node_groups=[ref], taints=[], labels=labels, resources=[group])


def pool_problems(where: str, args: SpotGpuPoolArgs) -> list[str]:
    """EKS rules for a GPU pool beyond the cloud-neutral ones."""
    problems = []
    if args.gpu_sharing_replicas > 1 and args.ami_family in AMI_FAMILIES_WITH_DEVICE_PLUGIN:
        # Bottlerocket runs its own device plugin, which our time-slicing ConfigMap does not
        # configure: nodes would advertise the physical GPUs while the ASG tag (what the
        # autoscaler plans with) says GPUs x replicas.
        problems.append(
            f"{where}gpu_sharing_replicas: time-slicing ({args.gpu_sharing_replicas}) is configured through the "
            f"NVIDIA device plugin we deploy, which {args.ami_family!r} nodes do not run; use ami_family "
            "'al2023' or no time-slicing"
        )
    return problems


def node_group_counts(args: SpotGpuPoolArgs) -> tuple[int, int]:
    """(primary groups, fallback groups): per zone when `per_zone`; the fallback always per zone."""
    zones = len(args.pool_zones)
    return (zones if args.per_zone else 1), (zones if args.on_demand_fallback else 0)


def _taints(args: SpotGpuPoolArgs) -> list[Taint]:
    return sorted({GPU_TAINT, *args.extra_taints})


def workload_contract(name: str, args: SpotGpuPoolArgs) -> WorkloadContract:
    """Tolerate the GPU taint (and any extra ones), select the pool's label."""
    return WorkloadContract(pool=name, taints=tuple(_taints(args)), node_selector={POOL_LABEL: name})


def template_resources(args: SpotGpuPoolArgs) -> dict[str, str]:
    """What an empty group's node template needs beyond the first type's vCPU and memory: the GPUs
    as the device plugin advertises them, and the disk, without which a pod that requests
    ephemeral-storage never scales an empty group (kubernetes/autoscaler#1650)."""
    return {GPU_RESOURCE: str(args.advertised_gpus_per_node), EPHEMERAL_STORAGE: f"{args.disk_size_gib}Gi"}


def build_spot_gpu_pool(name: str, args: SpotGpuPoolArgs, parent: pulumi.Resource) -> BuiltPool:
    cluster = _eks(args.cluster)
    taints = _taints(args)
    gpu_extra = {AWS_ACCELERATOR_LABEL: args.accelerator} | args.extra_labels
    resources = template_resources(args)
    prefix = f"{cluster.args.cluster_name}-{name}"

    def spec(ng_name: str, capacity: str, zones: list[str], min_size: int, max_size: int) -> NodeGroupSpec:
        labels = node_labels(pool=name, node_class=NODE_CLASS_GPU, spot=capacity == CAPACITY_SPOT) | gpu_extra
        return NodeGroupSpec(
            node_group_name=ng_name,
            capacity_type=capacity,
            instance_types=list(args.instance_types),
            zones=zones,
            min_size=min_size,
            max_size=max_size,
            labels=labels,
            taints=taints,
            ami_family=args.ami_family,
            gpu=True,
            disk_size_gib=args.disk_size_gib,
            template_resources=resources,
        )

    zones = args.pool_zones
    primary = CAPACITY_SPOT if args.spot else CAPACITY_ON_DEMAND
    kind = "spot" if args.spot else "od"
    specs: list[tuple[str, NodeGroupSpec]] = []
    if args.per_zone:
        mins, maxes = split_total(args.min_size, len(zones)), split_total(args.max_size, len(zones))
        for zone, lo, hi in zip(zones, mins, maxes, strict=True):
            specs.append((f"{name}-{kind}-{zone}", spec(f"{prefix}-{kind}-{zone}", primary, [zone], lo, hi)))
    else:
        specs.append((f"{name}-{kind}", spec(f"{prefix}-{kind}", primary, zones, args.min_size, args.max_size)))
    if args.on_demand_fallback:
        # On-demand groups, min 0, used only when spot cannot be had: one per zone, because the
        # autoscaler assumes a multi-zone group's new node lands in its first zone (a zone-pinned
        # pod would never get the fallback) and AZRebalance could stop running GPU jobs.
        for zone, hi in zip(zones, split_total(args.fallback_total, len(zones)), strict=True):
            specs.append(
                (f"{name}-fallback-{zone}", spec(f"{prefix}-fallback-{zone}", CAPACITY_ON_DEMAND, [zone], 0, hi))
            )

    groups = [build_node_group(res_name, s, cluster=cluster, tags=args.tags, parent=parent) for res_name, s in specs]
    refs = [
        NodeGroupRef(s.node_group_name, "spot" if s.capacity_type == CAPACITY_SPOT else "on-demand", s.asg_name_regex)
        for _, s in specs
    ]
    labels = specs[0][1].labels
    return BuiltPool(
        node_groups=refs,
        taints=taints,
        labels=labels,
        resources=groups,
        ships_device_plugin=args.ami_family in AMI_FAMILIES_WITH_DEVICE_PLUGIN,
    )
