"""Composition: wires the components for one cloud from a parsed StackConfig (no resource logic).

Each cloud's `elastic_gpu/<cloud>/stack.py` creates its provider and cluster, then
calls `build_pools_and_addons` for the parts every cloud shares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pulumi
from pydantic import BaseModel

from elastic_gpu.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from elastic_gpu.config import GeneralPoolConfig, GpuPoolConfig, StackConfig, gpu_spec
from elastic_gpu.errors import ConfigError, field_of
from elastic_gpu.general_pool import GeneralPool, GeneralPoolArgs, general_pool_problems
from elastic_gpu.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from elastic_gpu.pool_types import ClusterHandle, PoolProvisioner
from elastic_gpu.preflight import run_preflight
from elastic_gpu.settings import AutoscalerSettings, GeneralPoolSettings, GpuPoolSettings
from elastic_gpu.spot_gpu_pool import SpotGpuPool, SpotGpuPoolArgs, spot_gpu_pool_problems


def build_stack(cfg: StackConfig) -> dict[str, Any]:
    """Declare the stack's resources; returns the stack outputs to export.

    Every component's Args is checked first, so a problem only a component sees is reported
    (with its config path) before the cluster or anything else is registered.
    """
    stack = cfg.provider.stack_builder()
    pools = plan_pools(cfg, lambda p: stack.pool_args(cfg, p))
    problems = [f"cluster ({p})" for p in stack.cluster_problems(cfg)]
    problems += args_problems(cfg, pools)
    if problems:
        raise ConfigError(problems)
    # What the account lacks for it (read through the cloud's invokes), before anything is declared.
    run_preflight(cfg)
    outputs: dict[str, Any] = stack.build_stack(cfg, pools.general, pools.gpu)
    return outputs


@dataclass(frozen=True)
class PlannedCluster:
    """The cluster handle as the Args checks see it before the cluster is declared: its plain values (cloud,
    name, zones, version, tags, provisioner), and each cloud's handle attributes that are Outputs of the
    declared cluster (provider, ids, ...) as None. An attribute no handle has is an AttributeError, and one a
    cloud adds to its handle (CloudFacts.handle_attributes) needs a field here (tests/test_rules_once.py)."""

    cloud: str
    cluster_name: str
    zones: list[str]
    kubernetes_version: str
    tags: dict[str, str]
    #: the stack's `provisioner` (a GKE handle's optional `provisioner`)
    provisioner: str | None = None
    #: the cluster's Kubernetes provider (elastic_gpu.cluster_handle.ClusterHandle)
    provider: None = None
    #: an EKS handle's (cluster_handle.EksClusterHandle)
    region: None = None
    node_role_arn: None = None
    subnet_ids: None = None
    oidc_provider_arn: None = None
    oidc_issuer_url: None = None
    node_dependencies: None = None
    #: an AKS handle's (cluster_handle.AksClusterHandle)
    resource_group_name: None = None
    autoscaler_profile: None = None
    #: an AKS or GKE handle's (cluster_handle.GkeClusterHandle)
    location: None = None
    project: None = None


def settings_of(section: BaseModel, model: type[BaseModel]) -> dict[str, Any]:
    """The values of a parsed stack-file section for the settings `model` it shares with a component's Args
    (each setting is declared once, on `model`), as Args keywords; lists copied."""
    return {name: _copied(getattr(section, name)) for name in model.model_fields}


def _copied(value: Any) -> Any:
    return list(value) if isinstance(value, list | tuple) else value


def general_pool_args(cfg: StackConfig, handle: Any) -> GeneralPoolArgs:
    return GeneralPoolArgs(cluster=handle, tags=cfg.tags, **settings_of(cfg.general_pool, GeneralPoolSettings))


def gpu_pool_args(cfg: StackConfig, p: GpuPoolConfig, handle: Any, cloud_args: dict[str, Any]) -> SpotGpuPoolArgs:
    """The pool's settings as configured; what the stack file says otherwise (`gpu`, `gpuSpec`, the device
    plugin's sharing, the tags) resolved; `cloud_args`: what the cloud's stack derives for a program."""
    return SpotGpuPoolArgs(
        **settings_of(p, GpuPoolSettings)
        | {
            "cluster": handle,
            "instance_types": cfg.instance_types(p),
            "gpu_spec": gpu_spec(p),
            "gpu_sharing_replicas": cfg.device_plugin.time_slicing_replicas or 1,
            "tags": cfg.tags,
        }
        | cloud_args
    )


#: Where an Args field comes from in the stack file when its section's model (GpuPoolConfig, GeneralPoolConfig)
#: does not declare it: another section, or another key of the pool.
PROGRAM_FIELD_PATHS = {
    "tags": "tags",
    "gpu_sharing_replicas": "devicePlugin.timeSlicingReplicas",
    "zones": "cluster.zones",
    "cluster": "cluster",
    "provisioner": "provisioner",
}
PROGRAM_FIELD_KEYS = {"gpu_count": "gpusPerNode"}


def config_path(section: str, model: type[BaseModel], problem: str) -> str:
    """The stack-file path of the Args field a component's problem is about (its `field`, data the check gave
    it), as its section's `model` spells it (the field's alias: `gpuPools[0].maxSize`), or where compose takes
    it from; the section itself for a problem about no one field."""
    field = field_of(problem)
    if field is None:
        return section
    if field in PROGRAM_FIELD_PATHS:
        return PROGRAM_FIELD_PATHS[field]
    info = model.model_fields.get(field)
    key = info.alias or field if info is not None else PROGRAM_FIELD_KEYS.get(field)
    return section if key is None else f"{section}.{key}"


@dataclass(frozen=True)
class StackPools:
    """The Args of a stack's pools, each built once (`plan_pools`) over the cluster as planned: checked before
    anything is declared (`args_problems`), then handed to the components themselves once the cluster is
    declared (`build_pools_and_addons` puts the declared cluster in place of the planned one)."""

    general: GeneralPoolArgs
    #: one per pool of the stack file, in its order (`cfg.gpu_pools`)
    gpu: list[SpotGpuPoolArgs]


def plan_pools(cfg: StackConfig, cloud_pool_args: Callable[[GpuPoolConfig], dict[str, Any]]) -> StackPools:
    """The stack's pools' Args over the cluster as planned (`PlannedCluster`); `cloud_pool_args`: what the
    cloud's stack derives for a GPU pool (StackBuilder.pool_args)."""
    c = cfg.cluster
    handle = PlannedCluster(cfg.cloud, c.name, list(c.zones), c.kubernetes_version, dict(cfg.tags), cfg.provisioner)
    gpu = [gpu_pool_args(cfg, p, handle, cloud_pool_args(p)) for p in cfg.gpu_pools]
    return StackPools(general_pool_args(cfg, handle), gpu)


def args_problems(cfg: StackConfig, pools: StackPools) -> list[str]:
    """What the components check beyond the stack config's rules (the cloud's builders' own: tags, disk
    bounds, node-group counts, a provisioner's limits ...), over the cluster as planned, before anything is
    declared; each message led by the config path of its field and naming the argument too
    (`gpuPools[0].maxSize (SpotGpuPool 't4': SpotGpuPoolArgs.max_size: ...)`)."""
    problems = [
        f"{config_path('generalPool', GeneralPoolConfig, p)} ({p})"
        for p in general_pool_problems("general", pools.general, settings_checked=True)
    ]
    for i, (pool, args) in enumerate(zip(cfg.gpu_pools, pools.gpu, strict=True)):
        problems += [
            f"{config_path(f'gpuPools[{i}]', GpuPoolConfig, p)} ({p})"
            for p in spot_gpu_pool_problems(pool.name, args, settings_checked=True)
        ]
    return problems


@dataclass
class Composed:
    general: GeneralPool
    gpu_pools: list[SpotGpuPool]
    device_plugin: NvidiaDevicePlugin
    autoscaler: ClusterAutoscaler
    #: options for further Kubernetes objects: after the general pool's node groups
    k8s_opts: pulumi.ResourceOptions


ArgsT = TypeVar("ArgsT", GeneralPoolArgs, SpotGpuPoolArgs)


def checked(args: ArgsT, cluster: ClusterHandle) -> ArgsT:
    """Planned Args (`plan_pools`), whose stack-file rules and the components' own (`args_problems`) build_stack
    ran before declaring anything, on the declared `cluster`: the component does not run them again."""
    args.cluster = cluster
    args.mark_checked_by_stack()
    return args


def build_pools_and_addons(
    cfg: StackConfig,
    general_args: GeneralPoolArgs,
    gpu_args: list[SpotGpuPoolArgs],
    cluster: Any,
    opts: pulumi.ResourceOptions,
    provisioner: Callable[[GeneralPool], PoolProvisioner] | None = None,
) -> Composed:
    """General pool, GPU pools, device plugin and autoscaler, as the config says (called by the cloud's
    `stack.build_stack`, which `build_stack` calls once the config and the components' Args are checked).

    `general_args`, `gpu_args`: the pools' Args as `build_stack` planned and checked them (StackPools), one
    per pool of `cfg.gpu_pools`; `cluster` has a `provider` (Kubernetes); `provisioner`, given the general
    pool (where its controller runs), declares a provisioner that makes the GPU pools' nodes itself
    (EKS: Karpenter); the autoscaler then scales the general pool alone.
    """
    handle: ClusterHandle = cluster
    general = GeneralPool("general", checked(general_args, handle), opts=opts)
    sharing = cfg.device_plugin.time_slicing_replicas
    own = None if provisioner is None else provisioner(general)
    gpu_pools = []
    for p, args in zip(cfg.gpu_pools, gpu_args, strict=True):
        if own is not None:
            args.provisioner = own
        gpu_pools.append(SpotGpuPool(p.name, checked(args, handle), opts=opts))
    # Workloads need a node first; on an upgrade they move after the node groups.
    k8s_opts = pulumi.ResourceOptions(depends_on=general.nodes)
    device_plugin = NvidiaDevicePlugin(
        "nvidia-device-plugin",
        NvidiaDevicePluginArgs(provider=cluster.provider, gpu_pools=gpu_pools, time_slicing_replicas=sharing),
        opts=k8s_opts,
    )
    autoscaler = ClusterAutoscaler(
        "cluster-autoscaler",
        ClusterAutoscalerArgs(
            cluster=handle,
            provider=cluster.provider,
            general_pool=general,
            gpu_pools=gpu_pools,
            **settings_of(cfg.autoscaler, AutoscalerSettings),
        ),
        opts=pulumi.ResourceOptions.merge(opts, k8s_opts),
    )
    return Composed(general, gpu_pools, device_plugin, autoscaler, k8s_opts)
