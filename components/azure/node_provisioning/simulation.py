"""Node auto-provisioning's scale-up on a clock, from source: how long a pending GPU pod waits until
NAP asks for a node that comes (spot with capacity, or the on-demand fallback).

Karpenter core (sigs.k8s.io/karpenter v1.14.0, vendored by karpenter-provider-azure v1.14.2):
- A pending pod opens a batch (provisioning/controller.go:70 Trigger); the batch ends after
  BATCH_IDLE without a new pod, at most after BATCH_MAX (provisioning/batcher.go:89-103).
- The scheduler tries the NodePools by weight, highest first, and launches a NodeClaim listing every
  size the NodePool allows; the provider launches the cheapest offering not in its
  unavailable-offerings cache (karpenter-provider-azure pkg/providers/instance/vminstance.go:768
  allocationStrategyProvider.Allocate).
- A failed launch deletes the NodeClaim; the pod is batched again when the deletion or the pod's
  requeue (POD_REQUEUE, provisioning/controller.go:77) triggers the provisioner.

Azure (karpenter-provider-azure v1.14.2):
- Spot out of capacity is `SkuNotAvailable` (Azure docs error-codes-spot: "There is not enough Azure
  Spot Virtual Machine capacity"; the portal and API "fail immediately"), returned synchronously by
  the VM PUT (vminstance.go:729-745). The handler marks the size's spot offerings unavailable in every
  zone of the placement scope for SKU_NOT_AVAILABLE_SPOT_TTL (offerings/commonerrorhandlers.go:188-211):
  one attempt per size, then the spot NodePool has no offering left and the fallback NodePool is asked.
- `AllocationFailed` (async, from the VM's long-running operation, vminstance.go:893-915) marks the
  size unavailable for *both* capacity types for ALLOCATION_FAILURE_TTL (commonerrorhandlers.go:243-258):
  a spot AllocationFailed also takes the size off the on-demand fallback for an hour. Not in the
  figures (Azure documents SkuNotAvailable as the spot capacity error); reported as a note.
- A VM that never registers is deleted after REGISTRATION_TIMEOUT (core nodeclaim/lifecycle/liveness.go:52)
  without touching the cache, so the same size is tried again.

The figures are the times of decisions (the VM's boot time comes on top), as for the cluster-autoscaler.
"""

from __future__ import annotations

from dataclasses import dataclass

from elastic_gpu.simulation.backoff import MINUTE, SECOND, Constant

BATCH_IDLE = Constant(
    "BATCH_IDLE_DURATION",
    1 * SECOND,
    "kubernetes-sigs/karpenter v1.14.0 pkg/operator/options/options.go:130 (batch-idle-duration)",
)
BATCH_MAX = Constant(
    "BATCH_MAX_DURATION",
    10 * SECOND,
    "kubernetes-sigs/karpenter v1.14.0 pkg/operator/options/options.go:129 (batch-max-duration)",
)
POD_REQUEUE = Constant(
    "pending-pod requeue",
    10 * SECOND,
    "kubernetes-sigs/karpenter v1.14.0 pkg/controllers/provisioning/controller.go:77 (RequeueAfter 10s)",
)
SKU_NOT_AVAILABLE_SPOT_TTL = Constant(
    "SKUNotAvailableSpotTTL",
    60 * MINUTE,
    "Azure/karpenter-provider-azure v1.14.2 pkg/providers/instance/offerings/commonerrorhandlers.go:62",
)
ALLOCATION_FAILURE_TTL = Constant(
    "AllocationFailureTTL",
    60 * MINUTE,
    "Azure/karpenter-provider-azure v1.14.2 pkg/providers/instance/offerings/commonerrorhandlers.go:58 "
    "(both capacity types: markOfferingsUnavailableForPlacementForBothCapacityTypes)",
)
REGISTRATION_TIMEOUT = Constant(
    "registrationTimeout",
    15 * MINUTE,
    "kubernetes-sigs/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/liveness.go:52",
)
DISRUPTION_POLL = Constant(
    "disruption pollingPeriod",
    10 * SECOND,
    "kubernetes-sigs/karpenter v1.14.0 pkg/controllers/disruption/controller.go:71",
)

CONSTANTS: tuple[Constant, ...] = (
    BATCH_IDLE,
    BATCH_MAX,
    POD_REQUEUE,
    SKU_NOT_AVAILABLE_SPOT_TTL,
    ALLOCATION_FAILURE_TTL,
    REGISTRATION_TIMEOUT,
    DISRUPTION_POLL,
)
TIMING_SOURCE = (
    "node auto-provisioning: karpenter-provider-azure v1.14.2 on sigs.k8s.io/karpenter v1.14.0 "
    "(components/azure/node_provisioning/simulation.py)"
)
ALLOCATION_FAILED_NOTE = (
    "a spot AllocationFailed (not SkuNotAvailable) takes the size off the on-demand fallback too, for "
    f"{ALLOCATION_FAILURE_TTL.seconds // MINUTE} min (karpenter-provider-azure commonerrorhandlers.go)"
)


@dataclass(frozen=True)
class Seconds:
    best: int
    worst: int

    def minutes(self) -> tuple[float, float]:
        return round(self.best / 60, 2), round(self.worst / 60, 2)


def first_decision() -> Seconds:
    """The first NodeClaim: the pod's batch closes after BATCH_IDLE (one pod), or BATCH_MAX (pods
    keep arriving)."""
    return Seconds(BATCH_IDLE.seconds, BATCH_MAX.seconds)


def retry() -> Seconds:
    """From a failed launch to the next NodeClaim: the deletion triggers a batch at once (best), or the
    pod's requeue does and the batch runs its longest (worst)."""
    return Seconds(BATCH_IDLE.seconds, POD_REQUEUE.seconds + BATCH_MAX.seconds)


def to_fallback(spot_skus: int) -> Seconds:
    """Scenario "all spot out of capacity": every spot size fails once with SkuNotAvailable (each failure
    blocks the size in every zone), then the on-demand NodePool's NodeClaim is the next decision."""
    first, again = first_decision(), retry()
    return Seconds(first.best + spot_skus * again.best, first.worst + spot_skus * again.worst)


def to_first_node() -> Seconds:
    """Spot has capacity for the cheapest size: the first NodeClaim delivers."""
    return first_decision()


def minutes_to_zero(consolidate_after_seconds: int) -> tuple[float, float]:
    """An empty node is removed once it has been empty for consolidateAfter, at the disruption
    controller's next poll."""
    return round(consolidate_after_seconds / 60, 2), round(
        (consolidate_after_seconds + DISRUPTION_POLL.seconds) / 60, 2
    )
