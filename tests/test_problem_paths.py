"""A stack's pool is checked by its components' own rules before anything is declared, and each problem names
the stack file's path of its field (`gpuPools[1].maxSize`): the field is data the check gives its message
(elastic_gpu.errors.Problem), never read back out of the message's text. Each pool's Args are built once:
the objects checked are the ones the components get."""

from __future__ import annotations

from typing import Any

import pytest

from elastic_gpu import compose, spot_gpu_pool
from elastic_gpu.config import GpuPoolConfig, load_stack_config
from elastic_gpu.errors import ConfigError, Problem, field_of
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import ROOT, stack_values

P = "elastic-gpu:"


def azure_split_pool() -> dict[str, Any]:
    """azure-prod with its second pool (`training`) split into more agent pools than its maxes allow: two VM
    sizes per zone over three zones is 6 spot agent pools and 2 fallback ones (one per size), which only the
    component counts (the stack file's rule counts zones)."""
    values = stack_values("azure-prod")
    values[P + "gpuPools"][1].update(
        gpu="t4",
        instanceTypes=["Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3"],
        perZone=True,
        maxSize=3,
        onDemandFallback=True,
        fallbackMaxSize=1,
    )
    return values


SPLIT = "it is the total over the {n} node groups it is split into, and each needs a max of at least 1, so it must be"


def test_a_stack_pools_component_problem_names_the_stack_path_of_its_field() -> None:
    cfg = load_stack_config(azure_split_pool())  # the stack file's own rules pass
    with pytest.raises(ConfigError) as exc:
        compose.build_stack(cfg)  # raises before the provider: no engine needed
    where = "SpotGpuPool 'training': SpotGpuPoolArgs."
    assert exc.value.problems == [
        f"gpuPools[1].maxSize ({where}max_size: {SPLIT.format(n=6)} >= 6 (got 3))",
        # the alias of a field whose Python name is another word split: fallback_max_size -> fallbackMaxSize
        f"gpuPools[1].fallbackMaxSize ({where}fallback_max_size: {SPLIT.format(n=2)} >= 2 (got 1))",
    ]


def test_the_component_gives_each_problem_its_field() -> None:
    cfg = load_stack_config(azure_split_pool())
    pools = compose.plan_pools(cfg, lambda p: cfg.provider.stack_builder().pool_args(cfg, p))
    problems = spot_gpu_pool.spot_gpu_pool_problems("training", pools.gpu[1], settings_checked=True)
    assert [field_of(p) for p in problems] == ["max_size", "fallback_max_size"]
    assert all(isinstance(p, Problem) for p in problems)


def test_the_stack_path_is_read_from_the_field_not_from_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another lead for the component's messages: the stack paths stay, as they come from each problem's field
    (reading the field's name after the old lead would find none and name only `gpuPools[1]`)."""
    monkeypatch.setattr(spot_gpu_pool, "problem_prefix", lambda name: f"GPU pool {name!r}, argument ")
    with pytest.raises(ConfigError) as exc:
        compose.build_stack(load_stack_config(azure_split_pool()))
    assert exc.value.problems == [
        f"gpuPools[1].maxSize (GPU pool 'training', argument max_size: {SPLIT.format(n=6)} >= 6 (got 3))",
        f"gpuPools[1].fallbackMaxSize (GPU pool 'training', argument fallback_max_size: {SPLIT.format(n=2)} >= 2 "
        "(got 1))",
    ]


@pytest.mark.parametrize(
    ("field", "path"),
    [
        ("max_size", "gpuPools[1].maxSize"),
        ("disk_size_gib", "gpuPools[1].diskSizeGib"),
        ("gpu_count", "gpuPools[1].gpusPerNode"),  # the stack file's key for the program's field
        ("tags", "tags"),  # from another section
        ("gpu_sharing_replicas", "devicePlugin.timeSlicingReplicas"),
        (None, "gpuPools[1]"),  # about no one field: the pool
    ],
)
def test_a_field_maps_to_its_stack_path(field: str | None, path: str) -> None:
    # whatever the text says: the field decides
    assert compose.config_path("gpuPools[1]", GpuPoolConfig, Problem("SpotGpuPoolArgs.max_size: x", field)) == path


def test_a_message_without_a_field_names_its_section() -> None:
    assert compose.config_path("gpuPools[1]", GpuPoolConfig, "SpotGpuPool 'x': SpotGpuPoolArgs.max_size: x") == (
        "gpuPools[1]"
    )


def test_each_pools_args_are_built_once_and_the_checked_ones_are_the_components(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """aws-karpenter: its GPU pools' nodes are Karpenter's, set on the planned Args once Karpenter is declared."""
    built: list[Any] = []
    checked: list[Any] = []
    declared: list[Any] = []
    real_build, real_check = compose.gpu_pool_args, compose.spot_gpu_pool_problems
    real_init = spot_gpu_pool.SpotGpuPool.__init__
    monkeypatch.setattr(compose, "gpu_pool_args", lambda *a, **k: built.append(real_build(*a, **k)) or built[-1])
    monkeypatch.setattr(compose, "spot_gpu_pool_problems", lambda n, a, **k: checked.append(a) or real_check(n, a, **k))

    def init(self: Any, name: str, args: Any, opts: Any = None) -> None:
        declared.append(args)
        real_init(self, name, args, opts)

    monkeypatch.setattr(spot_gpu_pool.SpotGpuPool, "__init__", init)
    preview = run_preview("aws-karpenter", ROOT)
    pools = len(load_stack_config(stack_values("aws-karpenter")).gpu_pools)
    assert len([r for r in preview.resources if r.type == spot_gpu_pool.TYPE_TOKEN]) == pools
    assert len(built) == pools
    assert [id(a) for a in checked] == [id(a) for a in built] == [id(a) for a in declared]
    # the declared cluster in place of the planned one, and Karpenter's nodes as the provisioner
    assert not [a for a in declared if isinstance(a.cluster, compose.PlannedCluster) or a.provisioner is None]
