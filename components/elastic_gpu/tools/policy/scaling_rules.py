"""Scale to zero, real spot, sizes the autoscaler owns, fallback, max-size cap (spot-gpu-pool-scales-to-zero,
spot-pool-is-spot, autoscaler-owned-size-ignored, spot-gpu-pool-on-demand-fallback, gpu-pool-max-size-cap)."""

from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from elastic_gpu.tools.clouds import get_cloud
from elastic_gpu.tools.node_group_reading import gpu_pools_of, pools_of
from elastic_gpu.tools.node_group_view import NodeGroupView, worst_case_nodes
from elastic_gpu.tools.policy._base import config, known_gpu_pools, schema
from elastic_gpu.tools.policy.scope import judged

# --- 2. spot-gpu-pool-scales-to-zero ---------------------------------------------------------

_ZERO_SCHEMA = schema(
    exceptions={
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "description": "Pools allowed to keep warm nodes (pool label, node group / pool name).",
    }
)


def _excepted(pool: NodeGroupView, names: list[str]) -> bool:
    return pool.pool in names or pool.name in names


def validate_scale_to_zero(args: ResourceValidationArgs, report: ReportViolation) -> None:
    exceptions = list(config(args, _ZERO_SCHEMA)["exceptions"])
    for pool in gpu_pools_of(args.resource_type, args.name, args.props):
        if not (pool.spot or pool.spot_first or pool.intends_spot) or _excepted(pool, exceptions):
            continue
        if not pool.autoscaled:
            report(
                f"Spot GPU pool '{pool.name}' has no autoscaling, so it can never scale to zero. Enable the "
                "autoscaler on it with a minimum of 0.",
                None,
            )
        elif pool.min_size != 0:
            report(
                f"Spot GPU pool '{pool.name}' has min size {pool.min_size}; idle GPUs keep billing. Set the minimum "
                f"to 0, or list '{pool.pool}' in this policy's `exceptions` config if warm nodes are intended.",
                None,
            )


spot_gpu_pool_scales_to_zero = ResourceValidationPolicy(
    name="spot-gpu-pool-scales-to-zero",
    description=(
        "Every spot GPU pool is autoscaled with a minimum of 0 nodes. Fix: set minSize/minCount/min node count "
        "to 0, or add the pool to the policy config's `exceptions`."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=_ZERO_SCHEMA,
    validate=validate_scale_to_zero,
)

# --- 3. spot-pool-is-spot --------------------------------------------------------------------


def validate_really_spot(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for pool in pools_of(args.resource_type, args.name, args.props):
        if pool.intends_spot and not (pool.spot or pool.spot_first):
            fix = get_cloud(pool.cloud).facts.spot_fix
            report(
                f"Pool '{pool.name}' is labelled or named spot but is billed on-demand: {fix}.",
                None,
            )
        # Only an AKS pool has an eviction policy (elastic_gpu/tools/azure/reader.py).
        if pool.spot and pool.eviction_policy not in (None, "Delete"):
            report(
                f"AKS spot pool '{pool.name}' has scaleSetEvictionPolicy {pool.eviction_policy}: deallocated nodes "
                "keep their disks billed and count against quota, and the autoscaler cannot replace them. "
                "Set scaleSetEvictionPolicy: Delete.",
                None,
            )


spot_pool_is_spot = ResourceValidationPolicy(
    name="spot-pool-is-spot",
    description=(
        "A pool meant to be spot (our capacity label or 'spot' in its name) really is: EKS capacityType SPOT, "
        "AKS scaleSetPriority Spot with eviction policy Delete, GKE nodeConfig.spot true. Fix the provider "
        "setting named in the message."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_really_spot,
)

# --- 6. autoscaler-owned-size-ignored --------------------------------------------------------


def _ignored(path: str, ignore_changes: list[str]) -> bool:
    norm = path.replace("[", ".").replace("]", "")
    for ic in ignore_changes:
        i = ic.replace("[", ".").replace("]", "").replace("*", "")
        if norm == i or norm.startswith(i.rstrip(".") + "."):
            return True
    return False


def validate_sizes_unpinned(args: ResourceValidationArgs, report: ReportViolation) -> None:
    ignore = list(getattr(args.opts, "ignore_changes", None) or [])
    for pool in pools_of(args.resource_type, args.name, args.props):
        if pool.pinned_size_path and not _ignored(pool.pinned_size_path, ignore):
            report(
                f"Pool '{pool.name}' sets {pool.pinned_size_path}, which the cluster autoscaler owns: every "
                f"`pulumi up` would reset the node count. Add ignore_changes=['{pool.pinned_size_path}'] to the "
                "resource options or leave the property unset.",
                None,
            )


autoscaler_owned_size_ignored = ResourceValidationPolicy(
    name="autoscaler-owned-size-ignored",
    description=(
        "Sizes the autoscaler owns (EKS scalingConfig.desiredSize, AKS count with autoscaling, GKE nodeCount with "
        "autoscaling) are either unset or listed in ignore_changes, so `pulumi up` never fights the autoscaler."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_sizes_unpinned,
)

# --- 11. spot-gpu-pool-on-demand-fallback ----------------------------------------------------

_FALLBACK_SCHEMA = schema(
    optOut={
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "description": "Spot GPU pools (pool label or name) that need no on-demand fallback.",
    }
)


def validate_fallback(args: StackValidationArgs, report: ReportViolation) -> None:
    opt_out = list(config(args, _FALLBACK_SCHEMA)["optOut"])
    on_demand: set[str] = set()
    spot: list[tuple[NodeGroupView, str]] = []
    for r in args.resources:
        for pool in known_gpu_pools(r, args.resources):
            if pool.spot:
                spot.append((pool, r.urn))
            else:
                on_demand.add(pool.pool)
    for pool, urn in spot:
        if pool.pool not in on_demand and not _excepted(pool, opt_out):
            report(
                f"Spot GPU pool '{pool.name}' (pool '{pool.pool}') has no on-demand fallback: when spot capacity "
                "runs out its pods stay pending. Add an on-demand GPU pool with the same pool label "
                "(SpotGpuPoolArgs.on_demand_fallback=True in a program, onDemandFallback: true in a stack file), or "
                f"list '{pool.pool}' in this policy's `optOut` config.",
                urn,
            )


spot_gpu_pool_on_demand_fallback = StackValidationPolicy(
    name="spot-gpu-pool-on-demand-fallback",
    description=(
        "Every spot GPU pool has an on-demand GPU pool with the same pool label that the autoscaler falls back "
        "to, or is listed in the config's `optOut`. Fix: on_demand_fallback=True on the SpotGpuPoolArgs "
        "(onDemandFallback: true in a stack file)."
    ),
    enforcement_level=EnforcementLevel.ADVISORY,
    config_schema=_FALLBACK_SCHEMA,
    validate=validate_fallback,
)

# --- 12. gpu-pool-max-size-cap ---------------------------------------------------------------

_CAP_SCHEMA = schema(
    maxNodesPerPool={
        "type": "integer",
        "minimum": 0,
        "default": 20,
        "description": "Largest worst case of one GPU pool: the max sizes of all its node groups / agent pools / "
        "node pools added up (zones, VM sizes and the on-demand fallback).",
    }
)

#: The library's GPU pool component: its node groups (per zone, per VM size, the fallback) are one pool.
SPOT_GPU_POOL_TYPE = "elastic-gpu:index:SpotGpuPool"


def _owning_pool(resource: PolicyResource) -> PolicyResource | None:
    """The SpotGpuPool component a node group belongs to (its nearest such ancestor), if any."""
    parent = resource.parent
    while parent is not None:
        if parent.resource_type == SPOT_GPU_POOL_TYPE:
            return parent
        parent = parent.parent
    return None


def validate_max_cap(args: StackValidationArgs, report: ReportViolation) -> None:
    """A cap on GPU spend judges a pool's total: a SpotGpuPool's groups (every zone, VM size and the on-demand
    fallback) add up; a node group outside the library's components is a pool of its own."""
    cap = int(config(args, _CAP_SCHEMA)["maxNodesPerPool"])
    pools: dict[str, tuple[str, list[tuple[NodeGroupView, str]]]] = {}
    for r in args.resources:
        owner = _owning_pool(r)
        # The stack: a GKE ComputeClass's auto-created pools are capped by the cluster's limits.
        for pool in known_gpu_pools(r, args.resources):
            key, label = (owner.urn, owner.name) if owner is not None else (f"{r.urn}#{pool.name}", pool.name)
            pools.setdefault(key, (label, []))[1].append((pool, r.urn))
    for label, members in pools.values():
        judged_urns = [urn for _, urn in members if judged(args, urn)]
        if not judged_urns:
            continue
        at = sorted(judged_urns)[0]
        if any(pool.max_size is None for pool, _ in members):
            report(
                f"GPU pool '{label}' has no finite max size: a runaway scale-up is unbounded. Set a max of at "
                f"most {cap}.",
                at,
            )
            continue
        total = worst_case_nodes(pool for pool, _ in members)
        if total > cap:
            parts = " + ".join(f"{pool.name} {pool.max_size}" for pool, _ in sorted(members, key=lambda m: m[0].name))
            over = f" over its {len(members)} node groups ({parts})" if len(members) > 1 else ""
            report(
                f"GPU pool '{label}' may grow to {total} nodes{over}, above the cap of {cap}. Lower its max size "
                "(or fallbackMaxSize), or raise `maxNodesPerPool` in this policy's config.",
                at,
            )


gpu_pool_max_size_cap = StackValidationPolicy(
    name="gpu-pool-max-size-cap",
    description=(
        "Every GPU pool has a finite worst case at or below `maxNodesPerPool` (default 20): the max sizes of all "
        "its node groups added up (every zone, VM size and the on-demand fallback of a SpotGpuPool). Fix: lower "
        "maxSize / fallbackMaxSize / maxCount / max node count, or raise the cap in the policy config."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=_CAP_SCHEMA,
    validate=validate_max_cap,
)
