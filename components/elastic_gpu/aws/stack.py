"""The EKS stack: cluster, general pool, spot GPU pools, device plugin, autoscaler."""

from __future__ import annotations

import re
from typing import Any

import pulumi
import pulumi_aws as aws

from elastic_gpu.aws.addons import EksAddons, EksAddonsArgs
from elastic_gpu.aws.cluster import EksCluster, EksClusterArgs
from elastic_gpu.aws.config_rules import KARPENTER
from elastic_gpu.aws.karpenter.controller import Karpenter, KarpenterArgs
from elastic_gpu.compose import build_pools_and_addons
from elastic_gpu.config import GpuPoolConfig, StackConfig
from elastic_gpu.durations import NODE_POOL_DURATION_PATTERN, duration_text, parse_duration
from elastic_gpu.general_pool import GeneralPool, GeneralPoolArgs
from elastic_gpu.pool_types import PoolProvisioner, provisioner_node_pool_names
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs


def pool_args(cfg: StackConfig, p: GpuPoolConfig) -> dict[str, Any]:
    """What this cloud derives for a configured pool's SpotGpuPoolArgs beyond its settings (none)."""
    return {}


def build_stack(cfg: StackConfig, general_args: GeneralPoolArgs, gpu_args: list[SpotGpuPoolArgs]) -> dict[str, Any]:
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
            nat_gateways=c.nat_gateways,
            ecr_endpoints=c.ecr_endpoints,
            public_access=c.api_access.public,
            public_access_cidrs=list(c.api_access.public_cidrs) if c.api_access.public_cidrs else None,
            runner_in_vpc=c.api_access.runner_in_vnet,
            karpenter_discovery=cfg.provisioner == KARPENTER,
        ),
        opts=opts,
    )

    def karpenter(general: GeneralPool) -> PoolProvisioner:
        # An idle GPU node lives as long under Karpenter as under the autoscaler: scaleDownUnneededTime, as
        # written when NodePool's consolidateAfter pattern takes it, else as Go writes it ("1.5h" -> "1h30m0s").
        idle = cfg.autoscaler.scale_down_unneeded_time
        if not re.fullmatch(NODE_POOL_DURATION_PATTERN, idle):
            idle = duration_text(parse_duration(idle))
        args = KarpenterArgs(
            cluster=cluster,
            general_pool=general,
            consolidate_after=idle,
            spot_service_linked_role=c.spot_service_linked_role,
            tags=cfg.tags,
        )
        return Karpenter("karpenter", args, opts=opts).nodes

    provisioner = karpenter if cfg.provisioner == KARPENTER else None
    parts = build_pools_and_addons(cfg, general_args, gpu_args, cluster, opts, provisioner)
    # After every node group: on a version bump the add-ons move after the node groups have.
    nodes = [r for pool in [parts.general, *parts.gpu_pools] for r in pool.nodes]
    addons = EksAddons("eks-addons", EksAddonsArgs(cluster=cluster, nodes=nodes, tags=cfg.tags), opts=opts)
    outputs = {
        "cloud": "aws",
        "clusterName": cluster.cluster_name,
        "region": c.region,
        "kubeconfig": cluster.kubeconfig,
        "oidcProviderArn": cluster.oidc_provider.arn,
        "autoscalerImage": parts.autoscaler.image,
        "gpuNodeGroups": {p.pool_name: p.node_group_names for p in parts.gpu_pools},
        "eksAddonVersions": addons.versions,
    }
    if provisioner is not None:
        outputs["gpuNodePools"] = {p.pool_name: provisioner_node_pool_names(p) for p in parts.gpu_pools}
    return outputs
