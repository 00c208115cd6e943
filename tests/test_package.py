"""The components as a Pulumi component package: the schema generated from the Args, served over gRPC, valid
against Pulumi's package meta-schema, and Construct building what the Python program builds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import jsonschema
import pytest
from google.protobuf import empty_pb2, json_format
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc
from pydantic.alias_generators import to_camel

from elastic_gpu.__main__ import main
from elastic_gpu._version import __version__
from elastic_gpu.aks_cluster import AksClusterArgs
from elastic_gpu.config import GpuSpecConfig
from elastic_gpu.eks_cluster import EksClusterArgs
from elastic_gpu.files import json_text
from elastic_gpu.gke_cluster import GkeClusterArgs
from elastic_gpu.package.fields import argument_docs, fields_of
from elastic_gpu.package.provider import BUILDERS, python_value
from elastic_gpu.package.schema import COMPONENTS, SCHEMA_FILE, _Schema, in_schema_names, package_schema
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs
from elastic_gpu.tools.offline.runner import WIRE_SECRET_SIG, WIRE_SIG_KEY, Preview, run_preview
from tests.conftest import ROOT

SHIPPED = ROOT / SCHEMA_FILE
META_SCHEMA = ROOT / "tests" / "data" / "pulumi" / "pulumi.json"
POOL = "elastic-gpu:index:SpotGpuPool"
EKS = "elastic-gpu:index:ExistingEksCluster"
GENERAL = "elastic-gpu:index:GeneralPool"
AUTOSCALER = "elastic-gpu:index:ClusterAutoscaler"
AKS = "elastic-gpu:index:ExistingAksCluster"
GKE = "elastic-gpu:index:ExistingGkeCluster"
#: The components that create a cluster.
CREATED_CLUSTERS = ("elastic-gpu:index:EksCluster", "elastic-gpu:index:AksCluster", "elastic-gpu:index:GkeCluster")


def meta_validator() -> jsonschema.Draft202012Validator:
    # ECMA-262 named groups `(?<name>` are Python's `(?P<name>` (tests/data/pulumi/SOURCE.md).
    text = re.sub(r"\(\?<(?=[A-Za-z])", "(?P<", META_SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(json.loads(text))


# --- the schema ------------------------------------------------------------------------------------------


def test_the_shipped_schema_is_the_generated_one(tmp_path: Path) -> None:
    expected = json_text(package_schema())
    assert SHIPPED.read_text(encoding="utf-8") == expected, (
        f"{SCHEMA_FILE} is stale: run `python -m elastic_gpu schema package -o {SCHEMA_FILE}`"
    )
    out = tmp_path / "package.schema.json"
    assert main(["schema", "package", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == expected


def test_the_schema_satisfies_pulumis_package_meta_schema() -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in meta_validator().iter_errors(package_schema())]
    assert errors == []


def test_the_meta_schema_refuses_a_broken_schema() -> None:
    """The check can fail: a property without a type, and a token with no module part, are refused."""
    broken = package_schema()
    broken["resources"][POOL]["inputProperties"]["maxSize"] = {"type": "int"}
    assert list(meta_validator().iter_errors(broken)) != []
    broken = package_schema()
    broken["resources"]["elastic-gpu:SpotGpuPool"] = broken["resources"].pop(POOL)
    assert list(meta_validator().iter_errors(broken)) != []


def test_the_version_is_the_librarys() -> None:
    assert package_schema()["version"] == __version__


def test_every_setting_is_in_the_schema_or_named_python_only() -> None:
    """A new field of the Args lands in the package, or the component says why it cannot: none drops out."""
    resources = package_schema()["resources"]
    for component in COMPONENTS:
        names = {f.schema_name for f in component.inputs() if f.name not in component.python_only}
        assert set(resources[component.token]["inputProperties"]) == names
        assert set(component.python_only) <= {f.name for f in component.inputs()}
    assert set(BUILDERS) == {c.token for c in COMPONENTS}


def test_descriptions_are_the_field_docstrings() -> None:
    pool = package_schema()["resources"][POOL]
    for field in fields_of(SpotGpuPoolArgs):
        if field.name in ("provisioner", "node_config"):  # python-only: not in the package schema
            continue
        text = pool["inputProperties"][field.schema_name].get("description", "")
        assert field.description and text.startswith(in_schema_names(field.description)), field.name
    assert pool["inputProperties"]["minSize"]["description"].startswith("Default 0: the pool scales to zero")
    assert "`onDemandFallback`" in pool["description"] and "`on_demand_fallback`" not in pool["description"]
    assert pool["inputProperties"]["amiFamily"]["description"].endswith('One of: "al2023", "bottlerocket".')
    assert sorted(pool["requiredInputs"]) == ["cluster", "instanceTypes", "maxSize"]
    assert pool["inputProperties"]["cluster"] == {
        "oneOf": [
            {"$ref": f"#/resources/{handle}"}
            for pair in zip(CREATED_CLUSTERS, (EKS, AKS, GKE), strict=True)
            for handle in pair
        ],
        "description": "The cluster component (EksCluster, ...) the pool joins.",
    }
    assert pool["inputProperties"]["extraTaints"]["items"] == {"$ref": "#/types/elastic-gpu:index:Taint"}
    for handle in (EKS, GKE):  # credentials are secret in every SDK
        assert package_schema()["resources"][handle]["inputProperties"]["kubeconfig"]["secret"] is True
    for args in (EksClusterArgs, AksClusterArgs, GkeClusterArgs):  # a created cluster's settings: help()'s texts
        inputs = package_schema()["resources"][f"elastic-gpu:index:{args.__name__.removesuffix('Args')}"]
        for field in fields_of(args):
            text = inputs["inputProperties"][field.schema_name]["description"]
            assert field.description and text.startswith(in_schema_names(field.description)), field.name
            assert all(line in (args.__doc__ or "") for line in field.description.splitlines())  # help()'s
    for created in CREATED_CLUSTERS:  # and so is the kubeconfig a created cluster publishes
        resource = package_schema()["resources"][created]
        assert resource["properties"]["kubeconfig"]["secret"] is True
        assert {"clusterName", "kubeconfig", "zones", "kubernetesVersion", "provider"} <= set(resource["required"])
        assert all(spec.get("plain") for spec in resource["inputProperties"].values()), created
    for handle in (EKS, AKS, GKE):
        inputs = package_schema()["resources"][handle]["inputProperties"]
        assert inputs["kubernetesVersion"]["plain"] is True
        assert [name for name, p in inputs.items() if not p.get("description")] == [], handle


def test_argument_docs_reads_the_arguments_paragraph() -> None:
    docs = argument_docs("Intro.\n\nArguments: `a` (the a (with parens)); `b` / `c` (shared\ntext).\n\nMore.")
    assert docs == {"a": "The a (with parens).", "b": "Shared text.", "c": "Shared text."}


def test_fields_read_a_pydantic_model_too() -> None:
    """The settings may become pydantic models: the adapter reads them, the schema spells them and the provider
    builds them the same way as the dataclasses."""
    fields = {f.name: f for f in fields_of(GpuSpecConfig)}
    assert fields["count"].annotation is int and fields["count"].required
    assert fields["model"].description and fields["model"].description.startswith("A GPU model the catalog knows")
    assert fields["memory_gib"].schema_name == "memoryGib"
    generator = _Schema()
    assert generator.type_spec(GpuSpecConfig | None, "x") == ({"$ref": "#/types/elastic-gpu:index:GpuSpecConfig"}, True)
    spelled = generator.types["elastic-gpu:index:GpuSpecConfig"]
    assert spelled["required"] == ["model", "count", "vcpus", "memoryGib"]
    assert spelled["properties"]["count"] == {"type": "integer", "description": "GPUs per node."}
    wired = {"model": "h100", "count": 8.0, "vcpus": 192.0, "memoryGib": 2048.0}  # the wire's doubles
    assert python_value(GpuSpecConfig | None, wired) == GpuSpecConfig(model="h100", count=8, vcpus=192, memory_gib=2048)


# --- GetSchema over gRPC, as the engine calls it -----------------------------------------------------------


@pytest.fixture(scope="module")
def served() -> Any:
    """The provider as the engine starts it: a process that prints its port (the engine address is unused
    until a Construct)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "elastic_gpu.package", "127.0.0.1:1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline().decode().strip())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield provider_pb2_grpc.ResourceProviderStub(channel)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_get_schema_over_grpc_is_the_shipped_schema(served: Any) -> None:
    response = served.GetSchema(provider_pb2.GetSchemaRequest(version=0), timeout=60)
    assert json.loads(response.schema) == json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert served.GetPluginInfo(empty_pb2.Empty(), timeout=60).version == __version__


# --- Construct: the same children as the Python program ---------------------------------------------------

CLUSTER = {
    "clusterName": "prod-a",
    "region": "us-east-1",
    "kubernetesVersion": "1.33",
    "nodeRoleArn": "arn:aws:iam::123456789012:role/prod-a-nodes",
    "subnetIds": {"us-east-1a": "subnet-1", "us-east-1b": "subnet-2"},
    "oidcProviderArn": "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC",
    "oidcProviderUrl": "https://oidc.eks.us-east-1.amazonaws.com/id/ABC",
}
POOL_INPUTS = {
    "instanceTypes": ["g6.xlarge", "g5.xlarge"],
    "mixedGpuModels": True,
    "maxSize": 4,
    "onDemandFallback": True,
    "maxMinutesToFallback": 12,
    "extraTaints": [{"key": "team", "value": "ml", "effect": "NoExecute"}],
    "extraLabels": {"team": "ml"},
    "diskSizeGib": 200,
    "tags": {"cost-center": "ml"},
}

PYTHON_PROGRAM = """
import json
from elastic_gpu import EksCluster, SpotGpuPool, SpotGpuPoolArgs
from elastic_gpu.scheduling import Taint
from pydantic.alias_generators import to_snake

cluster = EksCluster.existing("prod-a", **{to_snake(k): v for k, v in json.loads(CLUSTER).items()})
inputs = {to_snake(k): v for k, v in json.loads(POOL).items()}
inputs["extra_taints"] = [Taint(**t) for t in inputs.get("extra_taints", [])]
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, **inputs))
"""

PACKAGE_PROGRAM = """
import json
import pulumi
from elastic_gpu.package.provider import ElasticGpuProvider, _Handles

provider = ElasticGpuProvider()
cluster = provider.construct("prod-a", "elastic-gpu:index:ExistingEksCluster", json.loads(CLUSTER))

def pool(urn):
    # The engine sends the pool's `cluster` as a resource reference; the SDK resolves it through the
    # package's resource module, as here.
    handle = _Handles().construct("prod-a", "elastic-gpu:index:ExistingEksCluster", urn)
    result = provider.construct("l4", "elastic-gpu:index:SpotGpuPool", {"cluster": handle, **json.loads(POOL)})
    pulumi.export("state", result.state)
    return result.urn

pulumi.Output.from_input(cluster.urn).apply(pool)
pulumi.export("cluster", cluster.state)
"""


def _program(
    tmp_path: Path, name: str, source: str, pool: dict[str, Any], config: dict[str, str] | None = None
) -> Preview:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "Pulumi.yaml").write_text("name: consumer\nruntime: python\n")
    (directory / "Pulumi.test.yaml").write_text(json.dumps({"config": config or {"aws:region": "us-east-1"}}))
    text = source.replace("json.loads(CLUSTER)", f"json.loads({json.dumps(json.dumps(CLUSTER))})")
    (directory / "__main__.py").write_text(
        text.replace("json.loads(POOL)", f"json.loads({json.dumps(json.dumps(pool))})")
    )
    return run_preview("test", directory)


def _resources(preview: Preview) -> list[str]:
    return sorted(json.dumps(r.to_json(), sort_keys=True) for r in preview.resources)


def test_construct_declares_what_the_python_program_declares(tmp_path: Path) -> None:
    python = _program(tmp_path, "python", PYTHON_PROGRAM, POOL_INPUTS)
    package = _program(tmp_path, "package", PACKAGE_PROGRAM, POOL_INPUTS)
    assert len(python.resources) >= 8  # the handle, its Kubernetes provider, the pool and its node groups
    types = {r.type for r in package.resources}
    assert {EKS, POOL, "aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate"} <= types
    assert _resources(package) == _resources(python)
    state = package.outputs["state"].value
    assert state["poolName"] == "l4"
    assert {"key": "team", "value": "ml", "effect": "NoExecute"} in state["taints"]
    assert len(state["nodeGroupNames"]) == 4  # spot and fallback in each of the two zones
    assert package.outputs["cluster"].value["zones"] == ["us-east-1a", "us-east-1b"]


def test_construct_refuses_bad_input_with_the_python_message(tmp_path: Path) -> None:
    bad = {**POOL_INPUTS, "maxSize": 1, "minSize": 3}
    with pytest.raises(Exception) as python:
        _program(tmp_path, "python", PYTHON_PROGRAM, bad)
    with pytest.raises(Exception) as package:
        _program(tmp_path, "package", PACKAGE_PROGRAM, bad)
    message = "SpotGpuPool 'l4': SpotGpuPoolArgs.max_size: must be >= min_size (got min_size=3, max_size=1)"
    assert message in str(python.value)
    assert message in str(package.value)


def test_construct_names_an_unknown_input(tmp_path: Path) -> None:
    with pytest.raises(Exception) as raised:
        _program(tmp_path, "package", PACKAGE_PROGRAM, {**POOL_INPUTS, "maxSzie": 4})
    assert "SpotGpuPool 'l4': maxSzie: unknown input; allowed: " in str(raised.value)
    assert to_camel("max_size") in str(raised.value)


# --- Construct over gRPC, as the engine drives it ---------------------------------------------------------


@pytest.fixture
def engine() -> Any:
    from tests.grpc_engine import Engine

    started = Engine("consumer", "test", {"aws:region": "us-east-1"})
    try:
        yield started
    finally:
        started.close()


def test_construct_over_grpc_declares_what_the_python_program_declares(engine: Any, tmp_path: Path) -> None:
    from tests.grpc_engine import reference

    cluster = engine.construct(EKS, "prod-a", CLUSTER, {})
    pool = engine.construct(POOL, "l4", {"cluster": reference(cluster.urn), **POOL_INPUTS}, {"cluster": [cluster.urn]})
    python = _program(tmp_path, "python", PYTHON_PROGRAM, POOL_INPUTS)
    served = sorted(json.dumps(r.to_json(), sort_keys=True) for r in engine.captured)
    assert served == [r for r in _resources(python) if '"type": "pulumi:pulumi:Stack"' not in r]
    assert len(served) >= 10
    state = json_format.MessageToDict(pool.state)
    assert state["poolName"] == "l4" and len(state["nodeGroupNames"]) == 4
    assert json_format.MessageToDict(cluster.state)["zones"] == ["us-east-1a", "us-east-1b"]
    # The Python path's warnings reach the engine too (the minor's end of standard support).
    assert [w for w in python.warnings if "end of standard support" in w]
    assert [m for m in engine.engine.messages if "end of standard support" in m]


def test_construct_over_grpc_refuses_bad_input_with_the_python_message(engine: Any) -> None:
    from tests.grpc_engine import reference

    cluster = engine.construct(EKS, "prod-a", CLUSTER, {})
    bad = {"cluster": reference(cluster.urn), **POOL_INPUTS, "maxSize": 1, "minSize": 3}
    with pytest.raises(grpc.RpcError) as raised:
        engine.construct(POOL, "l4", bad, {"cluster": [cluster.urn]})
    assert "SpotGpuPool 'l4': SpotGpuPoolArgs.max_size: must be >= min_size (got min_size=3, max_size=1)" in (
        raised.value.details()
    )
    assert sorted(r.type for r in engine.captured) == sorted([EKS, "pulumi:providers:kubernetes"])  # no pool


def test_construct_over_grpc_refuses_a_cluster_it_did_not_build(engine: Any) -> None:
    from tests.grpc_engine import reference

    elsewhere = "urn:pulumi:test::consumer::pulumi:pulumi:Stack$elastic-gpu:index:ExistingEksCluster::other"
    with pytest.raises(grpc.RpcError) as raised:
        engine.construct(POOL, "l4", {"cluster": reference(elsewhere), **POOL_INPUTS}, {"cluster": [elsewhere]})
    assert "invalid resource reference (1 problem(s))" in raised.value.details()
    assert (
        "elastic-gpu:index:ExistingEksCluster 'other': a resource reference this provider cannot use: it was not "
        "declared with the elastic-gpu package in this program; declare it there (one of "
        f"elastic-gpu:index:AksCluster, elastic-gpu:index:EksCluster, {AKS}, {EKS}, {GKE}, "
        f"elastic-gpu:index:GeneralPool, elastic-gpu:index:GkeCluster, {POOL})"
    ) in raised.value.details()


#: A pool on an existing AKS and GKE cluster: (handle type, its Python class, its inputs, the pool's, the config).
OTHER_CLOUDS: dict[str, tuple[str, str, dict[str, Any], dict[str, Any], dict[str, str]]] = {
    "azure": (
        AKS,
        "AksCluster",
        {
            "clusterName": "prod",
            "resourceGroupName": "prod-rg",
            "location": "eastus",
            "zones": ["1", "2"],
            "kubernetesVersion": "1.35",
            "tags": {"team": "ml"},
        },
        {"instanceTypes": ["Standard_NC4as_T4_v3"], "maxSize": 4, "onDemandFallback": True},
        {"azure-native:location": "eastus"},
    ),
    "gcp": (
        GKE,
        "GkeCluster",
        {
            "clusterName": "ml",
            "project": "acme-ml",
            "location": "us-central1",
            "zones": ["us-central1-a", "us-central1-b"],
            "kubernetesVersion": "1.35",
            "privateNodes": True,
        },
        {"instanceTypes": ["g2-standard-4"], "maxSize": 4, "onDemandFallback": True, "tags": {"team": "ml"}},
        {"gcp:project": "acme-ml"},
    ),
}

HANDLE_PROGRAM = """
import json
from pydantic.alias_generators import to_snake
from elastic_gpu import HANDLE, SpotGpuPool, SpotGpuPoolArgs

cluster = HANDLE.existing("prod", **{to_snake(k): v for k, v in json.loads(CLUSTER).items()})
SpotGpuPool("gpu", SpotGpuPoolArgs(cluster=cluster, **{to_snake(k): v for k, v in json.loads(POOL).items()}))
"""


@pytest.mark.parametrize("cloud", sorted(OTHER_CLOUDS))
def test_construct_over_grpc_on_aks_and_gke_declares_what_python_declares(cloud: str, tmp_path: Path) -> None:
    from tests.grpc_engine import Engine, reference

    handle, python_class, cluster_inputs, pool_inputs, config = OTHER_CLOUDS[cloud]
    source = HANDLE_PROGRAM.replace("HANDLE", python_class).replace(
        "json.loads(CLUSTER)", f"json.loads({json.dumps(json.dumps(cluster_inputs))})"
    )
    python = _program(tmp_path, "python", source, pool_inputs, config)
    engine = Engine("consumer", "test", config)
    try:
        cluster = engine.construct(handle, "prod", cluster_inputs, {})
        engine.construct(POOL, "gpu", {"cluster": reference(cluster.urn), **pool_inputs}, {"cluster": [cluster.urn]})
        served = sorted(json.dumps(r.to_json(), sort_keys=True) for r in engine.captured)
    finally:
        engine.close()
    assert served == [r for r in _resources(python) if '"type": "pulumi:pulumi:Stack"' not in r]
    assert {json.loads(r)["type"] for r in served} >= {handle, POOL, "pulumi:providers:kubernetes"}
    assert len(served) >= 5


AUTOSCALED_PROGRAM = """
import json
from pydantic.alias_generators import to_snake
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster, GeneralPool, GeneralPoolArgs,
                         SpotGpuPool, SpotGpuPoolArgs)

def snake(text):
    return {to_snake(k): v for k, v in json.loads(text).items()}

cluster = EksCluster.existing("prod-a", **snake(CLUSTER))
general = GeneralPool("general", GeneralPoolArgs(cluster=cluster, **snake(GENERAL)))
pool = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, **snake(POOL)))
ClusterAutoscaler("autoscaler", ClusterAutoscalerArgs(cluster=cluster, gpu_pools=[pool], general_pool=general,
                                                      **snake(AUTOSCALER)))
"""
GENERAL_INPUTS = {"instanceTypes": ["m6i.large", "m6a.large"], "maxSize": 3}
AUTOSCALER_INPUTS = {
    "scaleDownUnneededTime": "5m",
    "expander": ["priority", "least-waste"],
    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
}


def test_construct_over_grpc_an_autoscaler_over_pools_declares_what_python_declares(
    engine: Any, tmp_path: Path
) -> None:
    """Resource references to the package's own pools (`gpuPools`, `generalPool`) resolve to the pools built."""
    from tests.grpc_engine import reference

    source = AUTOSCALED_PROGRAM
    pool_inputs = {"instanceTypes": ["g6.xlarge"], "maxSize": 4, "onDemandFallback": True}
    named = {"CLUSTER": CLUSTER, "GENERAL": GENERAL_INPUTS, "POOL": pool_inputs, "AUTOSCALER": AUTOSCALER_INPUTS}
    for key, value in named.items():
        source = source.replace(f"snake({key})", f"snake({json.dumps(json.dumps(value))})")
    python = _program(tmp_path, "python", source, pool_inputs)
    cluster = engine.construct(EKS, "prod-a", CLUSTER, {})
    on_cluster = ({"cluster": reference(cluster.urn)}, {"cluster": [cluster.urn]})
    general = engine.construct(GENERAL, "general", {**on_cluster[0], **GENERAL_INPUTS}, on_cluster[1])
    pool = engine.construct(POOL, "l4", {**on_cluster[0], **pool_inputs}, on_cluster[1])
    autoscaler = engine.construct(
        AUTOSCALER,
        "autoscaler",
        {
            **on_cluster[0],
            "gpuPools": [reference(pool.urn)],
            "generalPool": reference(general.urn),
            **AUTOSCALER_INPUTS,
        },
        {**on_cluster[1], "gpuPools": [pool.urn], "generalPool": [general.urn]},
    )
    served = sorted(json.dumps(r.to_json(), sort_keys=True) for r in engine.captured)
    assert served == [r for r in _resources(python) if '"type": "pulumi:pulumi:Stack"' not in r]
    types = {json.loads(r)["type"] for r in served}
    assert {AUTOSCALER, "kubernetes:apps/v1:Deployment", "kubernetes:core/v1:ConfigMap", "aws:iam/role:Role"} <= types
    state = json_format.MessageToDict(autoscaler.state)
    assert state["serviceAccountName"] == "cluster-autoscaler" and state["image"].startswith("registry.k8s.io/")


DEVICE_PLUGIN_PROGRAM = """
import json
from pydantic.alias_generators import to_snake
from elastic_gpu import EksCluster, NvidiaDevicePlugin, NvidiaDevicePluginArgs, SpotGpuPool, SpotGpuPoolArgs

cluster = EksCluster.existing("prod-a", **{to_snake(k): v for k, v in json.loads(CLUSTER).items()})
pool = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g6.xlarge"], max_size=4))
plugin = NvidiaDevicePluginArgs(provider=cluster.provider, gpu_pools=[pool], time_slicing_replicas=2)
NvidiaDevicePlugin("nvidia", plugin)
"""


def test_construct_over_grpc_a_device_plugin_on_the_handles_provider_declares_what_python_declares(
    engine: Any, tmp_path: Path
) -> None:
    """The handle's `provider` output, passed back as the plugin's `provider` (as a TypeScript program passes
    `cluster.provider`), is the Kubernetes provider its objects are declared with."""
    from tests.grpc_engine import reference

    source = DEVICE_PLUGIN_PROGRAM.replace("json.loads(CLUSTER)", f"json.loads({json.dumps(json.dumps(CLUSTER))})")
    python = _program(tmp_path, "python", source, {})
    cluster = engine.construct(EKS, "prod-a", CLUSTER, {})
    provider = json_format.MessageToDict(cluster.state)["provider"]
    assert provider["urn"].endswith("pulumi:providers:kubernetes::prod-a-k8s")
    on_cluster = ({"cluster": reference(cluster.urn)}, {"cluster": [cluster.urn]})
    pool = engine.construct(POOL, "l4", {**on_cluster[0], "instanceTypes": ["g6.xlarge"], "maxSize": 4}, on_cluster[1])
    plugin = engine.construct(
        "elastic-gpu:index:NvidiaDevicePlugin",
        "nvidia",
        {"provider": provider, "gpuPools": [reference(pool.urn)], "timeSlicingReplicas": 2},
        {"provider": [provider["urn"]], "gpuPools": [pool.urn]},
    )
    served = sorted(json.dumps(r.to_json(), sort_keys=True) for r in engine.captured)
    assert served == [r for r in _resources(python) if '"type": "pulumi:pulumi:Stack"' not in r]
    types = {json.loads(r)["type"] for r in served}
    assert {"kubernetes:apps/v1:DaemonSet", "kubernetes:core/v1:ConfigMap"} <= types
    daemonset = next(json.loads(r) for r in served if '"kubernetes:apps/v1:DaemonSet"' in r)
    assert daemonset["options"]["provider"].startswith(provider["urn"] + "::")
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in (
        json_format.MessageToDict(plugin.state)["tolerations"]
    )


# --- the components that create a cluster, and a pool on one ------------------------------------------------

#: A created cluster and a spot pool on it: (its Python class, its settings, the pool's, the stack config).
CREATED: dict[str, tuple[str, dict[str, Any], dict[str, Any], dict[str, str]]] = {
    "aws": (
        "EksCluster",
        {
            "clusterName": "prod-a",
            "region": "us-east-1",
            "zones": ["us-east-1a", "us-east-1b"],
            "kubernetesVersion": "1.33",
            "natGateways": "single",
            "ecrEndpoints": True,
            "logTypes": ["api", "audit"],
            "publicAccessCidrs": ["203.0.113.0/24"],
            "karpenterDiscovery": True,
            "tags": {"team": "ml"},
        },
        {"instanceTypes": ["g6.xlarge"], "maxSize": 4, "onDemandFallback": True, "tags": {"cost-center": "ml"}},
        {"aws:region": "us-east-1"},
    ),
    "azure": (
        "AksCluster",
        {
            "clusterName": "prod",
            "location": "eastus",
            "zones": ["1", "2"],
            "kubernetesVersion": "1.35",
            "systemMinSize": 2,
            "systemCriticalAddonsOnly": True,
            "expander": ["least-waste", "priority"],
            "scaleDownUnneededTime": "5m",
            "authorizedIpRanges": ["203.0.113.0/24"],
            "tags": {"team": "ml"},
        },
        {"instanceTypes": ["Standard_NC4as_T4_v3"], "maxSize": 4, "onDemandFallback": True},
        {"azure-native:location": "eastus"},
    ),
    "gcp": (
        "GkeCluster",
        {
            "clusterName": "ml",
            "project": "acme-ml",
            "region": "us-central1",
            "zones": ["us-central1-a", "us-central1-b"],
            "kubernetesVersion": "1.35",
            "regional": True,
            "privateNodes": True,
            "authorizedNetworks": ["203.0.113.0/24"],
            "autoProvisioning": {"cpu": 64, "memoryGb": 256, "gpus": {"nvidia-l4": 8}},
            "tags": {"team": "ml"},
        },
        {"instanceTypes": ["g2-standard-4"], "maxSize": 4, "onDemandFallback": True},
        {"gcp:project": "acme-ml"},
    ),
}

#: Per cloud: a bad setting of the created cluster, and the message both paths give for it.
CREATED_BAD: dict[str, tuple[dict[str, Any], str]] = {
    "aws": (
        {"zones": ["us-east-1a", "us-west-2b"]},
        "EksCluster 'prod': EksClusterArgs.zones[1]: 'us-west-2b' is not a zone of region 'us-east-1'; allowed: ",
    ),
    "azure": ({"systemMinSize": 0}, "AksCluster 'prod': system_min_size: a System pool needs >= 1 node (got 0)"),
    "gcp": (
        {"zones": ["us-central1-a", "us-east1-b"]},
        "GkeCluster 'prod': GkeClusterArgs.zones[1]: 'us-east1-b' is not a zone of region 'us-central1'; allowed: ",
    ),
}

CREATED_PROGRAM = """
import json
from pydantic.alias_generators import to_snake
import elastic_gpu
from elastic_gpu import SpotGpuPool, SpotGpuPoolArgs

settings = {to_snake(k): v for k, v in json.loads(CLUSTER).items()}
if "log_types" in settings:  # a tuple in EksClusterArgs
    settings["log_types"] = tuple(settings["log_types"])
if "auto_provisioning" in settings:  # GkeClusterArgs: a dataclass
    from elastic_gpu.gcp.autoprovisioning.cluster import AutoProvisioningLimits
    settings["auto_provisioning"] = AutoProvisioningLimits(
        **{to_snake(k): v for k, v in settings["auto_provisioning"].items()}
    )
cluster = elastic_gpu.CLASS("prod", elastic_gpu.CLASSArgs(**settings))
SpotGpuPool("gpu", SpotGpuPoolArgs(cluster=cluster, **{to_snake(k): v for k, v in json.loads(POOL).items()}))
"""


def _created_python(tmp_path: Path, cloud: str, settings: dict[str, Any]) -> Preview:
    python_class, _, pool_inputs, config = CREATED[cloud]
    source = CREATED_PROGRAM.replace("CLASS", python_class).replace(
        "json.loads(CLUSTER)", f"json.loads({json.dumps(json.dumps(settings))})"
    )
    return _program(tmp_path, "python", source, pool_inputs, config)


@pytest.mark.parametrize("cloud", sorted(CREATED))
def test_construct_over_grpc_a_created_cluster_and_a_pool_on_it_declare_what_python_declares(
    cloud: str, tmp_path: Path
) -> None:
    """The cluster component over gRPC declares the Python path's children with the same inputs, publishes its
    name and kubeconfig (secret), and a pool that references it joins it."""
    from tests.grpc_engine import Engine, reference

    python_class, settings, pool_inputs, config = CREATED[cloud]
    token = f"elastic-gpu:index:{python_class}"
    python = _created_python(tmp_path, cloud, settings)
    engine = Engine("consumer", "test", config)
    try:
        cluster = engine.construct(token, "prod", settings, {})
        pool = engine.construct(
            POOL, "gpu", {"cluster": reference(cluster.urn), **pool_inputs}, {"cluster": [cluster.urn]}
        )
        served = sorted(json.dumps(r.to_json(), sort_keys=True) for r in engine.captured)
    finally:
        engine.close()
    assert served == [r for r in _resources(python) if '"type": "pulumi:pulumi:Stack"' not in r]
    types = {json.loads(r)["type"] for r in served}
    assert {token, POOL, "pulumi:providers:kubernetes"} <= types and len(served) >= 6
    state = json_format.MessageToDict(cluster.state)
    assert state["zones"] == settings["zones"] and state["kubernetesVersion"] == settings["kubernetesVersion"]
    assert state["provider"]["urn"].endswith("pulumi:providers:kubernetes::prod-k8s")
    assert state["clusterName"] == settings["clusterName"]
    assert state["kubeconfig"][WIRE_SIG_KEY] == WIRE_SECRET_SIG  # a secret on the wire
    assert re.search(r'kind"?: "?Config', state["kubeconfig"]["value"])
    assert json_format.MessageToDict(pool.state)["poolName"] == "gpu"


@pytest.mark.parametrize("cloud", sorted(CREATED_BAD))
def test_construct_over_grpc_refuses_a_bad_cluster_setting_with_the_python_message(cloud: str, tmp_path: Path) -> None:
    from tests.grpc_engine import Engine

    python_class, settings, _, config = CREATED[cloud]
    edit, message = CREATED_BAD[cloud]
    with pytest.raises(Exception) as python:
        _created_python(tmp_path, cloud, {**settings, **edit})
    assert message in str(python.value)
    engine = Engine("consumer", "test", config)
    try:
        with pytest.raises(grpc.RpcError) as served:
            engine.construct(f"elastic-gpu:index:{python_class}", "prod", {**settings, **edit}, {})
        assert engine.captured == []  # refused before anything is declared
    finally:
        engine.close()
    assert message in served.value.details()


def test_a_tuple_setting_is_an_array_and_comes_back_a_tuple() -> None:
    """`EksClusterArgs.log_types` is a `tuple[str, ...]`: an array in the schema; the wire's list becomes the
    tuple a Python program passes."""
    inputs = package_schema()["resources"]["elastic-gpu:index:EksCluster"]["inputProperties"]
    assert inputs["logTypes"]["type"] == "array" and inputs["logTypes"]["items"] == {"type": "string"}
    assert python_value(tuple[str, ...], ["api", "audit"]) == ("api", "audit")
    assert python_value(tuple[int, ...] | None, [1.0]) == (1,)
