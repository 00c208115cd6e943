"""The Pulumi package schema of the components, generated from their Args and docstrings.

Pulumi's engine asks the component provider for it (`GetSchema`), and `pulumi package add` generates each
language's SDK from it, so a TypeScript, Go, C#, Java or YAML program declares `elastic-gpu:index:SpotGpuPool`
with the same settings, defaults and descriptions as `help(SpotGpuPoolArgs)`. Nothing here restates a
setting: each component names its Args (read by `elastic_gpu.package.fields`), the settings that only a
Python program can pass (a Python object, not data), and the outputs it publishes. A field that is neither
mapped nor listed as Python-only fails the generation, so a new setting cannot drop out of the package
silently. The version is the library's (`elastic_gpu._version`).

Inputs are plain data or resource references: a pool's `cluster` is a reference to a cluster component,
one the program creates (`EksCluster`) or a handle on its own cluster (`ExistingEksCluster`), which another
language declares from that cluster's outputs.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import importlib.metadata
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from elastic_gpu._version import __version__
from elastic_gpu.aks_cluster import EXISTING_TYPE_TOKEN as AKS_EXISTING_CLUSTER
from elastic_gpu.aks_cluster import TYPE_TOKEN as AKS_CLUSTER
from elastic_gpu.aks_cluster import AksCluster, AksClusterArgs, ExistingAksCluster
from elastic_gpu.cluster_autoscaler import TYPE_TOKEN as CLUSTER_AUTOSCALER
from elastic_gpu.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from elastic_gpu.cluster_handle import AksClusterHandle, ClusterHandle, EksClusterHandle, GkeClusterHandle
from elastic_gpu.eks_cluster import EXISTING_TYPE_TOKEN as EKS_EXISTING_CLUSTER
from elastic_gpu.eks_cluster import TYPE_TOKEN as EKS_CLUSTER
from elastic_gpu.eks_cluster import EksCluster, EksClusterArgs, ExistingEksCluster
from elastic_gpu.general_pool import TYPE_TOKEN as GENERAL_POOL
from elastic_gpu.general_pool import GeneralPool, GeneralPoolArgs
from elastic_gpu.gke_cluster import EXISTING_TYPE_TOKEN as GKE_EXISTING_CLUSTER
from elastic_gpu.gke_cluster import TYPE_TOKEN as GKE_CLUSTER
from elastic_gpu.gke_cluster import ExistingGkeCluster, GkeCluster, GkeClusterArgs
from elastic_gpu.nvidia_device_plugin import TYPE_TOKEN as NVIDIA_DEVICE_PLUGIN
from elastic_gpu.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from elastic_gpu.package.fields import Field, fields_of, keyword_fields, output_fields
from elastic_gpu.spot_gpu_pool import TYPE_TOKEN as SPOT_GPU_POOL
from elastic_gpu.spot_gpu_pool import SpotGpuPool, SpotGpuPoolArgs

PACKAGE = "elastic-gpu"
#: Where the repository ships the generated schema (relative to its root).
SCHEMA_FILE = "schema/package.schema.json"


class Unsupported(TypeError):
    """A type the package schema has no spelling for (a Python object, not data)."""


@dataclass(frozen=True)
class Component:
    """One component of the package: where its settings and outputs are declared, and what stays Python's."""

    token: str
    cls: type[pulumi.ComponentResource]
    inputs: Callable[[], list[Field]]
    """The settings, read from where they are declared (the Args, or the handle's constructor)."""
    python_only: Mapping[str, str]
    """Settings a program in another language cannot pass, and why (each an object, not data)."""
    outputs: tuple[str, ...]
    """The published outputs (attribute names), each documented where the component declares it."""
    plain: tuple[str, ...] = ()
    """Settings that must be known when the component is declared (they decide how many children)."""
    all_plain: bool = False
    """Every setting is plain: a cluster's Args are data the component checks and branches on (region, zones,
    network choices) before it declares anything, as a Python program passes them."""
    handle: type | None = None
    """The cluster-handle protocol the component implements (its documented attributes are outputs)."""
    secret: tuple[str, ...] = ()
    """Settings and outputs that are credentials: every SDK marks them secret (a kubeconfig)."""

    @property
    def name(self) -> str:
        return self.token.rsplit(":", 1)[1]

    def input_fields(self) -> list[Field]:
        return [f for f in self.inputs() if f.name not in self.python_only]

    def plain_names(self) -> tuple[str, ...]:
        """The settings that must be known when the component is declared (`plain`, or all of them)."""
        return tuple(f.name for f in self.input_fields()) if self.all_plain else self.plain

    def output_fields(self) -> list[Field]:
        by_name = {f.name: f for f in output_fields(self.cls, self.handle)}
        return [by_name[name] for name in self.outputs]


#: The node settings a pool takes as Python objects: a Karpenter provisioner is built in Python.
_POOL_PYTHON_ONLY = {
    "provisioner": "a Python object (Karpenter(...).nodes); other languages get the cloud's node groups",
    "node_config": "a pulumi_gcp NodePoolNodeConfigArgs object (GKE's own node-pool inputs)",
}

#: A handle's Kubernetes provider object: without it the handle builds one from the cluster's credentials.
_HANDLE_PYTHON_ONLY = {"k8s_provider": "a Kubernetes provider object; without it the handle builds one"}
#: A handle that `from_cluster`/`from_managed_cluster` also build: what they read from the program's cluster
#: resource is handed in as `read` (a component package's handle reads it from the cloud itself).
_READ_HANDLE_PYTHON_ONLY = {
    **_HANDLE_PYTHON_ONLY,
    "read": "what the `from_*` constructors read from the program's own cluster resource",
}

#: What a created cluster publishes besides its handle's facts: its kubeconfig (secret), for a program's own
#: Kubernetes provider or another stack's handle on it.
_CREATED_OUTPUTS = ("cluster_name", "kubeconfig")

COMPONENTS: tuple[Component, ...] = (
    Component(
        EKS_CLUSTER,
        EksCluster,
        lambda: fields_of(EksClusterArgs),
        python_only={},
        outputs=(
            *_CREATED_OUTPUTS,
            "region",
            "zones",
            "kubernetes_version",
            "node_role_arn",
            "subnet_ids",
            "oidc_provider_arn",
            "oidc_issuer_url",
            "provider",
        ),
        all_plain=True,
        handle=EksClusterHandle,
        secret=("kubeconfig",),
    ),
    Component(
        EKS_EXISTING_CLUSTER,
        ExistingEksCluster,
        lambda: keyword_fields(ExistingEksCluster.__init__, ExistingEksCluster),
        python_only=_HANDLE_PYTHON_ONLY,
        outputs=("cluster_name", "region", "node_role_arn", "zones", "kubernetes_version", "provider"),
        plain=("kubernetes_version",),
        handle=EksClusterHandle,
        secret=("kubeconfig",),
    ),
    Component(
        AKS_CLUSTER,
        AksCluster,
        lambda: fields_of(AksClusterArgs),
        python_only={},
        outputs=(
            *_CREATED_OUTPUTS,
            "resource_group_name",
            "location",
            "zones",
            "kubernetes_version",
            "kubelet_identity_object_id",
            "provider",
        ),
        all_plain=True,
        handle=AksClusterHandle,
        secret=("kubeconfig",),
    ),
    Component(
        AKS_EXISTING_CLUSTER,
        ExistingAksCluster,
        lambda: keyword_fields(ExistingAksCluster.__init__, ExistingAksCluster),
        python_only=_READ_HANDLE_PYTHON_ONLY,
        outputs=("cluster_name", "resource_group_name", "location", "zones", "kubernetes_version", "provider"),
        plain=("zones", "kubernetes_version"),
        handle=AksClusterHandle,
    ),
    Component(
        GKE_CLUSTER,
        GkeCluster,
        lambda: fields_of(GkeClusterArgs),
        python_only={},
        outputs=(*_CREATED_OUTPUTS, "project", "location", "zones", "kubernetes_version", "provider"),
        all_plain=True,
        handle=GkeClusterHandle,
        secret=("kubeconfig",),
    ),
    Component(
        GKE_EXISTING_CLUSTER,
        ExistingGkeCluster,
        lambda: keyword_fields(ExistingGkeCluster.__init__, ExistingGkeCluster),
        python_only=_READ_HANDLE_PYTHON_ONLY,
        outputs=("cluster_name", "project", "location", "zones", "kubernetes_version", "provider"),
        plain=("zones", "kubernetes_version", "provisioner"),
        handle=GkeClusterHandle,
        secret=("kubeconfig",),
    ),
    Component(
        SPOT_GPU_POOL,
        SpotGpuPool,
        lambda: fields_of(SpotGpuPoolArgs),
        python_only=_POOL_PYTHON_ONLY,
        outputs=("pool_name", "node_group_names", "node_group_ids", "labels", "taints"),
        plain=("zones", "per_zone", "on_demand_fallback", "instance_types"),
    ),
    Component(
        GENERAL_POOL,
        GeneralPool,
        lambda: fields_of(GeneralPoolArgs),
        python_only={},
        outputs=("pool_name", "node_group_names", "node_group_ids", "labels"),
        plain=("instance_types",),
    ),
    Component(
        NVIDIA_DEVICE_PLUGIN,
        NvidiaDevicePlugin,
        lambda: fields_of(NvidiaDevicePluginArgs),
        python_only={},
        outputs=("tolerations",),
        plain=("gpu_pools",),
    ),
    Component(
        CLUSTER_AUTOSCALER,
        ClusterAutoscaler,
        lambda: fields_of(ClusterAutoscalerArgs),
        python_only={"provider": "a Kubernetes provider object; the default is the cluster handle's"},
        outputs=("image", "role_arn", "service_account_name"),
        plain=("gpu_pools", "general_pool", "expander", "workload_name", "namespace"),
    ),
)

#: The resources an input of these types references in the package: the clusters it creates and the handles
#: it can declare for a `ClusterHandle`, and the pools.
HANDLE_RESOURCES: dict[Any, tuple[str, ...]] = {
    ClusterHandle: (
        EKS_CLUSTER,
        EKS_EXISTING_CLUSTER,
        AKS_CLUSTER,
        AKS_EXISTING_CLUSTER,
        GKE_CLUSTER,
        GKE_EXISTING_CLUSTER,
    ),
    SpotGpuPool: (SPOT_GPU_POOL,),
    GeneralPool: (GENERAL_POOL,),
}
#: The Kubernetes SDK's input types an Args field takes, by their token in its package schema (at the
#: installed version, which the package then depends on).
KUBERNETES = "kubernetes"
KUBERNETES_TYPES: dict[Any, str] = {k8s.core.v1.TolerationArgs: "kubernetes:core/v1:Toleration"}


def kubernetes_version() -> str:
    """The installed Kubernetes SDK's version: the package's types refer to its schema at that version."""
    return importlib.metadata.version("pulumi_kubernetes")


def token(name: str) -> str:
    return f"{PACKAGE}:index:{name}"


def description(obj: type) -> str:
    """A class's own docstring, without the sections `help()` appends (Fields, Outputs) and without its
    "Arguments:" paragraph (each argument's text is its property's description)."""
    doc = inspect.cleandoc(obj.__doc__ or "")
    for appended in ("\n\nFields", "\n\nOutputs (attribute: type):"):
        doc = doc.split(appended, 1)[0]
    return in_schema_names("\n\n".join(p for p in doc.split("\n\n") if not p.startswith("Arguments:")))


def in_schema_names(text: str) -> str:
    """A docstring as other languages read it: a setting of the package named in backquotes (`max_size`)
    is given by its schema name (`maxSize`)."""
    names = _setting_names()
    return re.sub(r"`(\w+)`", lambda m: f"`{to_camel(m.group(1))}`" if m.group(1) in names else m.group(0), text)


@functools.cache
def _setting_names() -> frozenset[str]:
    found: set[str] = set()
    for component in COMPONENTS:
        found |= {f.name for f in component.input_fields()} | set(component.outputs)
    return frozenset(found)


class _Schema:
    def __init__(self) -> None:
        self.types: dict[str, dict[str, Any]] = {}
        self.dependencies: dict[str, str] = {}

    def type_spec(self, annotation: Any, where: str) -> tuple[dict[str, Any], bool]:
        """(the schema's type spec of `annotation`, whether None is allowed)."""
        # An input may be an Output: `T | Output[T]` and `Output[T]` alone both mean T.
        members: list[Any] = []
        for member in _union_members(annotation):
            inner = (
                _union_members(typing.get_args(member)[0]) if typing.get_origin(member) is pulumi.Output else [member]
            )
            members += [m for m in inner if m not in members]
        optional = type(None) in members
        members = [m for m in members if m is not type(None)]
        specs = [self._single(m, where) for m in members]
        unique = [s for i, s in enumerate(specs) if s not in specs[:i]]
        if len(unique) == 1:
            return unique[0], optional
        return {"oneOf": unique}, optional

    def _single(self, annotation: Any, where: str) -> dict[str, Any]:
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is typing.Annotated:  # a constrained type (Duration): its base type
            return self._single(args[0], where)
        if annotation in _PRIMITIVES:
            return {"type": _PRIMITIVES[annotation]}
        if annotation is k8s.Provider:  # the cluster's Kubernetes provider (a handle's `provider` output)
            self.dependencies[KUBERNETES] = kubernetes_version()
            return {"$ref": f"/{KUBERNETES}/v{kubernetes_version()}/schema.json#/provider"}
        if annotation in KUBERNETES_TYPES:
            self.dependencies[KUBERNETES] = kubernetes_version()
            return {"$ref": f"/{KUBERNETES}/v{kubernetes_version()}/schema.json#/types/{KUBERNETES_TYPES[annotation]}"}
        if annotation is Any:
            return {"$ref": "pulumi.json#/Any"}
        if origin is typing.Literal and all(isinstance(a, str) for a in args):
            return {"type": "string"}
        if origin in (list, collections.abc.Sequence) or (origin is tuple and len(args) == 2 and args[1] is ...):
            return {"type": "array", "items": self.type_spec(args[0], where)[0]}
        if origin in (dict, collections.abc.Mapping) and args and args[0] is str:
            return {"type": "object", "additionalProperties": self.type_spec(args[1], where)[0]}
        if annotation in HANDLE_RESOURCES:
            refs = [{"$ref": f"#/resources/{target}"} for target in HANDLE_RESOURCES[annotation]]
            return refs[0] if len(refs) == 1 else {"oneOf": refs}
        if isinstance(annotation, type) and (dataclasses.is_dataclass(annotation) or issubclass(annotation, BaseModel)):
            name = token(annotation.__name__)
            if name not in self.types:
                self.types[name] = {}  # placeholder against recursion
                self.types[name] = {
                    "type": "object",
                    "description": description(annotation),
                    **self.object(fields_of(annotation), f"{annotation.__name__}."),
                }
            return {"$ref": f"#/types/{name}"}
        raise Unsupported(f"{where}: no package-schema type for {annotation!r}")

    def property_spec(self, field: Field, where: str, plain: bool = False) -> dict[str, Any]:
        spec, _ = self.type_spec(field.annotation, where + field.name)
        spec = dict(spec)
        text = in_schema_names(field.description or "")
        allowed = _literal_values(field.annotation)
        if allowed:
            text = (text + " " if text else "") + "One of: " + ", ".join(f'"{v}"' for v in allowed) + "."
        if text:
            spec["description"] = text
        if plain:
            spec["plain"] = True
        return spec

    def object(self, fields: list[Field], where: str, plain: tuple[str, ...] = ()) -> dict[str, Any]:
        return {
            "properties": {f.schema_name: self.property_spec(f, where, f.name in plain) for f in fields},
            # None allowed, also inside an Output (`Output[str | None]`): not required.
            "required": [f.schema_name for f in fields if f.required and not self.type_spec(f.annotation, where)[1]],
        }


_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _union_members(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _union_members(arg)]
    return [annotation]


def _literal_values(annotation: Any) -> list[Any]:
    return [v for m in _union_members(annotation) if typing.get_origin(m) is typing.Literal for v in typing.get_args(m)]


def package_schema() -> dict[str, Any]:
    """The package schema (Pulumi's package meta-schema, pulumi/pulumi pkg/codegen/schema/pulumi.json)."""
    schema = _Schema()
    resources: dict[str, Any] = {}
    for component in COMPONENTS:
        where = f"{component.name}: "
        inputs = component.input_fields()
        declared = {f.name for f in component.inputs()}
        if stale := sorted(set(component.python_only) - declared):
            raise Unsupported(f"{where}python_only names settings the component does not have: {stale}")
        body = schema.object(inputs, where, component.plain_names())
        outputs = schema.object(component.output_fields(), where + "output ")
        for name in component.secret:
            found = [
                props[to_camel(name)]
                for props in (body["properties"], outputs["properties"])
                if to_camel(name) in props
            ]
            if not found:
                raise Unsupported(f"{where}secret names neither an input nor an output: {name}")
            for spec in found:
                spec["secret"] = True
        resources[component.token] = {
            "isComponent": True,
            "description": description(component.cls),
            "inputProperties": body["properties"],
            "requiredInputs": body["required"],
            "properties": outputs["properties"],
            "required": outputs["required"],
        }
    return {
        "name": PACKAGE,
        "displayName": "elastic-gpu",
        "version": __version__,
        "description": "Elastic spot GPU pools that scale to zero, with an on-demand fallback, on EKS, AKS and GKE.",
        "keywords": ["pulumi", "kubernetes", "gpu", "spot", "kind/component", "category/cloud"],
        "license": "Apache-2.0",
        "resources": resources,
        "types": dict(sorted(schema.types.items())),
        "dependencies": [{"name": name, "version": version} for name, version in sorted(schema.dependencies.items())],
        "language": {"python": {"respectSchemaVersion": True}, "nodejs": {"respectSchemaVersion": True}},
    }


def render(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
