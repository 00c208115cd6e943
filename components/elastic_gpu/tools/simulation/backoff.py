"""cluster-autoscaler's scale-up state machine on a clock: attempt, failure, per-group backoff,
and the expander choosing among the groups not in backoff (kubernetes/autoscaler, CA 1.33.6;
identical in 1.34.5 and 1.35.2 for every line cited here).

One *decision* is a loop of the autoscaler (`RunOnce`) in which the pending pod finds no node,
not even an upcoming one, and the scale-up orchestrator asks one group for a node:

- The orchestrator skips every group in backoff (core/scaleup/orchestrator/orchestrator.go:644-650,
  `IsNodeGroupReadyToScaleUp` -> `NodeGroupScaleUpSafety`); the expander (priority, then random among
  equals: expander/priority/priority.go:119 `BestOptions`, expander/factory/expander_factory.go:78)
  picks among the rest, best tier first.
- While the asked group's node is upcoming, the pod packs onto it in the snapshot and nothing else is
  asked (core/static_autoscaler.go:451-456). The attempt ends when the loop sees it failed: on AWS at
  the ASG cache refresh that finds the failed scaling activity (cloudprovider/aws), on GKE when the
  MIG lists the stockout (cloudprovider/gce); the failed instance is deleted and the cluster state
  recalculated in that loop (static_autoscaler.go:429, :903), so the next group is asked in it. On AKS
  a VM that fails to provision is deleted at once by AKS's managed autoscaler (fast delete:
  azure_scale_set_instance_cache.go:227-247, `AZURE_ENABLE_FAST_DELETE_ON_FAILED_PROVISIONING`
  azure_config.go:330, on in AKS since its 2025-09-21 release), the same early path; a scale-set-level
  asynchronous error (kubernetes/autoscaler#8323) is seen only when max-node-provision-time has passed
  (clusterstate/clusterstate.go:277 `ExpectedAddTime.Before(now)`), and the timed-out VM still counts as
  upcoming until it is long-unregistered (clusterstate.go:661-676, :1003: max-node-provision-time after
  it was first listed, a loop after the ask) and removed (static_autoscaler.go:405-420): the next group
  is asked one loop after the timeout backed the failed one off (`Machine.lag`).
- The failed group is backed off (clusterstate.go:310 -> utils/backoff/exponential_backoff.go:69):
  the initial duration the first time; double the last one, capped, when it fails again after its
  backoff ended; the same one when it fails while still backed off (it cannot: it was free when
  asked). A group is backed off while `backoffUntil` is not before now (exponential_backoff.go:98).
  Its record is dropped once its last failure is older than the reset timeout
  (exponential_backoff.go:113-118, called each loop from clusterstate.go:263).
- The next decision is in the same loop (the timeout is seen in `UpdateNodes`, before scale-up), so
  one attempt lasts from one decision to the next. When every group is backed off and none can
  deliver, the next decision is the first loop after the earliest backoff ends.

The figures are the times of decisions, counted from the pending pod's creation: the autoscaler does
not scale up for a pod that requests a GPU until it is 30 s old (`GPU_POD_WAIT`), then asks at its
next loop (`Machine.start`); the figure is when it *asks* a group that delivers (an on-demand
fallback, or spot that has capacity). The node's own boot time comes on top, and is not in the
autoscaler's source.

Ties (groups the expander ranks equal) are drawn at random upstream; here every draw is explored,
so a range covers every order. Symmetric groups (same tier, same fate) are merged.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from elastic_gpu.karpenter_core import RESERVED

SECOND = 1
MINUTE = 60


@dataclass(frozen=True)
class Constant:
    """One figure of the machine, in seconds, with where it comes from."""

    name: str
    seconds: int
    source: str


#: cluster-autoscaler's backoff and loop constants (the defaults; none is settable on AKS or GKE,
#: and the EKS Deployment this library runs sets none of them).
SCAN_INTERVAL = Constant(
    "scan-interval",
    10 * SECOND,
    "kubernetes/autoscaler cluster-autoscaler/config/const.go:55 DefaultScanInterval; main.go:302, loop/trigger.go",
)
INITIAL_BACKOFF = Constant(
    "initial-node-group-backoff-duration",
    5 * MINUTE,
    "kubernetes/autoscaler cluster-autoscaler/config/flags/flags.go:185",
)
MAX_BACKOFF = Constant(
    "max-node-group-backoff-duration",
    30 * MINUTE,
    "kubernetes/autoscaler cluster-autoscaler/config/flags/flags.go:187",
)
BACKOFF_RESET = Constant(
    "node-group-backoff-reset-timeout",
    3 * 60 * MINUTE,
    "kubernetes/autoscaler cluster-autoscaler/config/flags/flags.go:189; utils/backoff/exponential_backoff.go:113",
)
MAX_NODE_PROVISION_TIME = Constant(
    "max-node-provision-time",
    15 * MINUTE,
    "kubernetes/autoscaler cluster-autoscaler/config/flags/flags.go:126; timeout at clusterstate/clusterstate.go:277",
)
AWS_ASG_REFRESH = Constant(
    "ASG cache refresh",
    1 * MINUTE,
    "kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/aws_manager.go:49 refreshInterval (Refresh :119); "
    "a failed scaling activity marks the placeholder instance unfulfillable at the refresh "
    "(auto_scaling_groups.go:512-517, aws_cloud_provider.go:383-388)",
)
GCE_MIG_INSTANCES_REFRESH = Constant(
    "MIG instances refresh",
    5 * SECOND,
    "kubernetes/autoscaler cluster-autoscaler/config/flags/flags.go:173 gce-mig-instances-min-refresh-wait-time "
    "(the instances cache entry is invalidated while a group scales up, clusterstate.go:1033-1036); "
    "ZONE_RESOURCE_POOL_EXHAUSTED -> OutOfResources (cloudprovider/gce/autoscaling_gce_client.go:558-561, :656)",
)
AZURE_FAST_DELETE = Constant(
    "enableFastDeleteOnFailedProvisioning",
    0,
    "kubernetes/autoscaler cluster-autoscaler/cloudprovider/azure/azure_config.go:114, :330 "
    "(AZURE_ENABLE_FAST_DELETE_ON_FAILED_PROVISIONING), azure_scale_set_instance_cache.go:227-247: a VM in "
    "provisioning state Failed is an out-of-resources creation error, deleted at once; upstream default off, "
    "on in AKS's managed autoscaler (Azure/AKS CHANGELOG 2025-09-21, 2025-10-12; Azure/AKS#5589). "
    "Scale-set-level async errors still wait for max-node-provision-time (kubernetes/autoscaler#8323)",
)
#: Not the autoscaler's constant (so not in CONSTANTS): the floor of the promise advice's maxNodeProvisionTime.
GPU_NODE_READY = Constant(
    "GPU node ready",
    10 * MINUTE,
    "the time from the scale-up to a GPU node that is Ready with its GPUs allocatable, which "
    "max-node-provision-time must cover (the autoscaler counts a GPU node unready until it advertises its GPUs: "
    "kubernetes/autoscaler#461, utils/gpu): ~10-11 min on AKS (Microsoft Q&A, "
    "learn.microsoft.com/en-us/answers/a/12767836, 2026), 4-6 min on EKS and a 5 min timeout too short for "
    "g4dn (kubernetes/autoscaler#3464, #6810); the slowest, so no advice times out a healthy GPU node",
)
GPU_POD_WAIT = Constant(
    "unschedulablePodWithGpuTimeBuffer",
    30 * SECOND,
    "kubernetes/autoscaler cluster-autoscaler/core/static_autoscaler.go:70, checked at :544 allPodsAreNew "
    "(:1046-1051): no scale-up while the oldest pending pod that requests a GPU is younger",
)
POD_WAIT = Constant(
    "unschedulablePodTimeBuffer",
    2 * SECOND,
    "kubernetes/autoscaler cluster-autoscaler/core/static_autoscaler.go:66 (a pod that requests no GPU)",
)

#: The table the README and `simulate --json` show.
CONSTANTS: tuple[Constant, ...] = (
    SCAN_INTERVAL,
    INITIAL_BACKOFF,
    MAX_BACKOFF,
    BACKOFF_RESET,
    MAX_NODE_PROVISION_TIME,
    AWS_ASG_REFRESH,
    GCE_MIG_INSTANCES_REFRESH,
    AZURE_FAST_DELETE,
    GPU_POD_WAIT,
    POD_WAIT,
)

#: A group at its max size is skipped in the same filter as a group in backoff, before the expander: a reserved
#: tier's group whose reservation is full (its max size is the tier's nodes) passes the pod to the next tier at once,
#: with no attempt and no backoff.
MAX_SIZE_SKIP = (
    "kubernetes/autoscaler cluster-autoscaler-1.33.6 core/scaleup/orchestrator/orchestrator.go:408-423 "
    "filterValidScaleUpNodeGroups: IsNodeGroupReadyToScaleUp (backoff), then "
    '"Skipping node group %s - max size reached" (MaxLimitReachedReason)'
)

#: Scenario "spot comes back after T": the T, a scenario parameter (not an upstream figure).
SPOT_RETURNS_AFTER = 60 * MINUTE


@dataclass(frozen=True)
class Machine:
    """The clocks of one cloud's autoscaler. ``attempt`` is the shortest and longest time from
    asking a group that cannot deliver to the loop that backs it off and asks the next one."""

    attempt: tuple[int, int]
    scan: int = SCAN_INTERVAL.seconds
    #: from the pod's creation to the first decision: its age before a scale-up (GPU_POD_WAIT), then
    #: up to one loop (best, worst)
    start: tuple[int, int] = (GPU_POD_WAIT.seconds, GPU_POD_WAIT.seconds + SCAN_INTERVAL.seconds)
    #: seconds between the failed group's backoff and the next decision (AKS timeout: the timed-out VM
    #: is upcoming one more loop)
    lag: int = 0
    #: the attempt ends only when max-node-provision-time runs out (no early failure)
    timeout_bound: bool = False
    initial: int = INITIAL_BACKOFF.seconds
    cap: int = MAX_BACKOFF.seconds
    #: how the attempt time is derived, for the report
    source: str = ""
    #: the attempt of a group asked in the loop that saw the previous one fail, where it is shorter than
    #: `attempt` (EKS: removing the failed placeholder forces the next loop's ASG refresh, so the refresh's
    #: phase is known); None: `attempt`
    chained_attempt: tuple[int, int] | None = None


@dataclass(frozen=True)
class Group:
    """A node group as the machine sees it: its expander tier (0 best), whether it is spot, its capacity type
    ("spot", "on-demand" or RESERVED) and whether it is at its max size (never asked: MAX_SIZE_SKIP)."""

    name: str
    tier: int
    spot: bool
    zones: tuple[str, ...] = ()
    capacity: str = ""
    at_max: bool = False

    @property
    def reserved(self) -> bool:
        return self.capacity == RESERVED


@dataclass(frozen=True)
class Span:
    """Seconds to the goal: best and worst over the explored runs;
    ``worst`` None when some run never gets there (an order of draws that cycles forever)."""

    best: int
    worst: int | None


# A group's backoff record at a decision: (duration, until - now); (0, -1) when there is none.
# `until - now` < 0 means free; it is clipped to -1 (all free groups behave alike).
# The reset timeout (a record dropped 3 h after its group's last failure) is left out of the state:
# it cannot fire within 3 h of the first scale-up, and a group that keeps being asked keeps its record.
_Record = tuple[int, int]
_NONE: _Record = (0, -1)
_State = tuple[_Record, ...]


def _advance(state: _State, seconds: int) -> _State:
    return tuple((duration, left - seconds if left - seconds >= 0 else -1) for duration, left in state)


def _fail(state: _State, i: int, attempt: int, machine: Machine) -> _State:
    """Group i was asked now (it was free) and is backed off ``attempt`` seconds later: for the
    initial duration, or twice its last one up to the cap (it failed after its backoff ended)."""
    later = list(_advance(state, attempt))
    duration = state[i][0]
    duration = machine.initial if duration == 0 else min(2 * duration, machine.cap)
    later[i] = (duration, duration - machine.lag)
    return tuple(later)


def _free(groups: Sequence[Group], state: _State) -> list[int]:
    """The groups the orchestrator may ask: not in backoff, not at their max size (orchestrator.go:408-423)."""
    return [i for i, (_, left) in enumerate(state) if left < 0 and not groups[i].at_max]


def _next_free(groups: Sequence[Group], state: _State) -> int | None:
    """Seconds until the earliest backoff ends (None: every group is at its max size, none will ever be free)."""
    lefts = [left for i, (_, left) in enumerate(state) if not groups[i].at_max]
    return min(lefts) if lefts else None


def _chained(state: _State, machine: Machine) -> bool:
    """Is this decision in the loop that saw a group fail? Its backoff was set in this loop (`_fail`); any
    time that passes since leaves every record below it."""
    return any(duration and left == duration - machine.lag for duration, left in state)


class _Graph:
    """The decisions reachable from the first one, for one attempt time and one goal."""

    def __init__(
        self,
        groups: Sequence[Group],
        delivers: Callable[[Group], bool],
        machine: Machine,
        attempt: int,
        step: int,
        chained: int | None = None,
    ) -> None:
        self.groups, self.delivers, self.machine, self.attempt, self.step = groups, delivers, machine, attempt, step
        self.chained = attempt if chained is None else chained
        # Groups that behave alike (same tier, spot, fate) are interchangeable: states are kept sorted within a class.
        keys = [(g.tier, g.spot, g.at_max, delivers(g)) for g in groups]
        self.classes = [[i for i, k in enumerate(keys) if k == key] for key in dict.fromkeys(keys)]

    def canonical(self, state: _State) -> _State:
        out = list(state)
        for members in self.classes:
            for i, record in zip(members, sorted(state[i] for i in members), strict=True):
                out[i] = record
        return tuple(out)

    def edges(self, state: _State) -> list[tuple[int, _State | None]]:
        """(seconds, next decision) per choice; next None when the choice delivers."""
        free = _free(self.groups, state)
        if not free:
            # Nothing to ask: the first loop after the earliest backoff ends (never, when all are at max size).
            left = _next_free(self.groups, state)
            if left is None:
                return []
            wait = left + self.step
            return [(wait, self.canonical(_advance(state, wait)))]
        best = min(self.groups[i].tier for i in free)
        out: list[tuple[int, _State | None]] = []
        seen: set[tuple[int, _Record]] = set()
        for i in free:
            if self.groups[i].tier != best:
                continue
            klass = next(k for k, members in enumerate(self.classes) if i in members)
            if (klass, state[i]) in seen:
                continue  # the same draw as a symmetric group already explored
            seen.add((klass, state[i]))
            if self.delivers(self.groups[i]):
                out.append((0, None))
            else:
                attempt = self.chained if _chained(state, self.machine) else self.attempt
                out.append((attempt, self.canonical(_fail(state, i, attempt, self.machine))))
        return out

    def span(self) -> Span | None:
        start = self.canonical(tuple(_NONE for _ in self.groups))
        # Explore every reachable decision once.
        graph: dict[_State, list[tuple[int, _State | None]]] = {}
        todo = [start]
        while todo:
            s = todo.pop()
            if s in graph:
                continue
            graph[s] = self.edges(s)
            todo += [n for _, n in graph[s] if n is not None and n not in graph]
        best = _shortest(start, graph)
        if best is None:
            return None
        return Span(best, _longest(start, graph))


def _shortest(start: _State, graph: dict[_State, list[tuple[int, _State | None]]]) -> int | None:
    done: set[_State] = set()
    heap: list[tuple[int, int, _State | None]] = [(0, 0, start)]
    counter = 1
    while heap:
        t, _, s = heapq.heappop(heap)
        if s is None:
            return t
        if s in done:
            continue
        done.add(s)
        for seconds, n in graph[s]:
            heapq.heappush(heap, (t + seconds, counter, n))
            counter += 1
    return None


def _longest(start: _State, graph: dict[_State, list[tuple[int, _State | None]]]) -> int | None:
    """The longest way to the goal; None when a cycle that avoids it is reachable (a run that never gets there)."""
    memo: dict[_State, int | None] = {}
    on_path: set[_State] = set()
    # Iterative depth-first search (a long chain of decisions must not hit Python's recursion limit).
    stack: list[tuple[_State, int]] = [(start, 0)]
    unbounded = False
    while stack:
        s, k = stack.pop()
        if k == 0:
            if s in memo:
                continue
            on_path.add(s)
        nexts = graph[s]
        if k < len(nexts):
            stack.append((s, k + 1))
            n = nexts[k][1]
            if n is not None and n not in memo:
                if n in on_path:
                    unbounded = True
                    break
                stack.append((n, 0))
            continue
        on_path.discard(s)
        worst = -1
        for seconds, n in nexts:
            tail = 0 if n is None else memo.get(n, -1)
            if tail is not None and tail >= 0:
                worst = max(worst, seconds + tail)
        memo[s] = worst  # -1: no way to the goal from here
    if unbounded:
        return None
    result = memo.get(start)
    return result if result is not None and result >= 0 else None


def _ends(machine: Machine) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(attempt, loop after a backoff, chained attempt) at both ends: the shortest with the quickest loop,
    the longest with a whole scan interval."""
    chained = machine.chained_attempt or machine.attempt
    return (machine.attempt[0], SECOND, chained[0]), (machine.attempt[1], machine.scan, chained[1])


def span(groups: Sequence[Group], delivers: Callable[[Group], bool], machine: Machine) -> Span | None:
    """Seconds from the pod's creation until a delivering group is asked, over both ends of the attempt time and every
    draw between equals; None when no run ever asks one (e.g. spot groups cycling through backoff)."""
    spans = []
    # The shortest attempt with the quickest loop after a backoff; the longest with a whole scan interval.
    for (attempt, step, chained), start in zip(_ends(machine), machine.start, strict=True):
        s = _Graph(groups, delivers, machine, attempt, step, chained).span()
        if s is not None:
            spans.append(Span(s.best + start, None if s.worst is None else s.worst + start))
    if not spans:
        return None
    worst = [s.worst for s in spans]
    return Span(min(s.best for s in spans), None if None in worst or len(spans) < 2 else max(worst))  # type: ignore[type-var]


def first_node_after_return(groups: Sequence[Group], machine: Machine, returns_after: int) -> tuple[int, int]:
    """Scenario "spot comes back after T" (from the pod's creation): every spot group fails until
    ``returns_after``, then delivers. Seconds until a delivering group (spot after T, or on-demand) is
    asked, best and worst over the attempt times and draws. Always finite: after T every group is free
    within the backoff cap."""
    results = []
    for (attempt, step, chained), first in zip(_ends(machine), machine.start, strict=True):
        graph = _Graph(groups, lambda g: not g.spot, machine, attempt, step, chained)
        start = (first, graph.canonical(tuple(_NONE for _ in groups)))
        # Every decision (time, state) reachable before a delivering group is asked; time always grows.
        children: dict[tuple[int, _State], list[tuple[int, tuple[int, _State] | None]]] = {}
        todo = [start]
        while todo:
            node = todo.pop()
            if node in children:
                continue
            t, state = node
            if t >= returns_after and _free(groups, state):
                children[node] = [(0, None)]  # the best free tier delivers now: spot is back, on-demand always
                continue
            children[node] = [(seconds, None if n is None else (t + seconds, n)) for seconds, n in graph.edges(state)]
            todo += [n for _, n in children[node] if n is not None and n not in children]
        # Best and worst time to delivery, latest decisions first.
        span_of: dict[tuple[int, _State], tuple[int, int]] = {}
        for node in sorted(children, key=lambda n: n[0], reverse=True):
            tails = [(seconds, (0, 0) if n is None else span_of[n]) for seconds, n in children[node]]
            span_of[node] = (min(s + lo for s, (lo, _) in tails), max(s + hi for s, (_, hi) in tails))
        lo, hi = span_of[start]
        results.append((lo + first, hi + first))
    return min(r[0] for r in results), max(r[1] for r in results)


def timeline(
    groups: Sequence[Group], delivers: Callable[[Group], bool], machine: Machine, *, slow: bool, limit: int = 50
) -> list[tuple[int, str]]:
    """One run, always drawing the first of equals: (seconds after the first decision, group asked) per decision, to the
    first that delivers; "-" where nothing could be asked (every group backed off). For the report
    and the tests' hand-worked timelines."""
    attempt, step, chained = _ends(machine)[1 if slow else 0]
    state: _State = tuple(_NONE for _ in groups)
    t, out = 0, []
    for _ in range(limit):
        free = _free(groups, state)
        if not free:
            left = _next_free(groups, state)
            if left is None:
                break
            wait = left + step
            out.append((t, "-"))
            t, state = t + wait, _advance(state, wait)
            continue
        i = min(free, key=lambda i: groups[i].tier)
        out.append((t, groups[i].name))
        if delivers(groups[i]):
            break
        took = chained if _chained(state, machine) else attempt
        t, state = t + took, _fail(state, i, took, machine)
    return out
