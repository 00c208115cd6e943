"""Every setting is declared once: the stack file's sections and the components' Args share one model per
section; each cloud's own settings are a part of its folder; each pool's rules run once."""

from __future__ import annotations

import ast
import subprocess
import sys
from typing import Any

import pytest

from elastic_gpu import compose, config, general_pool, settings, spot_gpu_pool
from elastic_gpu.cluster_autoscaler import ClusterAutoscalerArgs
from elastic_gpu.compose import PlannedCluster
from elastic_gpu.config import GeneralPoolConfig, GpuPoolConfig, StackConfig, load_stack_config
from elastic_gpu.errors import ConfigError, problem
from elastic_gpu.general_pool import GeneralPoolArgs
from elastic_gpu.settings import CLOUD_ONLY_POOL_SETTINGS, AutoscalerSettings, GeneralPoolSettings, GpuPoolSettings
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs, spot_gpu_pool_problems
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import PACKAGE, ROOT, stack_values

P = "elastic-gpu:"
#: What a stack file and a program give a pool differently: a stack file may pick the types from `gpu` (so
#: `instanceTypes` is optional) and writes `gpuSpec` as a mapping; a program gives the resolved values.
RESOLVED = {"instance_types", "gpu_spec"}


def _declared_in(models: list[type], name: str) -> set[type]:
    return {k for m in models for k in m.__mro__ if name in vars(k).get("__annotations__", {})}


@pytest.mark.parametrize(
    ("section", "stack_model", "args"),
    [
        (GpuPoolSettings, GpuPoolConfig, SpotGpuPoolArgs),
        (GeneralPoolSettings, GeneralPoolConfig, GeneralPoolArgs),
        (AutoscalerSettings, config.AutoscalerConfig, ClusterAutoscalerArgs),
    ],
)
def test_a_setting_is_declared_once_for_the_stack_file_and_the_args(section, stack_model, args) -> None:
    shared = set(stack_model.model_fields) & set(args.model_fields)
    assert set(section.model_fields) <= shared
    for name in shared - RESOLVED:
        # one class declares it, that both build on: one type, one default, one docstring
        [owner] = _declared_in([stack_model, args], name)
        assert issubclass(stack_model, owner) and issubclass(args, owner), name
        stack_field, args_field = stack_model.model_fields[name], args.model_fields[name]
        assert stack_field.description and stack_field.description == args_field.description, name
        assert stack_field.default == args_field.default, name


#: The settings the clusters', Karpenter's, the device plugin's and Kueue's Args share with a stack file's section
#: (by the stack file's name; the Args' other spellings, such as `cluster_name` for `cluster.name`, are theirs).
SHARED_WITH_THE_ARGS = {
    ("ClusterConfig", "EksClusterArgs"): {
        "region", "zones", "kubernetes_version", "network_cidr", "protect", "nat_gateways", "ecr_endpoints",
    },
    ("ClusterConfig", "AksClusterArgs"): {
        "zones", "kubernetes_version", "protect", "network_plugin", "subnet_id", "api_server_subnet_id",
        "maintenance_window", "service_cidr", "dns_service_ip", "pod_cidr",
    },
    ("AutoscalerConfig", "AksClusterArgs"): {
        "scale_down_unneeded_time", "scale_down_delay_after_add", "max_node_provision_time", "expander",
    },
    ("ClusterConfig", "GkeClusterArgs"): {
        "project", "region", "zones", "kubernetes_version", "protect", "release_channel", "private_nodes", "regional",
        "control_plane_cidr", "network", "subnetwork", "cloud_nat", "node_service_account", "enable_services",
    },
    ("ClusterConfig", "KarpenterArgs"): {"spot_service_linked_role"},
    ("DevicePluginConfig", "NvidiaDevicePluginArgs"): {"time_slicing_replicas"},
    ("KueueConfig", "KueueDwsArgs"): {"queue_namespaces"},
}  # fmt: skip
#: Declared on both: a program must give the GKE project, which a stack file's model leaves optional (its
#: `cluster` serves every cloud; gcp/config_rules.py requires it there).
NARROWER_IN_THE_ARGS = {("GkeClusterArgs", "project")}


def _section_args() -> list[tuple[type, type]]:
    from elastic_gpu.aws.cluster import EksClusterArgs
    from elastic_gpu.aws.karpenter.controller import KarpenterArgs
    from elastic_gpu.azure.cluster import AksClusterArgs
    from elastic_gpu.gcp.cluster import GkeClusterArgs
    from elastic_gpu.gcp.kueue import KueueDwsArgs
    from elastic_gpu.nvidia_device_plugin import NvidiaDevicePluginArgs

    found = {c.__name__: c for c in (EksClusterArgs, AksClusterArgs, GkeClusterArgs, KarpenterArgs, KueueDwsArgs)}
    found["NvidiaDevicePluginArgs"] = NvidiaDevicePluginArgs
    return [(getattr(config, stack), found[args]) for stack, args in SHARED_WITH_THE_ARGS]


@pytest.mark.parametrize(("stack_model", "args"), _section_args(), ids=lambda c: c.__name__)
def test_the_clusters_karpenters_device_plugins_and_kueues_settings_are_declared_once(stack_model, args) -> None:
    shared = set(stack_model.model_fields) & set(args.model_fields)
    assert shared == SHARED_WITH_THE_ARGS[(stack_model.__name__, args.__name__)]
    for name in shared:
        if (args.__name__, name) in NARROWER_IN_THE_ARGS:
            continue
        # one class declares it, that both build on: one type, one default, one bound, one docstring
        [owner] = _declared_in([stack_model, args], name)
        assert issubclass(stack_model, owner) and issubclass(args, owner), name
        stack_field, args_field = stack_model.model_fields[name], args.model_fields[name]
        assert stack_field.description and stack_field.description == args_field.description, name
        assert stack_field.get_default(call_default_factory=True) == args_field.get_default(call_default_factory=True)


def test_a_stack_file_and_a_program_name_kueues_namespaces_each_their_way() -> None:
    from elastic_gpu.gcp.kueue import KueueDwsArgs

    assert config.KueueConfig.model_validate({"namespaces": ["ml"]}).queue_namespaces == ["ml"]
    assert KueueDwsArgs(provider=None, quota={}, queue_namespaces=["ml"]).queue_namespaces == ["ml"]  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'namespaces'"):
        KueueDwsArgs(provider=None, quota={}, namespaces=["ml"])  # type: ignore[arg-type,call-arg]


def test_the_cluster_args_take_keywords_and_say_what_is_missing() -> None:
    from elastic_gpu.aws.cluster import EksClusterArgs

    with pytest.raises(TypeError, match=r"EksClusterArgs\(\) takes keyword arguments only"):
        EksClusterArgs("c", "us-east-1", ["us-east-1a"], "1.35")  # type: ignore[misc]  # what the test is about
    with pytest.raises(TypeError, match=r"missing required keyword argument\(s\): 'kubernetes_version'"):
        EksClusterArgs(cluster_name="c", region="us-east-1", zones=["us-east-1a"])  # type: ignore[call-arg]


def test_each_clouds_own_pool_settings_are_declared_in_its_folder() -> None:
    assert CLOUD_ONLY_POOL_SETTINGS == {
        "ami_family": ("aws", "al2023"),
        "spot_max_price": ("azure", None),
        "gpu_driver_version": ("gcp", "DEFAULT"),
        "queued_provisioning": ("gcp", False),
        "max_run_hours": ("gcp", None),
    }
    for name, (cloud, _) in CLOUD_ONLY_POOL_SETTINGS.items():
        [owner] = _declared_in([GpuPoolSettings], name)
        assert owner.__module__ == f"elastic_gpu.settings.{cloud}", name
    # a program's GCP pool also says how many GPUs an N1 node gets (a stack file: gpusPerNode)
    assert spot_gpu_pool.ARGS_CLOUD_ONLY_SETTINGS["gpu_count"] == ("gcp", None)


def test_another_clouds_setting_is_refused_in_the_stack_file_and_in_the_args() -> None:
    values = stack_values("aws-dev")
    values[P + "gpuPools"][0]["maxRunHours"] = 24
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    assert "gpuPools[0].maxRunHours: a GCP-only setting; remove it for cloud 'aws' (got 24)" in str(exc.value)
    handle = PlannedCluster("aws", "c", ["us-east-1a"], "1.35", {})
    args = SpotGpuPoolArgs(cluster=handle, instance_types=["g5.xlarge"], max_size=2, max_run_hours=24)
    assert "SpotGpuPool 'p': SpotGpuPoolArgs.max_run_hours: a GCP-only setting; remove it for cloud 'aws' (got 24)" in (
        spot_gpu_pool_problems("p", args)
    )


def test_one_rule_speaks_the_stack_files_words_and_the_programs() -> None:
    values = stack_values("aws-dev")
    values[P + "gpuPools"][0].update(onDemandFallback=False, fallbackMaxSize=2)
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    assert (
        "gpuPools[0].fallbackMaxSize: only a pool with onDemandFallback has a fallback "
        "(got fallbackMaxSize=2, onDemandFallback=false)"
    ) in str(exc.value)
    handle = PlannedCluster("aws", "c", ["us-east-1a"], "1.35", {})
    args = SpotGpuPoolArgs(cluster=handle, instance_types=["g5.xlarge"], max_size=2, fallback_max_size=2)
    assert (
        "SpotGpuPool 'p': SpotGpuPoolArgs.fallback_max_size: only a pool with on_demand_fallback has a fallback "
        "(got fallback_max_size=2, on_demand_fallback=False)"
    ) in spot_gpu_pool_problems("p", args)


def test_each_pool_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pools = len(load_stack_config(stack_values("aws-prod")).gpu_pools)
    calls: list[str] = []

    def counting(module: Any, name: str) -> None:
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, **k: calls.append(name) or real(*a, **k))

    # the settings' rules (through the stack config) and the components' own (in the pass before anything
    # is declared, and in each component)
    counting(config, "gpu_pool_settings_problems")
    counting(config, "general_pool_settings_problems")
    counting(spot_gpu_pool, "gpu_pool_settings_problems")
    counting(general_pool, "general_pool_settings_problems")
    counting(compose, "spot_gpu_pool_problems")
    counting(spot_gpu_pool, "spot_gpu_pool_problems")
    counting(compose, "general_pool_problems")
    counting(general_pool, "general_pool_problems")
    preview = run_preview("aws-prod", ROOT)
    assert len([r for r in preview.resources if r.type == spot_gpu_pool.TYPE_TOKEN]) == pools
    assert sorted(calls) == sorted(
        ["gpu_pool_settings_problems", "spot_gpu_pool_problems"] * pools
        + ["general_pool_settings_problems", "general_pool_problems"]
    )


def test_a_components_problem_is_named_by_the_config_path_of_its_field() -> None:
    from elastic_gpu.aws.stack import pool_args

    cfg = load_stack_config(stack_values("aws-prod"))
    where = spot_gpu_pool.problem_prefix("training")
    mixed = problem(where, "mixed_gpu_models", "x")
    assert compose.config_path("gpuPools[1]", GpuPoolConfig, mixed) == "gpuPools[1].mixedGpuModels"
    sharing = problem(where, "gpu_sharing_replicas", "x")
    assert compose.config_path("gpuPools[1]", GpuPoolConfig, sharing) == "devicePlugin.timeSlicingReplicas"
    # A rule only the component has (its node groups' count), over the pool made from the stack file.
    small = cfg.gpu_pools[0].model_copy(update={"max_size": 1, "per_zone": True})
    few = cfg.model_copy(update={"gpu_pools": [small, *cfg.gpu_pools[1:]]})
    assert any(
        p.startswith(f"gpuPools[0].maxSize (SpotGpuPool '{small.name}': SpotGpuPoolArgs.max_size: it is the total")
        for p in compose.args_problems(few, compose.plan_pools(few, lambda p: pool_args(cfg, p)))
    )


def test_args_take_keywords_and_say_what_is_wrong() -> None:
    handle = PlannedCluster("aws", "c", ["us-east-1a"], "1.35", {})
    with pytest.raises(TypeError, match=r"SpotGpuPoolArgs\(\) takes keyword arguments only"):
        SpotGpuPoolArgs(handle, ["g5.xlarge"], 2)  # type: ignore[misc]  # what the test is about
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'max_nodes'"):
        SpotGpuPoolArgs(cluster=handle, instance_types=["g5.xlarge"], max_nodes=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"missing required keyword argument\(s\): 'max_size'"):
        SpotGpuPoolArgs(cluster=handle, instance_types=["g5.xlarge"])  # type: ignore[call-arg]
    # a bad value is the component's to report, with every other problem, before anything is declared
    args = SpotGpuPoolArgs(cluster=handle, instance_types=["g5.xlarge"], max_size="4")  # type: ignore[arg-type]
    assert spot_gpu_pool_problems("p", args) == [
        "SpotGpuPool 'p': SpotGpuPoolArgs.max_size: must be an integer, got str '4'"
    ]


def test_the_stack_files_schema_carries_each_settings_type_bounds_and_meaning() -> None:
    schema = StackConfig.model_json_schema(by_alias=True)
    pool = schema["$defs"]["GpuPoolConfig"]
    props = pool["properties"]
    assert pool["additionalProperties"] is False and set(pool["required"]) == {"name", "maxSize"}
    assert props["maxSize"]["maximum"] == settings.MAX_NODES
    assert props["amiFamily"]["enum"] == ["al2023", "bottlerocket"]
    assert props["amiFamily"]["description"].startswith("AWS only:")
    assert props["minSize"]["description"] == SpotGpuPoolArgs.model_fields["min_size"].description
    assert schema["$defs"]["AutoscalerConfig"]["properties"]["expander"]["default"] == ["priority", "least-waste"]


def test_a_default_list_is_each_args_own() -> None:
    handle = PlannedCluster("aws", "c", ["us-east-1a"], "1.35", {})
    first = ClusterAutoscalerArgs(cluster=handle, gpu_pools=[])
    first.expander.append("random")
    assert ClusterAutoscalerArgs(cluster=handle, gpu_pools=[]).expander == ["priority", "least-waste"]


def test_validation_imports_no_config() -> None:
    source = (PACKAGE / "validation.py").read_text()
    imported = [node.module for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom) and node.module]
    assert not [m for m in imported if m.startswith(("elastic_gpu.config", "elastic_gpu.settings"))]
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, elastic_gpu.validation; print('elastic_gpu.config' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert loaded.stdout.strip() == "False"
