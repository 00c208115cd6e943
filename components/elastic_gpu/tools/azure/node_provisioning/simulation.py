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
  every spot size costs less than every on-demand one (elastic_gpu/data/prices.csv), so the spot sizes are
  tried first, then on-demand.
- A size that fails is retried within the same NodeClaim: Azure's errors are `CreateError`s
  (offerings/commonerrorhandlers.go, every handler but the regional quota one), so the launch returns an
  error and the NodeClaim is requeued (core nodeclaim/lifecycle/launch.go:110-116) after 1 s, doubling up to
  1 min (lifecycle/controller.go:119, LAUNCH_RETRY), and the provider picks the next available offering. In a
  spot-first NodePool that is an on-demand size once every spot size has failed, in the same NodeClaim. Only
  when no offering of the NodeClaim is left does it return an InsufficientCapacityError, and the NodeClaim
  is deleted (launch.go:85-96); the pod, still pending, is batched again at its next requeue (POD_REQUEUE,
  provisioning/controller.go:77) and the scheduler takes the next NodePool (a separate on-demand one).

Azure (karpenter-provider-azure v1.14.2):
- Spot out of capacity is `SkuNotAvailable` (Azure docs error-codes-spot: "There is not enough Azure
  Spot Virtual Machine capacity"; the portal and API "fail immediately"), returned synchronously by
  the VM PUT (vminstance.go:729-745). The handler marks the size's spot offerings unavailable in every
  zone of the placement scope for SKU_NOT_AVAILABLE_SPOT_TTL (offerings/commonerrorhandlers.go:188-213):
  one attempt per size, then the spot NodePool has no offering left and the fallback NodePool is asked.
  "For a zonal offering this intentionally includes sibling zones" (commonerrorhandlers.go:93-96): with
  one zone out, a launch into it takes the size off every zone, so the next size (or the fallback) is asked.
- `AllocationFailed` (async, from the VM's long-running operation, vminstance.go:893-915) marks the
  size unavailable for *both* capacity types for ALLOCATION_FAILURE_TTL (commonerrorhandlers.go:58,
  :243-258): a spot AllocationFailed takes the size off the on-demand fallback for an hour. When every
  spot size fails so, the fallback NodePool (the same sizes) has no offering, and when a size's entry
  expires the spot NodePool, weighed higher, takes it first: the fallback is never asked while spot keeps
  failing that way (SCENARIO_ALLOCATION_FAILED).
- A VM that never registers is deleted after REGISTRATION_TIMEOUT (core nodeclaim/lifecycle/liveness.go:52)
  without touching the cache, so the same size is tried again.

The figures are the times of decisions (the VM's boot time comes on top), as for the cluster-autoscaler.
"""

from __future__ import annotations

import math

from elastic_gpu.azure.node_provisioning.objects import NODE_CLASS_API, NODE_CLASS_KIND, SKU_NAME_KEY
from elastic_gpu.gpu_catalog import GpuInstanceType
from elastic_gpu.karpenter_core import CORE
from elastic_gpu.scheduling import EPHEMERAL_STORAGE, GPU_RESOURCE
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.backoff import MINUTE, SPOT_RETURNS_AFTER, Constant
from elastic_gpu.tools.simulation.karpenter import CONSTANTS as CORE_CONSTANTS
from elastic_gpu.tools.simulation.karpenter import (
    GIB,
    NEXT_LOOP,
    KarpenterModel,
    Seconds,
    TypeResources,
    after_failures,
)
from elastic_gpu.tools.simulation.templates import MIB
from elastic_gpu.tools.simulation.timings import Evidence

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
LAUNCH_RETRY = Constant(
    "nodeclaim launch retry",
    1,
    "kubernetes-sigs/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/controller.go:119 (exponential from "
    "1 s to 1 min; a CreateError is retried within the NodeClaim, lifecycle/launch.go:110-116)",
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
    LAUNCH_RETRY,
    REGISTRATION_TIMEOUT,
)
#: The scenario of an asynchronous AllocationFailed on every spot size.
SCENARIO_ALLOCATION_FAILED = "spot fails asynchronously (AllocationFailed)"
TIMING_SOURCE = (
    f"node auto-provisioning: {_AZURE} (vendoring kubernetes-sigs/karpenter v1.14.0; loop constants read at "
    f"{CORE}): batching window, spot before on-demand (cheapest offering first), one VM per launch, "
    "SkuNotAvailable per size "
    "(elastic_gpu/azure/node_provisioning/simulation.py)"
)
NODE_CLASS_TYPE = f"kubernetes:{NODE_CLASS_API}:{NODE_CLASS_KIND}"


def retries(failed: int) -> int:
    """Seconds of the NodeClaim's requeue backoff over ``failed`` failed sizes: 1 s, doubling, capped at 1 min."""
    return sum(min(LAUNCH_RETRY.seconds * 2**i, MINUTE) for i in range(failed))


def to_fallback(spot_skus: int, one_node_pool: bool = False) -> Seconds:
    """Scenario "all spot out of capacity": the spot NodeClaim tries every spot size in turn (each
    SkuNotAvailable blocks the size in every zone). In a spot-first NodePool (``one_node_pool``) the same
    NodeClaim's next retry launches an on-demand size; with a separate on-demand NodePool the NodeClaim finds
    no offering left and is deleted, and the pod's next loop launches the on-demand NodePool's NodeClaim."""
    first = after_failures(0)
    loop = (0, 0) if one_node_pool else NEXT_LOOP
    return Seconds(first.best + retries(spot_skus) + loop[0], first.worst + retries(spot_skus) + loop[1])


def first_node(spot: bool, fallback: bool, spot_skus: int, one_node_pool: bool = False) -> dict[str, Seconds | None]:
    """Per scenario (the cluster-autoscaler model's three, and AllocationFailed), until capacity that
    delivers is asked; None: never."""
    from elastic_gpu.tools.simulation.run import SCENARIO_ALL_OUT, SCENARIO_ONE_ZONE, SCENARIO_RETURNS

    first = after_failures(0)
    if not spot:
        return {SCENARIO_ALL_OUT: first, SCENARIO_ONE_ZONE: first, SCENARIO_RETURNS: first}
    # Spot back at T, every size still cached: the first launch after the first entry expires.
    retry_period = SKU_NOT_AVAILABLE_SPOT_TTL.seconds + NEXT_LOOP[1]
    returns = Seconds(SPOT_RETURNS_AFTER, SPOT_RETURNS_AFTER + retry_period)
    # One zone out: the worst launch goes there and takes the size off every zone; the NodeClaim tries the
    # next size a second later, or (one size) is deleted and the fallback asked in the next loop. A single
    # size with no fallback waits for its cache entry.
    if spot_skus > 1:
        one_zone = Seconds(first.best, first.worst + retries(1))
    elif fallback:
        one_zone = Seconds(first.best, to_fallback(1, one_node_pool).worst)
    else:
        one_zone = Seconds(first.best, first.worst + retry_period)
    return {
        SCENARIO_ALL_OUT: to_fallback(spot_skus, one_node_pool) if fallback else None,
        SCENARIO_ONE_ZONE: one_zone,
        SCENARIO_RETURNS: to_fallback(spot_skus, one_node_pool) if fallback else returns,
        # Every spot size fails asynchronously: each takes the size off both capacity types for an hour, and the
        # spot NodePool takes a size back first when it frees: the fallback never comes while spot fails so.
        SCENARIO_ALLOCATION_FAILED: None,
    }


def os_disk(preview: Preview, node_class: str) -> float | None:
    """Bytes of the OS disk the AKSNodeClass gives its nodes (osDiskSizeGB): their ephemeral storage, in
    decimal gigabytes as the provider counts it (pkg/providers/instancetype/instancetype.go:338-340
    ephemeralStorage, resource.Giga)."""
    for r in preview.of_type(NODE_CLASS_TYPE):
        if (r.inputs.get("metadata") or {}).get("name") == node_class:
            size = (r.inputs.get("spec") or {}).get("osDiskSizeGB")
            return float(size) * 1e9 if isinstance(size, int | float) else None
    return None


_SIZES = f"{_AZURE} pkg/providers/instancetype/instancetype.go"
#: The share of a size's memory the provider takes off as the VM's overhead (pkg/operator/options/options.go:110
#: vm-memory-overhead-percent, its default; what AKS's managed deployment sets is not documented).
VM_MEMORY_OVERHEAD_PERCENT = 0.075
#: kube-reserved as tax brackets (instancetype.go:45-89, Calculate :102-118): memory in GiB of the size's
#: memory, CPU in cores: (upper bound, rate) from 0 upwards.
RESERVED_MEMORY_BRACKETS_GIB = ((4.0, 0.25), (8.0, 0.20), (16.0, 0.10), (128.0, 0.06), (math.inf, 0.02))
RESERVED_CPU_BRACKETS = ((1.0, 0.06), (2.0, 0.04), (4.0, 0.02), (math.inf, 0.01))
#: The eviction threshold (instancetype.go:42 DefaultMemoryAvailable, :367-371); no system-reserved (:346-353).
EVICTION_MEMORY = 750 * MIB
OVERHEAD_SOURCE = (
    f"Karpenter's Azure overhead, {_SIZES}: kube-reserved by tax brackets, 750Mi eviction, "
    f"{VM_MEMORY_OVERHEAD_PERCENT:.1%} VM memory overhead"
)


def _tax(brackets: tuple[tuple[float, float], ...], amount: float) -> float:
    tax, lower = 0.0, 0.0
    for upper, rate in brackets:
        if lower > amount:
            break
        tax += (min(upper, amount) - lower) * rate
        lower = upper
    return tax


def type_resources(row: GpuInstanceType, disk: float | None) -> TypeResources:
    """A VM size as the provider sizes it (instancetype.go:120-140 newInstanceType): the whole GiB of its
    memory less the VM overhead (:326-336), kube-reserved by brackets of the size's vCPUs and memory
    (:355-365, millicores and MiB truncated) and the 750Mi eviction threshold."""
    gib = int(row.memory_gib) * GIB
    capacity = {
        "cpu": float(row.vcpus),
        "memory": float(gib - math.ceil(gib * VM_MEMORY_OVERHEAD_PERCENT)),
        GPU_RESOURCE: float(row.gpus),
    }
    if disk is not None:
        capacity[EPHEMERAL_STORAGE] = disk
    memory_mib = int(1024 * _tax(RESERVED_MEMORY_BRACKETS_GIB, row.memory_gib))
    cpu_milli = int(1000 * _tax(RESERVED_CPU_BRACKETS, row.vcpus))
    overhead = {"cpu": cpu_milli / 1000, "memory": float(memory_mib * MIB + EVICTION_MEMORY)}
    return TypeResources(capacity, overhead, OVERHEAD_SOURCE)


MODEL = KarpenterModel(
    cloud="azure",
    type_key=SKU_NAME_KEY,
    disk=os_disk,
    first_node=first_node,
    to_fallback=to_fallback,
    source=TIMING_SOURCE,
    evidence=Evidence(
        "docs",
        "AKS docs, node auto-provisioning (a managed deployment of the open-source Karpenter provider for "
        f"Azure, version chosen by AKS); the clocks are {_AZURE}'s code as the docs describe it",
    ),
    type_resources=type_resources,
)
