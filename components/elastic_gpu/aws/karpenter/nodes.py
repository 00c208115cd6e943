"""The Karpenter objects of one SpotGpuPool: an EC2NodeClass and its NodePools (elastic_gpu.karpenter_core
node_pool_plans: one spot-first NodePool for a spot pool with an on-demand fallback, or a spot NodePool and
a lower-weight on-demand one when `fallback_max_size` caps on-demand separately).

The pool keeps its meaning: its GPU and GPUs per node, spot first with an on-demand fallback, `max_size`
as the cap (NodePool `limits`), scale to zero, the GPU taint and the pool's labels, its disk, and the same
workload contract. What changes is who picks the instance: Karpenter, per pending pod, among every
catalog type with the pool's GPU and GPU count (the cluster-autoscaler plans with one shape per group).
No EKS node group is declared for the pool.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from elastic_gpu.aws.karpenter.release import NODE_CLASS_API, NODE_CLASS_GROUP
from elastic_gpu.aws.node_groups import DATA_DEVICE, IMDS_HOP_LIMIT
from elastic_gpu.aws.node_spec import AwsNodeSpec, gpu_node_spec, gpu_taints
from elastic_gpu.gpu_catalog import GpuSpec, gpu_instance_type, gpu_instance_types
from elastic_gpu.karpenter_core import (
    CAPACITY_TYPE_KEY,
    CONSOLIDATION_POLICY,
    DEFAULT_BUDGET,
    DRIFT_BUDGET,
    EXPIRE_AFTER,
    INSTANCE_TYPE_KEY,
    NODE_POOL_API,
    SPOT_WEIGHT,
    ZONE_KEY,
    NodePoolPlan,
    node_pool_plans,
    time_slicing_problem,
)
from elastic_gpu.pool_types import BuiltPool
from elastic_gpu.scheduling import (
    GPU_RESOURCE,
)
from elastic_gpu.validation import said

if TYPE_CHECKING:
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

#: The AMI: AL2023's newest, resolved by Karpenter (`al2023@latest`). A pinned `al2023@v<date>` would need a
#: bump per release; with @latest a new AMI makes running nodes Drifted, replaced one at a time per NodePool
#: (DRIFT_BUDGET) except while a pod with DO_NOT_DISRUPT (the pool's example Job) runs there.
AMI_ALIAS = "al2023@latest"


@dataclass(frozen=True)
class KarpenterNodes:
    """What a pool's Karpenter objects need from the Karpenter install (the `Karpenter` component)."""

    #: the IAM role the nodes run as (EC2NodeClass `role`: Karpenter makes the instance profile)
    node_role_name: pulumi.Input[str]
    subnet_selector_terms: list[dict[str, Any]]
    security_group_selector_terms: list[dict[str, Any]]
    #: how long a node stays empty before Karpenter removes it (NodePool disruption.consolidateAfter)
    consolidate_after: str
    provider: k8s.Provider
    #: the controller (its CRDs): the objects are created after it
    ready: list[pulumi.Resource] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)

    def build_pool(self, name: str, args: SpotGpuPoolArgs, parent: pulumi.Resource) -> BuiltPool:
        """The pool's EC2NodeClass and NodePools (elastic_gpu.pool_types.PoolProvisioner)."""
        return build_karpenter_pool(name, args, self, parent)

    #: Karpenter sizes nodes by the physical GPU count (no time-slicing: karpenter_core.time_slicing_problem).
    plans_physical_gpus = True

    def pool_problems(self, where: str, args: SpotGpuPoolArgs) -> list[str]:
        """What a pool cannot ask of Karpenter here: another AMI family than the EC2NodeClass's AL2023, and
        GPU time-slicing."""
        problems = []
        if args.ami_family != "al2023":
            problems.append(
                f"{where}ami_family: Karpenter's EC2NodeClass runs {AMI_ALIAS}; allowed: 'al2023' "
                f"(got {said(args.ami_family)})"
            )
        if args.node_group_args is not None:
            problems.append(
                f"{where}node_group_args: Karpenter makes this pool's nodes (no EKS node group is declared); "
                "set EC2NodeClass/NodePool fields through the pool's settings, or leave node_group_args unset"
            )
        if args.gpu_sharing_replicas > 1:
            problems.append(time_slicing_problem(f"{where}gpu_sharing_replicas", args.gpu_sharing_replicas))
        return problems


def eligible_instance_types(args: SpotGpuPoolArgs) -> list[str]:
    """Every catalog type with one of the pool's GPU models and its GPUs per node, whatever its vCPUs and
    memory (Karpenter picks per pod; an EKS node group must keep one shape)."""
    return eligible_types(args.instance_types, args.gpu_spec)


def eligible_types(instance_types: Sequence[str], spec: GpuSpec | None = None) -> list[str]:
    """`eligible_instance_types` of a pool of these types (an EC2 type fixes its GPU count: the first's), the
    pool's own types the catalog lacks (their GPU `spec` given or described by EC2) first."""
    rows = [row for t in instance_types if (row := gpu_instance_type("aws", t, spec)) is not None]
    if not rows:
        return []
    models, gpus = {row.gpu for row in rows}, rows[0].gpus
    own = [t for t in instance_types if gpu_instance_type("aws", t) is None and gpu_instance_type("aws", t, spec)]
    return own + [t.name for t in gpu_instance_types("aws") if t.gpu in models and t.gpus == gpus]


def node_class_name(pool: str) -> str:
    return pool


def node_pool_name(pool: str, suffix: str) -> str:
    return f"{pool}-{suffix}"


def node_class_spec(node: AwsNodeSpec, nodes: KarpenterNodes) -> dict[str, Any]:
    """EC2NodeClass: AL2023, IMDSv2 only with one hop (pods use IRSA, not the node's role), an encrypted gp3
    root volume of the pool's disk (the pool's node spec), the cluster's private subnets and node security
    group."""
    return {
        "role": nodes.node_role_name,
        "amiSelectorTerms": [{"alias": AMI_ALIAS}],
        "subnetSelectorTerms": nodes.subnet_selector_terms,
        "securityGroupSelectorTerms": nodes.security_group_selector_terms,
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": IMDS_HOP_LIMIT,
            "httpTokens": "required",
        },
        "blockDeviceMappings": [
            {
                "deviceName": DATA_DEVICE["al2023"],
                "rootVolume": True,
                "ebs": {
                    "volumeSize": f"{node.disk_size_gib}Gi",
                    "volumeType": node.disk_type,
                    "encrypted": True,
                    "deleteOnTermination": True,
                },
            }
        ],
        "tags": dict(node.tags),
        **reservation_selector(node),
    }


def reservation_selector(node: AwsNodeSpec) -> dict[str, Any]:
    """The EC2NodeClass's `capacityReservationSelectorTerms`: one term per reservation id (an id term takes no
    other field) and one for the tags (every tag must match), terms ORed (aws/karpenter-provider-aws v1.14.1
    pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml). None without a reserved tier: the key is left out, so a
    pool without one declares the node class it always did."""
    terms: list[dict[str, Any]] = [{"id": rid} for rid in node.reservation_ids]
    if node.reservation_tags:
        terms.append({"tags": dict(node.reservation_tags)})
    return {"capacityReservationSelectorTerms": terms} if terms else {}


def node_pool_spec(pool: str, args: SpotGpuPoolArgs, nodes: KarpenterNodes, plan: NodePoolPlan) -> dict[str, Any]:
    """One NodePool: the pool's labels and taints, the eligible types in its zones, its capacity types.

    A spot-first NodePool's nodes carry no elastic-gpu.io/capacity label (one template serves both capacity
    types); Karpenter labels each node karpenter.sh/capacity-type.
    `limits`: nodes = the plan's (max_size; fallback_max_size for a separate on-demand NodePool), and
    nvidia.com/gpu = that times the GPUs per node (the physical GPUs: Karpenter counts the instance type's,
    not time-sliced replicas). No cpu or memory limit: `nodes` already bounds them, and a cpu cap sized for
    the smallest type would refuse the larger ones Karpenter may pick.
    """
    node = gpu_node_spec(pool, args)
    labels = node.labels(None if plan.spot_first else "spot" in plan.capacity_types)
    return {
        "weight": plan.weight,
        "limits": {"nodes": str(plan.max_nodes), GPU_RESOURCE: str(plan.max_nodes * args.gpus_per_node)},
        "disruption": {
            "consolidationPolicy": CONSOLIDATION_POLICY,
            "consolidateAfter": nodes.consolidate_after,
            "budgets": [DEFAULT_BUDGET, DRIFT_BUDGET],
        },
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "nodeClassRef": {"group": NODE_CLASS_GROUP, "kind": "EC2NodeClass", "name": node_class_name(pool)},
                "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.taints],
                "requirements": [
                    {"key": CAPACITY_TYPE_KEY, "operator": "In", "values": list(plan.capacity_types)},
                    {"key": INSTANCE_TYPE_KEY, "operator": "In", "values": eligible_instance_types(args)},
                    {"key": ZONE_KEY, "operator": "In", "values": list(args.pool_zones)},
                ],
                "expireAfter": EXPIRE_AFTER,
            },
        },
    }


#: The NodePool of a pool's reserved tier: capacity type `reserved` only, at the highest weight a NodePool takes
#: (karpenter.sh_nodepools.yaml: weight 1..100). Karpenter orders NodePools by weight and, between equal weights,
#: the name later in the alphabet first (kubernetes-sigs/karpenter v1.14.1 pkg/utils/nodepool/nodepool.go
#: OrderByWeight), so the pool's other NodePools step one below theirs (100 -> 99, 10 -> 9) rather than rely on
#: names. Within one NodePool allowing several capacity types a reserved offering also wins (priced at the
#: on-demand price / 10,000,000: karpenter-provider-aws v1.14.1 pkg/providers/instancetype/offering/
#: reserved_capacity_resolver.go), but a NodePool of its own caps the tier at `reservations.nodes` apart from
#: `maxSize`.
RESERVED_SUFFIX = "reserved"
RESERVED_WEIGHT = SPOT_WEIGHT


def node_pools(args: SpotGpuPoolArgs) -> list[NodePoolPlan]:
    """The pool's NodePools, highest weight first: the reserved tier's (with `reservations`), then the spot and
    on-demand ones (none with `reservations.only`)."""
    plans = node_pool_plans(
        spot=args.spot,
        on_demand_fallback=args.on_demand_fallback,
        max_size=args.max_size,
        fallback_max_size=args.fallback_max_size,
    )
    reservations = args.reservations
    if reservations is None:
        return plans
    reserved = NodePoolPlan(RESERVED_SUFFIX, ("reserved",), reservations.nodes, RESERVED_WEIGHT)
    if reservations.only:
        return [reserved]
    return [reserved, *(dataclasses.replace(p, weight=p.weight - 1) for p in plans)]


def build_karpenter_pool(name: str, args: SpotGpuPoolArgs, nodes: KarpenterNodes, parent: pulumi.Resource) -> BuiltPool:
    opts = pulumi.ResourceOptions(parent=parent, provider=nodes.provider, depends_on=nodes.ready)
    node_class = k8s.apiextensions.CustomResource(
        f"{name}-nodeclass",
        api_version=NODE_CLASS_API,
        kind="EC2NodeClass",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=node_class_name(name)),
        spec=node_class_spec(gpu_node_spec(name, args), nodes),
        opts=opts,
    )
    resources: list[pulumi.Resource] = [node_class]
    plans = node_pools(args)
    for plan in plans:
        resources.append(
            k8s.apiextensions.CustomResource(
                f"{name}-{plan.suffix}",
                api_version=NODE_POOL_API,
                kind="NodePool",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=node_pool_name(name, plan.suffix)),
                spec=node_pool_spec(name, args, nodes, plan),
                opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[node_class])),
            )
        )
    first = node_pool_spec(name, args, nodes, plans[0])
    return BuiltPool(
        node_groups=[],
        taints=list(gpu_taints(args)),
        labels=first["template"]["metadata"]["labels"],
        resources=resources,
        node_group_ids=[],
        cloud_outputs={"node_role_name": nodes.node_role_name},
        nodes=[],
    )
