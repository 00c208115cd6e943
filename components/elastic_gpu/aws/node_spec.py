"""EKS: one node spec of a pool, built once from its Args, that every AWS builder reads (its managed node groups,
aws/node_groups.py; Karpenter's EC2NodeClass and NodePools, aws/karpenter/nodes.py), instead of each reading the
Args and repeating the defaults.

A field whose change replaces an EKS managed node group is marked with the input it feeds and the upstream
source (`replaces`, elastic_gpu/node_marks.py); the replacement rows (aws/replacement.py POOL_REPLACE_FIELDS) and
with them the node group's name digest (node_groups.eks_node_group_name) are derived from these marks. A field
that reaches the nodes through the launch template is marked `rolls`: a new template version is a rolling update
of the group's nodes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elastic_gpu.aws.user_data import launch_template_user_data
from elastic_gpu.node_marks import replaces, rolls
from elastic_gpu.scheduling import EPHEMERAL_STORAGE, GPU_RESOURCE, GPU_TAINT, Taint

if TYPE_CHECKING:
    import pulumi

    from elastic_gpu.general_pool import GeneralPoolArgs
    from elastic_gpu.pool_overrides import NodeOverrides
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

#: terraform-provider-aws internal/service/eks/node_group.go: the schema's ForceNew attributes (pulumi-aws
#: eks.NodeGroup maps them one to one; version, labels, taints, scaling_config and launch_template.version
#: update in place).
NODE_GROUP_SOURCE = "terraform-provider-aws internal/service/eks/node_group.go"
#: A field that reaches the nodes through the launch template: a new template version is a rolling update of
#: the group's nodes (EKS update-managed-node-group.md "Managed node update behavior").
_ROLLS = rolls("launchTemplate.version", source="EKS update-managed-node-group.md")
#: The root/data volume every AWS builder gives a node (launch template and EC2NodeClass): gp3, encrypted.
DISK_TYPE = "gp3"
#: The AMI family of a general pool's nodes (GeneralPoolArgs has no ami_family).
GENERAL_AMI_FAMILY = "al2023"


@dataclass(frozen=True)
class AwsNodeSpec:
    """What a pool's nodes are, whoever makes them. Fields are declared in the order of the replace table."""

    #: the pool's own node role (NodeOverrides.node_identity); None: the cluster's
    node_role_arn: pulumi.Input[str] | None = field(
        default=None, metadata=replaces("nodeRoleArn", source=NODE_GROUP_SOURCE)
    )
    #: zone -> the pool's own subnet (NodeOverrides.subnet_ids); a zone left out uses the cluster's
    subnet_ids: Mapping[str, pulumi.Input[str]] = field(
        default_factory=dict, metadata=replaces("subnetIds", source=NODE_GROUP_SOURCE)
    )
    instance_types: tuple[str, ...] = field(default=(), metadata=replaces("instanceTypes", source=NODE_GROUP_SOURCE))
    #: the capacity types in the order the provisioner tries them ("reserved", "spot", "on-demand"); each
    #: EKS node group takes one (capacityType)
    capacity_types: tuple[str, ...] = field(
        default=("on-demand",), metadata=replaces("capacityType", source=NODE_GROUP_SOURCE)
    )
    #: with `gpu` (and a custom image: CUSTOM) it picks the node group's amiType
    ami_family: str = field(default=GENERAL_AMI_FAMILY, metadata=replaces("amiType", source=NODE_GROUP_SOURCE))
    gpu: bool = False
    disk_size_gib: int = field(default=0, metadata=_ROLLS)
    disk_type: str = field(default=DISK_TYPE, metadata=_ROLLS)
    #: the pool's name and node class: its labels (`labels`)
    pool: str = ""
    node_class: str = ""
    #: the labels after the pool's own (accelerator, GPU spec, the program's extra labels)
    extra_labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    image_id: pulumi.Input[str] | None = field(default=None, metadata=_ROLLS)
    #: the launch template's user data, base64 (aws/user_data.py)
    user_data: pulumi.Input[str] | None = field(default=None, metadata=_ROLLS)
    security_group_ids: tuple[pulumi.Input[str], ...] | None = field(default=None, metadata=_ROLLS)
    #: the reserved tier's reservations (settings.Reservations): EC2 ids, and under Karpenter the tags that
    #: select more; the nodes it may take from them
    reservation_ids: tuple[str, ...] = ()
    reservation_tags: Mapping[str, str] = field(default_factory=dict)
    reserved_nodes: int = 0
    #: node-template resources for scale-from-zero, e.g. {"nvidia.com/gpu": "1"}
    template_resources: Mapping[str, str] = field(default_factory=dict)
    #: the program's own pulumi_aws.eks.NodeGroupArgs inputs (settings/aws.py AwsPoolArgsOptions.node_group_args),
    #: merged over what the builder declares
    node_group_args: Mapping[str, Any] = field(default_factory=dict)

    def labels(self, spot: bool | None) -> dict[str, str]:
        """The nodes' labels with the capacity label of a group of spot (True) or on-demand (False) capacity;
        None: no capacity label (a Karpenter NodePool allowing several capacity types)."""
        from elastic_gpu.scheduling import CAPACITY_LABEL, node_labels

        labels = node_labels(pool=self.pool, node_class=self.node_class, spot=bool(spot))
        if spot is None:
            del labels[CAPACITY_LABEL]
        return labels | dict(self.extra_labels)


#: What an EKS AL2023 node keeps of its root volume from pods: kube-reserved ephemeral-storage and the kubelet's
#: nodefs.available hard eviction share (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go:525,
#: :556: the figures Karpenter sizes EKS nodes by; its simulation reads them from here).
KUBE_RESERVED_STORAGE_GIB = 1
EVICTION_NODEFS_PERCENT = 10


def allocatable_ephemeral_gib(disk_size_gib: int) -> int:
    """The ephemeral storage a node with this root volume offers pods: the volume, less kube-reserved and the
    eviction share. The autoscaler's node template must not claim more, or it scales up an empty group for a pod
    whose disk request the new node cannot hold (the template's resources are its allocatable: cloudprovider/aws
    aws_manager.go buildNodeFromTemplate)."""
    return disk_size_gib - KUBE_RESERVED_STORAGE_GIB - math.ceil(disk_size_gib * EVICTION_NODEFS_PERCENT / 100)


def node_settings(args: NodeOverrides, ami_family: str) -> dict[str, Any]:
    """The pool's own node settings as AwsNodeSpec fields."""
    subnets = args.subnet_ids
    return {
        "node_role_arn": args.node_identity,
        "subnet_ids": dict(subnets) if isinstance(subnets, Mapping) else {},
        "security_group_ids": tuple(args.security_group_ids) if args.security_group_ids else None,
        "image_id": args.image,
        "user_data": launch_template_user_data(args, ami_family),
    }


def template_resources(args: SpotGpuPoolArgs) -> dict[str, str]:
    """What an empty group's node template needs beyond the first type's vCPU and memory: the GPUs
    as the device plugin advertises them, and the disk pods may use (allocatable_ephemeral_gib), without which a
    pod that requests ephemeral-storage never scales an empty group (kubernetes/autoscaler#1650)."""
    return {
        GPU_RESOURCE: str(args.advertised_gpus_per_node),
        EPHEMERAL_STORAGE: f"{allocatable_ephemeral_gib(args.disk_size_gib)}Gi",
    }


def gpu_taints(args: SpotGpuPoolArgs) -> tuple[Taint, ...]:
    return tuple(sorted({GPU_TAINT, *args.extra_taints}))


def gpu_node_spec(name: str, args: SpotGpuPoolArgs) -> AwsNodeSpec:
    """A GPU pool's spec (the capacity label is each group's: `labels` has none)."""
    from elastic_gpu.gpu_catalog import gpu_spec_labels
    from elastic_gpu.scheduling import AWS_ACCELERATOR_LABEL, NODE_CLASS_GPU

    accelerator = {AWS_ACCELERATOR_LABEL: args.accelerator} if args.accelerator else {}
    capacity: tuple[str, ...] = ("spot",) if args.spot else ("on-demand",)
    if args.on_demand_fallback and args.spot:
        capacity += ("on-demand",)
    reservations = args.reservations
    if reservations is not None:
        capacity = ("reserved",) + (() if reservations.only else capacity)
    return AwsNodeSpec(
        instance_types=tuple(args.instance_types),
        capacity_types=capacity,
        ami_family=args.ami_family,
        gpu=True,
        disk_size_gib=args.disk_size_gib,
        pool=name,
        node_class=NODE_CLASS_GPU,
        extra_labels=accelerator | gpu_spec_labels(args.gpu_spec) | args.extra_labels,
        taints=gpu_taints(args),
        tags=dict(args.tags),
        template_resources=template_resources(args),
        node_group_args=dict(args.node_group_args or {}),
        reservation_ids=tuple(reservations.ids) if reservations else (),
        reservation_tags=dict(reservations.tags) if reservations else {},
        reserved_nodes=reservations.nodes if reservations else 0,
        **node_settings(args, args.ami_family),
    )


def general_node_spec(name: str, args: GeneralPoolArgs) -> AwsNodeSpec:
    from elastic_gpu.scheduling import NODE_CLASS_GENERAL

    return AwsNodeSpec(
        instance_types=tuple(args.instance_types),
        capacity_types=("spot",) if args.spot else ("on-demand",),
        ami_family=GENERAL_AMI_FAMILY,
        gpu=False,
        disk_size_gib=args.disk_size_gib,
        pool=name,
        node_class=NODE_CLASS_GENERAL,
        extra_labels=dict(args.extra_labels),
        tags=dict(args.tags),
        template_resources={EPHEMERAL_STORAGE: f"{allocatable_ephemeral_gib(args.disk_size_gib)}Gi"},
        **node_settings(args, GENERAL_AMI_FAMILY),
    )
