"""The AKS stack: cluster, general pool, spot GPU pools, device plugin, autoscaler."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from elastic_gpu.azure.cluster import AksCluster, AksClusterArgs, aks_cluster_problems
from elastic_gpu.azure.node_provisioning import PROVISIONER as NAP
from elastic_gpu.compose import build_pools_and_addons
from elastic_gpu.config import GpuPoolConfig, StackConfig
from elastic_gpu.general_pool import GeneralPoolArgs
from elastic_gpu.pool_types import provisioner_node_pool_names
from elastic_gpu.settings.azure import DEFAULT_AKS_NETWORK_PLUGIN, MaintenanceWindowConfig, SystemPoolConfig
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs


def pool_args(cfg: StackConfig, p: GpuPoolConfig) -> dict[str, Any]:
    """What this cloud derives for a configured pool's SpotGpuPoolArgs beyond its settings (none)."""
    return {}


def cluster_args(cfg: StackConfig) -> AksClusterArgs:
    c = cfg.cluster
    a = cfg.autoscaler
    system = c.system_pool or SystemPoolConfig()
    rg = c.resource_group
    return AksClusterArgs(
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
        public_access=c.api_access.public,
        authorized_ip_ranges=list(c.api_access.public_cidrs) if c.api_access.public_cidrs else None,
        runner_in_vnet=c.api_access.runner_in_vnet,
        subnet_id=c.subnet_id,
        api_server_subnet_id=c.api_server_subnet_id,
        service_cidr=c.service_cidr,
        dns_service_ip=c.dns_service_ip,
        pod_cidr=c.pod_cidr,
        provisioner=NAP if cfg.provisioner == NAP else None,
        maintenance_window=c.maintenance_window or MaintenanceWindowConfig(),
        # The groups the pools reserve from: the cluster's identity is granted their use (azure/reservations.py).
        capacity_reservation_group_ids=list(
            dict.fromkeys(g for p in cfg.gpu_pools if p.reservations is not None for g in p.reservations.ids)
        ),
    )


def cluster_problems(cfg: StackConfig) -> list[str]:
    """The AksCluster's own Args checks, run before the provider or anything else is declared."""
    return aks_cluster_problems(cfg.cluster.name, cluster_args(cfg))


def build_stack(cfg: StackConfig, general_args: GeneralPoolArgs, gpu_args: list[SpotGpuPoolArgs]) -> dict[str, Any]:
    c = cfg.cluster
    # An explicit provider: the location comes from the stack config alone, never the environment.
    provider = azure_native.Provider("azure-native", location=c.region)
    opts = pulumi.ResourceOptions(providers=[provider])
    cluster = AksCluster(c.name, cluster_args(cfg), opts=opts)
    parts = build_pools_and_addons(cfg, general_args, gpu_args, cluster, opts)
    outputs = {
        "cloud": "azure",
        "clusterName": cluster.cluster_name,
        "resourceGroup": cluster.resource_group_name,
        "region": c.region,
        "kubeconfig": cluster.kubeconfig,
        "gpuNodeGroups": {p.pool_name: p.node_group_names for p in parts.gpu_pools},
    }
    if cfg.provisioner == NAP:
        outputs["gpuNodePools"] = {p.pool_name: provisioner_node_pool_names(p) for p in parts.gpu_pools}
    return outputs
