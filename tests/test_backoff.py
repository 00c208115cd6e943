"""The autoscaler's backoff machine (components/simulation/backoff.py) against timelines worked by hand.

Each cloud's machine is the one `simulate` builds from a shipped stack's captured resources:
- EKS: an attempt on a spot group without capacity ends at the ASG cache refresh that sees the
  failed scaling activity: 10 s (the next loop) to 70 s (1 min refresh + one 10 s scan interval).
- GKE: the stockout is read back at the next loop: 10 s to 15 s (5 s MIG instances refresh wait).
- AKS: only the scale-up timeout sees it: the first loop after max-node-provision-time (15 min),
  901 s (one second after) to 910 s (a whole scan interval after).
Backoff: 5 min, doubled on each failure after the last backoff ended, capped at 30 min; a group is
backed off while backoffUntil is not before now.
"""

from __future__ import annotations

import pytest

from elastic_gpu.simulation.backoff import (
    BACKOFF_RESET,
    CONSTANTS,
    INITIAL_BACKOFF,
    MAX_BACKOFF,
    SCAN_INTERVAL,
    Group,
    Machine,
    first_node_after_return,
    span,
    timeline,
)
from elastic_gpu.simulation.timings import autoscaler_settings
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
    assert machine("aws").attempt == (10, 70)
    assert machine("gcp").attempt == (10, 15)
    assert machine("azure").attempt == (901, 910) and machine("azure").timeout_bound
    assert (INITIAL_BACKOFF.seconds, MAX_BACKOFF.seconds, BACKOFF_RESET.seconds) == (300, 1800, 10800)
    assert SCAN_INTERVAL.seconds == 10
    assert all("kubernetes/autoscaler" in c.source and ".go" in c.source for c in CONSTANTS)


# EKS and GKE: every attempt ends long before the first backoff (5 min) does, so the groups are
# asked one after the other and the fallback comes after n attempts: n x 10 s .. n x 70 s (EKS),
# n x 10 s .. n x 15 s (GKE).
@pytest.mark.parametrize(
    ("cloud", "n", "expected"),
    [
        ("aws", 1, (10, 70)),
        ("aws", 2, (20, 140)),
        ("aws", 3, (30, 210)),
        ("aws", 4, (40, 280)),
        ("gcp", 1, (10, 15)),
        ("gcp", 2, (20, 30)),
        ("gcp", 3, (30, 45)),
        ("gcp", 4, (40, 60)),
    ],
)
def test_early_failure_clouds_reach_the_fallback_after_one_attempt_per_group(cloud, n, expected):
    assert to_fallback(pool(n), machine(cloud)) == expected
    assert to_fallback(pool(n, ties=True), machine(cloud)) == expected  # the order of equals does not matter


def test_eks_six_groups_outlast_the_first_backoff_and_go_round_twice():
    """Slow run, 70 s attempts: s0..s5 fail at 70..420 s (backoff 300 s each); s0 is free again at
    370 s, so at 420 s it is asked again (second failure: 600 s), and so are the others in turn;
    at 840 s s5 fails its second time and s0 is backed off until 490+600 = 1090 s: the fallback."""
    m = machine("aws")
    names = [name for _, name in timeline(pool(6), lambda g: not g.spot, m, slow=True)]
    assert names == [f"s{i}" for i in range(6)] * 2 + ["od"]
    assert to_fallback(pool(6), m) == (60, 840)


def test_aks_one_spot_group_falls_back_after_one_provision_time():
    assert to_fallback(pool(1), machine("azure")) == (901, 910)


def test_aks_two_spot_groups_take_turns_until_their_backoff_outlasts_an_attempt():
    """Slow run (910 s attempts). s0 backed off at 910 for 300 s (free at 1210), s1 asked; s1 fails
    at 1820 (300 s), s0 free: asked again; its 2nd failure at 2730 doubles it to 600 s (free at
    3330); s1's 2nd at 3640 (600 s): s0 is free; s0's 3rd at 4550: 1200 s (until 5750); s1 free
    since 4240: asked; s1's 3rd at 5460: 1200 s, and s0 is backed off until 5750: nothing spot is
    free, the fallback is asked at 5460 s = 91 min (fast run: 6 x 901 s = 90.1 min)."""
    m = machine("azure")
    assert timeline(pool(2), lambda g: not g.spot, m, slow=True) == [
        (0, "s0"),
        (910, "s1"),
        (1820, "s0"),
        (2730, "s1"),
        (3640, "s0"),
        (4550, "s1"),
        (5460, "od"),
    ]
    assert to_fallback(pool(2), m) == (6 * 901, 6 * 910)
    assert to_fallback(pool(2, ties=True), m) == (6 * 901, 6 * 910)


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
    assert to_fallback(pool(3), m) == (10 * 601, 10 * 610)
    # Drawn at random among equals, the worst order takes two attempts more.
    assert to_fallback(pool(3, ties=True), m) == (10 * 601, 12 * 610)


def test_backoff_delays_a_lone_spot_group_when_capacity_comes_back():
    """One AKS spot group, no fallback, spot back after 60 min. Slow run: asked at 0, fails at 910
    (until 1210); asked 1220, fails 2130 (600 s, until 2730); asked 2740, fails 3650 (1200 s, until
    4850): capacity is back at 3600 but the group is backed off; asked at 4860 s = 81 min.
    Fast run: 0, 901 (until 1201), 1202, 2103 (until 2703), 2704, 3605 (until 4805), 4806 s."""
    best, worst = first_node_after_return([Group("s0", 0, True)], machine("azure"), 3600)
    assert (best, worst) == (4806, 4860)
    assert span([Group("s0", 0, True)], lambda g: not g.spot, machine("azure")) is None


def test_one_zone_with_capacity_is_reached_after_the_empty_zones_drawn_before_it():
    m = machine("aws")
    zonal = [Group("a", 0, True, ("a",)), Group("b", 0, True, ("b",)), Group("od", 1, False)]
    s = span(zonal, lambda g: not g.spot or "b" in g.zones, m)
    assert (s.best, s.worst) == (0, 70)  # b drawn first, or after a's one slow attempt
