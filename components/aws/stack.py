"""The EKS stack: cluster, general pool, spot GPU pools, device plugin, autoscaler."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from components.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from components.config import StackConfig
from components.eks_cluster import EksCluster, EksClusterArgs
from components.general_pool import GeneralPool, GeneralPoolArgs
from components.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.spot_gpu_pool import SpotGpuPool, SpotGpuPoolArgs


def build_stack(cfg: StackConfig) -> dict[str, Any]:
    c = cfg.cluster
    # An explicit provider: the region comes from the stack config alone, never the environment.
    provider = aws.Provider("aws", region=c.region)
    opts = pulumi.ResourceOptions(providers={"aws": provider})
    cluster = EksCluster(
        c.name,
        EksClusterArgs(
            cluster_name=c.name,
            region=c.region,
            zones=list(c.zones),
            kubernetes_version=c.kubernetes_version,
            network_cidr=c.network_cidr,
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
                ami_family=p.ami_family,
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
    a = cfg.autoscaler
    autoscaler = ClusterAutoscaler(
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
        "cloud": "aws",
        "clusterName": cluster.cluster_name,
        "region": c.region,
        "kubeconfig": cluster.kubeconfig,
        "oidcProviderArn": cluster.oidc_provider.arn,
        "autoscalerImage": autoscaler.image,
        "gpuNodeGroups": {p.pool_name: p.node_group_names for p in gpu_pools},
    }
