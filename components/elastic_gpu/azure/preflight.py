"""The account preflight's AKS part (elastic_gpu/preflight.py): the vCPU quotas the pools need at their max.

azure-native has no invoke that reads a subscription's compute usage (the Compute `usages` API is not in its
schema; its `quota` module holds management-group quotas only), so the preflight reads it from ARM itself
(`GET .../providers/Microsoft.Compute/locations/<region>/usages`, api-version 2024-07-01) with the token of the
provider's own credentials (`azure-native:authorization:getClientToken`), through elastic_gpu/http_reads.py.
Spot VMs draw on the regional low-priority vCPU quota, on-demand ones (the fallback, the general pool, the System
pool) on their VM family's quota and on the regional total (elastic_gpu/azure/quotas.py). Where the usage is read,
a short quota's request asks for what is in use plus what the pools need; where it is not (no right to read it),
the finding says so and which command shows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from elastic_gpu.azure.quotas import LOW_PRIORITY, REGIONAL, AzureQuota, family_quota, size_vcpus
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.http_reads import read_json
from elastic_gpu.preflight import Finding, QuotaNeed, add_need, attempt, capacities

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


#: The reader name of the Compute usage list (elastic_gpu/http_reads.py) and its API version (azure-rest-api-specs
#: specification/compute/resource-manager/Microsoft.Compute/ComputeRP/stable/2024-07-01/computeRPCommon.json
#: Usage_List: each entry's `name.value`, `currentValue` and `limit`).
USAGES_READER = "azure-compute-usages"
USAGES_API_VERSION = "2024-07-01"


def usages_url(subscription: str, region: str) -> str:
    return (
        f"https://management.azure.com/subscriptions/{subscription}/providers/Microsoft.Compute/locations/{region}"
        f"/usages?api-version={USAGES_API_VERSION}"
    )


def read_usages(region: str) -> tuple[str, dict[str, tuple[float, float]]] | str:
    """(subscription id, quota resource name -> (current usage, limit)) in `region`, or why it could not be read."""

    def read() -> tuple[str, dict[str, tuple[float, float]]]:
        from pulumi_azure_native import authorization

        subscription = authorization.get_client_config().subscription_id
        token = authorization.get_client_token().token
        answer = read_json(USAGES_READER, usages_url(subscription, region), token)
        usages = {
            str(u["name"]["value"]): (float(u.get("currentValue") or 0), float(u.get("limit") or 0))
            for u in answer.get("value") or []
        }
        return subscription, usages

    return attempt(read)


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
    read = read_usages(region)
    subscription, usages = read if not isinstance(read, str) else ("<subscription id>", {})
    scope = f"/subscriptions/{subscription}/providers/Microsoft.Compute/locations/{region}"
    for quota, by_pool in needs.items():
        kind = "lowPriority" if quota is LOW_PRIORITY else "dedicated"
        check = "spot-quota" if quota is LOW_PRIORITY else "on-demand-quota"
        shares = ", ".join(f"{pool} {n}" for pool, n in by_pool.items())
        need_total = sum(by_pool.values())
        raise_to = f"az quota update --resource-name {quota.name} --scope {scope} --resource-type {kind}"
        where = f"'{quota.shown}' ({quota.name}) in {region}"
        if quota.name in usages:
            current, limit = usages[quota.name]
            need = QuotaNeed(where, by_pool, limit - current, "vCPUs")
            if need.short > 0:
                value = int(current + need_total)
                found.append(
                    Finding(
                        ", ".join(by_pool),
                        check,
                        "warning",
                        f"the pools need {need_total} vCPUs of {where} at their max ({shares}); the subscription "
                        f"uses {_n(current)} of its {_n(limit)}: short by {_n(need.short)}",
                        f"{raise_to} --limit-object value={value} (in use {_n(current)} + the pools' {need_total}; "
                        "the `quota` extension, or the portal's Quotas > Compute)",
                    )
                )
            continue
        why = read if isinstance(read, str) else "the subscription's usage list has no such quota in the region"
        found.append(
            Finding(
                ", ".join(by_pool),
                "unread",
                "warning",
                f"the pools need {need_total} vCPUs of {where} at their max ({shares}); the subscription's usage "
                f"and limit could not be read ({why}): `az vm list-usage --location {region} -o table` shows them",
                f"if the limit less the usage is below {need_total}: {raise_to} --limit-object value=<usage + "
                f"{need_total}> (the `quota` extension; or the portal's Quotas > Compute); allow "
                "Microsoft.Compute/locations/usages/read to let the preview read it",
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


def _n(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
