"""The account preflight's AKS part (elastic_gpu/preflight.py): the vCPU quotas the pools need at their max.

azure-native has no invoke that reads a subscription's compute usage or the zones that offer a VM size (the
Compute `usages` and `resourceSkus` APIs are not in its schema; its `quota` module holds management-group quotas
only), so the findings here say what the pools need and the commands that show and raise what the subscription
has: spot VMs draw on the regional low-priority vCPU quota, on-demand ones (the fallback) on their VM family's
quota and the regional total.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from elastic_gpu.preflight import Finding, QuotaNeed, add_need, capacities

if TYPE_CHECKING:
    from elastic_gpu.config import StackConfig

#: (VM size pattern, the family quota's resource name and name in `az vm list-usage`) of the catalog's GPU sizes.
FAMILY_QUOTAS = (
    (r"Standard_NC\d+as_T4_v3", "standardNCASv3_T4Family", "Standard NCASv3_T4 Family vCPUs"),
    (r"Standard_NC\d+s_v3", "standardNCSv3Family", "Standard NCSv3 Family vCPUs"),
    (r"Standard_NC\d+ads_A100_v4", "StandardNCADSA100v4Family", "Standard NCADS_A100_v4 Family vCPUs"),
    (r"Standard_NC\d+adi?s_H100_v5", "standardNCadsH100v5Family", "Standard NCadsH100v5 Family vCPUs"),
    (r"Standard_NV\d+ads_A10_v5", "StandardNVADSA10v5Family", "Standard NVADSA10v5 Family vCPUs"),
)
#: The regional quota spot (low-priority) VMs draw on.
LOW_PRIORITY = ("lowPriorityCores", "Total Regional Low-priority vCPUs")


def family_quota(size: str) -> tuple[str, str] | None:
    return next(((name, shown) for pattern, name, shown in FAMILY_QUOTAS if re.fullmatch(pattern, size)), None)


def findings(cfg: StackConfig) -> list[Finding]:
    region = cfg.cluster.region
    needs: dict[tuple[str, str, str], dict[str, int]] = {}
    for cap in capacities(cfg):
        vcpus = cap.nodes * cap.per_node("azure", "vcpus")
        if cap.spot:
            add_need(needs, (*LOW_PRIORITY, "lowPriority"), cap.pool, vcpus)
            continue
        for quota in {q for t in cap.instance_types if (q := family_quota(t)) is not None}:
            add_need(needs, (*quota, "dedicated"), cap.pool, vcpus)
    found = []
    scope = f"/subscriptions/<subscription id>/providers/Microsoft.Compute/locations/{region}"
    for (name, shown, kind), by_pool in needs.items():
        need = QuotaNeed(f"'{shown}' in {region}", by_pool, 0, "vCPUs")
        shares = ", ".join(f"{pool} {n}" for pool, n in by_pool.items())
        found.append(
            Finding(
                ", ".join(by_pool),
                "unread",
                "warning",
                f"the pools need {need.need} vCPUs of {need.quota} at their max ({shares}); azure-native cannot "
                f"read the subscription's limit: `az vm list-usage --location {region} -o table` shows it",
                f"if it is below {need.need}: az quota update --resource-name {name} --scope {scope} "
                f"--resource-type {kind} --limit-object value={need.need} (the `quota` extension; or the portal's "
                f"Quotas > Compute); `az vm list-skus --location {region} --zone --size <size> -o table` shows the "
                "zones that offer a size",
            )
        )
    return found
