"""The Kubernetes objects of a GPU pool under node auto-provisioning: an AKSNodeClass and NodePools.

Plain dicts (the objects as `kubectl apply` takes them), built by pure functions so tests validate
them against the upstream CRDs (tests/data/crds) and the policy reads them back from the preview.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from elastic_gpu.scheduling import AKS_SPOT_TAINT, GPU_RESOURCE, Taint

NODE_CLASS_API = "karpenter.azure.com/v1beta1"
NODE_CLASS_KIND = "AKSNodeClass"
NODE_CLASS_GROUP = NODE_CLASS_API.split("/")[0]
NODE_POOL_API = "karpenter.sh/v1"
NODE_POOL_KIND = "NodePool"

#: Karpenter's well-known requirement keys (sigs.k8s.io/karpenter pkg/apis/v1/labels.go) and the
#: provider's SKU name label (karpenter-provider-azure pkg/apis/v1beta1/labels.go:138).
CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"
SKU_NAME_KEY = "karpenter.azure.com/sku-name"
ZONE_KEY = "topology.kubernetes.io/zone"
CAPACITY_SPOT, CAPACITY_ON_DEMAND = "spot", "on-demand"
#: Karpenter tries NodePools by weight, highest first (NodePool.spec.weight, 1-100): spot before the
#: on-demand fallback ("When multiple NodePools match, it uses the one with highest weight",
#: AKS docs node-auto-provisioning-node-pools.md).
SPOT_WEIGHT = 100
FALLBACK_WEIGHT = 10
#: The node image: Ubuntu, the AKSNodeClass default, whose GPU sizes NAP installs the NVIDIA driver on
#: (supported-gpus.yaml lists "ubuntu" for every catalog size; AzureLinux 2 misses the A100/H100 ones).
IMAGE_FAMILY = "Ubuntu"
#: Consolidation: only empty GPU nodes are removed (WhenEmptyOrUnderutilized would evict running GPU
#: jobs to repack them); after `consolidateAfter` (the autoscaler's scale-down-unneeded-time, as the AKS
#: migration guide maps it: migrate-from-autoscaler-to-node-auto-provisioning.md).
CONSOLIDATION_POLICY = "WhenEmpty"
#: Nodes are replaced after 30 days (Karpenter's default expireAfter, written out so the policy sees it).
EXPIRE_AFTER = "720h"


@dataclass(frozen=True)
class NodePoolSpec:
    """One Karpenter NodePool of a GPU pool."""

    name: str
    capacity: str  #: "spot" | "on-demand"
    skus: list[str]
    zones: list[str]  #: topology.kubernetes.io/zone values ("eastus2-1")
    labels: dict[str, str]
    taints: list[Taint]
    max_nodes: int
    gpus_per_node: int
    weight: int
    node_class: str
    consolidate_after: str

    def to_spec(self) -> dict[str, Any]:
        requirements = [
            {"key": CAPACITY_TYPE_KEY, "operator": "In", "values": [self.capacity]},
            {"key": SKU_NAME_KEY, "operator": "In", "values": list(self.skus)},
            {"key": ZONE_KEY, "operator": "In", "values": list(self.zones)},
        ]
        return {
            "weight": self.weight,
            "limits": {"nodes": str(self.max_nodes), GPU_RESOURCE: str(self.max_nodes * self.gpus_per_node)},
            "disruption": {"consolidationPolicy": CONSOLIDATION_POLICY, "consolidateAfter": self.consolidate_after},
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
