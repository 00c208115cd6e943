"""The GKE stack: cluster, general pool, spot GPU pools, (no) device plugin, autoscaling, Kueue."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from elastic_gpu.compose import build_pools_and_addons
from elastic_gpu.config import GpuPoolConfig, StackConfig
from elastic_gpu.gcp.autoprovisioning import PROVISIONER
from elastic_gpu.gcp.autoprovisioning.cluster import limits_for, limits_problems
from elastic_gpu.gcp.autoprovisioning.spec import cluster_auto_provisioning
from elastic_gpu.gcp.cluster import GkeCluster, GkeClusterArgs
from elastic_gpu.gcp.kueue import KueueDws, KueueDwsArgs, WebhookFirewall, cluster_queue_quota
from elastic_gpu.gcp.pools import node_network_tag
from elastic_gpu.general_pool import GeneralPoolArgs
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.scheduling import POOL_LABEL
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs


def _gpu_count(cfg: StackConfig, pool: GpuPoolConfig) -> int | None:
    """N1 machine types take the count from gpusPerNode; the others fix it."""
    row = gpu_instance_type("gcp", cfg.instance_types(pool)[0])
    if row is not None and row.gpu_counts and "gpus_per_node" in pool.model_fields_set:
        return pool.gpus_per_node
    return None


def pool_args(cfg: StackConfig, p: GpuPoolConfig) -> dict[str, Any]:
    """What this cloud derives for a configured pool's SpotGpuPoolArgs beyond its settings (its GCP options
    are among them): the machine types a node pool takes, and an N1 node's GPU count."""
    nap = cfg.provisioner == PROVISIONER and not p.queued_provisioning
    return {
        # A GKE node pool has one machine type: the configured one, or the catalog's smallest; a
        # ComputeClass takes them all (a `gpu:` pool: its family).
        "instance_types": cfg.instance_types(p) if nap else cfg.instance_types(p)[:1],
        "gpu_count": _gpu_count(cfg, p),
    }


def node_auto_provisioning(cfg: StackConfig) -> bool:
    """The stack's cluster turns on cluster-wide node auto-provisioning (spec.cluster_auto_provisioning)."""
    c = cfg.cluster
    return cfg.provisioner == PROVISIONER and cluster_auto_provisioning(c.node_auto_provisioning, c.kubernetes_version)


def cluster_problems(cfg: StackConfig) -> list[str]:
    """With node auto-provisioning on, the cluster's limits must be summable from every pool's machine types."""
    return limits_problems(cfg) if node_auto_provisioning(cfg) else []


def build_stack(cfg: StackConfig, general_args: GeneralPoolArgs, gpu_args: list[SpotGpuPoolArgs]) -> dict[str, Any]:
    c = cfg.cluster
    assert c.project, "validated by elastic_gpu/gcp/config_rules.py"
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
            public_access=c.api_access.public,
            authorized_networks=list(c.api_access.public_cidrs) if c.api_access.public_cidrs else None,
            control_plane_cidr=c.control_plane_cidr,
            network=c.network,
            subnetwork=c.subnetwork,
            cloud_nat=c.cloud_nat,
            node_cidr=c.network_cidr,
            node_service_account=c.node_service_account,
            enable_services=c.enable_services,
            provisioner=PROVISIONER if cfg.provisioner == PROVISIONER else None,
            auto_provisioning=limits_for(cfg) if node_auto_provisioning(cfg) else None,
        ),
        opts=opts,
    )
    parts = build_pools_and_addons(cfg, general_args, gpu_args, cluster, opts)
    outputs: dict[str, Any] = {
        "cloud": "gcp",
        "clusterName": cluster.cluster_name,
        "project": c.project,
        "region": c.region,
        "location": cluster.location,
        "kubeconfig": cluster.kubeconfig,
        "gpuNodePools": {p.pool_name: p.node_group_names for p in parts.gpu_pools},
    }
    if any(p.queued_provisioning for p in cfg.gpu_pools):
        firewall = (
            WebhookFirewall(
                project=c.project,
                network=cluster.network,
                control_plane_cidr=c.control_plane_cidr,
                target_tags=[node_network_tag(cluster.cluster_name)],
            )
            if c.private_nodes
            else None
        )
        kueue = KueueDws(
            "kueue",
            KueueDwsArgs(
                provider=cluster.provider,
                quota=cluster_queue_quota([p.args for p in parts.gpu_pools if p.args.queued_provisioning]),
                nodes=parts.general.nodes,
                # Kueue runs on the general pool: with node auto-provisioning on, GKE would create a node
                # pool for a Kueue pod that fits nowhere else (and without it the pod would stay pending).
                node_selector={POOL_LABEL: parts.general.labels[POOL_LABEL]},
                queue_namespaces=list(cfg.kueue.queue_namespaces) if cfg.kueue else ["default"],
                webhook_firewall=firewall,
            ),
            opts=pulumi.ResourceOptions.merge(opts, parts.k8s_opts),
        )
        outputs["kueueLocalQueue"] = kueue.local_queue
    return outputs
