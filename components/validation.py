"""Pure validation rules shared by the stack config and the components' Args.

Each returns a list of messages (empty when fine); callers collect them all and
raise one ConfigError. `where` prefixes each message with the field path.
"""

from __future__ import annotations

from elastic_gpu.gpu_catalog import GPU_MODELS, ONE_GROUP_MANY_TYPES_CLOUDS, gpu_instance_type


def size_problems(where: str, min_name: str, min_size: int, max_name: str, max_size: int) -> list[str]:
    problems = [f"{where}{n}: must be >= 0 (got {v})" for n, v in ((min_name, min_size), (max_name, max_size)) if v < 0]
    if min_size > max_size:
        problems.append(f"{where}{max_name}: must be >= {min_name} (got {min_name}={min_size}, {max_name}={max_size})")
    return problems


def gpu_instance_type_problems(
    where: str, cloud: str, instance_types: list[str], gpu: str | None = None, types_field: str = "instanceTypes"
) -> list[str]:
    """Every type must be a GPU type of `cloud` (of model `gpu` if given), all with one GPU count."""
    if gpu is not None and gpu not in GPU_MODELS:
        return [f"{where}gpu: unknown GPU {gpu!r}; allowed: {', '.join(GPU_MODELS)}"]
    problems: list[str] = []
    counts: set[int] = set()
    shapes: dict[tuple[int, int], str] = {}
    for j, name in enumerate(instance_types):
        row = gpu_instance_type(cloud, name)
        if row is None:
            problems.append(
                f"{where}{types_field}[{j}]: {name!r} carries no GPU we know on {cloud}; "
                "allowed: a GPU type listed in components/gpu_catalog.py"
            )
        elif gpu is not None and row.gpu != gpu:
            problems.append(f"{where}{types_field}[{j}]: {name!r} has {row.model.name}, not gpu {gpu!r}")
        else:
            counts.add(row.gpus)
            shapes.setdefault((row.vcpus, row.memory_gib), name)
    if len(counts) > 1:
        problems.append(
            f"{where}{types_field}: all types in a pool must carry the same GPU count "
            f"(the autoscaler builds one node template per group); got counts {sorted(counts)}"
        )
    if len(shapes) > 1 and cloud in ONE_GROUP_MANY_TYPES_CLOUDS:
        # cluster-autoscaler's AWS provider builds an empty group's node template from the first
        # type only (aws_wrapper.go, instanceTypesOverrides[0]); its README: the types of one group
        # "should have the same amount of RAM and number of CPU cores".
        listed = ", ".join(f"{n} ({c} vCPU, {m} GiB)" for (c, m), n in shapes.items())
        problems.append(
            f"{where}{types_field}: all types of one node group must have the same vCPUs and memory, because the "
            f"autoscaler scales an empty group from the first type's shape; got {listed}. Keep one shape "
            "(e.g. the first), or make one pool per shape"
        )
    return problems
