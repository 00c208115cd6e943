"""The cloud-neutral core driven by a cloud that exists only as one class (tests/fake_provider.py): config rules,
the node-group reader (policy rules, region, Pools report) and the simulation reach it through its provider
alone, as they reach EKS, AKS and GKE."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from elastic_gpu import clouds
from elastic_gpu.config import StackConfig, load_stack_config, stack_warnings, validate_stack
from elastic_gpu.errors import ConfigError
from elastic_gpu.scheduling import GPU_RESOURCE, POOL_LABEL
from elastic_gpu.spot_gpu_pool import PROMISE_INPUT
from elastic_gpu.spot_gpu_pool import TYPE_TOKEN as SPOT_GPU_POOL
from elastic_gpu.tools import clouds as tool_clouds
from elastic_gpu.tools import node_group_reading, node_group_view
from elastic_gpu.tools.offline import mocks, report
from elastic_gpu.tools.offline.runner import CapturedResource, Preview
from elastic_gpu.tools.policy.scaling_rules import validate_really_spot
from elastic_gpu.tools.simulation.run import Minutes, simulate
from elastic_gpu.tools.simulation.timings import Evidence
from elastic_gpu.workload import CONTRACT_INPUT, WorkloadContract
from tests import fake_provider
from tests.conftest import PACKAGE, ROOT, stack_values
from tests.fake_provider import FAKE_NODE_GROUP, GPU_TAINT


def _clear_caches() -> None:
    # Tables merged over every cloud on first use.
    for merged in (mocks._resource_mocks, mocks._invoke_mocks, mocks._account_invokes):
        merged.cache_clear()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The fake cloud in both registries, as a new cloud's folders (elastic_gpu/<cloud>/, tools/<cloud>/) would be."""
    monkeypatch.setitem(clouds.REGISTRY, "fake", "tests.fake_provider")
    monkeypatch.setitem(tool_clouds.REGISTRY, "fake", "tests.fake_provider")
    _clear_caches()
    fake_provider.CLOUD.reset()
    yield
    _clear_caches()
    fake_provider.CLOUD.reset()


def test_the_registry_serves_the_fake_provider(fake: None) -> None:
    assert clouds.get_cloud("fake") is fake_provider.PROVIDER
    assert [c.name for c in clouds.all_clouds()] == ["aws", "azure", "gcp", "fake"]
    # The tools' registry follows the library's names and order, and serves the same cloud's tools.
    assert tool_clouds.get_cloud("fake") is fake_provider.TOOLS
    assert [c.name for c in tool_clouds.all_clouds()] == ["aws", "azure", "gcp", "fake"]


def test_the_tools_registry_refuses_an_unknown_cloud_as_the_library_does() -> None:
    with pytest.raises(ConfigError, match="cloud: 'fake' is unknown; allowed: aws, azure, gcp"):
        tool_clouds.get_cloud("fake")


def test_the_fake_is_unknown_until_registered() -> None:
    with pytest.raises(ConfigError, match="cloud: 'fake' is unknown; allowed: aws, azure, gcp"):
        clouds.get_cloud("fake")


def _on_fake(stack: str, **cluster: object) -> StackConfig:
    """A shipped stack's config with its cloud swapped for the fake (the config schema names only real clouds)."""
    values = stack_values(stack)
    values["elastic-gpu:cluster"].update(cluster)
    return load_stack_config(values).model_copy(update={"cloud": "fake"})


def test_config_rules_dispatch_to_the_stack_cloud(fake: None) -> None:
    cfg = _on_fake("gcp-dev", networkCidr="10.1.0.0/16")  # GKE takes networkCidr; the fake does not
    problems = validate_stack(cfg)
    # The deploy members the config check asks of the stack's cloud, and none of the tools'.
    assert {"config_rules", "ignored_settings"} <= set(fake_provider.CLOUD.calls)
    assert not {"reader", "mocks", "pack", "autoscaler_timing", "replacement"} & set(fake_provider.CLOUD.calls)
    # The fake's own rules, its ignored settings, its type naming and its example type.
    region, [general] = cfg.cluster.region, cfg.general_pool.instance_types
    assert f"cluster.region: {region!r} is not a fake region; allowed: fake-<name>" in problems
    assert "cluster.networkCidr: does nothing on fake: the fake cloud has no network of its own; remove it" in problems
    assert (
        f"generalPool.instanceTypes[0]: {general!r} looks like a gcp type; allowed: a fake type such as fake/medium"
    ) in problems
    assert f"gpuPools: {len(cfg.gpu_pools)} pool(s) on a cloud that does not exist" in stack_warnings(cfg)


def test_a_failure_in_a_clouds_rules_reaches_the_caller(fake: None) -> None:
    cfg = _on_fake("gcp-dev")
    broken = RuntimeError("the fake cloud's rules broke")
    with fake_provider.CLOUD.fail("config_rules", broken), pytest.raises(RuntimeError) as caught:
        validate_stack(cfg)
    assert caught.value is broken  # not swallowed, not turned into a config problem
    # Once the failure is lifted, the same check runs to its problems.
    assert f"cluster.region: {cfg.cluster.region!r} is not a fake region; allowed: fake-<name>" in validate_stack(cfg)


def test_a_failure_in_a_clouds_reader_stops_the_report(fake: None) -> None:
    group = _node_group("gpu-spot", spot=True)
    preview = Preview("p", "s", [group], {}, {})
    with (
        fake_provider.CLOUD.fail("reader", RuntimeError("reader down")),
        pytest.raises(RuntimeError, match="reader down"),
    ):
        report.pool_rows(preview)
    assert "reader" in fake_provider.CLOUD.calls


def _node_group(name: str, *, spot: bool, instance_type: str = "fake/gpu1", pool: str = "gpu") -> CapturedResource:
    inputs = {
        "name": name,
        "instanceType": instance_type,
        "spot": spot,
        "minSize": 0,
        "maxSize": 4,
        "region": "fake-north",
        "zones": ["fake-north-a"],
        "labels": {POOL_LABEL: pool},
        "taints": [str(GPU_TAINT)],
    }
    return CapturedResource(FAKE_NODE_GROUP, name, f"urn:{name}", f"id-{name}", None, True, inputs)


def test_the_reader_feeds_the_policy_rules_and_the_report(fake: None) -> None:
    group = _node_group("gpu-spot", spot=False)
    [view] = node_group_reading.pools_of(FAKE_NODE_GROUP, group.name, group.inputs)
    assert (view.cloud, view.pool, view.gpu, view.spot, view.max_size) == ("fake", "gpu", True, False, 4)

    # spot-pool-is-spot: named spot, billed on-demand; the fix is the fake's own words.
    reported: list[str] = []
    args = SimpleNamespace(resource_type=FAKE_NODE_GROUP, name=group.name, props=group.inputs)
    # A stand-in for ResourceValidationArgs with the three fields the rule reads.
    validate_really_spot(args, lambda message, urn: reported.append(message))  # type: ignore[arg-type]
    assert reported == ["Pool 'gpu-spot' is labelled or named spot but is billed on-demand: set spot: true."]

    # Where it bills, read by the fake's region reader.
    resource = node_group_view.Resource(FAKE_NODE_GROUP, group.name, group.inputs)
    assert [p.region for p in node_group_reading.resource_pools(resource, [resource])] == ["fake-north"]

    # The preview's Pools table.
    preview = Preview("p", "s", [group], {}, {})
    assert [(p.node_group, p.capacity, p.instance_types, p.zones) for p in report.pool_rows(preview)] == [
        ("gpu-spot", "on-demand", ["fake/gpu1"], ["fake-north-a"])
    ]


def _preview(config: dict[str, Any]) -> Preview:
    contract = WorkloadContract(pool="gpu", taints=(GPU_TAINT,), node_selector={POOL_LABEL: "gpu"})
    component = CapturedResource(
        SPOT_GPU_POOL, "gpu", "urn:gpu", None, None, False, {CONTRACT_INPUT: contract.to_json(), PROMISE_INPUT: 20.0}
    )
    groups = [_node_group("gpu-spot", spot=True), _node_group("gpu-ondemand", spot=False)]
    return Preview("p", "s", [component, *groups], {}, config)


def test_the_simulation_times_a_fake_node_group_with_the_fake_timing_model(fake: None) -> None:
    [outcome] = simulate(_preview({}))
    assert (outcome.pool, outcome.reaches, outcome.first_choice, outcome.fallback) == (
        "gpu",
        True,
        "gpu-spot",
        "gpu-ondemand",
    )
    assert outcome.max_minutes_to_fallback == 20.0
    assert outcome.minutes_to_zero == 10.0
    # The fake's timing model (a failed launch is seen only at max-node-provision-time) sets the figure.
    assert outcome.minutes_to_fallback == Minutes(15.68, 16.0)
    assert outcome.evidence == Evidence("docs", "the fake cloud's autoscaler page")
    [faster] = simulate(_preview({"fake:maxNodeProvisionMinutes": 5}))
    assert faster.minutes_to_fallback == Minutes(5.68, 6.0)


def test_a_pod_without_the_gpu_taints_toleration_reaches_no_fake_group(fake: None) -> None:
    manifest = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {GPU_RESOURCE: 1}}}]},
    }
    [outcome] = simulate(_preview({}), manifest)
    assert not outcome.reaches
    assert outcome.reason is not None and "gpu-spot" in outcome.reason


FAKE_PROGRAM = """
import pulumi
import pulumi_kubernetes as k8s

from elastic_gpu import GeneralPool, GeneralPoolArgs, GpuSpec, SpotGpuPool, SpotGpuPoolArgs


class FakeCluster:
    cloud = "fake"
    cluster_name = pulumi.Output.from_input("c")
    zones = ["fake-north-a"]
    kubernetes_version = "1.33"
    tags = {}
    zone_group = "north"

    def __init__(self):
        self.provider = k8s.Provider("k8s", kubeconfig="{}")


cluster = FakeCluster()
GeneralPool("general", GeneralPoolArgs(cluster=cluster, instance_types=["fake/medium"], min_size=1, max_size=3))
SpotGpuPool(
    "gpu",
    SpotGpuPoolArgs(
        cluster=cluster,
        instance_types=["fake/gpu1"],
        gpu_spec=GpuSpec("t4", 1, 8, 32),
        max_size=2,
        on_demand_fallback=True,
    ),
)
"""


def test_the_components_build_through_the_fake_builders(fake: None, run_program: Any) -> None:
    preview = run_program(FAKE_PROGRAM)
    # The components asked the handle's cloud for its pool builder (GeneralPool and SpotGpuPool).
    assert fake_provider.CLOUD.calls.count("pool_builder") >= 2
    groups = [(r.name, r.inputs["instanceType"], r.inputs["spot"]) for r in preview.of_type(FAKE_NODE_GROUP)]
    assert groups == [("general", "fake/medium", False), ("gpu", "fake/gpu1", True)]
    [pool] = preview.of_type(SPOT_GPU_POOL)
    # The fake's default promise and its workload contract, recorded by the cloud-neutral component.
    assert pool.inputs[PROMISE_INPUT] == 20.0
    assert pool.inputs[CONTRACT_INPUT]["nodeSelector"] == {POOL_LABEL: "gpu"}


INCOMPLETE = """
from elastic_gpu.provider import CloudProvider


class Incomplete:
    name = "incomplete"
    owner = "an incomplete"


PROVIDER: CloudProvider = Incomplete()
"""


#: The modules that declare `CloudProvider`'s parts (each layer's own protocol and records, elastic_gpu/provider.py).
#: The type checker reads them with the files under test; their own errors (their imports read as Any) are
#: `make typecheck`'s to report, not this test's.
SEAM = ("provider.py", "cloud_facts.py", "clouds.py", "config.py", "pool_args.py", "cluster_autoscaler.py")


def _type_check(tmp_path: Path, *files: Path) -> tuple[list[str], int]:
    """mypy --strict on `files` and the seam's modules alone (every other import read as Any): the error lines
    about `files`, and the exit status."""
    api = pytest.importorskip("mypy.api")
    flags = ["--strict", "--follow-imports=skip", "--ignore-missing-imports", "--no-error-summary"]
    # (a skipped module's record reads as Any: returning it is no error here)
    flags += ["--no-warn-return-any", "--cache-dir", str(tmp_path / "cache")]
    out, _, status = api.run([*flags, *(str(PACKAGE / f) for f in SEAM), *map(str, files)])
    shown = {str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else str(f) for f in files}
    return [line for line in out.splitlines() if line.split(":")[0] in shown], status


def test_the_type_checker_holds_a_provider_to_the_protocol(tmp_path: Path) -> None:
    (tmp_path / "incomplete.py").write_text(INCOMPLETE)
    files = [PACKAGE / "tools" / "clouds.py", ROOT / "tests" / "fake_provider.py"]
    # Only these files and the seam (the modules they import read as Any): the members and their arity are what
    # is checked.
    errors, _ = _type_check(tmp_path, *files)
    assert errors == []  # the fake is a CloudProvider and a ToolCloud
    errors, status = _type_check(tmp_path, *files, tmp_path / "incomplete.py")
    assert status == 1
    line = INCOMPLETE.splitlines().index("PROVIDER: CloudProvider = Incomplete()") + 1
    assert errors[0].endswith(
        f'incomplete.py:{line}: error: Incompatible types in assignment (expression has type "Incomplete", '
        'variable has type "CloudProvider")  [assignment]'
    )


@pytest.mark.parametrize(
    ("cloud", "member"), [("aws", "pool_builder"), ("azure", "stack_builder"), ("gcp", "autoscaler_builder")]
)
def test_the_type_checker_fails_a_cloud_whose_provider_lacks_a_member(cloud: str, member: str, tmp_path: Path) -> None:
    # Each layer asks its own part of a cloud (config.StackCloud, pool_args.PoolCloud, ...); the cloud's one
    # class is held to all of them at once, by its `PROVIDER: CloudProvider` annotation.
    source = (PACKAGE / cloud / "provider.py").read_text()
    assert source.count(f"    def {member}(self)") == 1  # the member is there: a test that edits nothing fails
    (tmp_path / "whole.py").write_text(source)
    errors, _ = _type_check(tmp_path, tmp_path / "whole.py")
    assert errors == []
    # the member renamed away, as if deleted
    (tmp_path / "lacking.py").write_text(source.replace(f"    def {member}(self)", f"    def _deleted_{member}(self)"))
    errors, status = _type_check(tmp_path, tmp_path / "lacking.py")
    assert status == 1
    assert any("Incompatible types in assignment" in e and '"CloudProvider"' in e for e in errors), errors
