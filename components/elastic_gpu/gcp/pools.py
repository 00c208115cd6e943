"""GCP builders for GeneralPool and SpotGpuPool: which GKE node pools, with what.

On GKE one node pool spans the pool's zones: its autoscaling limits are totals
(`total_min_node_count`/`total_max_node_count`) and location policy ANY lets
GKE pick whichever zone has capacity, so `per_zone` needs no pool per zone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from elastic_gpu.errors import about, problem
from elastic_gpu.gcp.autoprovisioning import PROVISIONER, compute_class
from elastic_gpu.gcp.compute_class_api import COMPUTE_CLASS_API, WHEN_UNSATISFIABLE, compute_class_name
from elastic_gpu.gcp.config_rules import DEFAULT_DWS_MAX_RUN_HOURS, node_pool_problems
from elastic_gpu.gcp.kueue import LOCAL_QUEUE
from elastic_gpu.gcp.kueue_api import QUEUE_NAME_LABEL
from elastic_gpu.gcp.node_config import NO_PLACE_ON_GKE
from elastic_gpu.gcp.node_spec import (
    GPU_SHARING_TIME_SHARING,
    KUBELET_KEYS,
    RESERVATION_NAME_KEY,
    SPECIFIC_RESERVATION,
    GkeNodeSpec,
    GkeReservationAffinity,
    gpu_accelerator,
    node_config_problems,
    node_spec,
    override_kwargs,
)
from elastic_gpu.gcp.reservations import pool_reservation_problems, reservations_of
from elastic_gpu.gpu_catalog import gpu_spec_labels
from elastic_gpu.pool_args import PoolBuilder
from elastic_gpu.pool_names import pool_name
from elastic_gpu.pool_overrides import kubelet_problems, unsupported
from elastic_gpu.pool_types import BuiltPool, Capacity, NodeGroupRef
from elastic_gpu.scheduling import (
    API_TAINT_EFFECT,
    GKE_COMPUTE_CLASS_KEY,
    GKE_GPU_TAINT,
    GKE_QUEUED_TAINT,
    NODE_CLASS_GENERAL,
    NODE_CLASS_GPU,
    POOL_LABEL,
    Taint,
    gke_compute_class_taint,
    node_labels,
)
from elastic_gpu.workload import WorkloadContract

#: A pool's default maxMinutesToFallback: a stockout is seen at the next autoscaler loop
#: (simulation/backoff.py), so ten minutes covers several node pools.
DEFAULT_MAX_MINUTES_TO_FALLBACK = 10.0

if TYPE_CHECKING:
    from elastic_gpu.cluster_handle import GkeClusterHandle
    from elastic_gpu.general_pool import GeneralPoolArgs
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

#: GKE picks the zone with capacity (and unused reservations): fewer spot stock-outs than BALANCED.
LOCATION_POLICY = "ANY"
#: Pods see the GKE metadata server, which Workload Identity needs. GKE takes it only on a cluster with a workload
#: pool (container/v1 WorkloadMetadataConfig.Mode GKE_METADATA: "can only be enabled if Workload Identity is
#: enabled at the cluster level"), so a node pool asks for it only there (`workload_metadata`).
WORKLOAD_METADATA_MODE = "GKE_METADATA"
#: The autoscaler owns the node count; `pulumi up` never resets it.
IGNORED = ["nodeCount", "initialNodeCount"]

#: GKE node-pool names: at most 40 characters (terraform-provider-google resource_container_node_pool.go:
#: "name is limited to 40").
MAX_NODE_POOL_NAME = 40

#: GCE network tags: lowercase letters, digits and hyphens, 1-63 characters (GKE cluster names: at most 40).
NODE_TAG_PREFIX = "elastic-gpu-"


def node_network_tag(cluster_name: pulumi.Input[str]) -> pulumi.Output[str]:
    """The network tag on every node pool the library creates in a cluster: firewall rules for the
    cluster's nodes (Kueue's, gcp/kueue.py) target it, not every VM in the network. Changing a pool's
    tags is an in-place update (terraform-provider-google resource_container_node_pool.go: UpdateNodePool
    with `tags` when node_config.0.tags changes)."""
    return pulumi.Output.from_input(cluster_name).apply(lambda c: f"{NODE_TAG_PREFIX}{c}")


def _taint_args(taints: list[Taint]) -> list[gcp.container.NodePoolNodeConfigTaintArgs]:
    return [
        gcp.container.NodePoolNodeConfigTaintArgs(key=t.key, value=t.value, effect=API_TAINT_EFFECT[t.effect])
        for t in taints
    ]


def _ref(cluster: GkeClusterHandle, gke_name: str, capacity: Capacity) -> NodeGroupRef:
    # GKE names a pool's instance groups gke-<cluster>-<pool>-<hash>-grp.
    regex = pulumi.Output.from_input(cluster.cluster_name).apply(lambda c: f"^gke-{c}-{gke_name}-.*")
    return NodeGroupRef(gke_name, capacity, regex)


def gke_node_pool_name(base: str, forcing: dict[str, object]) -> str:
    """`<base>-<digest>` (<= 40 characters): the digest covers every field of ours that forces a
    replacement (GkeNodeSpec.forcing), so such a change renames the pool and GKE gets the new pool before
    the old one is deleted. The ComputeClass and the node-group regex use this name too."""
    return pool_name(base, forcing, max_len=MAX_NODE_POOL_NAME)


@dataclass
class _PoolSpec:
    #: readable stem (`<pool>-<kind>`); the GKE name adds a digest
    base_name: str
    min_size: int
    max_size: int
    zones: list[str]
    #: what its nodes run with (one spec for every GKE builder)
    node: GkeNodeSpec
    #: the capacity the reports read (a reserved pool is on-demand VMs in a reservation)
    capacity: Capacity = "on-demand"
    #: the reservations its nodes consume (reservationAffinity.values)
    reservations: tuple[str, ...] = ()

    @property
    def gke_name(self) -> str:
        return gke_node_pool_name(self.base_name, self.node.forcing())


def _network_config(cluster: GkeClusterHandle) -> gcp.container.NodePoolNetworkConfigArgs | None:
    """Per-pool private nodes where the handle says so (an existing cluster); None: the cluster's setting."""
    private = getattr(cluster, "private_nodes", None)  # optional handle attribute
    return None if private is None else gcp.container.NodePoolNetworkConfigArgs(enable_private_nodes=private)


def workload_metadata(
    cluster: GkeClusterHandle,
) -> pulumi.Input[gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs] | None:
    """GKE_METADATA where the cluster has a workload pool: the handle's optional `workload_pool` (the pool's name,
    an Output of it, or None for none; an Output resolves to the block or to nothing). Absent or None, the node
    pool says nothing and GKE picks the mode (the metadata server only on a cluster with Workload Identity)."""
    pool = getattr(cluster, "workload_pool", None)  # optional handle attribute
    block = gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode=WORKLOAD_METADATA_MODE)
    if pool is None or isinstance(pool, str):
        return block if pool else None
    # An Output of the block or of nothing: the SDK input takes it as it takes the block.
    return cast(
        "pulumi.Output[gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs]",
        pulumi.Output.from_input(pool).apply(lambda name: block if name else None),
    )


def node_config_args(
    node: GkeNodeSpec, cluster: GkeClusterHandle, tags: dict[str, str]
) -> gcp.container.NodePoolNodeConfigArgs:
    """The node pool's nodeConfig: the spec's fields, then the program's own node_config inputs (those the spec
    sets are refused before this: node_config_problems)."""
    acc = node.accelerator
    accelerator = (
        gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
            type=acc.type,
            count=acc.count,
            gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                gpu_driver_version=acc.driver_version
            ),
            gpu_sharing_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuSharingConfigArgs(
                gpu_sharing_strategy=GPU_SHARING_TIME_SHARING, max_shared_clients_per_gpu=acc.sharing_clients
            )
            if acc.sharing_clients > 1
            else None,
        )
        if acc
        else None
    )
    reservation = node.reservation
    declared: dict[str, Any] = dict(
        machine_type=node.machine_type,
        spot=node.spot,
        disk_size_gb=node.disk_size_gib,
        disk_type=node.disk_type,
        oauth_scopes=list(node.oauth_scopes),
        service_account=node.service_account,
        image_type=node.image_type,
        kubelet_config=gcp.container.NodePoolNodeConfigKubeletConfigArgs(**node.kubelet_config)
        if node.kubelet_config
        else None,
        workload_metadata_config=workload_metadata(cluster),
        guest_accelerators=[accelerator] if accelerator else None,
        # Queued provisioning takes flex-start capacity: GKE's DWS docs set both
        # --enable-queued-provisioning and --flex-start on such a pool.
        flex_start=True if node.queued else None,
        max_run_duration=node.max_run_duration,
        reservation_affinity=gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type=reservation.consume_type,
            key=RESERVATION_NAME_KEY if reservation.values else None,
            values=list(reservation.values) if reservation.values else None,
        )
        if reservation
        else None,
        labels=node.labels,
        taints=_taint_args(list(node.taints)),
        tags=[node_network_tag(cluster.cluster_name)],
        resource_labels=tags,
    )
    if node.overrides is not None:
        declared |= override_kwargs(node.overrides)
    return gcp.container.NodePoolNodeConfigArgs(**declared)


def _node_pool(
    res_name: str, spec: _PoolSpec, cluster: GkeClusterHandle, tags: dict[str, str], parent: pulumi.Resource
) -> gcp.container.NodePool:
    return gcp.container.NodePool(
        res_name,
        name=spec.gke_name,
        cluster=cluster.cluster_name,
        location=cluster.location,
        project=cluster.project,
        node_locations=spec.zones,
        # Scale from the total minimum; afterwards the autoscaler owns the count (ignored below).
        initial_node_count=-(-spec.min_size // len(spec.zones)),
        autoscaling=gcp.container.NodePoolAutoscalingArgs(
            total_min_node_count=spec.min_size,
            total_max_node_count=spec.max_size,
            location_policy=LOCATION_POLICY,
        ),
        # Queued-provisioning nodes are removed, not repaired (GKE DWS docs: --no-enable-autorepair).
        management=gcp.container.NodePoolManagementArgs(auto_repair=not spec.node.queued, auto_upgrade=True),
        queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True) if spec.node.queued else None,
        network_config=_network_config(cluster),
        node_config=node_config_args(spec.node, cluster, tags),
        # A change that forces a replacement also renames the pool: create first, then delete.
        opts=pulumi.ResourceOptions(parent=parent, ignore_changes=IGNORED, delete_before_replace=False),
    )


def build_general_pool(name: str, args: GeneralPoolArgs, parent: pulumi.Resource) -> BuiltPool:
    """One node pool (the first machine type) across the cluster's zones, spot if configured."""
    cluster: GkeClusterHandle = args.cluster  # type: ignore[assignment]
    labels = node_labels(pool=name, node_class=NODE_CLASS_GENERAL, spot=args.spot) | args.extra_labels
    spec = _PoolSpec(
        base_name=name,
        min_size=args.min_size,
        max_size=args.max_size,
        zones=cluster.zones,
        node=node_spec(args, spot=args.spot, labels=labels, taints=[]),
    )
    pool = _node_pool(f"{name}-np", spec, cluster, args.tags, parent)
    ref = _ref(cluster, spec.gke_name, "spot" if args.spot else "on-demand")
    return BuiltPool(node_groups=[ref], taints=[], labels=labels, resources=[pool])


def compute_class_spec(*node_pools: str) -> dict[str, object]:
    """A GKE ComputeClass over the pool's node pools in their order: the reserved one (if any), the spot one, then
    the on-demand fallback; no auto-created pools. GKE's autoscaler has no priority expander: the class's
    priorities are what ranks the tiers (GKE "About custom compute classes", priorities[].nodepools)."""
    return {
        "priorities": [{"nodepools": [pool]} for pool in node_pools],
        # Move pods back to spot nodes once spot capacity returns.
        "activeMigration": {"optimizeRulePriority": True},
        "nodePoolAutoCreation": {"enabled": False},
        "whenUnsatisfiable": WHEN_UNSATISFIABLE,
    }


def auto_provisioned(args: SpotGpuPoolArgs) -> bool:
    """The pool is a ComputeClass GKE auto-creates node pools for: its cluster auto-provisions
    (the handle's optional `provisioner`), and it is no queued-provisioning pool (those keep theirs)."""
    return getattr(args.cluster, "provisioner", None) == PROVISIONER and not args.queued_provisioning


def override_problems(where: str, args: GeneralPoolArgs | SpotGpuPoolArgs) -> list[str]:
    """What GKE makes of the pool's own node settings: a service account, an image type, kubelet settings."""
    if not hasattr(args, "queued_provisioning") or not auto_provisioned(args):  # type: ignore[arg-type]
        return _override_problems(where, args)
    return []  # the ComputeClass's own rules: pool_problems


def _override_problems(where: str, args: GeneralPoolArgs | SpotGpuPoolArgs) -> list[str]:
    problems = unsupported(where, args, "gcp", NO_PLACE_ON_GKE)
    if args.node_identity is not None and not isinstance(args.node_identity, str):
        problems.append(
            problem(
                where,
                "node_identity",
                "on GKE a plain service account email, as it is part of the node-pool name (a change replaces "
                f"the pool) (got {type(args.node_identity).__name__})",
            )
        )
    problems += about("node_config", node_config_problems(where, getattr(args, "node_config", None)))
    return problems + kubelet_problems(where, args, "gcp", KUBELET_KEYS)


def max_run_duration(args: SpotGpuPoolArgs) -> str:
    """A queued-provisioning node's nodeConfig.maxRunDuration: the pool's hours (default the most, 168), in
    the API's "<seconds>s" form."""
    hours = args.max_run_hours if args.max_run_hours is not None else DEFAULT_DWS_MAX_RUN_HOURS
    return f"{hours * 3600}s"


def pool_problems(where: str, args: SpotGpuPoolArgs) -> list[str]:
    """The stack config's node-pool rules (elastic_gpu/gcp/config_rules.py); time-slicing is GKE's own
    gpuSharingConfig (see below)."""
    if auto_provisioned(args):
        return compute_class.pool_problems(where, args)
    return node_pool_problems(
        lambda key: f"{where}{key}",
        list(args.instance_types),
        args.gpu_count,
        "gpu_count",
        queued=args.queued_provisioning,
        min_size=args.min_size,
        spot=args.spot,
        max_run_hours=args.max_run_hours,
    ) + pool_reservation_problems(where, args, queued=args.queued_provisioning)


def node_group_counts(args: SpotGpuPoolArgs) -> tuple[int, int]:
    """(primary node pools, fallback node pools): one each; a GKE node pool spans its zones; none
    under auto-provisioning (GKE creates them)."""
    if auto_provisioned(args):
        return 0, 0
    return 1, (1 if args.on_demand_fallback else 0)


def _compute_class(name: str, args: SpotGpuPoolArgs) -> str | None:
    """A pool with more than one tier (a fallback, or a reserved tier) ranks its node pools by a ComputeClass."""
    return compute_class_name(name) if args.on_demand_fallback or args.reservations else None


def _taints(name: str, args: SpotGpuPoolArgs) -> list[Taint]:
    taints = {GKE_GPU_TAINT, *args.extra_taints}
    if class_name := _compute_class(name, args):
        # Manually created pools serve a ComputeClass through this label and taint.
        taints.add(gke_compute_class_taint(class_name))
    return sorted(taints)


def workload_contract(name: str, args: SpotGpuPoolArgs) -> WorkloadContract:
    """Tolerate GKE's GPU taint (and the ComputeClass taint), select the pool's label, the
    ComputeClass that ranks spot above the fallback, and on a queued-provisioning pool go through
    Kueue's LocalQueue (created suspended; Kueue admits it once DWS has the capacity) and tolerate
    the taint GKE puts on queued-provisioning nodes."""
    if auto_provisioned(args):
        return compute_class.workload_contract(name, args)
    selector = {POOL_LABEL: name}
    if class_name := _compute_class(name, args):
        selector[GKE_COMPUTE_CLASS_KEY] = class_name
    labels = {QUEUE_NAME_LABEL: LOCAL_QUEUE} if args.queued_provisioning else {}
    # GKE taints queued-provisioning nodes itself (not declared on the pool, tolerated here).
    taints = sorted({*_taints(name, args), GKE_QUEUED_TAINT}) if args.queued_provisioning else _taints(name, args)
    return WorkloadContract(
        pool=name,
        taints=tuple(taints),
        node_selector=selector,
        job_labels=labels,
        suspend=args.queued_provisioning,
    )


def _reserved_spec(name: str, args: SpotGpuPoolArgs, spec: Callable[..., _PoolSpec]) -> _PoolSpec:
    """The reserved tier: an on-demand node pool (Spot VMs cannot consume a reservation: Compute Engine "Consume
    reservations", Limitations) with SPECIFIC_RESERVATION affinity to the pool's reservations, in their zone
    only, from 0 to `reservations.nodes`, with the pool's machine type and GPU (a reservation serves only VMs
    that match it)."""
    assert args.reservations is not None
    reservations, zone = reservations_of(args.reservations, args.pool_zones)
    affinity = GkeReservationAffinity(SPECIFIC_RESERVATION, tuple(r.affinity_value for r in reservations))
    base = spec(f"{name}-reserved", False, 0, args.reservations.nodes)
    return replace(
        base,
        zones=[zone],
        node=replace(base.node, reservation=affinity),
        capacity="on-demand",
        reservations=affinity.values,
    )


def build_spot_gpu_pool(name: str, args: SpotGpuPoolArgs, parent: pulumi.Resource) -> BuiltPool:
    """A GPU node pool (spot, or queued provisioning), plus an on-demand fallback and its ComputeClass.

    GKE installs the driver (`gpu_driver_version`) and runs its own device plugin,
    so the pool reports `ships_device_plugin`. The GPU taint is declared as GKE
    puts it, so the spec matches what the nodes carry. Time-slicing is GKE's own
    (gpuSharingConfig TIME_SHARING): its device plugin advertises GPUs x clients and
    its autoscaler plans with the same figure. On a cluster that auto-provisions, the pool is its
    ComputeClass alone (elastic_gpu/gcp/autoprovisioning).
    """
    if auto_provisioned(args):
        return compute_class.build_spot_gpu_pool(name, args, parent)
    cluster: GkeClusterHandle = args.cluster  # type: ignore[assignment]
    accelerator = gpu_accelerator(args)
    class_name = _compute_class(name, args)
    taints = _taints(name, args)
    extra = gpu_spec_labels(args.gpu_spec) | args.extra_labels
    if class_name:
        extra[GKE_COMPUTE_CLASS_KEY] = class_name

    def spec(base_name: str, spot: bool, min_size: int, max_size: int, queued: bool = False) -> _PoolSpec:
        return _PoolSpec(
            base_name=base_name,
            min_size=min_size,
            max_size=max_size,
            zones=args.pool_zones,
            node=node_spec(
                args,
                spot=spot,
                labels=node_labels(pool=name, node_class=NODE_CLASS_GPU, spot=spot) | extra,
                taints=taints,
                accelerator=accelerator,
                queued=queued,
                max_run_duration=max_run_duration(args) if queued else None,
            ),
            capacity="spot" if spot else "on-demand",
        )

    specs: list[tuple[str, _PoolSpec]] = []
    if args.reservations is not None:
        specs.append((f"{name}-reserved", _reserved_spec(name, args, spec)))
    if args.queued_provisioning:
        specs += [(f"{name}-dws", spec(f"{name}-dws", spot=False, min_size=0, max_size=args.max_size, queued=True))]
    elif args.max_size > 0 or args.reservations is None:  # reservations `only`: no spot tier
        kind = "spot" if args.spot else "od"
        specs += [(f"{name}-{kind}", spec(f"{name}-{kind}", args.spot, args.min_size, args.max_size))]
    if args.on_demand_fallback:
        specs.append((f"{name}-fallback", spec(f"{name}-fallback", False, 0, args.fallback_total)))
    pools = [_node_pool(res_name, s, cluster, args.tags, parent) for res_name, s in specs]
    resources: list[pulumi.Resource] = list(pools)
    if class_name:
        resources.append(
            k8s.apiextensions.CustomResource(
                f"{name}-compute-class",
                api_version=COMPUTE_CLASS_API,
                kind="ComputeClass",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=class_name),
                spec=compute_class_spec(*(s.gke_name for _, s in specs)),
                opts=pulumi.ResourceOptions(parent=parent, provider=cluster.provider, depends_on=pools),
            )
        )
    refs = [_ref(cluster, s.gke_name, s.capacity) for _, s in specs]
    return BuiltPool(
        node_groups=refs,
        taints=taints,
        labels=specs[0][1].node.labels,
        resources=resources,
        nodes=list(pools),
        node_group_ids=[p.id for p in pools],
        # GKE installs and manages the NVIDIA device plugin on GPU nodes.
        ships_device_plugin=True,
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
