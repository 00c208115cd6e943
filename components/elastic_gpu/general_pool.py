"""GeneralPool: the small CPU pool for system pods, the autoscaler and everything else."""

from __future__ import annotations

import pulumi

from elastic_gpu import program_preflight
from elastic_gpu.args_doc import documented_component
from elastic_gpu.cluster_handle import handle_problems
from elastic_gpu.errors import ConfigError, about
from elastic_gpu.pool_args import GeneralPoolArgs as GeneralPoolArgs  # declared below the builder record
from elastic_gpu.pool_args import pool_cloud
from elastic_gpu.pool_overrides import override_type_problems
from elastic_gpu.pool_types import PoolComponent
from elastic_gpu.settings import Spelling, general_pool_settings_problems
from elastic_gpu.validation import (
    args_type_problems,
    cloud_args_problems,
    label_problems,
)

TYPE_TOKEN = "elastic-gpu:index:GeneralPool"


def problem_prefix(name: str) -> str:
    """What leads each message about the Args of the pool `name`, before the field's name."""
    return f"GeneralPool '{name}': GeneralPoolArgs."


def general_pool_problems(name: str, args: GeneralPoolArgs, *, settings_checked: bool = False) -> list[str]:
    """Every problem with `args`, each naming the argument (`GeneralPoolArgs.max_size`). `settings_checked`:
    the types and the settings were checked as a stack file's (elastic_gpu.config, with the same rules), so
    only what the program and the cloud's builder add is checked."""
    where = problem_prefix(name)
    checked = settings_checked
    if problems := about("cluster", handle_problems(where, args.cluster)) + (
        [] if checked else args_type_problems(where, args)
    ):
        return problems
    cloud = pool_cloud(args.cluster)
    if not checked:
        problems = general_pool_settings_problems(Spelling(where, stack_file=False), cloud, args)
    problems += cloud_args_problems(where, cloud, args.tags)
    problems += about("extra_labels", label_problems(f"{where}extra_labels", args.extra_labels))
    problems += override_type_problems(where, args)
    if not problems:
        problems += cloud.pool_builder().override_problems(where, args)
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
        if not args.checked_by_stack and (problems := general_pool_problems(name, args)):
            raise ConfigError(problems, source=f"GeneralPool '{name}'")
        # What the account lacks for it, read as a stack's preflight reads it (a stack's pools: its own ran).
        # The handle's cloud, chosen once: the preflight and the builder below are that provider's.
        cloud = pool_cloud(args.cluster)
        found = program_preflight.check_pool(name, args, cloud, general=True)
        super().__init__(TYPE_TOKEN, name, None, opts)
        program_preflight.record(name, found, self)
        built = cloud.pool_builder().build_general_pool(name, args, self)
        self.args = args
        self._publish(name, built)
