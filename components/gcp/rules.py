"""GCP-only config rules (called by components.config.validate_stack)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from elastic_gpu.gpu_catalog import GPU_MODELS, gpu_instance_type, gpu_instance_types

if TYPE_CHECKING:
    from elastic_gpu.config import GpuPoolConfig, StackConfig

#: Which machine family each GPU attaches to (cloud.google.com/compute/docs/gpus).
GPU_FAMILIES: dict[str, str] = {
    "t4": "n1",
    "v100": "n1",
    "l4": "g2",
    "a100": "a2",
    "a100-80gb": "a2",
    "h100": "a3",
}


def machine_family(machine_type: str) -> str:
    return machine_type.split("-", 1)[0]


def validate(cfg: StackConfig) -> list[str]:
    problems: list[str] = []
    c = cfg.cluster
    region = c.region
    for i, zone in enumerate(c.zones):
        if not re.fullmatch(re.escape(region) + r"-[a-z]", zone):
            problems.append(
                f"cluster.zones[{i}]: {zone!r} is not a zone of region {region!r}; allowed: {region}-a, {region}-b, ..."
            )
    if not c.project:
        problems.append("cluster.project: required on gcp (the GCP project id that holds the cluster)")
    gp = cfg.general_pool
    per_zone = -(-gp.min_size // len(c.zones))
    if per_zone * len(c.zones) > gp.max_size:
        problems.append(
            f"generalPool.maxSize: GKE starts {per_zone} node(s) in each of the {len(c.zones)} zones, "
            f"so it must be >= {per_zone * len(c.zones)} (got {gp.max_size})"
        )
    for i, pool in enumerate(cfg.gpu_pools):
        problems += _pool_problems(cfg, f"gpuPools[{i}]", pool)
    return problems


def _pool_problems(cfg: StackConfig, where: str, pool: GpuPoolConfig) -> list[str]:
    problems: list[str] = []
    if pool.instance_types and len(pool.instance_types) > 1:
        problems.append(
            f"{where}.instanceTypes: a GKE node pool has one machine type (got {pool.instance_types}); "
            "allowed: a list of one"
        )
    if pool.gpu in GPU_FAMILIES:
        family = GPU_FAMILIES[pool.gpu]
        for j, machine in enumerate(pool.instance_types or []):
            if machine_family(machine) != family:
                attachable = [t.name for t in gpu_instance_types("gcp") if t.gpu == pool.gpu]
                problems.append(
                    f"{where}.instanceTypes[{j}]: gpu {pool.gpu!r} ({GPU_MODELS[pool.gpu].name}) cannot attach to "
                    f"machine type {machine!r} (family {machine_family(machine)}); it goes on {family}: "
                    f"{', '.join(attachable)}"
                )
    types = pool.instance_types or []
    row = gpu_instance_type("gcp", types[0]) if types else None
    if row is not None and "gpus_per_node" in pool.model_fields_set and pool.gpus_per_node != row.gpus:
        allowed = row.gpu_counts or (row.gpus,)
        if pool.gpus_per_node not in allowed:
            problems.append(
                f"{where}.gpusPerNode: {row.name!r} takes {', '.join(map(str, allowed))} x {row.model.name} "
                f"(got {pool.gpus_per_node})"
            )
    if pool.queued_provisioning:
        if pool.min_size > 0:
            problems.append(
                f"{where}.minSize: a queued-provisioning pool gets nodes only through ProvisioningRequests; "
                f"allowed: 0 (got {pool.min_size})"
            )
        if pool.spot:
            problems.append(
                f"{where}.spot: a queued-provisioning pool uses flex-start capacity, not spot; "
                "allowed: false (got true)"
            )
    return problems
