"""The AKS stack: cluster, general pool, spot GPU pools, device plugin, autoscaler."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from components.aks_cluster import AksCluster, AksClusterArgs
from components.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from components.config import DEFAULT_AKS_NETWORK_PLUGIN, StackConfig, SystemPoolConfig
from components.general_pool import GeneralPool, GeneralPoolArgs
from components.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.spot_gpu_pool import SpotGpuPool, SpotGpuPoolArgs


def build_stack(cfg: StackConfig) -> dict[str, Any]:
    c = cfg.cluster
    a = cfg.autoscaler
    # An explicit provider: the location comes from the stack config alone, never the environment.
    provider = azure_native.Provider("azure-native", location=c.region)
    opts = pulumi.ResourceOptions(providers=[provider])
    system = c.system_pool or SystemPoolConfig()
    rg = c.resource_group
    cluster = AksCluster(
        c.name,
        AksClusterArgs(
            cluster_name=c.name,
            location=c.region,
            zones=list(c.zones),
            kubernetes_version=c.kubernetes_version,
            resource_group_name=rg.name if rg else None,
            create_resource_group=rg.create if rg else True,
            network_plugin=c.network_plugin or DEFAULT_AKS_NETWORK_PLUGIN,
            system_vm_size=system.vm_size,
            system_min_size=system.min_size,
            system_max_size=system.max_size,
            system_critical_addons_only=system.critical_addons_only,
            scale_down_unneeded_time=a.scale_down_unneeded_time,
            scale_down_delay_after_add=a.scale_down_delay_after_add,
            max_node_provision_time=a.max_node_provision_time,
            expander=list(a.expander),
            protect=c.protect,
            tags=cfg.tags,
        ),
        opts=opts,
    )
    gp = cfg.general_pool
    general = GeneralPool(
        "general",
        GeneralPoolArgs(
            cluster=cluster,
            instance_types=list(gp.instance_types),
            min_size=gp.min_size,
            max_size=gp.max_size,
            spot=gp.spot,
            disk_size_gib=gp.disk_size_gib,
            tags=cfg.tags,
        ),
        opts=opts,
    )
    gpu_pools = [
        SpotGpuPool(
            p.name,
            SpotGpuPoolArgs(
                cluster=cluster,
                instance_types=cfg.instance_types(p),
                min_size=p.min_size,
                max_size=p.max_size,
                spot=p.spot,
                on_demand_fallback=p.on_demand_fallback,
                per_zone=p.per_zone,
                disk_size_gib=p.disk_size_gib,
                spot_max_price=p.spot_max_price,
                gpu_sharing_replicas=cfg.device_plugin.time_slicing_replicas or 1,
                tags=cfg.tags,
            ),
            opts=opts,
        )
        for p in cfg.gpu_pools
    ]
    k8s_opts = pulumi.ResourceOptions(depends_on=[general])  # system pods need a node first
    NvidiaDevicePlugin(
        "nvidia-device-plugin",
        NvidiaDevicePluginArgs(
            provider=cluster.provider,
            gpu_pools=gpu_pools,
            time_slicing_replicas=cfg.device_plugin.time_slicing_replicas,
        ),
        opts=k8s_opts,
    )
    ClusterAutoscaler(
        "cluster-autoscaler",
        ClusterAutoscalerArgs(
            cluster=cluster,
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
    return {
        "cloud": "azure",
        "clusterName": cluster.cluster_name,
        "resourceGroup": cluster.resource_group_name,
        "region": c.region,
        "kubeconfig": cluster.kubeconfig,
        "gpuNodeGroups": {p.pool_name: p.node_group_names for p in gpu_pools},
    }
