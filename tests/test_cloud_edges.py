"""One provider per cloud, chosen at the edge and handed down.

A stack's `cloud` becomes its provider in one place (`StackConfig.provider`), a cluster handle's in one place
(`cluster_handle.cloud_provider`, which the pools and the autoscaler narrow to their own part of the provider:
`pool_args.pool_cloud`, `cluster_autoscaler.autoscaler_cloud`); below them every function that works for one cloud
takes that cloud's provider, typed with the small protocol of what it reads (elastic_gpu/cloud_facts.py), not its
name. Only the tables merged over every cloud iterate the registry, each in one named place. The offline tools
(elastic_gpu/tools) are edges of their own and are not scanned.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from elastic_gpu import clouds, program_preflight
from elastic_gpu.cluster_autoscaler import autoscaler_cloud
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.gpu_catalog import default_instance_types
from elastic_gpu.pool_args import pool_cloud
from elastic_gpu.settings import GeneralPoolSettings, Spelling, general_pool_settings_problems
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs
from elastic_gpu.tools import clouds as tool_clouds
from elastic_gpu.validation import (
    autoscaler_settings_problems,
    cloud_args_problems,
    disk_problems,
    general_pool_problems,
    gpu_instance_type_problems,
    time_slicing_problems,
)
from elastic_gpu.versions import support_status
from tests import fake_provider
from tests.conftest import PACKAGE, stack_values
from tests.fake_provider import FakeCloud
from tests.test_fake_provider import FAKE_PROGRAM

LOOKUPS = ("get_cloud", "all_clouds")

#: Where the library may look a cloud up (module, function; "<module>": at import), and why.
EDGES: dict[tuple[str, str], str] = {
    ("clouds.py", "all_clouds"): "the registry itself",
    ("config.py", "StackConfig.provider"): "the edge of a stack: its `cloud` becomes its provider",
    ("config.py", "api_access_problems"): "merged: the clouds whose private API needs a runner, named in a message",
    ("cluster_handle.py", "cloud_provider"): "the edge of a cluster handle: its `cloud` becomes its provider",
    ("cluster_handle.py", "handle_problems"): "checks that a handle's `cloud` is registered, and its attributes",
    ("cluster_handle.py", "ExistingCluster._plain_facts"): "an existing cluster's handle, its own cloud",
    ("versions.py", "<module>"): "merged: every cloud's Kubernetes support rows",
    ("gpu_catalog.py", "accelerator_priced_clouds"): "merged: the catalog's and price table's accelerator clouds",
    ("validation.py", "owner_of"): "merged: how messages name another cloud that owns a setting",
    ("validation.py", "instance_type_cloud"): "merged: which cloud's naming an instance type follows",
}


def _lookups(path: Path) -> Iterator[tuple[str, int]]:
    """(enclosing function's qualified name or "<module>", line) of each get_cloud/all_clouds call in `path`."""

    def walk(node: ast.AST, scope: list[str]) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                yield from walk(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call):
                func = child.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called in LOOKUPS:
                    yield ".".join(scope) or "<module>", child.lineno
            yield from walk(child, scope)

    yield from walk(ast.parse(path.read_text(), str(path)), [])


def library_lookups() -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "tools":
            continue
        for scope, line in _lookups(path):
            found.setdefault((relative.as_posix(), scope), []).append(line)
    return found


def test_the_library_looks_clouds_up_only_at_its_edges() -> None:
    stray = {f"{module}:{lines} in {scope}" for (module, scope), lines in library_lookups().items()}
    stray -= {
        f"{module}:{lines} in {scope}"
        for (module, scope), lines in library_lookups().items()
        if (module, scope) in EDGES
    }
    assert not stray, "pass the CloudProvider down instead of looking the cloud up by name: " + ", ".join(sorted(stray))


def test_each_edge_the_table_names_still_looks_a_cloud_up() -> None:
    # An edge whose lookup is gone is a stale row: the table says where the library looks clouds up, no more.
    stale = set(EDGES) - set(library_lookups())
    assert not stale, f"no lookup left at {sorted(stale)}: remove them from EDGES"


def test_the_scan_sees_a_lookup_by_name(tmp_path: Path) -> None:
    # A function below the edges that looks its cloud up again, each way the library may spell it.
    source = (
        "from elastic_gpu import clouds\n"
        "from elastic_gpu.clouds import get_cloud\n"
        "def rules(cloud: str):\n    return get_cloud(cloud).config_rules()\n"
        "class Pool:\n    def each(self):\n        return [c.name for c in clouds.all_clouds()]\n"
    )
    (tmp_path / "low.py").write_text(source)
    assert list(_lookups(tmp_path / "low.py")) == [("rules", 4), ("Pool.each", 7)]


# --- the provider handed down is the one used -------------------------------------------------------------


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCloud]:
    """The fake cloud, which records its calls, registered as the cloud `fake` (a new cloud's folder would be
    registered so)."""
    monkeypatch.setitem(clouds.REGISTRY, "fake", "tests.fake_provider")
    monkeypatch.setitem(tool_clouds.REGISTRY, "fake", "tests.fake_provider")  # the offline runner's
    fake_provider.CLOUD.reset()
    yield fake_provider.CLOUD
    fake_provider.CLOUD.reset()


def test_a_stack_hands_its_clouds_provider_down(recording: FakeCloud) -> None:
    cfg = load_stack_config(stack_values("gcp-dev"))
    assert cfg.provider is clouds.get_cloud("gcp")
    # A copy on another cloud answers for its own (the stack file still names it: `cloud: fake`).
    assert cfg.model_copy(update={"cloud": "fake"}).provider is recording


def test_the_components_build_on_the_provider_of_their_handle(recording: FakeCloud, run_program: Any) -> None:
    run_program(FAKE_PROGRAM)
    built = [
        c for c in recording.calls if c.split()[0] in ("build_general_pool", "workload_contract", "build_spot_gpu_pool")
    ]
    assert built == ["build_general_pool general", "workload_contract gpu", "build_spot_gpu_pool gpu"]


def test_a_failing_builder_of_the_handed_provider_fails_the_pool(recording: FakeCloud, run_program: Any) -> None:
    with (
        recording.fail("build_spot_gpu_pool", RuntimeError("the fake cloud has no GPUs today")),
        pytest.raises(Exception, match="the fake cloud has no GPUs today"),
    ):
        run_program(FAKE_PROGRAM)
    assert [c for c in recording.calls if c.startswith("build_")] == [
        "build_general_pool general",
        "build_spot_gpu_pool gpu",
    ]


def test_the_rules_below_the_edges_take_the_provider_they_are_handed() -> None:
    # Not in the registry: a function that looked its cloud up by name would find none ("cloud: ... is unknown").
    unregistered = FakeCloud("unregistered")
    with pytest.raises(ConfigError, match="cloud: 'unregistered' is unknown"):
        clouds.get_cloud("unregistered")
    # Its own bounds, type naming and example type answer, and its messages name it.
    assert time_slicing_problems("devicePlugin.timeSlicingReplicas", unregistered, 8) == [
        "devicePlugin.timeSlicingReplicas: 8 is out of range; allowed: 2 to 4 (the fake cloud's GPUs)"
    ]
    assert general_pool_problems("generalPool.", unregistered, ["m5.large"]) == [
        "generalPool.instanceTypes[0]: 'm5.large' looks like a aws type; allowed: a unregistered type such as "
        "fake/medium"
    ]
    # (Which cloud's naming a type follows is read from the registry's clouds, where this one is not.)
    assert general_pool_settings_problems(Spelling("generalPool.", stack_file=True), unregistered, _general()) == [
        "generalPool.instanceTypes[0]: 'fake/medium' is no instance type name we know; allowed: a unregistered type "
        "such as fake/medium"
    ]
    assert cloud_args_problems("p: ", unregistered, {}) == []
    assert disk_problems("p: disk_size_gib", unregistered, 500) == [
        "p: disk_size_gib: 500 GiB is out of range; allowed: 20 to 100 GiB (the fake cloud's disks)"
    ]
    assert autoscaler_settings_problems(
        lambda key: f"autoscaler.{key}", {}, ["least-waste"], "gpuPools[0].onDemandFallback", unregistered, "[priority]"
    ) == [
        "autoscaler.expander: gpuPools[0].onDemandFallback needs `priority` in the expander chain, or the autoscaler "
        "may pick the on-demand group before the spot ones (got ['least-waste']); put priority first, e.g. [priority]"
    ]
    assert gpu_instance_type_problems("p.", unregistered, ["fake/gpu9"]) == [
        "p.instanceTypes[0]: 'fake/gpu9' carries no GPU we know on unregistered (the unregistered Pulumi provider has "
        "no invoke that describes an instance type's GPU); allowed: a GPU type listed in elastic_gpu/gpu_catalog.py, "
        "or give the pool its GPU with gpuSpec: {model, count, vcpus, memoryGib}"
    ]
    assert default_instance_types(unregistered, "t4") == []
    assert support_status(unregistered, "1.33") is None  # no support rows of its own
    assert "config_rules" in unregistered.calls


def test_an_edge_hands_down_only_a_provider_with_its_layers_part(monkeypatch: pytest.MonkeyPatch) -> None:
    # A registered cloud whose class has the low layers' members (name, facts, owner, rules, versions) but no
    # builders: the edges that need its pool or autoscaler part say so, naming the part, instead of failing later
    # on a missing attribute. (The type checker refuses such a class as a folder's PROVIDER: test_fake_provider.)
    class LowOnly:
        name, facts, owner = "low", fake_provider.CLOUD.facts, "a low"
        config_rules = fake_provider.CLOUD.config_rules
        versions = fake_provider.CLOUD.versions

    module = ModuleType("low_only")
    module.PROVIDER = LowOnly()
    monkeypatch.setitem(sys.modules, "low_only", module)
    monkeypatch.setitem(clouds.REGISTRY, "low", "low_only")
    handle = type("Handle", (), {"cloud": "low"})()
    assert clouds.get_cloud("low") is module.PROVIDER
    with pytest.raises(TypeError, match=r"lacks the members a pool asks of its cloud \(pool_args.PoolCloud\)"):
        pool_cloud(handle)
    with pytest.raises(TypeError, match=r"lacks the members the autoscaler asks of its cloud \(AutoscalerCloud\)"):
        autoscaler_cloud(handle)
    with pytest.raises(TypeError, match=r"lacks the members a stack asks of its cloud \(config.StackCloud\)"):
        _ = load_stack_config(stack_values("gcp-dev")).model_copy(update={"cloud": "low"}).provider


def _general() -> GeneralPoolSettings:
    return GeneralPoolSettings(instance_types=["fake/medium"], min_size=1, max_size=3)


def test_a_pools_preflight_reads_the_provider_its_component_chose() -> None:
    # The handle says aws; the preflight asks the provider it is handed (here one without an account preflight,
    # which has nothing to read), not the registry's aws.
    unregistered = FakeCloud("unregistered")
    handle = type("Handle", (), {"cloud": "aws", "zones": ["us-east-1a"], "kubernetes_version": "1.33"})()
    args = SpotGpuPoolArgs.model_construct(cluster=handle, checked_by_stack=False, instance_types=["g4dn.xlarge"])
    assert program_preflight.check_pool("gpu", args, unregistered, general=False) == []
