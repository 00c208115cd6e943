"""AKS: the Kubernetes minors it accepts (elastic_gpu/versions.py merges them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_EXISTING_CLUSTER, AKS_MANAGED_CLUSTER
from elastic_gpu.cloud_facts import VersionRows
from elastic_gpu.clouds import HANDLE_VERSION_INPUT, MinorSupport

if TYPE_CHECKING:
    from elastic_gpu.versions import SupportStatus

_SOURCE = (
    "AKS release calendar and LTS versions table, MicrosoftDocs/azure-aks-docs articles/aks/"
    "supported-kubernetes-versions.md (read 2026-12-01): End of life and LTS End of life columns, the last day of "
    "the month each names"
)
#: After End of life only AKS's paid Long Term Support continues (Premium tier with supportPlan
#: AKSLongTermSupport, "Long term support for AKS"): a cluster on that plan is judged by the LTS end of life
#: (`running_support`), every other one by End of life.
_NOTE = "LTS (Premium tier, supportPlan AKSLongTermSupport)"
KUBERNETES_SUPPORT = (
    MinorSupport("1.32", date(2026, 3, 31), date(2026, 3, 31), _SOURCE, _NOTE, date(2027, 3, 31)),
    MinorSupport("1.33", date(2026, 7, 31), date(2026, 7, 31), _SOURCE, _NOTE, date(2027, 7, 31)),
    MinorSupport("1.34", date(2026, 11, 30), date(2026, 11, 30), _SOURCE, _NOTE, date(2027, 11, 30)),
    MinorSupport("1.35", date(2027, 3, 31), date(2027, 3, 31), _SOURCE, _NOTE, date(2028, 3, 31)),
    MinorSupport("1.36", date(2027, 6, 30), date(2027, 6, 30), _SOURCE, _NOTE, date(2028, 6, 30)),
    MinorSupport("1.37", date(2027, 10, 31), date(2027, 10, 31), _SOURCE, _NOTE, date(2028, 10, 31)),
)

#: The ManagedCluster input (and the handle's, where it records it) that carries the support plan, the value
#: that means LTS, and the SKU tier LTS requires (ARM Microsoft.ContainerService managedClusters: supportPlan
#: KubernetesOfficial | AKSLongTermSupport; sku.tier Free | Standard | Premium).
SUPPORT_PLAN_INPUT = "supportPlan"
LTS_PLAN = "AKSLongTermSupport"
SKU_INPUT = "sku"
LTS_TIER = "Premium"


def running_support(status: SupportStatus, props: Mapping[str, Any]) -> SupportStatus:
    """A cluster on AKS Long Term Support (Premium tier, supportPlan AKSLongTermSupport) is supported until its
    minor's LTS end of life: past End of life it is in (paid) LTS, advisory, not end of life."""
    row = status.row
    if row is None or row.lts_end_of_life is None or props.get(SUPPORT_PLAN_INPUT) != LTS_PLAN:
        return status
    sku = props.get(SKU_INPUT)
    tier = sku.get("tier") if isinstance(sku, Mapping) else None
    if tier is not None and tier != LTS_TIER:  # AKS refuses LTS below Premium: judged as declared
        return status
    lts = replace(row, end_of_life=row.lts_end_of_life)
    day = status.day or date.today()
    level = (
        "end-of-life" if day > lts.end_of_life else "past-standard" if day > lts.end_of_standard_support else "standard"
    )
    return replace(status, row=lts, level=level, note=f"On AKS Long Term Support ({LTS_PLAN}, {LTS_TIER} tier).")


#: Its cluster resource and the input that carries its Kubernetes version, and the handle on a cluster this
#: library did not create, whose minor its node groups follow (the version policy rules judge both).
VERSION_INPUTS = {AKS_MANAGED_CLUSTER: "kubernetesVersion", AKS_EXISTING_CLUSTER: HANDLE_VERSION_INPUT}

#: Its node-pool resource and the input that carries the nodes' Kubernetes version (`diff`: version skew
#: between control plane and nodes). Unset, the nodes follow the control plane.
NODE_VERSION_INPUTS = {AKS_AGENT_POOL: "orchestratorVersion"}


#: The rows above as the deploy protocol's record (elastic_gpu/provider.py VersionRows).
ROWS = VersionRows(
    kubernetes_support=KUBERNETES_SUPPORT, version_inputs=VERSION_INPUTS, node_version_inputs=NODE_VERSION_INPUTS
)
