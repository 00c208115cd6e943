"""Karpenter core (kubernetes-sigs/karpenter): the facts of its NodePool API that every cloud running
Karpenter shares (EKS: Karpenter, elastic_gpu/aws/karpenter/; AKS: node auto-provisioning,
elastic_gpu/azure/node_provisioning/). A cloud's provider adds its node class, its instance-type label and
how a launch fails for capacity; the scheduling loop's timings are in elastic_gpu.tools.simulation.karpenter.

Read at kubernetes-sigs/karpenter v1.14.1 (the core aws/karpenter-provider-aws v1.14.1 pins);
Azure/karpenter-provider-azure v1.14.2 vendors v1.14.0, whose files cited here hold the same values.
"""

from __future__ import annotations

from dataclasses import dataclass

from elastic_gpu.durations import parse_duration

CORE = "kubernetes-sigs/karpenter v1.14.1"

#: The NodePool API (pkg/apis/crds: v1 only), the same on every provider.
NODE_POOL_API = "karpenter.sh/v1"
NODE_POOL_KIND = "NodePool"

#: Karpenter's well-known labels (pkg/apis/v1/labels.go; Kubernetes' own).
CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"
NODE_POOL_KEY = "karpenter.sh/nodepool"
INSTANCE_TYPE_KEY = "node.kubernetes.io/instance-type"
ZONE_KEY = "topology.kubernetes.io/zone"
CAPACITY_TYPES = {"spot": "spot", "on-demand": "on-demand"}

#: The capacity types of a spot pool's one NodePool, in the order Karpenter tries them: "If a NodePool is
#: compatible with multiple capacity types, Karpenter will prioritize `reserved` capacity, followed by `spot`,
#: then finally `on-demand`" (aws/karpenter-provider-aws v1.14.1 website/content/en/docs/concepts/nodepools.md:276;
#: pkg/providers/instance/instance.go:745 getCapacityType picks spot while a spot offering is available).
#: AKS node auto-provisioning ranks one NodePool's offerings by price, then spot before on-demand
#: (karpenter-provider-azure v1.14.2 pkg/providers/allocationstrategy/stages/offering_rank.go compareOfferings):
#: spot first wherever a spot VM costs less than the on-demand sizes, which it does in the price table.
SPOT_FIRST = ("spot", "on-demand")
#: The capacity type of nodes that come from a reservation (Karpenter's `karpenter.sh/capacity-type: reserved`, and
#: a reserved group's `NodeGroupView.capacity_types`), which Karpenter takes before the two above (same sources).
RESERVED = "reserved"

#: NodePool weights (1..100, pkg/apis/v1/nodepool.go:64-65): the scheduler tries NodePools by weight,
#: highest first (pkg/utils/nodepool/nodepool.go:161 OrderByWeight; provisioner.go:293), so spot first.
#: Room is left between them for a user's own NodePools.
SPOT_WEIGHT = 100
ON_DEMAND_WEIGHT = 10


@dataclass(frozen=True)
class NodePoolPlan:
    """One NodePool of a GPU pool: its name suffix, the capacity types it allows, its `limits.nodes`, its weight."""

    suffix: str
    capacity_types: tuple[str, ...]
    max_nodes: int
    weight: int

    @property
    def spot_first(self) -> bool:
        """Spot, and on-demand when no spot offering is available, within this one NodePool."""
        return self.capacity_types == SPOT_FIRST


def node_pool_plans(
    *, spot: bool, on_demand_fallback: bool, max_size: int, fallback_max_size: int | None
) -> list[NodePoolPlan]:
    """A pool's NodePools, highest weight first, the same on every cloud that runs Karpenter.

    A spot pool with an on-demand fallback is one NodePool allowing both capacity types (`SPOT_FIRST`), capped
    at `max_size` nodes in total: Karpenter's own fallback, within one scheduling loop of spot running out.
    Only `fallback_max_size` (a separate cap on on-demand nodes) needs the fallback as its own, lower-weight
    NodePool; then the pool may reach max_size + fallback_max_size nodes. (On EKS, an on-demand launch from a
    NodePool that also allows spot over fewer than 5 instance types logs "at least 5 instance types are
    recommended"; the launch goes ahead: aws/karpenter-provider-aws v1.14.1 instance.go:437-454 checkODFallback.)
    """
    if not spot:
        return [NodePoolPlan("on-demand", ("on-demand",), max_size, SPOT_WEIGHT)]
    if not on_demand_fallback:
        return [NodePoolPlan("spot", ("spot",), max_size, SPOT_WEIGHT)]
    if fallback_max_size is None:
        return [NodePoolPlan("spot-first", SPOT_FIRST, max_size, SPOT_WEIGHT)]
    return [
        NodePoolPlan("spot", ("spot",), max_size, SPOT_WEIGHT),
        NodePoolPlan("on-demand", ("on-demand",), fallback_max_size, ON_DEMAND_WEIGHT),
    ]


#: A pod annotation: Karpenter neither consolidates nor drifts a node while such a pod runs on it (no
#: NodePool sets terminationGracePeriod), and does not evict the pod when it drains the node
#: (aws/karpenter-provider-aws v1.14.1 website/content/en/docs/concepts/disruption.md, "Pod-Level Controls").
#: The pools' example Jobs carry it (the workload contract's pod_annotations): a training run is not
#: restarted for a node image update; it takes the new image on its next node.
DO_NOT_DISRUPT = {"karpenter.sh/do-not-disrupt": "true"}
#: Drifted nodes (a new node image or AMI, a changed NodePool) are replaced one at a time per NodePool, a
#: replacement launched before the old node drains (disruption.md "Drift"; PDBs respected): so node image and
#: security updates reach running pools. AKS NAP moves nodes to a new image only through drift, and forces it
#: once an image is 90 days old (AKS docs node-auto-provisioning-upgrade-image.md); a budget of 0 held every
#: busy node on its old image until it emptied or reached EXPIRE_AFTER. A running Job is kept by DO_NOT_DISRUPT.
DRIFT_BUDGET = {"nodes": "1", "reasons": ["Drifted"]}
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
    """A NodePool duration (`^(([0-9]+(s|m|h))+|Never)$`, read by Go's time.ParseDuration) in seconds."""
    return round(parse_duration(text))


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
