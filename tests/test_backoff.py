"""The autoscaler's backoff machine (elastic_gpu/tools/simulation/backoff.py) against timelines worked by hand.

Each cloud's machine is the one `simulate` builds from a shipped stack's captured resources:
- Every figure counts from the pending pod's creation: the first decision comes once a GPU pod is
  30 s old, at the next loop: 30 s (fast runs) to 40 s (slow runs).
- EKS: an attempt on a spot group without capacity ends at the ASG cache rebuild that sees the
  failed scaling activity, which AWS records 10 s to 70 s after the ask (a stated range: AWS documents
  none). Rebuilds come every 1 min + one 10 s loop: 10 s (recorded at once, read at the next loop) to
  130 s (recorded at 70 s, just after a rebuild at 60 s; the next at 130 s). A group asked in the loop that
  saw the previous one fail is read at the forced rebuild a loop later, then 70 s on: 10 s to 80 s.
- GKE: the stockout is read back at the next loop: 10 s to 15 s (5 s MIG instances refresh wait).
- AKS, scale-set-level error (the slower regime, `machine`): the scale-up times out at the first loop
  after max-node-provision-time (15 min) and backs the group off; the next group is asked a loop
  later, when the timed-out VM is long-unregistered: 911 s to 920 s, the backoff starting 10 s before.
Backoff: 5 min, doubled on each failure after the last backoff ended, capped at 30 min; a group is
backed off while backoffUntil is not before now.
"""

from __future__ import annotations

import pytest

from elastic_gpu.tools.simulation.backoff import (
    BACKOFF_RESET,
    CONSTANTS,
    GPU_POD_WAIT,
    INITIAL_BACKOFF,
    MAX_BACKOFF,
    SCAN_INTERVAL,
    Group,
    Machine,
    first_node_after_return,
    span,
    timeline,
)
from elastic_gpu.tools.simulation.timings import autoscaler_settings
from tests.conftest import stack_preview

MACHINES = {"aws": "aws-dev", "gcp": "gcp-dev", "azure": "azure-dev"}


def machine(cloud: str) -> Machine:
    return autoscaler_settings(stack_preview(MACHINES[cloud])).machine


def pool(n: int, *, ties: bool = False) -> list[Group]:
    """n spot groups ranked one below the other (or all equal), then the on-demand fallback."""
    return [Group(f"s{i}", 0 if ties else i, True) for i in range(n)] + [Group("od", n, False)]


def to_fallback(groups: list[Group], m: Machine):
    s = span(groups, lambda g: not g.spot, m)
    return None if s is None else (s.best, s.worst)


def test_each_clouds_attempt_time_comes_from_its_provider():
    assert machine("aws").attempt == (10, 130) and machine("aws").chained_attempt == (10, 80)
    assert machine("gcp").attempt == (10, 15)
    assert machine("azure").attempt == (911, 920) and machine("azure").timeout_bound
    assert machine("azure").lag == 10 and machine("aws").lag == 0
    assert GPU_POD_WAIT.seconds == 30 and all(machine(c).start == (30, 40) for c in MACHINES)
    assert (INITIAL_BACKOFF.seconds, MAX_BACKOFF.seconds, BACKOFF_RESET.seconds) == (300, 1800, 10800)
    assert SCAN_INTERVAL.seconds == 10
    assert all("kubernetes/autoscaler" in c.source and ".go" in c.source for c in CONSTANTS)


# EKS and GKE: up to four groups, every attempt ends before the first backoff (5 min) does, so the groups
# are asked one after the other and the fallback comes after the 30-40 s wait and n attempts:
# 30 + n x 10 s .. 40 + 130 + (n - 1) x 80 s (EKS), 30 + n x 10 s .. 40 + n x 15 s (GKE).
@pytest.mark.parametrize(
    ("cloud", "n", "expected"),
    [
        ("aws", 1, (40, 170)),
        ("aws", 2, (50, 250)),
        ("aws", 3, (60, 330)),
        ("aws", 4, (70, 410)),
        ("gcp", 1, (40, 55)),
        ("gcp", 2, (50, 70)),
        ("gcp", 3, (60, 85)),
        ("gcp", 4, (70, 100)),
    ],
)
def test_early_failure_clouds_reach_the_fallback_after_one_attempt_per_group(cloud, n, expected):
    assert to_fallback(pool(n), machine(cloud)) == expected
    assert to_fallback(pool(n, ties=True), machine(cloud)) == expected  # the order of equals does not matter


def test_eks_six_groups_outlast_the_first_backoff_and_go_round_twice():
    """Slow run: s0 fails at 130 s (backoff 300 s: free at 430), s1..s4, each asked in the loop that saw the
    one before fail, at 210, 290, 370, 450; at 450 s0 is free again and ranks above s5: asked again (second
    failure at 530: 600 s), and so are s1..s4 in turn as their backoffs end, to 850; then s5, which fails at
    930, when every spot group is backed off: the fallback, 930 s after the first decision, which came 40 s
    after the pod (fast run: 30 s + 6 x 10 s)."""
    m = machine("aws")
    assert timeline(pool(6), lambda g: not g.spot, m, slow=True) == [
        (0, "s0"),
        (130, "s1"),
        (210, "s2"),
        (290, "s3"),
        (370, "s4"),
        (450, "s0"),
        (530, "s1"),
        (610, "s2"),
        (690, "s3"),
        (770, "s4"),
        (850, "s5"),
        (930, "od"),
    ]
    assert to_fallback(pool(6), m) == (90, 970)


def test_eks_two_zonal_spot_groups_cover_the_real_autoscalers_fallback_time():
    """aws-dev's t4 pool, two zonal spot groups of one tier: the real cluster-autoscaler (1.30.7 and 1.33.6,
    fake node groups over externalgrpc, each failed launch reported 10-70 s after the ask) asked the fallback
    1.5 to 3.4 min after the pod's creation; the model says 50 s (30 s + 2 x 10 s) to 250 s (40 + 130 + 80)."""
    best, worst = to_fallback(pool(2, ties=True), machine("aws"))
    assert (best, worst) == (50, 250)
    assert best <= 1.5 * 60 and worst >= 3.4 * 60


def test_aks_one_spot_group_falls_back_after_one_provision_time():
    """30-40 s, then 15 min + one or two loops: 15.68 to 16 min after the pod's creation, where the real
    cluster-autoscaler (1.30.7 over fake node groups, the same backoff code) asked the fallback at 15.9."""
    best, worst = to_fallback(pool(1), machine("azure"))
    assert (best, worst) == (30 + 911, 40 + 920)
    assert best <= 15.9 * 60 <= worst


def test_aks_two_spot_groups_take_turns_until_their_backoff_outlasts_an_attempt():
    """Slow run (920 s attempts, each backoff starting at the timeout, 10 s before the next decision),
    from the first decision: s0 backed off at 910 for 300 s (free at 1210), s1 asked at 920; s1 backed
    off at 1830 (300 s), s0 free: asked at 1840; its 2nd failure at 2750 doubles it to 600 s (free at
    3350), s1 asked at 2760; s1's 2nd at 3670 (600 s, free at 4270): s0 asked at 3680; s0's 3rd at
    4590: 1200 s (until 5790); s1 asked at 4600; s1's 3rd at 5510: 1200 s, and s0 is backed off until
    5790: nothing spot is free, the fallback is asked at 5520 s, 40 s after the pod: 92.67 min (fast
    run: 30 + 6 x 911 s = 91.6 min). The real autoscaler asked it at 92.4 min."""
    m = machine("azure")
    assert timeline(pool(2), lambda g: not g.spot, m, slow=True) == [
        (0, "s0"),
        (920, "s1"),
        (1840, "s0"),
        (2760, "s1"),
        (3680, "s0"),
        (4600, "s1"),
        (5520, "od"),
    ]
    assert to_fallback(pool(2), m) == (30 + 6 * 911, 40 + 6 * 920)
    assert to_fallback(pool(2, ties=True), m) == (30 + 6 * 911, 40 + 6 * 920)
    assert 30 + 6 * 911 <= 92.4 * 60 <= 40 + 6 * 920


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("ties", [False, True])
def test_aks_three_or_more_spot_groups_never_reach_the_fallback(n, ties):
    """With 3 groups, a group that failed two attempts ago did so more than 2 x 15 min ago, and no
    backoff is longer than 30 min: at every decision one spot group is free again, in every order
    of draws. (Only an attempt of exactly 15 min, which the loop never makes, would give 150 min.)"""
    m = machine("azure")
    assert to_fallback(pool(n, ties=ties), m) is None
    names = [name for _, name in timeline(pool(n, ties=ties), lambda g: not g.spot, m, slow=True, limit=40)]
    assert "od" not in names and len(names) == 40


def test_a_shorter_provision_time_lets_three_aks_groups_fall_back():
    """10 min provision time, slow run (610 s attempts): two attempts take 1220 s, under the 30 min
    cap. s0 and s1 alternate (s2 ranks below them) while their backoffs (300, 600, 1200 s) end in
    time; at 3660 s both are backed off (s0 until 4250, s1 until 4860): s2; at 4270 s0 is free
    (its 4th failure: capped at 1800 s, until 6680), at 4880 s1 (until 7290), at 5490 s2 (600 s);
    at 6100 s every spot group is backed off: the fallback, 101.67 min (fast run 100.17)."""
    m = Machine(attempt=(601, 610), timeout_bound=True)
    assert [name for _, name in timeline(pool(3), lambda g: not g.spot, m, slow=True)] == [
        "s0", "s1", "s0", "s1", "s0", "s1", "s2", "s0", "s1", "s2", "od"
    ]  # fmt: skip
    assert to_fallback(pool(3), m) == (30 + 10 * 601, 40 + 10 * 610)
    # Drawn at random among equals, the worst order takes two attempts more.
    assert to_fallback(pool(3, ties=True), m) == (30 + 10 * 601, 40 + 12 * 610)


def test_backoff_delays_a_lone_spot_group_when_capacity_comes_back():
    """One AKS spot group, no fallback, spot back 60 min after the pod's creation. Slow run: asked at
    40, timed out at 950 (until 1250); asked 1260, out at 2170 (600 s, until 2770); asked 2780, out at
    3690 (1200 s, until 4890): capacity is back at 3600 but the group is backed off; asked at 4900 s.
    Fast run: 30, out at 931 (until 1231), 1232, 2133 (until 2733), 2734, 3635 (until 4835), 4836 s."""
    best, worst = first_node_after_return([Group("s0", 0, True)], machine("azure"), 3600)
    assert (best, worst) == (4836, 4900)
    assert span([Group("s0", 0, True)], lambda g: not g.spot, machine("azure")) is None


def test_one_zone_with_capacity_is_reached_after_the_empty_zones_drawn_before_it():
    m = machine("aws")
    zonal = [Group("a", 0, True, ("a",)), Group("b", 0, True, ("b",)), Group("od", 1, False)]
    s = span(zonal, lambda g: not g.spot or "b" in g.zones, m)
    assert (s.best, s.worst) == (30, 170)  # b drawn first, or after a's one slow attempt (40 + 130 s)
