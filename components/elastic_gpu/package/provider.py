"""The component provider: Pulumi's engine starts it, asks `GetSchema`, and calls `Construct` for each
component a program in another language declares.

`construct` turns the engine's inputs (schema names, plain data and resource references) into the same
Args a Python program passes, builds the same component, and returns its published outputs. So the
children, their names and their inputs are those of the Python path with the same settings, and bad
input fails with the same `ConfigError` message (naming the Python field, e.g. `SpotGpuPoolArgs.max_size`;
its schema name is the camelCase one).

A pool's `cluster` is a reference to a cluster component this provider constructed in the same program
(the engine sends every Construct of a deployment to one provider process): the live handle is found by
its URN. A reference to anything else is an error that says so.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import sys
import typing
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pulumi.provider
import pulumi.runtime
from pulumi.provider import ConstructResult
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from elastic_gpu._version import __version__
from elastic_gpu.aks_cluster import EXISTING_TYPE_TOKEN as AKS_EXISTING_CLUSTER
from elastic_gpu.aks_cluster import TYPE_TOKEN as AKS_CLUSTER
from elastic_gpu.aks_cluster import AksCluster, AksClusterArgs, ExistingAksCluster
from elastic_gpu.cluster_autoscaler import TYPE_TOKEN as CLUSTER_AUTOSCALER
from elastic_gpu.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from elastic_gpu.eks_cluster import EXISTING_TYPE_TOKEN as EKS_EXISTING_CLUSTER
from elastic_gpu.eks_cluster import TYPE_TOKEN as EKS_CLUSTER
from elastic_gpu.eks_cluster import EksCluster, EksClusterArgs, ExistingEksCluster
from elastic_gpu.errors import ConfigError
from elastic_gpu.files import json_text
from elastic_gpu.general_pool import TYPE_TOKEN as GENERAL_POOL
from elastic_gpu.general_pool import GeneralPool, GeneralPoolArgs
from elastic_gpu.gke_cluster import EXISTING_TYPE_TOKEN as GKE_EXISTING_CLUSTER
from elastic_gpu.gke_cluster import TYPE_TOKEN as GKE_CLUSTER
from elastic_gpu.gke_cluster import ExistingGkeCluster, GkeCluster, GkeClusterArgs
from elastic_gpu.nvidia_device_plugin import TYPE_TOKEN as NVIDIA_DEVICE_PLUGIN
from elastic_gpu.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from elastic_gpu.package.fields import Field
from elastic_gpu.package.schema import COMPONENTS, HANDLE_RESOURCES, PACKAGE, Component, package_schema
from elastic_gpu.spot_gpu_pool import TYPE_TOKEN as SPOT_GPU_POOL
from elastic_gpu.spot_gpu_pool import SpotGpuPool, SpotGpuPoolArgs

Build = Callable[[str, dict[str, Any], "pulumi.ResourceOptions | None"], pulumi.ComponentResource]

#: How each component is built from its Python inputs: as a Python program declares it.
BUILDERS: dict[str, Build] = {
    EKS_CLUSTER: lambda name, kw, opts: EksCluster(name, EksClusterArgs(**kw), opts),
    AKS_CLUSTER: lambda name, kw, opts: AksCluster(name, AksClusterArgs(**kw), opts),
    GKE_CLUSTER: lambda name, kw, opts: GkeCluster(name, GkeClusterArgs(**kw), opts),
    EKS_EXISTING_CLUSTER: lambda name, kw, opts: ExistingEksCluster(name, **kw, opts=opts),
    AKS_EXISTING_CLUSTER: lambda name, kw, opts: ExistingAksCluster(name, **kw, opts=opts),
    GKE_EXISTING_CLUSTER: lambda name, kw, opts: ExistingGkeCluster(name, **kw, opts=opts),
    SPOT_GPU_POOL: lambda name, kw, opts: SpotGpuPool(name, SpotGpuPoolArgs(**kw), opts),
    GENERAL_POOL: lambda name, kw, opts: GeneralPool(name, GeneralPoolArgs(**kw), opts),
    NVIDIA_DEVICE_PLUGIN: lambda name, kw, opts: NvidiaDevicePlugin(name, NvidiaDevicePluginArgs(**kw), opts),
    CLUSTER_AUTOSCALER: lambda name, kw, opts: ClusterAutoscaler(name, ClusterAutoscalerArgs(**kw), opts),
}

_HANDLE_TOKENS = sorted({token for tokens in HANDLE_RESOURCES.values() for token in tokens})

#: The components this process constructed, by URN: what a reference to one (a pool's `cluster`, the
#: autoscaler's `gpuPools`) resolves to.
_HANDLES: dict[str, pulumi.ComponentResource] = {}


class _Handles(pulumi.runtime.ResourceModule):
    """Resolves a reference to one of this package's resources to the live component, when this process
    built it (`pulumi.runtime` asks while it deserializes a Construct's inputs)."""

    def version(self) -> None:
        return None

    def construct(self, name: str, typ: str, urn: str) -> pulumi.Resource:
        if urn in _HANDLES:
            return _HANDLES[urn]
        raise ConfigError(
            [
                f"{typ} '{name}': a resource reference this provider cannot use: it was not declared with the "
                f"{PACKAGE} package in this program; declare it there (one of {', '.join(_HANDLE_TOKENS)})"
            ],
            source="resource reference",
        )


pulumi.runtime.register_resource_module(PACKAGE, "index", _Handles())


class ElasticGpuProvider(pulumi.provider.Provider):
    """Serves the package schema and constructs the components (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(__version__, json_text(package_schema()))

    def construct(
        self,
        name: str,
        resource_type: str,
        inputs: Mapping[str, pulumi.Input[Any]],
        options: pulumi.ResourceOptions | None = None,
    ) -> ConstructResult:
        component = next((c for c in COMPONENTS if c.token == resource_type), None)
        if component is None:
            raise ConfigError([f"{resource_type}: not a component of the {PACKAGE} package"])
        built = BUILDERS[resource_type](name, python_inputs(component, name, inputs), options)
        built.urn.apply(lambda urn: _HANDLES.__setitem__(urn, built))
        state = {f.schema_name: wire(getattr(built, f.name)) for f in component.output_fields()}
        return ConstructResult(urn=built.urn, state=state)


def python_inputs(component: Component, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's inputs as the component's Python arguments (schema names to Python names, objects of the
    package's types to their dataclasses); an unknown input or a structural one that is not yet known is a
    `ConfigError` naming it."""
    fields = {f.schema_name: f for f in component.input_fields()}
    where = f"{component.name} '{name}': "
    problems = [f"{where}{key}: unknown input; allowed: {', '.join(fields)}" for key in inputs if key not in fields]
    out: dict[str, Any] = {}
    plain = component.plain_names()
    for key, value in inputs.items():
        if key not in fields:
            continue
        field = fields[key]
        if field.name in plain:
            value, known = known_now(value)
            if not known:
                problems.append(
                    f"{where}{key}: must be known when the component is declared (it decides which resources "
                    "there are); pass a plain value, not another resource's output"
                )
                continue
        out[field.name] = python_value(field.annotation, value)
    if problems:
        raise ConfigError(problems, source=f"{component.name} '{name}'")
    return out


def python_value(annotation: Any, value: Any) -> Any:
    """`value` as `annotation` wants it: an object of a package type becomes its dataclass or pydantic model,
    recursively, and a whole number where an `int` goes an int (the wire has only doubles: protobuf's Struct)."""
    members = _members(annotation)
    if isinstance(value, float) and value.is_integer() and int in members and float not in members:
        return int(value)
    for member in members:
        if isinstance(member, type) and issubclass(member, BaseModel) and isinstance(value, Mapping):
            by_schema_name = {to_camel(name): (name, info) for name, info in member.model_fields.items()}
            return member(
                **{by_schema_name[k][0]: python_value(by_schema_name[k][1].annotation, v) for k, v in value.items()}
            )
        if isinstance(member, type) and dataclasses.is_dataclass(member) and isinstance(value, Mapping):
            fields = {to_camel(f.name): f for f in dataclasses.fields(member)}
            hints = typing.get_type_hints(member)
            return member(**{fields[k].name: python_value(hints[fields[k].name], v) for k, v in value.items()})
        origin, args = typing.get_origin(member), typing.get_args(member)
        if origin in (list, collections.abc.Sequence) and isinstance(value, list) and args:
            return [python_value(args[0], v) for v in value]
        if origin is tuple and isinstance(value, list) and len(args) == 2 and args[1] is ...:
            return tuple(python_value(args[0], v) for v in value)  # the wire has only lists
        if origin in (dict, collections.abc.Mapping) and isinstance(value, Mapping) and len(args) == 2:
            return {k: python_value(args[1], v) for k, v in value.items()}
    return value


def _members(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, type(int | None)):
        return [m for a in typing.get_args(annotation) for m in _members(a)]
    return [annotation]


def known_now(value: Any) -> tuple[Any, bool]:
    """(the value, True) when it is plain or an Output already resolved to a known value (the engine wraps an
    input that depends on another resource in one, its value known when the engine knew it); else False.
    Reads the Output's resolved data: a Construct cannot wait for it, and it is already there or never."""
    if not isinstance(value, pulumi.Output):
        return value, True
    data = value._data  # the SDK's resolved (value, is_known, ...) of an Output
    if not data.done() or data.exception() is not None:
        return None, False
    resolved = data.result()
    if not resolved.is_known:
        return None, False
    return resolved.value, True


def wire(value: Any) -> Any:
    """An output as the engine takes it: a dataclass as an object with the schema's (camelCase) keys."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {to_camel(f.name): wire(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [wire(v) for v in value]
    if isinstance(value, dict):
        return {k: wire(v) for k, v in value.items()}
    return value


def main(args: list[str] | None = None) -> None:
    """Serve the provider over gRPC (the engine passes its address; the port is printed on stdout)."""
    pulumi.provider.main(ElasticGpuProvider(), sys.argv[1:] if args is None else args)


__all__ = ["BUILDERS", "ElasticGpuProvider", "Field", "main", "python_inputs", "wire"]
