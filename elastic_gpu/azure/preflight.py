"""The account preflight's AKS part (elastic_gpu/preflight.py): the vCPU quotas the pools need at their max.

azure-native has no invoke that reads a subscription's compute usage or the zones that offer a VM size (the
Compute `usages` and `resourceSkus` APIs are not in its schema; its `quota` module holds management-group quotas
only), so the findings here say what the pools need and the commands that show and raise what the subscription
has (elastic_gpu/azure/quotas.py): spot VMs draw on the regional low-priority vCPU quota, on-demand ones (the
fallback, the general pool, the System pool) on their VM family's quota and on the regional total.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from elastic_gpu.azure.quotas import LOW_PRIORITY, REGIONAL, AzureQuota, family_quota, size_vcpus
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.preflight import Finding, QuotaNeed, add_need, capacities

if TYPE_CHECKING:
    from elastic_gpu.config import StackConfig


def pool_capacities(cfg: StackConfig) -> list[tuple[str, bool, int, list[str], int]]:
    """(pool, spot, nodes at its max, its sizes, vCPUs per node) of every pool: the GPU pools and their fallback,
    the general pool and the System pool (its vCPUs from the size's name: the catalog holds GPU sizes only)."""
    from elastic_gpu.azure.options import SystemPoolConfig

    out = [(c.pool, c.spot, c.nodes, list(c.instance_types), c.per_node("azure", "vcpus")) for c in capacities(cfg)]
    general = cfg.general_pool
    sizes = list(general.instance_types)
    per_node = max((_vcpus(t) for t in sizes), default=0)
    out.append(("general", general.spot, general.max_size, sizes, per_node))
    system = cfg.cluster.system_pool or SystemPoolConfig()
    out.append(("system", False, system.max_size, [system.vm_size], _vcpus(system.vm_size)))
    return out


def _vcpus(size: str) -> int:
    row = gpu_instance_type("azure", size)
    return row.vcpus if row is not None else size_vcpus(size)


def findings(cfg: StackConfig) -> list[Finding]:
    region = cfg.cluster.region
    needs: dict[AzureQuota, dict[str, int]] = {}
    unknown: dict[str, set[str]] = {}
    for pool, spot, nodes, sizes, per_node in pool_capacities(cfg):
        vcpus = nodes * per_node
        if spot:
            add_need(needs, LOW_PRIORITY, pool, vcpus)
            continue
        add_need(needs, REGIONAL, pool, vcpus)
        for size in sizes:
            quota = family_quota(size)
            if quota is None:
                unknown.setdefault(size, set()).add(pool)
            else:  # a pool of two families may draw on either: each must cover it
                add_need(needs, quota, pool, vcpus)
    found = []
    scope = f"/subscriptions/<subscription id>/providers/Microsoft.Compute/locations/{region}"
    for quota, by_pool in needs.items():
        kind = "lowPriority" if quota is LOW_PRIORITY else "dedicated"
        need = QuotaNeed(f"'{quota.shown}' in {region}", by_pool, 0, "vCPUs")
        shares = ", ".join(f"{pool} {n}" for pool, n in by_pool.items())
        found.append(
            Finding(
                ", ".join(by_pool),
                "unread",
                "warning",
                f"the pools need {need.need} vCPUs of {need.quota} at their max ({shares}); azure-native cannot "
                f"read the subscription's limit: `az vm list-usage --location {region} -o table` shows it",
                f"if it is below {need.need}: az quota update --resource-name {quota.name} --scope {scope} "
                f"--resource-type {kind} --limit-object value={need.need} (the `quota` extension; or the portal's "
                f"Quotas > Compute); `az vm list-skus --location {region} --zone --size <size> -o table` shows the "
                "zones that offer a size",
            )
        )
    for size, pools in unknown.items():
        found.append(
            Finding(
                ", ".join(sorted(pools)),
                "unread",
                "warning",
                f"the family quota of {size} is not in the preflight's table (elastic_gpu/azure/quotas.py), so it "
                "was not checked",
                f"az vm list-usage --location {region} -o table shows every family's limit; az vm list-skus "
                f"--location {region} --size {size} --query '[0].family' names its family",
            )
        )
    return found
