"""The GKE stack: cluster, general pool, spot GPU pools, (no) device plugin, autoscaling, Kueue."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from components.config import GpuPoolConfig, StackConfig
from components.gcp.kueue import KueueDws, KueueDwsArgs
from components.general_pool import GeneralPool, GeneralPoolArgs
from components.gke_cluster import GkeCluster, GkeClusterArgs
from components.gpu_catalog import gpu_instance_type
from components.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.spot_gpu_pool import SpotGpuPool, SpotGpuPoolArgs


def _gpu_count(cfg: StackConfig, pool: GpuPoolConfig) -> int | None:
    """N1 machine types take the count from gpusPerNode; the others fix it."""
    row = gpu_instance_type("gcp", cfg.instance_types(pool)[0])
    if row is not None and row.gpu_counts and "gpus_per_node" in pool.model_fields_set:
        return pool.gpus_per_node
    return None


def build_stack(cfg: StackConfig) -> dict[str, Any]:
    c = cfg.cluster
    assert c.project, "validated by components/gcp/rules.py"
    # An explicit provider: project and region come from the stack config alone, never the environment.
    provider = gcp.Provider("gcp", project=c.project, region=c.region)
    opts = pulumi.ResourceOptions(providers={"gcp": provider})
    cluster = GkeCluster(
        c.name,
        GkeClusterArgs(
            cluster_name=c.name,
            project=c.project,
            region=c.region,
            zones=list(c.zones),
            kubernetes_version=c.kubernetes_version,
            regional=c.regional,
            release_channel=c.release_channel,
            private_nodes=c.private_nodes,
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
                # A GKE node pool has one machine type: the configured one, or the catalog's smallest.
                instance_types=cfg.instance_types(p)[:1],
                min_size=p.min_size,
                max_size=p.max_size,
                spot=p.spot,
                on_demand_fallback=p.on_demand_fallback,
                per_zone=p.per_zone,
                disk_size_gib=p.disk_size_gib,
                gpu_count=_gpu_count(cfg, p),
                gpu_driver_version=p.gpu_driver_version,
                queued_provisioning=p.queued_provisioning,
                tags=cfg.tags,
            ),
            opts=opts,
        )
        for p in cfg.gpu_pools
    ]
    k8s_opts = pulumi.ResourceOptions(depends_on=[general])  # system pods need a node first
    # Declares nothing on GKE (every pool ships GKE's managed plugin); kept so the wiring matches.
    NvidiaDevicePlugin(
        "nvidia-device-plugin",
        NvidiaDevicePluginArgs(provider=cluster.provider, gpu_pools=gpu_pools),
        opts=k8s_opts,
    )
    a = cfg.autoscaler
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
    outputs: dict[str, Any] = {
        "cloud": "gcp",
        "clusterName": cluster.cluster_name,
        "project": c.project,
        "region": c.region,
        "location": cluster.location,
        "kubeconfig": cluster.kubeconfig,
        "gpuNodePools": {p.pool_name: p.node_group_names for p in gpu_pools},
    }
    if any(p.queued_provisioning for p in cfg.gpu_pools):
        kueue = KueueDws("kueue", KueueDwsArgs(provider=cluster.provider), opts=k8s_opts)
        outputs["kueueLocalQueue"] = kueue.local_queue
    return outputs
