"""GeneralPool: the small CPU pool for system pods, the autoscaler and everything else."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from elastic_gpu.args_doc import documented, documented_component
from elastic_gpu.clouds import get_cloud
from elastic_gpu.cluster_handle import handle_problems
from elastic_gpu.errors import ConfigError
from elastic_gpu.pool_overrides import NodeOverrides, override_type_problems
from elastic_gpu.pool_types import ClusterHandle, PoolComponent
from elastic_gpu.validation import (
    args_type_problems,
    cloud_args_problems,
    instance_type_problems,
    label_problems,
    size_problems,
)

TYPE_TOKEN = "elastic-gpu:index:GeneralPool"

DEFAULT_MIN_SIZE = 1
DEFAULT_DISK_SIZE_GIB = 50


@documented
@dataclass
class GeneralPoolArgs(NodeOverrides):
    cluster: ClusterHandle
    """The cluster handle the pool joins (EksCluster, AksCluster, GkeCluster or an existing one)."""
    instance_types: list[str]
    """CPU instance types; several of similar size so capacity is easier to find."""
    max_size: int
    """Most nodes the autoscaler may run."""
    min_size: int = DEFAULT_MIN_SIZE
    """Default 1, and never less: system pods and the autoscaler need somewhere to run."""
    spot: bool = False
    """Default false: on-demand, so the autoscaler is never evicted."""
    extra_labels: dict[str, str] = field(default_factory=dict)
    """Node labels on top of the pool's own (elastic-gpu.io/pool, node-class, capacity)."""
    disk_size_gib: int = DEFAULT_DISK_SIZE_GIB
    """Root disk per node (GiB)."""
    tags: dict[str, str] = field(default_factory=dict)
    """Tags/labels on the cloud resources (cost allocation)."""


def general_pool_problems(name: str, args: GeneralPoolArgs) -> list[str]:
    """Every problem with `args`, each naming the argument (`GeneralPoolArgs.max_size`)."""
    where = f"GeneralPool '{name}': GeneralPoolArgs."
    if problems := handle_problems(where, args.cluster) + args_type_problems(where, args):
        return problems
    problems = size_problems(where, "min_size", args.min_size, "max_size", args.max_size)
    if args.min_size < 1:
        problems.append(f"{where}min_size: must be >= 1 so system pods have a node (got {args.min_size})")
    if not args.instance_types:
        problems.append(f"{where}instance_types: at least one instance type is required")
    problems += instance_type_problems(f"{where}instance_types", args.cluster.cloud, list(args.instance_types))
    problems += cloud_args_problems(where, args.cluster.cloud, args.tags, args.disk_size_gib)
    problems += label_problems(f"{where}extra_labels", args.extra_labels)
    problems += override_type_problems(where, args)
    if not problems:
        problems += get_cloud(args.cluster.cloud).pool_builder().override_problems(where, args)
    return problems


@documented_component(GeneralPoolArgs)
class GeneralPool(PoolComponent):
    """One autoscaled node group across the cluster's zones, labelled as the general pool.

    On AWS: an EKS managed node group with diversified instance types and a launch
    template (encrypted gp3 disk, IMDSv2 required), plus the autoscaler's
    discovery tags. The ClusterAutoscaler's pod selects this pool's labels.
    """

    args: GeneralPoolArgs
    """The arguments the pool was declared with."""

    def __init__(self, name: str, args: GeneralPoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        if problems := general_pool_problems(name, args):
            raise ConfigError(problems, source=f"GeneralPool '{name}'")
        super().__init__(TYPE_TOKEN, name, None, opts)
        built = get_cloud(args.cluster.cloud).pool_builder().build_general_pool(name, args, self)
        self.args = args
        self._publish(name, built)
