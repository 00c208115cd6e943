"""Karpenter core (kubernetes-sigs/karpenter): the facts of its NodePool API that every cloud running
Karpenter shares (EKS: Karpenter, components/aws/karpenter/; AKS: node auto-provisioning,
components/azure/node_provisioning/). A cloud's provider adds its node class, its instance-type label and
how a launch fails for capacity; the scheduling loop's timings are in elastic_gpu.simulation.karpenter.

Read at kubernetes-sigs/karpenter v1.14.1 (the core aws/karpenter-provider-aws v1.14.1 pins);
Azure/karpenter-provider-azure v1.14.2 vendors v1.14.0, whose files cited here hold the same values.
"""

from __future__ import annotations

CORE = "kubernetes-sigs/karpenter v1.14.1"

#: The NodePool API (pkg/apis/crds: v1 only), the same on every provider.
NODE_POOL_API = "karpenter.sh/v1"
NODE_POOL_KIND = "NodePool"

#: Karpenter's well-known labels (pkg/apis/v1/labels.go; Kubernetes' own).
CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"
INSTANCE_TYPE_KEY = "node.kubernetes.io/instance-type"
ZONE_KEY = "topology.kubernetes.io/zone"
CAPACITY_TYPES = {"spot": "spot", "on-demand": "on-demand"}

#: NodePool weights (1..100, pkg/apis/v1/nodepool.go:64-65): the scheduler tries NodePools by weight,
#: highest first (pkg/utils/nodepool/nodepool.go:161 OrderByWeight; provisioner.go:293), so spot first.
#: Room is left between them for a user's own NodePools.
SPOT_WEIGHT = 100
ON_DEMAND_WEIGHT = 10

#: No node is replaced because it drifted (a new node image, a changed NodePool): a GPU job is never
#: evicted for it; drifted nodes leave when empty or at EXPIRE_AFTER.
DRIFT_BUDGET = {"nodes": "0", "reasons": ["Drifted"]}
#: Upstream's default budget (pkg/apis/v1/nodepool.go `+kubebuilder:default:={{nodes: "10%"}}`), kept for
#: every other reason since a budget list replaces the default.
DEFAULT_BUDGET = {"nodes": "10%"}
#: WhenEmpty, not WhenEmptyOrUnderutilized: underutilization consolidation evicts running pods to repack
#: them (and replaces spot with cheaper spot); a GPU job evicted loses its progress. An empty GPU node is
#: what costs money, and it goes after `consolidateAfter`.
CONSOLIDATION_POLICY = "WhenEmpty"
#: A node's longest life (upstream's default, pkg/apis/v1/nodepool.go:263 `default:="720h"`), stated.
EXPIRE_AFTER = "720h"


def duration_seconds(text: str) -> int:
    """A NodePool duration (`^(([0-9]+(s|m|h))+|Never)$`) in seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    total, number = 0, ""
    for ch in text:
        if ch.isdigit():
            number += ch
        else:
            total, number = total + int(number) * units[ch], ""
    return total


def time_slicing_problem(field: str, replicas: int) -> str:
    """Why GPU time-slicing is refused under Karpenter (EKS Karpenter, AKS node auto-provisioning).

    Karpenter plans a node from the instance type's physical `nvidia.com/gpu` count (karpenter-provider-aws
    v1.14.1 pkg/providers/instancetype/types.go:342,416), not from the shared count the device plugin
    advertises once the node runs, so it launches a node for each physical GPU the pending pods ask for.
    NodeOverlay, which could give it the shared count, is alpha and off by default at v1.14.1 (chart
    values.yaml `featureGates.nodeOverlay: false`)."""
    return (
        f"{field}: {replicas} with provisioner 'karpenter': Karpenter plans nodes with each instance type's "
        "physical nvidia.com/gpu count, not the time-sliced count the device plugin advertises, so it would "
        f"launch up to {replicas} times the nodes the pending pods need; use provisioner 'cluster-autoscaler' "
        "(its node template advertises the shared count) or leave time-slicing off"
    )
