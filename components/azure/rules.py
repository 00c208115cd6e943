"""Azure-only config rules (called by components.config.validate_stack)."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from elastic_gpu.aks_cluster import AKS_EXPANDERS, AZURE_ZONES
from elastic_gpu.azure.pools import MAX_AGENT_POOL_NAME, agent_pool_name_problems, agent_pool_stem
from elastic_gpu.config import SystemPoolConfig
from elastic_gpu.gpu_catalog import gpu_instance_type

if TYPE_CHECKING:
    from elastic_gpu.config import StackConfig

#: Azure spot max price: -1 or a positive USD/hour with at most 5 decimals (AgentPool spotMaxPrice).
SPOT_PRICE_DECIMALS = 5


def _spot_price_problems(where: str, price: float) -> list[str]:
    if price == -1:
        return []
    exponent = Decimal(str(price)).as_tuple().exponent
    if price <= 0 or (isinstance(exponent, int) and -exponent > SPOT_PRICE_DECIMALS):
        return [
            f"{where}.spotMaxPrice: {price!r} is not allowed; allowed: -1 (up to the on-demand price) "
            f"or a positive USD/hour with at most {SPOT_PRICE_DECIMALS} decimals"
        ]
    return []


def validate(cfg: StackConfig) -> list[str]:
    problems: list[str] = []
    c = cfg.cluster
    for i, zone in enumerate(c.zones):
        if zone not in AZURE_ZONES:
            problems.append(f"cluster.zones[{i}]: {zone!r} is not an Azure zone; allowed: {', '.join(AZURE_ZONES)}")

    system = c.system_pool or SystemPoolConfig()
    if system.spot:
        problems.append("cluster.systemPool.spot: AKS does not allow a spot System pool; allowed: false (got true)")
    if system.min_size < 1:
        problems.append(
            f"cluster.systemPool.minSize: an AKS System pool needs at least 1 node; allowed: >= 1 "
            f"(got {system.min_size})"
        )
    if system.max_size < system.min_size:
        problems.append(
            f"cluster.systemPool.maxSize: must be >= minSize (got minSize={system.min_size}, maxSize={system.max_size})"
        )
    if system.vm_size.startswith("Standard_B"):
        problems.append(
            f"cluster.systemPool.vmSize: {system.vm_size!r}: AKS does not support B-series VMs in System pools"
        )

    gp = cfg.general_pool
    if gp.spot:
        problems.append(
            "generalPool.spot: the general pool runs system add-ons and must be on-demand on AKS; "
            "allowed: false (got true)"
        )
    if len(gp.instance_types) != 1:
        problems.append(
            f"generalPool.instanceTypes: an AKS agent pool has exactly one VM size; give one (got {gp.instance_types})"
        )

    if cfg.autoscaler.expander[0] not in AKS_EXPANDERS:
        problems.append(
            f"autoscaler.expander[0]: {cfg.autoscaler.expander[0]!r} is not an AKS expander; "
            f"allowed first: {', '.join(AKS_EXPANDERS)} (AKS takes one expander, the chain's first)"
        )

    stems: dict[str, str] = {}
    for i, pool in enumerate(cfg.gpu_pools):
        where = f"gpuPools[{i}]"
        problems += agent_pool_name_problems(f"{where}.", pool.name)
        stem = agent_pool_stem(pool.name)
        if stem in stems and stems[stem] != pool.name:
            problems.append(
                f"{where}.name: {pool.name!r} gives the same AKS agent-pool names as {stems[stem]!r} "
                f"(hyphens are dropped, at most {MAX_AGENT_POOL_NAME} characters); rename one"
            )
        stems.setdefault(stem, pool.name)
        if pool.spot_max_price is not None:
            problems += _spot_price_problems(where, pool.spot_max_price)
        if pool.instance_types and len(pool.instance_types) > 9:
            problems.append(
                f"{where}.instanceTypes: at most 9 VM sizes per pool on AKS (got {len(pool.instance_types)})"
            )
        # Configured VM sizes, or the ones picked from `gpu` (then the message names `gpu`).
        sizes = list(pool.instance_types or (cfg.instance_types(pool) if pool.gpu else []))
        for j, vm_size in enumerate(sizes):
            row = gpu_instance_type("azure", vm_size)
            if row is not None and row.regions is not None and c.region not in row.regions:
                field = f"instanceTypes[{j}]" if pool.instance_types else f"gpu ({pool.gpu!r} picks {vm_size})"
                problems.append(
                    f"{where}.{field}: {vm_size!r} is not sold in region {c.region!r}; "
                    f"allowed regions: {', '.join(row.regions)}"
                )
    return problems
