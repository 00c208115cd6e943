"""SpotGpuPool under node auto-provisioning: one AKSNodeClass and its NodePools, no agent pools.

A spot pool with `on_demand_fallback` gets one NodePool allowing spot and on-demand
(elastic_gpu.karpenter_core node_pool_plans): NAP ranks its offerings by price, spot before on-demand, and
launches on-demand once every cheaper spot size is in its unavailable-offerings cache (simulation.py);
`max_size` caps both together. With `fallback_max_size` the fallback is its own on-demand NodePool of
lower weight over the same sizes, capped separately. A plan's max becomes its NodePool's `limits` (nodes,
and GPUs). The NodePools span the pool's
zones; NAP picks the zone per node, so `per_zone` has no meaning here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
import pulumi_kubernetes as k8s

from elastic_gpu.azure.node_provisioning.objects import (
    NODE_CLASS_API,
    NODE_CLASS_KIND,
    NodePoolSpec,
    azure_zone,
    node_class_spec,
)
from elastic_gpu.azure.node_provisioning.skus import NAP_GPU_SKUS, eligible_skus
from elastic_gpu.azure.node_spec import pool_nodes
from elastic_gpu.config import DEFAULT_SCALE_DOWN_UNNEEDED
from elastic_gpu.errors import ConfigError, problem
from elastic_gpu.karpenter_core import NODE_POOL_API, NODE_POOL_KIND, NodePoolPlan, node_pool_plans
from elastic_gpu.pool_types import BuiltPool
from elastic_gpu.scheduling import CAPACITY_LABEL, NODE_CLASS_GPU, node_labels
from elastic_gpu.validation import said

if TYPE_CHECKING:
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

#: The pool settings NAP has no place for, and why (a value other than the default is an error).
UNSUPPORTED = {
    "spot_max_price": "NAP always bids -1, up to the on-demand price (karpenter-provider-azure v1.14.2 "
    "pkg/providers/instance/vminstance.go:664 setVMPropertiesBillingProfile)",
}


def nap_pool_problems(where: str, args: SpotGpuPoolArgs) -> list[str]:
    """What a GPU pool cannot be under node auto-provisioning."""
    problems: list[str] = [
        problem(where, key, f"{why}; leave it unset under provisioner karpenter (got {said(getattr(args, key))})")
        for key, why in UNSUPPORTED.items()
        if getattr(args, key) is not None
    ]
    if unsupported := [t for t in args.instance_types if t not in NAP_GPU_SKUS]:
        problems.append(
            problem(
                where,
                "instance_types",
                f"{unsupported} get no NVIDIA driver under node auto-provisioning "
                f"(karpenter-provider-azure supported-gpus.yaml); allowed: {', '.join(sorted(NAP_GPU_SKUS))}",
            )
        )
    return problems


def node_pool_specs(
    name: str, args: SpotGpuPoolArgs, *, region: str, consolidate_after: str, node_class: str
) -> list[NodePoolSpec]:
    """The pool's NodePools, highest weight first: each over every eligible size (skus.eligible_skus).

    A NodePool that may launch spot declares AKS's spot taint on all its nodes (spot_taints: NAP adds none);
    a spot-first NodePool's on-demand nodes carry it too, which the pool's pods tolerate already, and its
    nodes get no elastic-gpu.io/capacity label (one template serves both; NAP labels each node
    karpenter.sh/capacity-type)."""
    nodes = pool_nodes(name, args)
    gpu_taints = list(nodes.gpu_taints)
    skus = eligible_skus(list(args.instance_types))
    zones = [azure_zone(region, z) for z in args.pool_zones]

    def spec(plan: NodePoolPlan) -> NodePoolSpec:
        spot = "spot" in plan.capacity_types
        labels = node_labels(pool=name, node_class=NODE_CLASS_GPU, spot=spot)
        if plan.spot_first:
            del labels[CAPACITY_LABEL]
        return NodePoolSpec(
            name=f"{name}-{plan.suffix}",
            capacity_types=plan.capacity_types,
            skus=skus,
            zones=zones,
            labels=labels | nodes.extra_labels,
            taints=list(nodes.spot_taints) if spot else gpu_taints,
            max_nodes=plan.max_nodes,
            gpus_per_node=args.gpus_per_node,
            weight=plan.weight,
            node_class=node_class,
            consolidate_after=consolidate_after,
        )

    plans = node_pool_plans(
        spot=args.spot,
        on_demand_fallback=args.on_demand_fallback,
        max_size=args.max_size,
        fallback_max_size=args.fallback_max_size,
    )
    return [spec(plan) for plan in plans]


def build_node_provisioning_pool(
    name: str, args: SpotGpuPoolArgs, parent: pulumi.Resource, *, region: str, consolidate_after: str
) -> tuple[list[NodePoolSpec], list[pulumi.Resource]]:
    """The pool's AKSNodeClass and NodePools, applied through the cluster's Kubernetes provider."""
    cluster = args.cluster
    nodes = pool_nodes(name, args)
    opts = pulumi.ResourceOptions(parent=parent, provider=cluster.provider)
    node_class = k8s.apiextensions.CustomResource(
        f"{name}-nodeclass",
        api_version=NODE_CLASS_API,
        kind=NODE_CLASS_KIND,
        metadata=k8s.meta.v1.ObjectMetaArgs(name=name),
        spec=node_class_spec(nodes.disk_size_gib, nodes.tags, nodes.vnet_subnet_id),
        opts=opts,
    )
    specs = node_pool_specs(name, args, region=region, consolidate_after=consolidate_after, node_class=name)
    pools = [
        k8s.apiextensions.CustomResource(
            s.name,
            api_version=NODE_POOL_API,
            kind=NODE_POOL_KIND,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=s.name),
            spec=s.to_spec(),
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[node_class])),
        )
        for s in specs
    ]
    return specs, [node_class, *pools]


def build_nap_gpu_pool(name: str, args: SpotGpuPoolArgs, parent: pulumi.Resource) -> BuiltPool:
    """A SpotGpuPool under node auto-provisioning (elastic_gpu.azure.pools dispatches here): its AKSNodeClass
    and NodePools; no agent pool, so no node group for the autoscaler."""
    cluster = args.cluster
    region = getattr(cluster, "plain_location", None)
    if region is None:
        raise ConfigError(
            [f"SpotGpuPool '{name}': cluster: node auto-provisioning needs the cluster's location as a plain value"]
        )
    consolidate_after = getattr(cluster, "consolidate_after", None) or DEFAULT_SCALE_DOWN_UNNEEDED
    specs, resources = build_node_provisioning_pool(
        name, args, parent, region=region, consolidate_after=consolidate_after
    )
    identity = getattr(cluster, "kubelet_identity_object_id", None)
    return BuiltPool(
        node_groups=[],
        # Every taint any of the pool's nodes carries: the device plugin tolerates them all.
        taints=list(specs[0].taints),
        labels=dict(specs[0].labels),
        resources=resources,
        node_group_ids=[],
        cloud_outputs={} if identity is None else {"kubelet_identity_object_id": identity},
        nodes=[],
    )
