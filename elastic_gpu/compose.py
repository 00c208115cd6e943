"""Composition: wires the components for one cloud from a parsed StackConfig (no resource logic).

Each cloud's `elastic_gpu/<cloud>/stack.py` creates its provider and cluster, then
calls `build_pools_and_addons` for the parts every cloud shares.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pulumi
from pydantic.alias_generators import to_camel

from elastic_gpu.clouds import get_cloud
from elastic_gpu.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from elastic_gpu.cluster_handle import COMMON_ATTRIBUTES
from elastic_gpu.config import GpuPoolConfig, StackConfig, gpu_spec
from elastic_gpu.errors import ConfigError
from elastic_gpu.general_pool import GeneralPool, GeneralPoolArgs, general_pool_problems
from elastic_gpu.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from elastic_gpu.pool_types import ClusterHandle, PoolProvisioner
from elastic_gpu.preflight import run_preflight
from elastic_gpu.spot_gpu_pool import SpotGpuPool, SpotGpuPoolArgs, spot_gpu_pool_problems


def build_stack(cfg: StackConfig) -> dict[str, Any]:
    """Declare the stack's resources; returns the stack outputs to export.

    Every component's Args is checked first, so a problem only a component sees is reported
    (with its config path) before the cluster or anything else is registered.
    """
    stack = get_cloud(cfg.cloud).stack_builder()
    problems = [f"cluster ({p})" for p in stack.cluster_problems(cfg)]
    problems += args_problems(cfg, lambda p: stack.pool_args(cfg, p))
    if problems:
        raise ConfigError(problems)
    # What the account lacks for it (read through the cloud's invokes), before anything is declared.
    run_preflight(cfg)
    return stack.build_stack(cfg)


@dataclass(frozen=True)
class PlannedCluster:
    """The cluster handle as the Args checks see it before the cluster is declared: its plain values
    (cloud, name, zones, version, tags); the Output-valued attributes (provider, ids) are None."""

    cloud: str
    cluster_name: str
    zones: list[str]
    kubernetes_version: str
    tags: dict[str, str]
    #: the stack's `provisioner` (a GKE handle's optional `provisioner`)
    provisioner: str | None = None

    def __getattr__(self, name: str) -> None:
        if name in get_cloud(self.cloud).facts.handle_attributes or name in COMMON_ATTRIBUTES:
            return None
        raise AttributeError(name)


def general_pool_args(cfg: StackConfig, handle: Any) -> GeneralPoolArgs:
    gp = cfg.general_pool
    return GeneralPoolArgs(
        cluster=handle,
        instance_types=list(gp.instance_types),
        min_size=gp.min_size,
        max_size=gp.max_size,
        spot=gp.spot,
        disk_size_gib=gp.disk_size_gib,
        tags=cfg.tags,
    )


def gpu_pool_args(cfg: StackConfig, p: GpuPoolConfig, handle: Any, cloud_args: dict[str, Any]) -> SpotGpuPoolArgs:
    return SpotGpuPoolArgs(
        **{
            "cluster": handle,
            "instance_types": cfg.instance_types(p),
            "gpu_spec": gpu_spec(p),
            "min_size": p.min_size,
            "max_size": p.max_size,
            "spot": p.spot,
            "on_demand_fallback": p.on_demand_fallback,
            "fallback_max_size": p.fallback_max_size,
            "max_minutes_to_fallback": p.max_minutes_to_fallback,
            "per_zone": p.per_zone,
            "mixed_gpu_models": p.mixed_gpu_models,
            "disk_size_gib": p.disk_size_gib,
            "gpu_sharing_replicas": cfg.device_plugin.time_slicing_replicas or 1,
            "tags": cfg.tags,
        }
        | cloud_args
    )


#: Where an Args field comes from in the stack file, where it is not `<section>.<camelCase>`.
CONFIG_PATHS = {
    "tags": "tags",
    "gpu_sharing_replicas": "devicePlugin.timeSlicingReplicas",
    "zones": "cluster.zones",
    "cluster": "cluster",
}


def config_path(section: str, message: str) -> str:
    """The stack-file path of the first `<Args>.<field>` a component's message names (`gpuPools[0].maxSize`)."""
    found = re.search(r"\b[A-Za-z]+Args\.([a-z_]+)", message)
    if found is None:
        return section
    field = found.group(1)
    return CONFIG_PATHS.get(field, f"{section}.{to_camel(field)}")


def args_problems(cfg: StackConfig, cloud_pool_args: Callable[[GpuPoolConfig], dict[str, Any]]) -> list[str]:
    """The components' own Args checks over the config, each message led by the config path and naming
    the argument too (`gpuPools[0].maxSize (SpotGpuPool 't4': SpotGpuPoolArgs.max_size: ...)`)."""
    c = cfg.cluster
    handle = PlannedCluster(cfg.cloud, c.name, list(c.zones), c.kubernetes_version, dict(cfg.tags), cfg.provisioner)
    problems = [
        f"{config_path('generalPool', p)} ({p})"
        for p in general_pool_problems("general", general_pool_args(cfg, handle))
    ]
    for i, pool in enumerate(cfg.gpu_pools):
        args = gpu_pool_args(cfg, pool, handle, cloud_pool_args(pool))
        problems += [f"{config_path(f'gpuPools[{i}]', p)} ({p})" for p in spot_gpu_pool_problems(pool.name, args)]
    return problems


@dataclass
class Composed:
    general: GeneralPool
    gpu_pools: list[SpotGpuPool]
    device_plugin: NvidiaDevicePlugin
    autoscaler: ClusterAutoscaler
    #: options for further Kubernetes objects: after the general pool's node groups
    k8s_opts: pulumi.ResourceOptions


def build_pools_and_addons(
    cfg: StackConfig,
    cluster: Any,
    opts: pulumi.ResourceOptions,
    cloud_pool_args: Callable[[GpuPoolConfig], dict[str, Any]] = lambda _: {},
    provisioner: Callable[[GeneralPool], PoolProvisioner] | None = None,
) -> Composed:
    """General pool, GPU pools, device plugin and autoscaler, as the config says.

    `cluster` has a `provider` (Kubernetes); `cloud_pool_args` adds a cloud's own
    SpotGpuPoolArgs fields for a pool (e.g. Azure's spot max price); `provisioner`, given the general
    pool (where its controller runs), declares a provisioner that makes the GPU pools' nodes itself
    (EKS: Karpenter); the autoscaler then scales the general pool alone.
    """
    handle: ClusterHandle = cluster
    general = GeneralPool("general", general_pool_args(cfg, handle), opts=opts)
    sharing = cfg.device_plugin.time_slicing_replicas
    own = {} if provisioner is None else {"provisioner": provisioner(general)}
    gpu_pools = [
        SpotGpuPool(p.name, gpu_pool_args(cfg, p, handle, cloud_pool_args(p) | own), opts=opts) for p in cfg.gpu_pools
    ]
    # Workloads need a node first; on an upgrade they move after the node groups.
    k8s_opts = pulumi.ResourceOptions(depends_on=general.nodes)
    device_plugin = NvidiaDevicePlugin(
        "nvidia-device-plugin",
        NvidiaDevicePluginArgs(provider=cluster.provider, gpu_pools=gpu_pools, time_slicing_replicas=sharing),
        opts=k8s_opts,
    )
    a = cfg.autoscaler
    autoscaler = ClusterAutoscaler(
        "cluster-autoscaler",
        ClusterAutoscalerArgs(
            cluster=handle,
            provider=cluster.provider,
            general_pool=general,
            gpu_pools=gpu_pools,
            scale_down_unneeded_time=a.scale_down_unneeded_time,
            scale_down_delay_after_add=a.scale_down_delay_after_add,
            expander=list(a.expander),
            max_node_provision_time=a.max_node_provision_time,
        ),
        opts=pulumi.ResourceOptions.merge(opts, k8s_opts),
    )
    return Composed(general, gpu_pools, device_plugin, autoscaler, k8s_opts)
