"""The gate (preview + policy) grows linearly with the stack: counted, not timed (a loaded machine makes
timings flake; a count of reads does not). Each test runs the benchmark's stack (scripts/bench_policy.py)
at N and 2N pools and checks what grows with the stack grows like it, and what is once per stack stays once."""

from __future__ import annotations

import copy
import gc
import importlib.util
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from pulumi_policy import StackValidationArgs

import elastic_gpu.tools.aws.reader as aws_reader
import elastic_gpu.tools.node_group_reading as node_group_reading
import elastic_gpu.tools.offline.stack_resources as stack_resources_module
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import Preview, run_preview
from elastic_gpu.tools.offline.stack_resources import node_groups, stack_resources
from elastic_gpu.tools.policy import fallback_rules
from tests.conftest import ROOT, stack_preview

_spec = importlib.util.spec_from_file_location("bench_policy", ROOT / "scripts" / "bench_policy.py")
assert _spec is not None and _spec.loader is not None
bench_policy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_policy)

POOLS = 3


@pytest.fixture(scope="module")
def previews(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Preview]:
    """The benchmark's stack at POOLS and 2 * POOLS GPU pools."""
    out = {}
    for pools in (POOLS, 2 * POOLS):
        d = tmp_path_factory.mktemp(f"bench{pools}")
        (d / "stacks").mkdir()
        (d / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
        (d / "__main__.py").write_text((ROOT / "__main__.py").read_text())
        (d / "stacks" / "Pulumi.bench.yaml").write_text(yaml.safe_dump(bench_policy.stack_config(pools)))
        out[pools] = run_preview("bench", d)
    return out


def _counting(
    monkeypatch: pytest.MonkeyPatch,
    calls: Counter[str],
    module: Any,
    name: str,
    weight: Callable[..., int] = lambda *args: 1,
) -> None:
    """Count the calls of `module.name` in `calls[name]`, each weighing `weight(*args)`."""
    real: Callable[..., Any] = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += weight(*args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)


def _gate_reads(preview: Preview, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """What one policy run reads, on a fresh copy of the preview (nothing read before)."""
    calls: Counter[str] = Counter()
    with monkeypatch.context() as m:
        m.setattr(fallback_rules, "_LAST", [])
        _counting(m, calls, node_group_reading, "read_node_groups")  # one resource's node groups, by its reader
        _counting(m, calls, aws_reader, "subnet_zones", len)  # resources scanned for subnets
        _counting(m, calls, stack_resources_module, "_stack_resources")  # the engine's view of a preview
        _counting(m, calls, fallback_rules, "simulate")
        report = run_policies(copy.deepcopy(preview))
    assert not report.mandatory
    return calls


def test_policy_reads_grow_with_the_stack_not_with_its_square(previews, monkeypatch) -> None:
    small, large = previews[POOLS], previews[2 * POOLS]
    assert len(large.resources) > len(small.resources)
    few, many = _gate_reads(small, monkeypatch), _gate_reads(large, monkeypatch)
    # A fixed number of times per stack, whatever its size: the scan for subnets (once per Stack: the
    # policies' and the simulation's, and the copy the controller-placement check makes of each), the
    # engine's view of the resources (the policies' and the simulation's), and one simulation for both
    # fallback rules.
    scans = [calls["subnet_zones"] / len(p.resources) for calls, p in ((few, small), (many, large))]
    assert scans[0] == scans[1] <= 4, scans
    assert few["_stack_resources"] == many["_stack_resources"] == 2
    assert few["simulate"] == many["simulate"] == 1
    # A fixed number of reads per resource (each rule that reads node groups, once per resource): read once
    # per pod or per node group each, they would grow with pools x resources.
    per_resource = [calls["read_node_groups"] / len(p.resources) for calls, p in ((few, small), (many, large))]
    assert per_resource[1] <= 1.15 * per_resource[0], per_resource
    # Every rule that asks for a resource's node groups shares one read per Stack (the policies', the
    # simulation's, the fallback rules' strict copy): not one read per rule that asks.
    assert per_resource[1] <= 3, per_resource


def test_resource_rules_share_one_read_of_each_resource_within_a_policy_run(monkeypatch) -> None:
    """Within a policy run (`reading_each_resource_once`) each resource's node groups are read once, however
    many resource rules ask; outside one, props are read at each ask (a caller may have edited them)."""
    preview = stack_preview("aws-prod")
    group = next(r for r in preview.resources if r.type == "aws:eks/nodeGroup:NodeGroup")
    calls: Counter[str] = Counter()
    _counting(monkeypatch, calls, node_group_reading, "read_node_groups")
    with node_group_reading.reading_each_resource_once():
        first = node_group_reading.pools_of(group.type, group.name, group.inputs)
        again = node_group_reading.gpu_pools_of(group.type, group.name, group.inputs)
        assert calls["read_node_groups"] == 1
        assert [p.name for p in again] == [p.name for p in first if p.gpu]
        node_group_reading.pools_of(group.type, group.name, dict(group.inputs))  # other props: read
        assert calls["read_node_groups"] == 2
    node_group_reading.pools_of(group.type, group.name, group.inputs)
    node_group_reading.pools_of(group.type, group.name, group.inputs)
    assert calls["read_node_groups"] == 4


def test_simulation_reads_the_stack_once_per_preview(previews, monkeypatch) -> None:
    """`simulate` asks for the node groups once per pod (the provisioner's NodePools, the autoscaler's
    templates): one read of the stack serves them all."""
    from elastic_gpu.tools.simulation.run import simulate

    reads = []
    for pools in (POOLS, 2 * POOLS):
        calls: Counter[str] = Counter()
        with monkeypatch.context() as m:
            _counting(m, calls, node_group_reading, "_read_stack")
            _counting(m, calls, aws_reader, "subnet_zones", len)
            outcomes = simulate(copy.deepcopy(previews[pools]))
        assert len(outcomes) == pools
        reads.append(calls)
    # The preview's Stack, and the copy of it the controller-placement check reads: whatever the number of pods.
    assert reads[0]["_read_stack"] == reads[1]["_read_stack"] <= 2
    for calls, pools in zip(reads, (POOLS, 2 * POOLS), strict=True):
        assert calls["subnet_zones"] == calls["_read_stack"] * len(previews[pools].resources)


def test_both_fallback_rules_judge_one_simulation_when_the_engine_hands_each_its_own_copy(monkeypatch) -> None:
    """The Pulumi engine builds each stack policy its own PolicyResources of the same stack: the advisory
    twin reuses the mandatory rule's simulation; a stack that differs is simulated again."""
    preview = copy.deepcopy(stack_preview("aws-prod"))
    calls: Counter[str] = Counter()
    monkeypatch.setattr(fallback_rules, "_LAST", [])
    _counting(monkeypatch, calls, fallback_rules, "simulate")
    found: list[str] = []
    # As the engine does: a new list of new resource objects for each policy.
    fallback_rules.validate_fallback_promise(
        StackValidationArgs(list(stack_resources_module._stack_resources(preview)), {}), found.append
    )
    fallback_rules.validate_fallback_promise_advisory(
        StackValidationArgs(list(stack_resources_module._stack_resources(preview)), {}), found.append
    )
    assert calls["simulate"] == 1
    other = copy.deepcopy(preview)
    group = next(r for r in other.resources if r.type == "aws:eks/nodeGroup:NodeGroup")
    group.inputs["scalingConfig"] = {**group.inputs["scalingConfig"], "maxSize": 11}
    fallback_rules.validate_fallback_promise_advisory(
        StackValidationArgs(list(stack_resources_module._stack_resources(other)), {}), found.append
    )
    assert calls["simulate"] == 2


def test_a_preview_is_read_once_per_reading_block_and_afresh_after_an_edit() -> None:
    """Within a block that only reads (a policy run, a simulation) the stack is read once; a preview edited
    after such a block (a test's variant of a stack) is read afresh."""
    preview = copy.deepcopy(stack_preview("aws-prod"))
    with preview.reading():
        assert stack_resources(preview) is stack_resources(preview)
        before = {v.resource: v.max_size for v in node_groups(preview)}
    group = next(r for r in preview.resources if r.type == "aws:eks/nodeGroup:NodeGroup")
    group.inputs["scalingConfig"] = {**group.inputs["scalingConfig"], "maxSize": 99}
    after = {v.resource: v.max_size for v in node_groups(preview)}
    assert after[group.name] == 99 != before[group.name]
    assert stack_resources(preview) is not stack_resources(preview)  # outside a block: no reads kept


@pytest.fixture
def collections() -> Iterator[Counter[int]]:
    """The collections the cyclic garbage collector runs, by generation."""
    seen: Counter[int] = Counter()

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen[info["generation"]] += 1

    gc.callbacks.append(count)
    try:
        yield seen
    finally:
        gc.callbacks.remove(count)


def test_a_preview_collects_the_sdks_cycles_once_not_over_and_over(program_dir, collections) -> None:
    """The SDK's per-property reference cycles are freed by one collection at the end of the run
    (tools/offline/collector.py), not by collections over the heap during it; the collector is on again afterwards."""
    directory = program_dir(bench_policy.stack_config(POOLS)["config"], stack="bench")
    assert gc.isenabled()
    run_preview("bench", directory)
    during = Counter(collections)
    assert gc.isenabled()
    # Without the pause: hundreds of collections, full ones among them. With it: the one at the end (and at
    # most one more, of the young generation, as the run returns its result).
    assert during[1] == during[2] == 0 and 1 <= during[0] <= 2, during


def test_a_paused_collector_stays_paused(program_dir, collections) -> None:
    directory = program_dir(bench_policy.stack_config(1)["config"], stack="bench")
    gc.disable()
    try:
        run_preview("bench", directory)
        assert not gc.isenabled()
        assert collections == Counter()
    finally:
        gc.enable()


def test_a_preview_leaves_the_collector_little_per_resource(program_dir, monkeypatch) -> None:
    """What the collection at the end of a preview frees, per resource: about 160 objects (each Output's future,
    task and coroutine). The SDK's own `contains_unknowns` (replaced during a run: tools/offline/sdk_compat.py)
    would add a function, a cell, a tuple and an alias per call, about 430 in all."""
    freed: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            freed.append(info["collected"])

    directory = program_dir(bench_policy.stack_config(POOLS)["config"], stack="bench")
    gc.collect()  # what earlier tests left is not the run's: the run's one collection counts only its own
    gc.callbacks.append(count)
    try:
        preview = run_preview("bench", directory)
    finally:
        gc.callbacks.remove(count)
    assert freed and max(freed) / len(preview.resources) < 250, (freed, len(preview.resources))
