"""AWS builders for GeneralPool and SpotGpuPool: which node groups, with what."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from elastic_gpu.aws.config_rules import KARPENTER
from elastic_gpu.aws.facts import FACTS
from elastic_gpu.aws.node_groups import (
    AMI_FAMILIES_WITH_DEVICE_PLUGIN,
    CAPACITY_BLOCK,
    CAPACITY_ON_DEMAND,
    CAPACITY_SPOT,
    BuiltNodeGroup,
    NodeGroupSpec,
    asg_name_regex,
    build_node_group,
)
from elastic_gpu.aws.node_spec import AwsNodeSpec, general_node_spec, gpu_node_spec, gpu_taints
from elastic_gpu.aws.reservations import ReadReservation, describe_command, read_reservation, reservation_problems
from elastic_gpu.aws.user_data import user_data_problems
from elastic_gpu.errors import ConfigError, Problem, about, problem
from elastic_gpu.karpenter_core import DO_NOT_DISRUPT
from elastic_gpu.pool_args import PoolBuilder
from elastic_gpu.pool_overrides import NodeOverrides
from elastic_gpu.pool_types import BuiltPool, Capacity, NodeGroupRef
from elastic_gpu.program_preflight import plain_region
from elastic_gpu.scheduling import (
    POOL_LABEL,
    Taint,
    split_total,
)
from elastic_gpu.settings import Spelling
from elastic_gpu.settings.aws import OWNED_NODE_GROUP_ARGS
from elastic_gpu.validation import said
from elastic_gpu.workload import WorkloadContract

#: A pool's default maxMinutesToFallback: the autoscaler sees a failed spot launch within about a
#: minute per node group (simulation/backoff.py), so ten minutes covers several zones.
DEFAULT_MAX_MINUTES_TO_FALLBACK = 10.0

if TYPE_CHECKING:
    from elastic_gpu.cluster_handle import EksClusterHandle
    from elastic_gpu.general_pool import GeneralPoolArgs
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs


def _group_name(cluster: EksClusterHandle, suffix: str) -> pulumi.Output[str]:
    """`<cluster>-<suffix>`: the EKS node-group name's stem, an Output like the cluster's name."""
    return pulumi.Output.from_input(cluster.cluster_name).apply(lambda name: f"{name}-{suffix}")


def _built(
    refs: list[NodeGroupRef],
    groups: list[BuiltNodeGroup],
    cluster: EksClusterHandle,
    overrides: NodeOverrides,
    **kw: object,
) -> BuiltPool:
    return BuiltPool(
        node_groups=refs,
        resources=[g.node_group for g in groups],
        node_group_ids=[g.node_group.id for g in groups],
        cloud_outputs={
            "asg_names": [g.asg_name for g in groups],
            "launch_templates": [g.launch_template for g in groups],
            "launch_template_ids": [g.launch_template.id for g in groups],
            "node_role_arn": cluster.node_role_arn if overrides.node_identity is None else overrides.node_identity,
        },
        **kw,  # type: ignore[arg-type]
    )


def _ref(spec: NodeGroupSpec, group: BuiltNodeGroup) -> NodeGroupRef:
    capacity: Capacity = "spot" if spec.capacity_type == CAPACITY_SPOT else "on-demand"
    return NodeGroupRef(
        group.name,
        "reserved" if spec.capacity_reservation_id is not None else capacity,
        group.name.apply(asg_name_regex),
        autoscaler_group=group.asg_name,
        min_size=spec.min_size,
        max_size=spec.max_size,
    )


def build_general_pool(name: str, args: GeneralPoolArgs, parent: pulumi.Resource) -> BuiltPool:
    cluster: EksClusterHandle = args.cluster  # type: ignore[assignment]
    node = general_node_spec(name, args)
    spec = NodeGroupSpec(
        base_name=_group_name(cluster, name),
        node=node,
        capacity_type=CAPACITY_SPOT if args.spot else CAPACITY_ON_DEMAND,
        zones=cluster.zones,
        min_size=args.min_size,
        max_size=args.max_size,
    )
    group = build_node_group(f"{name}-ng", spec, cluster=cluster, tags=args.tags, parent=parent)
    return _built([_ref(spec, group)], [group], cluster, args, taints=[], labels=spec.labels)


def override_problems(where: str, args: GeneralPoolArgs | SpotGpuPoolArgs) -> list[str]:
    """What EKS makes of the pool's own node settings: all of them, shaped as EKS takes them."""
    problems: list[str] = []
    subnets = args.subnet_ids
    if subnets is not None and not isinstance(subnets, Mapping):
        problems.append(
            problem(
                where,
                "subnet_ids",
                "on EKS a node group's subnet follows its zone; map each zone to a subnet id, "
                f'e.g. {{"{args.cluster.zones[0]}": "subnet-0abc..."}} (got {said(subnets)})',
            )
        )
    elif subnets is not None and (unknown := [z for z in subnets if z not in args.cluster.zones]):
        problems.append(
            problem(where, "subnet_ids", f"{unknown} are not zones of the cluster; allowed: {args.cluster.zones}")
        )
    ami_family = getattr(args, "ami_family", "al2023")  # a GeneralPool runs AL2023
    return problems + user_data_problems(where, args, ami_family)


def pool_problems(where: str, args: SpotGpuPoolArgs) -> list[str]:
    """EKS rules for a GPU pool beyond the cloud-neutral ones; under the cluster-autoscaler, its reservations as
    the account describes them (each one's node group needs its zone and instance type)."""
    problems = about("node_group_args", node_group_args_problems(where, args.node_group_args))
    # A provisioner given, or the stack's (a stack file's pools are checked over the cluster as planned)
    karpenter = args.provisioner is not None or getattr(args.cluster, "provisioner", None) == KARPENTER
    problems += about(
        "reservations",
        reservation_problems(
            Spelling(where, stack_file=False),
            args.reservations,
            karpenter=karpenter,
            max_size=args.max_size,
            on_demand_fallback=args.on_demand_fallback,
        ),
    )
    if not problems and not karpenter and args.reservations is not None:
        problems += [
            Problem(f"{where}reservations.ids: {p}", "reservations")
            for p in reserved_groups(args, args.reservations.ids)
            if isinstance(p, str)
        ]
    if args.gpu_sharing_replicas > 1 and args.ami_family in AMI_FAMILIES_WITH_DEVICE_PLUGIN:
        # Bottlerocket runs its own device plugin, which our time-slicing ConfigMap does not
        # configure: nodes would advertise the physical GPUs while the ASG tag (what the
        # autoscaler plans with) says GPUs x replicas.
        problems.append(
            problem(
                where,
                "gpu_sharing_replicas",
                f"time-slicing ({args.gpu_sharing_replicas}) is configured through the NVIDIA device plugin we "
                f"deploy, which {args.ami_family!r} nodes do not run; use ami_family 'al2023' or no time-slicing",
            )
        )
    return problems


def node_group_args_problems(where: str, own: object) -> list[str]:
    """The program's `node_group_args`: keyword arguments of pulumi_aws.eks.NodeGroupArgs (its __init__'s
    parameters, the SDK's own list), none of them one the library declares itself (OWNED_NODE_GROUP_ARGS)."""
    if own is None:
        return []
    if not isinstance(own, dict) or not all(isinstance(k, str) for k in own):
        return [f"{where}node_group_args: must map pulumi_aws.eks.NodeGroupArgs keywords to values, got {said(own)}"]
    allowed = sorted(p for p in inspect.signature(aws.eks.NodeGroupArgs.__init__).parameters if p != "__self__")
    problems = []
    if unknown := sorted(set(own) - set(allowed)):
        problems.append(
            f"{where}node_group_args: {unknown} are not arguments of pulumi_aws.eks.NodeGroupArgs; allowed: "
            f"{sorted(set(allowed) - OWNED_NODE_GROUP_ARGS)}"
        )
    if owned := sorted(set(own) & OWNED_NODE_GROUP_ARGS):
        problems.append(
            f"{where}node_group_args: {owned} are declared by the pool itself (from its settings: name, sizes, "
            "capacity, instance types, labels, taints, launch template, subnets, node role, version); set them "
            "through the pool's own settings"
        )
    return problems


@dataclass(frozen=True)
class ReservedGroup:
    """A node group of the reserved tier under the cluster-autoscaler: one reservation, in its zone, of its type."""

    reservation: ReadReservation
    max_size: int


def reserved_groups(args: SpotGpuPoolArgs, ids: list[str]) -> list[ReservedGroup | str]:
    """Each reservation read at preview (aws/reservations.py read_reservation) as its node group: its zone (the
    reservation's alone: a launch in another zone's subnet is refused, aws-ia terraform-aws-eks-blueprints
    patterns/ml-capacity-block), its instance type (the pool's), and a max of its share of `reservations.nodes`,
    at most its instance count; or why it cannot be one (unread, another zone or type)."""
    assert args.reservations is not None
    region = plain_region(args.cluster, FACTS) or ""
    shares = split_total(args.reservations.nodes, len(ids))
    out: list[ReservedGroup | str] = []
    for rid, share in zip(ids, shares, strict=True):
        read = read_reservation(rid, region)
        if isinstance(read, str):
            out.append(
                f"{rid} cannot be read ({read}); under the cluster-autoscaler its node group needs its zone and "
                f"instance type: check it with `{describe_command([rid], region)}` and allow "
                "ec2:DescribeCapacityReservations, or use provisioner karpenter, which reads it itself"
            )
        elif read.availability_zone not in args.pool_zones:
            out.append(f"{rid} is in {read.availability_zone}, not a zone of the pool ({args.pool_zones})")
        elif read.instance_type not in args.instance_types:
            out.append(
                f"{rid} reserves {read.instance_type}, not one of the pool's instance_types ({args.instance_types})"
            )
        else:
            out.append(ReservedGroup(read, min(share, read.instance_count)))
    return out


def _reserved_specs(
    name: str, args: SpotGpuPoolArgs, node: AwsNodeSpec, cluster: EksClusterHandle
) -> list[tuple[str, NodeGroupSpec]]:
    """The reserved tier's node groups, `<pool>-reserved-<zone>` (a second reservation in a zone adds its index):
    an ODCR's ON_DEMAND, a Capacity Block's CAPACITY_BLOCK, each launch template targeting its reservation."""
    if args.reservations is None:
        return []
    groups = reserved_groups(args, args.reservations.ids)
    if problems := [g for g in groups if isinstance(g, str)]:
        # Checked before any resource by pool_problems; here when the account changed in between.
        raise ConfigError([f"SpotGpuPool '{name}': reservations.ids: {p}" for p in problems], source="preview")
    specs: list[tuple[str, NodeGroupSpec]] = []
    seen: dict[str, int] = {}
    for group in groups:
        assert isinstance(group, ReservedGroup)
        r = group.reservation
        seen[r.availability_zone] = seen.get(r.availability_zone, 0) + 1
        tail = f"-reserved-{r.availability_zone}" + (
            f"-{seen[r.availability_zone]}" if seen[r.availability_zone] > 1 else ""
        )
        res = f"{name}{tail}"
        specs.append(
            (
                res,
                NodeGroupSpec(
                    base_name=_group_name(cluster, res),
                    node=dataclasses.replace(node, instance_types=(r.instance_type,)),
                    capacity_type=CAPACITY_BLOCK if r.capacity_block else CAPACITY_ON_DEMAND,
                    zones=[r.availability_zone],
                    min_size=0,
                    max_size=group.max_size,
                    name_tail=tail,
                    capacity_reservation_id=r.id,
                ),
            )
        )
    return specs


def node_group_counts(args: SpotGpuPoolArgs) -> tuple[int, int]:
    """(primary groups, fallback groups): per zone when `per_zone`; the fallback always per zone."""
    if args.reservations is not None and args.reservations.only:
        return 0, 0  # the reserved tier's groups alone (their maxima are the reservations', not max_size)
    zones = len(args.pool_zones)
    return (zones if args.pool_per_zone else 1), (zones if args.on_demand_fallback else 0)


def _taints(args: SpotGpuPoolArgs) -> list[Taint]:
    return list(gpu_taints(args))


def workload_contract(name: str, args: SpotGpuPoolArgs) -> WorkloadContract:
    """Tolerate the GPU taint (and any extra ones), select the pool's label; under Karpenter (the pool's
    provisioner) the Job's pods carry do-not-disrupt."""
    return WorkloadContract(
        pool=name,
        taints=tuple(_taints(args)),
        node_selector={POOL_LABEL: name},
        pod_annotations=dict(DO_NOT_DISRUPT) if args.provisioner is not None else {},
    )


def build_spot_gpu_pool(name: str, args: SpotGpuPoolArgs, parent: pulumi.Resource) -> BuiltPool:
    cluster: EksClusterHandle = args.cluster  # type: ignore[assignment]
    node = gpu_node_spec(name, args)
    taints = list(node.taints)

    def spec(
        ng_name: pulumi.Input[str], capacity: str, zones: list[str], min_size: int, max_size: int, tail: str = ""
    ) -> NodeGroupSpec:
        return NodeGroupSpec(
            base_name=ng_name,
            node=node,
            capacity_type=capacity,
            zones=zones,
            min_size=min_size,
            max_size=max_size,
            name_tail=tail,
        )

    zones = args.pool_zones
    primary = CAPACITY_SPOT if args.spot else CAPACITY_ON_DEMAND
    kind = "spot" if args.spot else "od"
    # The reserved tier first (ranked first by the priority expander: NodeGroupRef capacity "reserved"); with
    # `reservations.only` it is the pool's only tier.
    specs: list[tuple[str, NodeGroupSpec]] = _reserved_specs(name, args, node, cluster)
    if args.reservations is not None and args.reservations.only:
        pass
    elif args.pool_per_zone:
        mins, maxes = split_total(args.min_size, len(zones)), split_total(args.max_size, len(zones))
        for zone, lo, hi in zip(zones, mins, maxes, strict=True):
            specs.append(
                (
                    f"{name}-{kind}-{zone}",
                    spec(_group_name(cluster, f"{name}-{kind}-{zone}"), primary, [zone], lo, hi, f"-{kind}-{zone}"),
                )
            )
    else:
        specs.append(
            (
                f"{name}-{kind}",
                spec(_group_name(cluster, f"{name}-{kind}"), primary, zones, args.min_size, args.max_size),
            )
        )
    if args.on_demand_fallback:
        # On-demand groups, min 0, used only when spot cannot be had: one per zone, because the
        # autoscaler assumes a multi-zone group's new node lands in its first zone (a zone-pinned
        # pod would never get the fallback) and AZRebalance could stop running GPU jobs.
        for zone, hi in zip(zones, split_total(args.fallback_total, len(zones)), strict=True):
            res = f"{name}-fallback-{zone}"
            specs.append((res, spec(_group_name(cluster, res), CAPACITY_ON_DEMAND, [zone], 0, hi, f"-fallback-{zone}")))

    groups = [build_node_group(res_name, s, cluster=cluster, tags=args.tags, parent=parent) for res_name, s in specs]
    refs = [_ref(s, g) for (_, s), g in zip(specs, groups, strict=True)]
    labels = specs[0][1].labels
    return _built(
        refs,
        groups,
        cluster,
        args,
        taints=taints,
        labels=labels,
        ships_device_plugin=args.ami_family in AMI_FAMILIES_WITH_DEVICE_PLUGIN,
    )


#: The builders above as the deploy protocol's record (elastic_gpu/provider.py PoolBuilder).
BUILDER = PoolBuilder(
    override_problems=override_problems,
    pool_problems=pool_problems,
    node_group_counts=node_group_counts,
    workload_contract=workload_contract,
    build_general_pool=build_general_pool,
    build_spot_gpu_pool=build_spot_gpu_pool,
    default_max_minutes_to_fallback=DEFAULT_MAX_MINUTES_TO_FALLBACK,
)
