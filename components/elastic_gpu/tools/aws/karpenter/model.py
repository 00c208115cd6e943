"""What Karpenter does with a pending GPU pod, on a clock (kubernetes-sigs/karpenter and
aws/karpenter-provider-aws, both at tag v1.14.1; the AWS provider's go.mod pins the core at that tag's
commit 6e7eab7a0f48); the core's constants are in elastic_gpu/karpenter_core.py.

One *loop* is a batching window followed by a scheduling pass (provisioning/provisioner.go): the pod
controller triggers the batcher for every provisionable pod and requeues it every 10 s
(provisioning/controller.go:70, :77); the window closes after BATCH_IDLE_DURATION without a new trigger or
at BATCH_MAX_DURATION (provisioning/batcher.go Wait). The scheduler orders NodePools by weight
(provisioner.go:290-293, utils/nodepool/nodepool.go:161) and takes the first that can hold the pod
(scheduling/scheduler.go:695 addToNewNodeClaim, :757 "always take an earlier successful schedule"). An instance
type can hold it only through an *available* offering (cloudprovider/types.go:214 and :235 keep
available offerings only; scheduling/nodeclaim.go `fits`).

The NodeClaim's launch is one EC2 CreateFleet over up to 60 eligible types (instance.go:67) in every zone
of the NodePool: spot with price-capacity-optimized, on-demand with lowest-price
(pkg/providers/instance/types.go:234, :244). Every offering that fails for capacity is put in the
unavailable-offerings cache (instance.go:626-642 MarkUnavailable) for 3 minutes (pkg/cache/cache.go:31),
and the offering resolver reports it unavailable meanwhile (instancetype/offering/base_resolver.go:106,
:135). The failed NodeClaim is deleted (core nodeclaim/lifecycle/launch.go:85-89) and the pod, still
pending, is batched again at its next requeue.

So: when every spot offering is out of capacity, the next loop launches on-demand. In the default shape, one
NodePool allowing both capacity types, the launch picks spot while any spot offering is available and
on-demand otherwise (instance.go:745 getCapacityType; docs/concepts/nodepools.md:276-278, "generally within
milliseconds"); with a separate on-demand NodePool (fallback_max_size), the spot NodePool has no available
offering left and the scheduler moves to the lower-weight on-demand NodePool in that loop. One failed CreateFleet
costs one loop, not a backoff per group. The figures are the times of the loop that asks capacity that
delivers; the node's boot comes on top, as in the cluster-autoscaler model.
"""

from __future__ import annotations

from elastic_gpu.karpenter_core import CORE
from elastic_gpu.tools.simulation.backoff import MINUTE, SPOT_RETURNS_AFTER, Constant
from elastic_gpu.tools.simulation.karpenter import CONSTANTS as CORE_CONSTANTS
from elastic_gpu.tools.simulation.karpenter import FIRST_LOOP, NEXT_LOOP, Seconds, after_failures

_AWS = "aws/karpenter-provider-aws v1.14.1"

UNAVAILABLE_OFFERINGS_TTL = Constant(
    "UnavailableOfferingsTTL",
    3 * MINUTE,
    f"{_AWS} pkg/cache/cache.go:31 (set at pkg/providers/instance/instance.go:641)",
)

#: The core's loop constants (elastic_gpu.karpenter_core) and the AWS provider's cache TTL.
CONSTANTS: tuple[Constant, ...] = (*CORE_CONSTANTS, UNAVAILABLE_OFFERINGS_TTL)

SOURCE = (
    f"{CORE} and {_AWS}: batching window, spot before on-demand (one NodePool or by weight), "
    "unavailable-offerings cache "
    "(elastic_gpu/aws/karpenter/model.py)"
)


def to_fallback(spot: bool, fallback: bool) -> Seconds | None:
    """Every spot offering out of capacity: until the on-demand NodePool is asked; None: never (spot only).
    An on-demand pool asks on-demand in its first loop. One failed CreateFleet covers every type."""
    if not spot:
        return Seconds(*FIRST_LOOP)
    if not fallback:
        return None
    return after_failures(1)


def first_node(
    spot: bool, fallback: bool, spot_types: int = 0, one_node_pool: bool = False
) -> dict[str, Seconds | None]:
    """Per scenario (the cluster-autoscaler model's three), until capacity that delivers is asked. The same
    whether on-demand is in the spot NodePool or its own (``one_node_pool``): a CreateFleet that fails for
    capacity deletes the NodeClaim either way, and the next loop launches on-demand."""
    from elastic_gpu.tools.simulation.run import SCENARIO_ALL_OUT, SCENARIO_ONE_ZONE, SCENARIO_RETURNS

    out = to_fallback(spot, fallback)
    if spot and not fallback:
        # Spot only: a failed launch hides every offering for the TTL; the first loop after it asks again.
        # Spot back at T: the first launch at or after T, at most one retry period later.
        period = UNAVAILABLE_OFFERINGS_TTL.seconds + NEXT_LOOP[1]
        returns: Seconds | None = Seconds(SPOT_RETURNS_AFTER, SPOT_RETURNS_AFTER + period)
    else:
        returns = out
    return {
        SCENARIO_ALL_OUT: out,
        # One CreateFleet covers every zone of the NodePool: a zone with capacity delivers in the first loop.
        SCENARIO_ONE_ZONE: Seconds(*FIRST_LOOP),
        SCENARIO_RETURNS: returns,
    }
