"""The Compute vCPU quotas AKS node pools draw on: the one table the AKS preflight (elastic_gpu/azure/preflight.py)
reads.

Each quota is named as `az quota update --resource-name` takes it and as `az vm list-usage` shows it: on-demand
VMs draw on their VM family's quota and on the regional total ("Total Regional vCPUs", `cores`); Spot VMs on the
regional low-priority quota only ("Total Regional Low-priority vCPUs", `lowPriorityCores`) (Azure "Check vCPU
quotas", learn.microsoft.com/azure/virtual-machines/quotas; "Spot VMs": Spot quota is separate from the regular
quota). Family names of the GPU sizes as Azure/karpenter-provider-azure pkg/utils/supported-gpus.yaml gives them
(standardNDSH100v5Family, standardNDSH200v5Family at 021c778); of the general sizes as `az vm list-skus` gives
the size's `family`. A size no row matches is reported as not checked, never skipped in silence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from elastic_gpu.facts import ReviewedRow

_SOURCE = (
    "learn.microsoft.com/azure/virtual-machines/quotas; Azure/karpenter-provider-azure pkg/utils/supported-gpus.yaml "
    "(021c778)"
)
_READ = date(2026, 12, 1)


@dataclass(frozen=True)
class AzureQuota(ReviewedRow):
    """One Compute quota: the sizes it covers (a pattern; "" for a regional quota), its resource name and the
    name `az vm list-usage` shows."""

    sizes: str
    name: str
    shown: str
    source: str = _SOURCE
    read_on: date = _READ

    def covers(self, size: str) -> bool:
        return bool(self.sizes) and re.fullmatch(self.sizes, size) is not None


#: Every on-demand VM's vCPUs in the region, whatever its family.
REGIONAL = AzureQuota("", "cores", "Total Regional vCPUs")
#: Every Spot VM's vCPUs in the region.
LOW_PRIORITY = AzureQuota("", "lowPriorityCores", "Total Regional Low-priority vCPUs")

FAMILY_QUOTAS = (
    AzureQuota(r"Standard_NC\d+as_T4_v3", "standardNCASv3_T4Family", "Standard NCASv3_T4 Family vCPUs"),
    AzureQuota(r"Standard_NC\d+ads_A100_v4", "StandardNCADSA100v4Family", "Standard NCADS_A100_v4 Family vCPUs"),
    AzureQuota(r"Standard_NC\d+adi?s_H100_v5", "standardNCadsH100v5Family", "Standard NCadsH100v5 Family vCPUs"),
    AzureQuota(r"Standard_ND\d+isr_H100_v5", "standardNDSH100v5Family", "Standard NDSH100v5 Family vCPUs"),
    AzureQuota(r"Standard_ND\d+isr_H200_v5", "standardNDSH200v5Family", "Standard NDSH200v5 Family vCPUs"),
    AzureQuota(r"Standard_NV\d+ads_A10_v5", "StandardNVADSA10v5Family", "Standard NVADSA10v5 Family vCPUs"),
    # The System and general pools' usual sizes (Dv5: D<n>_v5, DSv5: D<n>s_v5, DDSv5: D<n>ds_v5, DASv5: D<n>as_v5)
    AzureQuota(r"Standard_D\d+_v5", "standardDv5Family", "Standard Dv5 Family vCPUs"),
    AzureQuota(r"Standard_D\d+s_v5", "standardDSv5Family", "Standard DSv5 Family vCPUs"),
    AzureQuota(r"Standard_D\d+ds_v5", "standardDDSv5Family", "Standard DDSv5 Family vCPUs"),
    AzureQuota(r"Standard_D\d+as_v5", "standardDASv5Family", "Standard DASv5 Family vCPUs"),
)
AZURE_QUOTAS = (REGIONAL, LOW_PRIORITY, *FAMILY_QUOTAS)


def family_quota(size: str) -> AzureQuota | None:
    """The family quota an on-demand VM of `size` draws on (None: not in the table)."""
    return next((q for q in FAMILY_QUOTAS if q.covers(size)), None)


def size_vcpus(size: str) -> int:
    """A general size's vCPUs from its name: Azure's size names carry them after the family letters
    (`Standard_D8s_v5`: 8; "Azure virtual machine sizes naming conventions"); 0 where the name has none."""
    found = re.match(r"Standard_[A-Z]+(\d+)", size)
    return int(found.group(1)) if found else 0
