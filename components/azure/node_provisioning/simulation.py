"""Node auto-provisioning's scale-up on a clock, from source: how long a pending GPU pod waits until
NAP asks for a node that comes (spot with capacity, or the on-demand fallback).

Karpenter core (sigs.k8s.io/karpenter v1.14.0, vendored by karpenter-provider-azure v1.14.2; its constants are
elastic_gpu.karpenter_core's):
- A pending pod opens a batch (provisioning/controller.go:70 Trigger); the batch ends after
  BATCH_IDLE without a new pod, at most after BATCH_MAX (provisioning/batcher.go:89-103).
- The scheduler tries the NodePools by weight, highest first, and launches a NodeClaim listing every
  size the NodePool allows; the provider launches one VM, the cheapest offering not in its
  unavailable-offerings cache (karpenter-provider-azure pkg/providers/instance/vminstance.go:768
  allocationStrategyProvider.Allocate), spot before on-demand at equal price
  (allocationstrategy/stages/offering_rank.go compareOfferings). In a NodePool allowing both capacity types
  every spot size costs less than every on-demand one (components/data/prices.csv), so the spot sizes are
  tried first, then on-demand: the same count of failed launches as with a separate on-demand NodePool.
- A failed launch deletes the NodeClaim; the pod is batched again when the deletion or the pod's
  requeue (POD_REQUEUE, provisioning/controller.go:77) triggers the provisioner.

Azure (karpenter-provider-azure v1.14.2):
- Spot out of capacity is `SkuNotAvailable` (Azure docs error-codes-spot: "There is not enough Azure
  Spot Virtual Machine capacity"; the portal and API "fail immediately"), returned synchronously by
  the VM PUT (vminstance.go:729-745). The handler marks the size's spot offerings unavailable in every
  zone of the placement scope for SKU_NOT_AVAILABLE_SPOT_TTL (offerings/commonerrorhandlers.go:188-211):
  one attempt per size, then the spot NodePool has no offering left and the fallback NodePool is asked.
  "For a zonal offering this intentionally includes sibling zones" (commonerrorhandlers.go:93-96): with
  one zone out, a launch into it takes the size off every zone, so the next size (or the fallback) is asked.
- `AllocationFailed` (async, from the VM's long-running operation, vminstance.go:893-915) marks the
  size unavailable for *both* capacity types for ALLOCATION_FAILURE_TTL (commonerrorhandlers.go:243-258):
  a spot AllocationFailed also takes the size off the on-demand fallback for an hour. Not in the
  figures (Azure documents SkuNotAvailable as the spot capacity error); reported as a note.
- A VM that never registers is deleted after REGISTRATION_TIMEOUT (core nodeclaim/lifecycle/liveness.go:52)
  without touching the cache, so the same size is tried again.

The figures are the times of decisions (the VM's boot time comes on top), as for the cluster-autoscaler.
"""

from __future__ import annotations

from elastic_gpu.azure.node_provisioning.objects import NODE_CLASS_API, NODE_CLASS_KIND, SKU_NAME_KEY
from elastic_gpu.karpenter_core import CORE
from elastic_gpu.offline.runner import Preview
from elastic_gpu.simulation.backoff import MINUTE, SPOT_RETURNS_AFTER, Constant
from elastic_gpu.simulation.karpenter import CONSTANTS as CORE_CONSTANTS
from elastic_gpu.simulation.karpenter import GIB, NEXT_LOOP, KarpenterModel, Seconds, after_failures

_AZURE = "Azure/karpenter-provider-azure v1.14.2"

SKU_NOT_AVAILABLE_SPOT_TTL = Constant(
    "SKUNotAvailableSpotTTL", 60 * MINUTE, f"{_AZURE} pkg/providers/instance/offerings/commonerrorhandlers.go:62"
)
ALLOCATION_FAILURE_TTL = Constant(
    "AllocationFailureTTL",
    60 * MINUTE,
    f"{_AZURE} pkg/providers/instance/offerings/commonerrorhandlers.go:58 "
    "(both capacity types: markOfferingsUnavailableForPlacementForBothCapacityTypes)",
)
REGISTRATION_TIMEOUT = Constant(
    "registrationTimeout",
    15 * MINUTE,
    "kubernetes-sigs/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/liveness.go:52",
)

CONSTANTS: tuple[Constant, ...] = (
    *CORE_CONSTANTS,
    SKU_NOT_AVAILABLE_SPOT_TTL,
    ALLOCATION_FAILURE_TTL,
    REGISTRATION_TIMEOUT,
)
TIMING_SOURCE = (
    f"node auto-provisioning: {_AZURE} (vendoring kubernetes-sigs/karpenter v1.14.0; loop constants read at "
    f"{CORE}): batching window, spot before on-demand (cheapest offering first), one VM per launch, "
    "SkuNotAvailable per size "
    "(components/azure/node_provisioning/simulation.py)"
)
ALLOCATION_FAILED_NOTE = (
    "a spot AllocationFailed (not SkuNotAvailable) takes the size off the on-demand fallback too, for "
    f"{ALLOCATION_FAILURE_TTL.seconds // MINUTE} min (karpenter-provider-azure commonerrorhandlers.go)"
)
NODE_CLASS_TYPE = f"kubernetes:{NODE_CLASS_API}:{NODE_CLASS_KIND}"


def to_fallback(spot_skus: int) -> Seconds:
    """Scenario "all spot out of capacity": every spot size fails once with SkuNotAvailable (each failure
    blocks the size in every zone), then the on-demand NodePool's NodeClaim is the next decision."""
    return after_failures(spot_skus)


def first_node(spot: bool, fallback: bool, spot_skus: int) -> dict[str, Seconds | None]:
    """Per scenario (the cluster-autoscaler model's three), until capacity that delivers is asked."""
    from elastic_gpu.simulation.run import SCENARIO_ALL_OUT, SCENARIO_ONE_ZONE, SCENARIO_RETURNS

    first = after_failures(0)
    if not spot:
        return {SCENARIO_ALL_OUT: first, SCENARIO_ONE_ZONE: first, SCENARIO_RETURNS: first}
    # Spot back at T, every size still cached: the first launch after the first entry expires.
    retry_period = SKU_NOT_AVAILABLE_SPOT_TTL.seconds + NEXT_LOOP[1]
    returns = Seconds(SPOT_RETURNS_AFTER, SPOT_RETURNS_AFTER + retry_period)
    # One zone out: the worst launch goes there and takes the size off every zone; another size (or the
    # fallback) is asked in the next loop. A single size with no fallback waits for its cache entry.
    one_zone = (
        Seconds(first.best, after_failures(1).worst)
        if fallback or spot_skus > 1
        else Seconds(first.best, first.worst + retry_period)
    )
    return {
        SCENARIO_ALL_OUT: to_fallback(spot_skus) if fallback else None,
        SCENARIO_ONE_ZONE: one_zone,
        SCENARIO_RETURNS: to_fallback(spot_skus) if fallback else returns,
    }


def os_disk(preview: Preview, node_class: str) -> float | None:
    """Bytes of the OS disk the AKSNodeClass gives its nodes (osDiskSizeGB): their ephemeral storage."""
    for r in preview.of_type(NODE_CLASS_TYPE):
        if (r.inputs.get("metadata") or {}).get("name") == node_class:
            size = (r.inputs.get("spec") or {}).get("osDiskSizeGB")
            return float(size) * GIB if isinstance(size, int | float) else None
    return None


MODEL = KarpenterModel(
    cloud="azure",
    type_key=SKU_NAME_KEY,
    disk=os_disk,
    first_node=first_node,
    to_fallback=to_fallback,
    source=TIMING_SOURCE,
)
