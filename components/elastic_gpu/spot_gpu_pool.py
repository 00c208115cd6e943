"""SpotGpuPool: GPU nodes on spot capacity that scale from zero, with an on-demand fallback."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi

from elastic_gpu import program_preflight
from elastic_gpu.args_doc import documented_component
from elastic_gpu.cluster_handle import cloud_provider, handle_problems
from elastic_gpu.errors import ConfigError, about, problem
from elastic_gpu.gpu_catalog import gpu_spec_problems, resolve_gpu_spec
from elastic_gpu.pool_args import PoolCloud, pool_cloud
from elastic_gpu.pool_args import SpotGpuPoolArgs as SpotGpuPoolArgs  # declared below the builder record
from elastic_gpu.pool_overrides import override_type_problems
from elastic_gpu.pool_types import BuiltPool, PoolComponent, PoolProvisioner
from elastic_gpu.settings import (
    CLOUD_ONLY_POOL_SETTINGS,
    Spelling,
    gpu_pool_settings_problems,
)
from elastic_gpu.settings.base import cloud_only_settings
from elastic_gpu.validation import (
    args_type_problems,
    cloud_args_problems,
    gpu_instance_type_problems,
    label_problems,
)
from elastic_gpu.workload import CONTRACT_INPUT, WorkloadContract

TYPE_TOKEN = "elastic-gpu:index:SpotGpuPool"
#: The component input that records the pool's promise (read back by the simulator and the policy).
PROMISE_INPUT = "maxMinutesToFallback"


#: The pool settings only one cloud has: the stack file's (CLOUD_ONLY_POOL_SETTINGS) and a program's (gpu_count).
ARGS_CLOUD_ONLY_SETTINGS = cloud_only_settings(SpotGpuPoolArgs)
assert CLOUD_ONLY_POOL_SETTINGS.items() <= ARGS_CLOUD_ONLY_SETTINGS.items()


def problem_prefix(name: str) -> str:
    """What leads each message about the Args of the pool `name`, before the field's name."""
    return f"SpotGpuPool '{name}': SpotGpuPoolArgs."


def spot_gpu_pool_problems(
    name: str, args: SpotGpuPoolArgs, *, settings_checked: bool = False, unresolved: dict[str, str] | None = None
) -> list[str]:
    """Every problem with `args`, each naming the argument (`SpotGpuPoolArgs.max_size`). `settings_checked`:
    the types, the settings and the instance types were checked as a stack file's (elastic_gpu.config, with
    the same rules), so only what the program and the cloud's builder add is checked. `unresolved`: why the
    cloud's API described no GPU for a type the catalog lacks (resolved_gpu_spec)."""
    where = problem_prefix(name)
    checked = settings_checked
    if problems := about("cluster", handle_problems(where, args.cluster)) + (
        [] if checked else args_type_problems(where, args)
    ):
        return problems  # the rest reads the cluster and compares the values
    cloud = pool_cloud(args.cluster)
    if not checked:
        spell = Spelling(where, stack_file=False)
        problems = gpu_pool_settings_problems(spell, cloud, args, ARGS_CLOUD_ONLY_SETTINGS)
        problems += _instance_type_problems(where, cloud, args, unresolved)
    if unknown := [z for z in args.pool_zones if z not in args.cluster.zones]:
        problems.append(
            problem(where, "zones", f"{unknown} are not zones of the cluster; allowed: {args.cluster.zones}")
        )
    problems += cloud_args_problems(where, cloud, args.tags)
    problems += about("extra_labels", label_problems(f"{where}extra_labels", args.extra_labels))
    problems += override_type_problems(where, args)
    if problems:
        return problems  # the group counts below need valid types and zones
    pools = cloud.pool_builder()
    problems += pools.override_problems(where, args)
    problems += pools.pool_problems(where, args)
    if args.provisioner is not None:
        return problems + provisioner_problems(name, args)
    primary, fallback = pools.node_group_counts(args)
    # Unset, fallback_max_size is max_size (fallback_total): then max_size is what the user set, and is named alone.
    own_fallback = args.fallback_max_size is not None
    for field_name, total, groups in (
        ("max_size", args.max_size, primary if own_fallback else max(primary, fallback)),
        ("fallback_max_size", args.fallback_total, fallback if own_fallback else 0),
    ):
        if groups and total < groups:
            problems.append(
                problem(
                    where,
                    field_name,
                    f"it is the total over the {groups} node groups it is split into, and each needs a max of at "
                    f"least 1, so it must be >= {groups} (got {total})",
                )
            )
    return problems


def resolved_gpu_spec(args: SpotGpuPoolArgs) -> tuple[SpotGpuPoolArgs, dict[str, str]]:
    """`args` with the gpu_spec the cloud's API gives the types the catalog lacks when it gives none (asked at
    preview, through the cloud's provider: SpotGpuPool runs under the engine); why the API gave none."""
    if args.gpu_spec is not None or args.checked_by_stack or not isinstance(args.instance_types, list):
        return args, {}
    if handle_problems("", args.cluster):  # not a cluster handle: reported with the rest, nothing to ask
        return args, {}
    try:  # a Pulumi program runs inside the engine's event loop (run_pulumi_func); outside it no invoke answers
        asyncio.get_running_loop()
    except RuntimeError:
        return args, {}
    # EKS asks the provider's region (a handle's region is an Output); GKE asks the pool's first zone.
    zones = args.pool_zones
    spec, why = resolve_gpu_spec(cloud_provider(args.cluster), args.instance_types, None, zones)
    return (args if spec is None else args.model_copy(update={"gpu_spec": spec})), why


def provisioner_problems(name: str, args: SpotGpuPoolArgs) -> list[str]:
    """What the pool's provisioner (EKS: Karpenter's `nodes`) refuses of it: made after the cluster, so a
    stack's pool is checked by it when the pool is declared (its rules on the stack file: the cloud's config
    rules), before any of the pool's own resources."""
    where = problem_prefix(name)
    if args.provisioner is None:
        return []
    if not isinstance(args.provisioner, PoolProvisioner):
        return [
            problem(
                where,
                "provisioner",
                f"must have build_pool(name, args, parent), such as Karpenter(...).nodes "
                f"(got {type(args.provisioner).__name__})",
            )
        ]
    return list(getattr(args.provisioner, "pool_problems", lambda *_: [])(where, args))


def _instance_type_problems(
    where: str, cloud: PoolCloud, args: SpotGpuPoolArgs, unresolved: dict[str, str] | None = None
) -> list[str]:
    """The pool's types: given, each once, GPU types of the catalog or of `gpu_spec`, one GPU count (and model);
    `unresolved`: why the cloud's API described no GPU for a type, asked at preview."""
    problems: list[str] = []
    if not args.instance_types:
        problems.append(problem(where, "instance_types", "at least one GPU instance type is required"))
    # A bad spec is the cause of its types' "no GPU we know": report it alone.
    spec_problems = about(
        "gpu_spec", gpu_spec_problems(f"{where}gpu_spec", cloud.name, args.instance_types, args.gpu_spec)
    )
    problems += spec_problems or about(
        "instance_types",
        gpu_instance_type_problems(
            where,
            cloud,
            args.instance_types,
            types_field="instance_types",
            mixed_models=args.mixed_gpu_models,
            mixed_field="mixed_gpu_models=True",
            spec_field="gpu_spec=GpuSpec(model, count, vcpus, memory_gib)",
            spec=args.gpu_spec,
            unresolved=unresolved,
        ),
    )
    if len(set(args.instance_types)) != len(args.instance_types):
        problems.append(problem(where, "instance_types", f"each type may appear once (got {args.instance_types})"))
    return problems


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
        # A type the catalog lacks and no gpu_spec describes: asked of the cloud's API (the stack file's were
        # asked when it was read).
        args, unresolved = resolved_gpu_spec(args)
        # Args the stack checked before declaring anything: only what its provisioner (made since) refuses.
        if problems := (
            provisioner_problems(name, args)
            if args.checked_by_stack
            else spot_gpu_pool_problems(name, args, unresolved=unresolved)
        ):
            raise ConfigError(problems, source=f"SpotGpuPool '{name}'")
        # What the account lacks for it, read as a stack's preflight reads it (a stack's pools: its own ran).
        # The handle's cloud, chosen once: the preflight and the builders below are that provider's.
        cloud = pool_cloud(args.cluster)
        found = program_preflight.check_pool(name, args, cloud, general=False)
        pools = cloud.pool_builder()
        #: what a pod needs to land on this pool (tolerations, node selector, Job labels)
        self.workload: WorkloadContract = pools.workload_contract(name, args)
        #: the pool's promise: minutes to the on-demand fallback (None without one)
        self.max_minutes_to_fallback = args.fallback_promise
        # Recorded as inputs, so the offline simulator and the policy read them from the captured resources.
        inputs: dict[str, Any] = {CONTRACT_INPUT: self.workload.to_json()}
        if self.max_minutes_to_fallback is not None:
            inputs[PROMISE_INPUT] = self.max_minutes_to_fallback
        super().__init__(TYPE_TOKEN, name, inputs, opts)
        program_preflight.record(name, found, self)
        builder = pools.build_spot_gpu_pool if args.provisioner is None else args.provisioner.build_pool
        built = builder(name, args, self)
        self.args = args
        self.ships_device_plugin = built.ships_device_plugin
        self._publish(name, built)


__all__ = ["BuiltPool", "SpotGpuPool", "SpotGpuPoolArgs", "WorkloadContract"]
