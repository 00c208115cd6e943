"""Azure builders for GeneralPool and SpotGpuPool: which AKS agent pools, with what.

An AKS agent pool has exactly one VM size, so a SpotGpuPool becomes one agent
pool per VM size (and per zone when `per_zone`), plus an optional on-demand
fallback per VM size.
"""

from __future__ import annotations

import math
import re
import weakref
from typing import TYPE_CHECKING

import pulumi
from pulumi_azure_native import containerservice as cs

from elastic_gpu.azure.network import vnet_of
from elastic_gpu.azure.node_provisioning import uses_node_provisioning
from elastic_gpu.azure.node_provisioning.pools import build_nap_gpu_pool, nap_pool_problems
from elastic_gpu.azure.node_spec import KUBELET_KEYS, AksNodeSpec, PoolNodes, forcing, pool_nodes
from elastic_gpu.azure.node_template import resources_tag
from elastic_gpu.azure.reservations import cluster_grant_problems, existing_cluster_warning, reservation_problems
from elastic_gpu.azure.system_pool import MAX_AGENT_POOL_NAME
from elastic_gpu.errors import ConfigError, about, problem
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.karpenter_core import DO_NOT_DISRUPT
from elastic_gpu.pool_args import PoolBuilder
from elastic_gpu.pool_names import DIGEST_LEN, short_digest
from elastic_gpu.pool_overrides import kubelet_problems, unsupported
from elastic_gpu.pool_types import BuiltPool, Capacity, NodeGroupRef
from elastic_gpu.prices import TABLE_PATH, price_row, price_rows
from elastic_gpu.scheduling import (
    GPU_RESOURCE,
    NODE_CLASS_GENERAL,
    POOL_LABEL,
    node_labels,
    split_total,
)
from elastic_gpu.settings.azure import spot_max_price_problems
from elastic_gpu.settings.base import Spelling
from elastic_gpu.validation import said
from elastic_gpu.workload import WorkloadContract

if TYPE_CHECKING:
    from elastic_gpu.cluster_handle import AksClusterHandle
    from elastic_gpu.general_pool import GeneralPoolArgs
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

#: AKS Linux agent-pool names: lowercase letters and digits, starting with a letter, 1-12 characters.
AGENT_POOL_NAME_PATTERN = r"^[a-z][a-z0-9]{0,11}$"
#: Agent-pool name: up to STEM_CHARS of the pool name, a kind letter, and a digest of the fields
#: that force a replacement (elastic_gpu.replacement): 5 + 1 + 6 = 12.
STEM_CHARS = MAX_AGENT_POOL_NAME - 1 - DIGEST_LEN
#: Kind letters: general (on-demand), spot, on-demand (GPU), reserved (GPU, in a capacity reservation group).
KIND_GENERAL, KIND_SPOT, KIND_ON_DEMAND, KIND_RESERVED = "g", "s", "o", "r"
#: VM sizes per GPU pool (the resource names keep a one-digit size index).
MAX_VM_SIZES = 9
#: Spot max price -1: pay up to the on-demand price; evicted for capacity only, never for price.
DEFAULT_SPOT_MAX_PRICE = -1.0
#: A pool's default maxMinutesToFallback: AKS's autoscaler deletes a spot VM that fails to provision at
#: once (~1 min from the pod's creation), but a scale-set-level error is seen only at maxNodeProvisionTime
#: (15 min by default): one spot agent pool falls back 15.7-16 min after the pod (simulation/backoff.py),
#: so 20 is one spot agent pool in the slower regime plus slack.
DEFAULT_MAX_MINUTES_TO_FALLBACK = 20.0
#: The AKS spot label's value on spot nodes (spot-node-pool.md).


def agent_pool_stem(pool_name: str) -> str:
    """Our pool name as an agent-pool name stem: lowercase, letters and digits only ("t4-spot" -> "t4spot")."""
    return re.sub(r"[^a-z0-9]", "", pool_name.lower())


def agent_pool_name_problems(where: str, pool_name: str) -> list[str]:
    """A pool name must give valid AKS agent-pool names (its stem is cut to fit; the digest keeps them apart)."""
    stem = agent_pool_stem(pool_name)
    if not stem or not stem[0].isalpha():
        return [
            f"{where}name: {pool_name!r} gives the AKS agent-pool name stem {stem!r}; on azure it must start "
            f"with a letter (hyphens and other non-alphanumerics are dropped), because AKS agent-pool names are "
            f"lowercase alphanumeric starting with a letter, at most {MAX_AGENT_POOL_NAME} characters"
        ]
    return []


def aks_agent_pool_name(stem: str, kind: str, forcing: dict[str, object]) -> str:
    """`<stem[:5]><kind><digest>` (<= 12 characters): the digest covers the whole stem and every field of
    ours that forces a replacement, so such a change renames the pool and AKS gets the new pool before
    the old one is deleted. The priority regex uses this name too."""
    return f"{stem[:STEM_CHARS]}{kind}{short_digest({'stem': stem, 'kind': kind, **forcing})}"


def vmss_name_regex(agent_pool: str) -> str:
    """Regex over the node-group name AKS's managed cluster-autoscaler shows the priority expander.

    The Azure cloud provider of the cluster-autoscaler names a node group after its
    VM scale set (kubernetes/autoscaler cluster-autoscaler/cloudprovider/azure,
    ScaleSet.Id()), and AKS names an agent pool's scale set `aks-<pool>-<number>-vmss`
    (the AKS blog "Scaling safely with spot on AKS", 2025-07-17, ranks pools in the
    priority ConfigMap by such names). Anchored, so pool "t4s01" never matches "t4s011".
    """
    return f"^aks-{re.escape(agent_pool)}-[0-9]+-vmss$"


def agent_pool_name(spec: AksNodeSpec) -> str:
    """The spec's AKS agent-pool name: its stem and kind, and a digest of its ForceNew inputs (node_spec.forcing)."""
    return aks_agent_pool_name(spec.stem, spec.kind, forcing(spec))


def node_group_ref(spec: AksNodeSpec) -> NodeGroupRef:
    name = agent_pool_name(spec)
    return NodeGroupRef(name, spec.capacity, vmss_name_regex(name), spec.rank)


#: The agent pool each cluster got last: the next one waits for it (see build_agent_pool).
_LAST_POOL: weakref.WeakKeyDictionary[object, cs.AgentPool] = weakref.WeakKeyDictionary()


def build_agent_pool(
    res_name: str, spec: AksNodeSpec, *, cluster: AksClusterHandle, tags: dict[str, str], parent: pulumi.Resource
) -> cs.AgentPool:
    """One agent pool, created after the cluster's previous one: AKS runs one operation on a cluster at a
    time and answers concurrent pool creations with "Another operation is in progress"
    (Azure/terraform-azurerm-avm-ptn-aks-production PR 25 chains its pools the same way)."""
    previous = _LAST_POOL.get(cluster)
    pool = cs.AgentPool(
        res_name,
        agent_pool_name=agent_pool_name(spec),
        resource_group_name=cluster.resource_group_name,
        resource_name_=cluster.cluster_name,
        mode=cs.AgentPoolMode.USER,
        type=cs.AgentPoolType.VIRTUAL_MACHINE_SCALE_SETS,
        os_type=spec.os_type,
        vm_size=spec.vm_size,
        # None in no zone: a regional pool (AKS refuses availabilityZones in a region without zones).
        availability_zones=list(spec.zones) or None,
        # Follows the control plane: on an upgrade the pools move after the cluster (they depend on it).
        orchestrator_version=cluster.kubernetes_version,
        enable_auto_scaling=spec.autoscaled,
        count=spec.min_count,
        min_count=spec.min_count if spec.autoscaled else None,
        max_count=spec.max_count if spec.autoscaled else None,
        scale_set_priority=spec.scale_set_priority,
        scale_set_eviction_policy=spec.scale_set_eviction_policy,
        spot_max_price=spec.spot_max_price,
        node_labels=spec.labels,
        node_taints=[str(t) for t in spec.taints] or None,
        os_disk_size_gb=spec.disk_size_gib,
        vnet_subnet_id=spec.vnet_subnet_id,
        capacity_reservation_group_id=spec.capacity_reservation_group_id,
        kubelet_config=cs.KubeletConfigArgs(**spec.kubelet_config) if spec.kubelet_config else None,
        tags={**tags, **spec.node_template_tags},
        opts=pulumi.ResourceOptions(
            parent=parent,
            # The autoscaler owns the node count; `pulumi up` must never fight it.
            ignore_changes=["count"] if spec.autoscaled else [],
            # A change that forces a replacement also renames the pool: create first, then delete.
            delete_before_replace=False,
            depends_on=[previous] if previous is not None else [],
        ),
    )
    _LAST_POOL[cluster] = pool
    return pool


def _identity(cluster: AksClusterHandle) -> dict[str, object]:
    """AKS nodes act as the cluster's kubelet identity (grant it AcrPull, storage, ...)."""
    identity = getattr(cluster, "kubelet_identity_object_id", None)  # optional handle attribute
    return {} if identity is None else {"kubelet_identity_object_id": identity}


def build_general_pool(name: str, args: GeneralPoolArgs, parent: pulumi.Resource) -> BuiltPool:
    cluster: AksClusterHandle = args.cluster  # type: ignore[assignment]
    problems = agent_pool_name_problems(f"GeneralPool '{name}': ", name)
    if len(args.instance_types) != 1:
        problems.append(
            f"GeneralPool '{name}': instance_types: an AKS agent pool has one VM size; give exactly one "
            f"(got {args.instance_types})"
        )
    if args.spot:
        problems.append(f"GeneralPool '{name}': spot: the general pool must be on-demand on AKS (got True)")
    if problems:
        raise ConfigError(problems, source=f"GeneralPool '{name}'")
    nodes = pool_nodes(name, args)
    labels = node_labels(pool=name, node_class=NODE_CLASS_GENERAL, spot=False) | nodes.extra_labels
    spec = AksNodeSpec(
        stem=agent_pool_stem(name),
        kind=KIND_GENERAL,
        capacity="on-demand",
        vm_size=args.instance_types[0],
        zones=cluster.zones,
        min_count=args.min_size,
        max_count=args.max_size,
        labels=labels,
        taints=[],
        disk_size_gib=nodes.disk_size_gib,
        autoscaled=not uses_node_provisioning(cluster),
        vnet_subnet_id=nodes.vnet_subnet_id,
        kubelet_config=nodes.kubelet_config,
    )
    pool = build_agent_pool(f"{name}-pool", spec, cluster=cluster, tags=nodes.tags, parent=parent)
    return BuiltPool(
        node_groups=[node_group_ref(spec)], taints=[], labels=labels, resources=[pool], cloud_outputs=_identity(cluster)
    )


def override_problems(where: str, args: GeneralPoolArgs | SpotGpuPoolArgs) -> list[str]:
    """What AKS makes of the pool's own node settings: a subnet and kubelet settings, nothing else."""
    problems = unsupported(
        where,
        args,
        "azure",
        {
            "node_identity": "AKS nodes act as the cluster's kubelet identity",
            "security_group_ids": "AKS filters traffic with the subnet's network security group",
            "image": "AKS manages the node image (its node OS upgrade channel)",
            "user_data": "AKS agent pools take no user data",
        },
    )
    if args.subnet_ids is not None and not isinstance(args.subnet_ids, str):
        problems.append(
            problem(
                where,
                "subnet_ids",
                "on AKS one VNet subnet id for all the pool's agent pools (an Azure subnet spans zones), a plain "
                f"string as it is part of the agent-pool name (got {said(args.subnet_ids)})",
            )
        )
    return problems + own_vnet_problems(where, args) + kubelet_problems(where, args, "azure", KUBELET_KEYS)


def own_vnet_problems(where: str, args: GeneralPoolArgs | SpotGpuPoolArgs) -> list[str]:
    """A pool subnet on a cluster this library creates: only in the VNet of the cluster's own subnet. ARM
    refuses pools in another VNet ("all node pools must reside in the same virtual network", Azure/AKS#2927),
    and the VNet AKS creates has no subnet of yours. (A cluster made elsewhere is not judged.)"""
    if not isinstance(args.subnet_ids, str) or not hasattr(args.cluster, "vnet_subnet_id"):
        return []
    cluster_subnet = args.cluster.vnet_subnet_id
    if cluster_subnet is None:
        return [
            problem(
                where,
                "subnet_ids",
                "the cluster is in the VNet AKS creates, so a pool cannot be in a subnet of yours; set the "
                "cluster's subnet_id (stack config cluster.subnetId) to a subnet of that VNet "
                f"(got subnet_ids={args.subnet_ids!r})",
            )
        ]
    if vnet_of(args.subnet_ids) != vnet_of(cluster_subnet):
        return [
            problem(
                where,
                "subnet_ids",
                f"every AKS pool must be in the cluster's VNet ({vnet_of(cluster_subnet)}, from its subnet_id); "
                f"got {said(args.subnet_ids)}",
            )
        ]
    return []


def pool_problems(where: str, args: SpotGpuPoolArgs) -> list[str]:
    """AKS rules for a GPU pool beyond the cloud-neutral ones."""
    nap = uses_node_provisioning(args.cluster)
    spell = Spelling(where, stack_file=False)
    problems = about("reservations", reservation_problems(spell, args, nap=nap, sizes=len(args.instance_types)))
    if nap:
        return problems + nap_pool_problems(where, args)
    problems += about("spot_max_price", spot_max_price_problems(spell, args.spot_max_price))
    granted = getattr(args.cluster, "capacity_reservation_group_ids", None)  # an AksCluster this library creates
    if args.reservations is not None and granted is not None:
        problems += about("reservations", cluster_grant_problems(where, args.reservations.ids, granted))
    if len(args.instance_types) > MAX_VM_SIZES:
        problems.append(
            problem(where, "instance_types", f"at most {MAX_VM_SIZES} VM sizes on AKS (got {len(args.instance_types)})")
        )
    return problems


def node_group_counts(args: SpotGpuPoolArgs) -> tuple[int, int]:
    """(primary agent pools, fallback agent pools): one per VM size (and zone when `per_zone`);
    the fallback one per VM size across the zones."""
    sizes = len(args.instance_types)
    if args.reservations is not None and args.reservations.only:
        return 0, 0  # the reserved agent pools alone (reservations.nodes is checked against them)
    primary = sizes * (len(args.pool_zones) if _per_zone(args) else 1)
    return primary, (sizes if args.on_demand_fallback else 0)


def _per_zone(args: SpotGpuPoolArgs) -> bool:
    """An agent pool per zone: only where there are zones (a regional pool has none to split by)."""
    return args.pool_per_zone and bool(args.pool_zones)


def workload_contract(name: str, args: SpotGpuPoolArgs) -> WorkloadContract:
    """Tolerate the GPU taint and, for a spot pool, AKS's spot taint; select the pool's label; under node
    auto-provisioning the Job's pods carry Karpenter's do-not-disrupt."""
    nodes = pool_nodes(name, args)
    return WorkloadContract(
        pool=name,
        taints=nodes.spot_taints if args.spot else nodes.gpu_taints,
        node_selector={POOL_LABEL: name},
        pod_annotations=dict(DO_NOT_DISRUPT) if uses_node_provisioning(args.cluster) else {},
    )


def price_ranks(vm_sizes: list[str], spot: bool, region: str | None) -> list[int]:
    """Each VM size's rank by its hourly price on that capacity (0 = cheapest), so the priority
    expander never draws between sizes at random. AKS's managed autoscaler takes a single expander,
    so no least-waste breaks the tie after priority. A size is priced from the price table's rows in
    the cluster's `region`; only when the region is not a plain value before deployment (an existing
    cluster's location as an Output) as the mean over the rows of every region. A spot rank reads only
    rows with a spot price (an on-demand price in its place would rank a size by the wrong market); a
    size with no price ranks after priced ones, among them by the region's on-demand price, then vCPUs."""

    def mean(prices: list[float]) -> float:
        return sum(prices) / len(prices) if prices else math.inf

    def key(vm: str) -> tuple[float, float, int]:
        rows = [r for r in price_rows() if r.cloud == "azure" and r.item == vm and region in (None, r.region)]
        spot_price = mean([r.spot for r in rows if r.spot is not None]) if spot else 0.0
        catalog = gpu_instance_type("azure", vm)
        return spot_price, mean([r.on_demand for r in rows]), catalog.vcpus if catalog else 0

    order = sorted(dict.fromkeys(vm_sizes), key=key)
    return [order.index(vm) for vm in vm_sizes]


def spot_max_price_warnings(price: float | None, vm_sizes: list[str], region: str | None) -> list[str]:
    """A spot price cap below a size's spot price in the price table (elastic_gpu/data/prices.csv, read through
    elastic_gpu.prices.price_row) for the cluster's region: Azure allocates no spot VM whose price is above the
    cap (Microsoft.Compute BillingProfile.maxPrice: "the operation will only succeed if the maxPrice is greater than
    the current Azure Spot price"), so the pool's nodes never come. Nothing
    to say for -1, an unknown region (an Output) or a size the table has no spot price for."""
    if price is None or price == -1 or region is None:
        return []
    out = []
    for vm in dict.fromkeys(vm_sizes):
        row = price_row("azure", region, vm)
        if row is not None and row.spot is not None and price < row.spot:
            out.append(
                f"spot_max_price (stack config gpuPools[].spotMaxPrice) {price:g} USD/hour is below {vm}'s spot "
                f"price in {region}, {row.spot:g} ({TABLE_PATH}, {row.source} {row.date}): Azure allocates no spot "
                "VM above the cap, so its nodes never come; raise it above the spot price, or leave it unset (-1: "
                "up to the on-demand price)"
            )
    return out


def build_spot_gpu_pool(name: str, args: SpotGpuPoolArgs, parent: pulumi.Resource) -> BuiltPool:
    cluster: AksClusterHandle = args.cluster  # type: ignore[assignment]
    if uses_node_provisioning(cluster):
        return build_nap_gpu_pool(name, args, parent)
    if problems := agent_pool_name_problems(f"SpotGpuPool '{name}': ", name):
        raise ConfigError(problems, source=f"SpotGpuPool '{name}'")
    if args.spot:
        region = getattr(cluster, "plain_location", None)  # the location, when the handle knows it before deployment
        for warning in spot_max_price_warnings(args.spot_max_price, list(args.instance_types), region):
            pulumi.log.warn(f"SpotGpuPool '{name}': {warning}", resource=parent)
    stem = agent_pool_stem(name)
    spot_max_price = DEFAULT_SPOT_MAX_PRICE if args.spot_max_price is None else args.spot_max_price
    # Spot nodes carry AKS's own taint and label: declared so the spec matches the nodes,
    # as the azurerm provider documents for spot pools (node_labels / node_taints).
    nodes = pool_nodes(name, args)
    gpu_taints, spot_taints = list(nodes.gpu_taints), list(nodes.spot_taints)

    def template_tags(vm: str) -> dict[str, str]:
        # Time-slicing: the autoscaler reads the GPUs a node from this pool will advertise from the scale
        # set's node-template tag (azure/node_template.py), not the VM size's physical count.
        if args.gpu_sharing_replicas <= 1:
            return {}
        row = gpu_instance_type("azure", vm, args.gpu_spec)
        gpus = row.gpus if row is not None else args.gpus_per_node
        return {resources_tag(GPU_RESOURCE): str(gpus * args.gpu_sharing_replicas)}

    def spec(
        cap: Capacity, vm: str, pool_zones: list[str], lo: int, hi: int, rank: int, group: str | None = None
    ) -> AksNodeSpec:
        spot = cap == "spot"
        return AksNodeSpec(
            stem=stem,
            kind={"spot": KIND_SPOT, "reserved": KIND_RESERVED}.get(cap, KIND_ON_DEMAND),
            capacity=cap,
            vm_size=vm,
            zones=pool_zones,
            min_count=lo,
            max_count=hi,
            labels=nodes.reserved_labels() if group else nodes.agent_pool_labels(spot),
            taints=spot_taints if spot else gpu_taints,
            disk_size_gib=nodes.disk_size_gib,
            spot_max_price=spot_max_price if spot else None,
            rank=rank,
            vnet_subnet_id=nodes.vnet_subnet_id,
            kubelet_config=nodes.kubelet_config,
            node_template_tags=template_tags(vm),
            capacity_reservation_group_id=group,
        )

    zones = args.pool_zones
    region = getattr(cluster, "plain_location", None)  # the location, when the handle knows it before deployment
    specs: list[tuple[str, AksNodeSpec]] = []
    reserved = args.reservations
    if reserved is not None:
        # The reserved tier first: a Regular agent pool per group and VM size, across the pool's zones, min 0, its
        # share of reservations.nodes as max (the preflight checks the groups' sizes, zones and counts).
        tier = [(group, i, vm) for group in reserved.ids for i, vm in enumerate(args.instance_types)]
        reserved_ranks = price_ranks(list(args.instance_types), spot=False, region=region)
        for k, ((group, i, vm), hi) in enumerate(zip(tier, split_total(reserved.nodes, len(tier)), strict=True)):
            specs.append(
                (f"{name}-{stem}{KIND_RESERVED}{k}", spec("reserved", vm, zones, 0, hi, reserved_ranks[i], group))
            )
        if granted_ids(cluster) is None:
            pulumi.log.warn(f"SpotGpuPool '{name}': {existing_cluster_warning(reserved.ids)}", resource=parent)
    if reserved is not None and reserved.only:
        return _built(specs, cluster, nodes, spot=False, parent=parent)
    per_zone = _per_zone(args)
    capacity: Capacity = "spot" if args.spot else "on-demand"
    kind = "s" if args.spot else "o"
    # maxSize (and fallbackMaxSize) are totals over all the agent pools they are split into,
    # so an AKS pool never reaches more nodes than its config says, whatever its VM sizes.
    placements = [
        (i, vm, [z] if per_zone else zones, z if per_zone else "")
        for i, vm in enumerate(args.instance_types)
        for z in (zones if per_zone else [""])
    ]
    mins = split_total(args.min_size, len(placements))
    maxes = split_total(args.max_size, len(placements))
    ranks = price_ranks(list(args.instance_types), spot=args.spot, region=region)
    for (i, vm, pool_zones, zone), lo, hi in zip(placements, mins, maxes, strict=True):
        # Resource names keep the readable `<stem><kind><size index><zone>`; the AKS name carries the digest.
        specs.append((f"{name}-{stem}{kind}{i}{zone}", spec(capacity, vm, pool_zones, lo, hi, ranks[i])))
    if args.on_demand_fallback:
        # One on-demand pool per VM size across all zones, min 0: used only when spot cannot be had.
        fallback_ranks = price_ranks(list(args.instance_types), spot=False, region=region)
        fallback_maxes = split_total(args.fallback_total, len(args.instance_types))
        for i, (vm, hi) in enumerate(zip(args.instance_types, fallback_maxes, strict=True)):
            specs.append((f"{name}-{stem}{KIND_ON_DEMAND}{i}", spec("on-demand", vm, zones, 0, hi, fallback_ranks[i])))

    return _built(specs, cluster, nodes, spot=args.spot, parent=parent)


def granted_ids(cluster: object) -> list[str] | None:
    """The capacity reservation groups an AksCluster this library created granted its identity; None for a
    cluster made elsewhere (the library cannot see its identity)."""
    return getattr(cluster, "capacity_reservation_group_ids", None)


def _built(
    specs: list[tuple[str, AksNodeSpec]],
    cluster: AksClusterHandle,
    nodes: PoolNodes,
    *,
    spot: bool,
    parent: pulumi.Resource,
) -> BuiltPool:
    """The pool's agent pools, declared in the order of `specs` (reserved, then its own capacity, then the
    fallback)."""
    pools: list[pulumi.Resource] = [
        build_agent_pool(res, s, cluster=cluster, tags=nodes.tags, parent=parent) for res, s in specs
    ]
    return BuiltPool(
        node_groups=[node_group_ref(s) for _, s in specs],
        # Every taint any of the pool's nodes carries: the device plugin tolerates them all.
        taints=list(nodes.spot_taints if spot else nodes.gpu_taints),
        # The labels of the pool's own capacity (its reserved tier's say "reserved"), as without a reserved tier.
        labels=next((s.labels for _, s in specs if s.capacity != "reserved"), specs[0][1].labels),
        resources=pools,
        cloud_outputs=_identity(cluster),
    )


#: The builders above as the deploy protocol's record (elastic_gpu/provider.py PoolBuilder).
BUILDER = PoolBuilder(
    override_problems=override_problems,
    pool_problems=pool_problems,
    node_group_counts=node_group_counts,
    workload_contract=workload_contract,
    build_general_pool=build_general_pool,
    build_spot_gpu_pool=build_spot_gpu_pool,
    default_max_minutes_to_fallback=DEFAULT_MAX_MINUTES_TO_FALLBACK,
)
