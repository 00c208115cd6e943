"""The Kubernetes objects of a GPU pool under node auto-provisioning: an AKSNodeClass and NodePools.

Plain dicts (the objects as `kubectl apply` takes them), built by pure functions so tests validate
them against the upstream CRDs (tests/data/crds) and the policy reads them back from the preview.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from elastic_gpu.karpenter_core import (
    CAPACITY_TYPE_KEY,
    CONSOLIDATION_POLICY,
    DEFAULT_BUDGET,
    DRIFT_BUDGET,
    EXPIRE_AFTER,
    ZONE_KEY,
)
from elastic_gpu.scheduling import AKS_SPOT_TAINT, GPU_RESOURCE, Taint

NODE_CLASS_API = "karpenter.azure.com/v1beta1"
NODE_CLASS_KIND = "AKSNodeClass"
NODE_CLASS_GROUP = NODE_CLASS_API.split("/")[0]

#: The provider's SKU name label (karpenter-provider-azure pkg/apis/v1beta1/labels.go:138): the NodePools
#: list their sizes by it. Karpenter's own keys, weights, budgets, consolidation and expireAfter are the
#: core's (elastic_gpu.karpenter_core): "When multiple NodePools match, it uses the one with highest
#: weight" (AKS docs node-auto-provisioning-node-pools.md), so spot (SPOT_WEIGHT) before the fallback.
SKU_NAME_KEY = "karpenter.azure.com/sku-name"
#: The node image: Ubuntu, the AKSNodeClass default, whose GPU sizes NAP installs the NVIDIA driver on
#: (supported-gpus.yaml lists "ubuntu" for every catalog size; AzureLinux 2 misses the A100/H100 ones).
IMAGE_FAMILY = "Ubuntu"


@dataclass(frozen=True)
class NodePoolSpec:
    """One Karpenter NodePool of a GPU pool."""

    name: str
    capacity_types: tuple[str, ...]  #: ("spot",), ("on-demand",) or karpenter_core.SPOT_FIRST
    skus: list[str]
    zones: list[str]  #: topology.kubernetes.io/zone values ("eastus2-1"); none: no zone requirement
    labels: dict[str, str]
    taints: list[Taint]
    max_nodes: int
    gpus_per_node: int
    weight: int
    node_class: str
    consolidate_after: str

    def to_spec(self) -> dict[str, Any]:
        requirements = [
            {"key": CAPACITY_TYPE_KEY, "operator": "In", "values": list(self.capacity_types)},
            {"key": SKU_NAME_KEY, "operator": "In", "values": list(self.skus)},
        ]
        if self.zones:  # no zone (a region without zones): NAP places the nodes, as a regional agent pool
            requirements.append({"key": ZONE_KEY, "operator": "In", "values": list(self.zones)})
        return {
            "weight": self.weight,
            "limits": {"nodes": str(self.max_nodes), GPU_RESOURCE: str(self.max_nodes * self.gpus_per_node)},
            "disruption": {
                "consolidationPolicy": CONSOLIDATION_POLICY,
                "consolidateAfter": self.consolidate_after,
                # NAP updates nodes to a new node image through drift; AKS points to Karpenter's disruption
                # budgets to control it (learn.microsoft.com/azure/aks/node-auto-provisioning-upgrade-image)
                "budgets": [DEFAULT_BUDGET, DRIFT_BUDGET],
            },
            "template": {
                "metadata": {"labels": dict(self.labels)},
                "spec": {
                    "nodeClassRef": {"group": NODE_CLASS_GROUP, "kind": NODE_CLASS_KIND, "name": self.node_class},
                    "requirements": requirements,
                    "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in sorted(self.taints)],
                    "expireAfter": EXPIRE_AFTER,
                },
            },
        }


def node_class_spec(disk_size_gib: int, tags: dict[str, str], vnet_subnet_id: str | None = None) -> dict[str, Any]:
    """The AKSNodeClass spec: image family, OS disk size, Azure tags (cost allocation), subnet."""
    spec: dict[str, Any] = {"imageFamily": IMAGE_FAMILY, "osDiskSizeGB": disk_size_gib}
    if tags:
        spec["tags"] = dict(tags)
    if vnet_subnet_id:
        spec["vnetSubnetID"] = vnet_subnet_id
    return spec


def azure_zone(region: str, zone: str) -> str:
    """The zone label value of an AKS node: "<region>-<zone>" ("eastus2-1"; AKS docs
    node-auto-provisioning-node-pools.md, topology.kubernetes.io/zone)."""
    return f"{region}-{zone}"


def spot_taints(gpu_taints: list[Taint]) -> list[Taint]:
    """NAP does not taint spot nodes itself (karpenter-provider-azure v1.14.2 takes a node's taints from
    its NodeClaim alone: pkg/utils/taints.go ExtractTaints, aksmachineinstancehelpers.go configureTaints;
    it only labels them kubernetes.azure.com/scalesetpriority=spot, cloudprovider.go:656). The spot
    NodePool declares AKS's spot taint, so a pool's workload contract is the same under both provisioners."""
    return sorted({*gpu_taints, AKS_SPOT_TAINT})
