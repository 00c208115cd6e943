"""The offline tools know a GPU pool's reserved tier: `simulate` shows the path reserved -> spot -> on-demand with
the time to each, `cost` serves work from the reservation first at no marginal cost and shows its idle cost, the
policy pack flags a pool that skips a usable reservation and a reservation no pool uses, and the preview's Pools
table says reserved. Views and previews are built here from the shipped stacks' own (a reserved group as its cloud's
reader gives it: capacity_types ["reserved"], reservations named, max size the tier's nodes)."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from elastic_gpu.karpenter_core import RESERVED
from elastic_gpu.tools.node_group_view import NodeGroupView
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.backoff import MAX_SIZE_SKIP, Group, span, timeline
from elastic_gpu.tools.simulation.karpenter import RESERVED_FIRST
from elastic_gpu.tools.simulation.pod import pod_shape
from elastic_gpu.tools.simulation.run import (
    SCENARIO_ONE_ZONE,
    SCENARIO_RESERVED_FAILS,
    SCENARIO_RESERVED_ROOM,
    Minutes,
    render_text,
    simulate,
    simulate_pod,
    to_fallback,
    to_json,
)
from elastic_gpu.tools.simulation.templates import mark_reserved, node_templates
from elastic_gpu.tools.simulation.timings import autoscaler_settings
from elastic_gpu.workload import job_manifest
from tests.conftest import stack_preview

# --- simulate: the cluster-autoscaler path --------------------------------------------------------------------


def _aws_machine():
    return autoscaler_settings(stack_preview("aws-dev")).machine


def test_a_reserved_group_with_room_is_asked_first_and_delivers_at_the_first_decision():
    machine = _aws_machine()
    groups = [
        Group("reserved", 0, False, ("us-west-2a",), RESERVED),
        Group("spot", 1, True, ("us-west-2a",), "spot"),
        Group("on-demand", 2, False, ("us-west-2a",), "on-demand"),
    ]
    room = span(groups, lambda g: not g.spot, machine)
    # The first decision: the GPU pod's 30 s buffer, then up to one 10 s loop (backoff.GPU_POD_WAIT, SCAN_INTERVAL).
    assert room is not None and (room.best, room.worst) == machine.start
    assert timeline(groups, lambda g: not g.spot, machine, slow=True) == [(0, "reserved")]


def test_a_full_reservation_is_skipped_like_a_group_at_max_size_without_an_attempt_or_backoff():
    machine = _aws_machine()
    spot_then_od = [Group("spot", 1, True, (), "spot"), Group("on-demand", 2, False, (), "on-demand")]
    with_reserved = [Group("reserved", 0, False, (), RESERVED), *spot_then_od]
    # The time to on-demand (all spot out) is judged with the reservation full: exactly the pool without it.
    assert to_fallback(with_reserved, machine) == to_fallback(spot_then_od, machine)
    full = [replace(with_reserved[0], at_max=True), *spot_then_od]
    assert [name for _, name in timeline(full, lambda g: not g.spot, machine, slow=True)] == ["spot", "on-demand"]
    # A reserved-only pool whose reservation is full: nothing is ever asked.
    assert span(full[:1], lambda g: True, machine) is None


def _aws_with_reserved(rank_first: bool = True):
    """aws-dev's t4 pool with a reserved group of its type in us-west-2a (2 nodes), ranked first in the priority
    expander (or last), as the EKS builder declares it."""
    preview = stack_preview("aws-dev")
    templates = node_templates(preview)
    spot = next(t for t in templates if t.capacity == "spot" and t.zones == ["us-west-2a"])
    reserved = replace(
        spot,
        name="gpu-dev-t4-reserved-us-west-2a",
        resource="t4-reserved-us-west-2a",
        autoscaler_name="eks-gpu-dev-t4-reserved-us-west-2a-0000",
        capacity=RESERVED,
        max_size=2,
    )
    settings = autoscaler_settings(preview)
    # First: above every level; else between the spot groups' level and the on-demand fallbacks'.
    level = max(settings.priorities) + 10 if rank_first else (max(settings.priorities) + min(settings.priorities)) // 2
    # The EKS autoscaler lists each group it scales (--nodes): the builder lists the reserved group too.
    listed = None if settings.groups is None else settings.groups | {reserved.autoscaler_name}
    priorities = {**settings.priorities, level: ["^eks-gpu-dev-t4-reserved-"]}
    settings = replace(settings, priorities=priorities, groups=listed)
    return preview, [reserved, *templates], settings


def _t4_pod():
    from elastic_gpu.tools.simulation.run import pool_contracts

    contract = next(c for c in pool_contracts(stack_preview("aws-dev")) if c.pool == "t4")
    return pod_shape(job_manifest(contract))


def test_simulate_shows_reserved_then_spot_then_on_demand_with_the_time_to_each():
    preview, templates, settings = _aws_with_reserved()
    without = simulate_pod(preview, _t4_pod(), templates[1:], settings, pool="t4")
    o = simulate_pod(preview, _t4_pod(), templates, settings, pool="t4")
    assert [g.capacity for g in o.tiers[0]] == [RESERVED]
    assert o.first_choice_group == "gpu-dev-t4-reserved-us-west-2a"
    assert [s.capacity for s in o.path] == [RESERVED, "spot", "on-demand"]
    reserved, spot, on_demand = o.path
    # Reserved with room: the first decision (30 s GPU buffer, up to one 10 s loop).
    assert reserved.minutes == Minutes(0.5, 0.67)
    # Full: the spot and on-demand figures are those of the pool without the reserved group, to the second.
    assert spot.minutes == without.scenarios[SCENARIO_ONE_ZONE]
    assert on_demand.minutes == without.minutes_to_fallback == o.minutes_to_fallback
    assert o.fallback_group == without.fallback_group
    assert on_demand.rule == spot.rule == f"a full reservation's group is at its max size and skipped: {MAX_SIZE_SKIP}"
    assert reserved.evidence.startswith("source: ") and reserved.rule == ""
    # The unkind case: the reserved launch fails and is backed off like spot, then spot delivers; later than room.
    fails = o.scenarios[SCENARIO_RESERVED_FAILS]
    assert isinstance(fails, Minutes) and fails.min > reserved.minutes.min and fails.max > reserved.minutes.max
    assert o.scenarios[SCENARIO_RESERVED_ROOM] == reserved.minutes
    assert {k: v for k, v in o.scenarios.items() if k not in (SCENARIO_RESERVED_ROOM, SCENARIO_RESERVED_FAILS)} == (
        without.scenarios
    )
    text = render_text("aws-dev", [o])
    assert "path:              reserved -> spot -> on-demand" in text and f"rests on: {spot.rule}" in text
    assert f"reserved   gpu-dev-t4-reserved-us-west-2a: 0.5 to 0.67 min ({SCENARIO_RESERVED_ROOM})" in text
    assert [s["capacity"] for s in o.to_json()["path"]] == [RESERVED, "spot", "on-demand"]
    # A pool without a reserved tier keeps its JSON and text as before.
    assert "path" not in without.to_json() and "path:" not in render_text("aws-dev", [without])


def test_a_reserved_group_ranked_after_spot_is_reached_only_after_spot_fails():
    preview, templates, settings = _aws_with_reserved(rank_first=False)
    o = simulate_pod(preview, _t4_pod(), templates, settings, pool="t4")
    order = [g.capacity for tier in o.tiers for g in tier]
    assert order.index(RESERVED) > order.index("spot")
    without = simulate_pod(preview, _t4_pod(), templates[1:], settings, pool="t4")
    # Every spot group is attempted and backed off first: the reserved group comes when the fallback would have.
    assert o.path[0].minutes == without.minutes_to_fallback
    assert isinstance(o.path[0].minutes, Minutes) and o.path[0].minutes.min > 0.67


def test_mark_reserved_reads_the_capacity_from_the_view_whatever_the_clouds_template_builder_says():
    preview = stack_preview("aws-dev")
    from elastic_gpu.tools.offline.stack_resources import node_groups

    views = node_groups(preview)
    spot = next(v for v in views if v.spot)
    reserved_view = replace(spot, spot=False, capacity_types=[RESERVED], reservations=("cr-0123456789abcdef0",))
    templates = node_templates(preview)
    before = {t.name: t.capacity for t in templates}
    mark_reserved(templates, [reserved_view if v is spot else v for v in views])
    after = {t.name: t.capacity for t in templates}
    assert after[spot.name] == RESERVED
    assert {k: v for k, v in after.items() if k != spot.name} == {k: v for k, v in before.items() if k != spot.name}


# --- simulate: Karpenter ---------------------------------------------------------------------------------------


def _karpenter_with_reserved() -> Preview:
    """aws-karpenter with a NodePool of the inference pool allowing only `reserved` (limits.nodes 2, weight 100) and
    the spot-first NodePool lowered to weight 50, as a reserved tier under Karpenter may be declared."""
    base = stack_preview("aws-karpenter")
    resources = copy.deepcopy(base.resources)
    spot_first = next(r for r in resources if r.name == "inference-spot-first")
    spot_first.inputs["spec"]["weight"] = 50
    reserved = copy.deepcopy(spot_first)
    reserved.name = reserved.inputs["metadata"]["name"] = "inference-reserved"
    reserved.urn = spot_first.urn.replace("inference-spot-first", "inference-reserved")
    spec = reserved.inputs["spec"]
    spec["weight"], spec["limits"]["nodes"] = 100, 2
    for req in spec["template"]["spec"]["requirements"]:
        if req["key"] == "karpenter.sh/capacity-type":
            req["values"] = [RESERVED]
    return Preview(base.project, base.stack, [*resources, reserved], base.outputs, base.config)


def test_karpenter_launches_reserved_first_then_spot_then_on_demand():
    outcomes = {o.pool: o for o in simulate(_karpenter_with_reserved())}
    base = {o.pool: o for o in simulate(stack_preview("aws-karpenter"))}
    o = outcomes["inference"]
    assert o.first_choice_group == "inference-reserved"
    assert [s.capacity for s in o.path] == [RESERVED, "spot", "on-demand"]
    # getCapacityType picks reserved in the first loop; a full reservation is no offering (no failed launch).
    assert o.path[0].minutes == Minutes(0.02, 0.17)
    assert o.path[1].minutes == base["inference"].scenarios[SCENARIO_ONE_ZONE]
    assert o.path[2].minutes == base["inference"].minutes_to_fallback == o.minutes_to_fallback
    assert o.path[0].rule == RESERVED_FIRST and "instance.go:743-759" in RESERVED_FIRST
    assert outcomes["training"].path == [] and outcomes["training"].to_json() == base["training"].to_json()
    assert "path" in to_json("aws-karpenter", autoscaler_settings(stack_preview("aws-karpenter")), [o])["pools"][0]


def _view(**changes: object) -> NodeGroupView:
    """A GPU node group as a reader gives it (g5.xlarge, 1 GPU, us-east-1)."""
    base = NodeGroupView(
        cloud="aws",
        name="ng",
        pool="a10g",
        gpu=True,
        spot=False,
        intends_spot=False,
        instance_types=["g5.xlarge"],
        min_size=0,
        max_size=4,
        pinned_size_path=None,
        autoscaled=True,
        region="us-east-1",
        zones=["us-east-1a"],
        capacity_types=["on-demand"],
    )
    return replace(base, **changes)  # type: ignore[arg-type]


@pytest.fixture
def reserved_pool() -> list[NodeGroupView]:
    """A pool of a reserved group (2 nodes), a spot group and an on-demand fallback, all g5.xlarge."""
    return [
        _view(name="a10g-reserved", capacity_types=[RESERVED], reservations=("cr-0123",), max_size=2),
        _view(name="a10g-spot", spot=True, intends_spot=True, capacity_types=["spot"]),
        _view(name="a10g-fallback"),
    ]


# --- cost ------------------------------------------------------------------------------------------------------


def _prices():
    from elastic_gpu.tools.cost import node_price

    price = node_price("aws", "us-east-1", "g5.xlarge")
    assert price.on_demand and price.spot, "the price table has g5.xlarge in us-east-1"
    return price.on_demand, price.spot


def test_the_preview_cost_prices_reserved_nodes_at_zero_and_shows_the_idle_reservation_on_its_own_line(reserved_pool):
    from elastic_gpu.prices import HOURS_PER_MONTH
    from elastic_gpu.tools.cost import pool_cost, stack_cost
    from elastic_gpu.tools.offline.report import cost_json, render_cost

    on_demand, _ = _prices()
    cost = stack_cost(reserved_pool)
    reserved = cost.pools[0]
    assert reserved.capacity == RESERVED and reserved.hourly == 0.0 and reserved.max_monthly == 0.0
    assert reserved.reservation_monthly == pytest.approx(2 * on_demand * HOURS_PER_MONTH)
    # min size 0: both reserved nodes unused; at max size none.
    assert cost.idle_reserved_monthly == pytest.approx(2 * on_demand * HOURS_PER_MONTH)
    assert reserved.idle_reserved_monthly(2) == 0.0
    # The totals are the other groups' alone (the reservation is paid either way).
    others = stack_cost(reserved_pool[1:])
    assert cost.max_monthly == pytest.approx(others.max_monthly) and cost.idle_monthly == others.idle_monthly
    # The budget's upper bound keeps the reserved nodes at on-demand.
    assert pool_cost(reserved_pool[0], upper_bound=True).hourly == on_demand
    lines = render_cost(cost)
    idle = next(line for line in lines if line.startswith("  Idle reserved capacity:"))
    assert f"${2 * on_demand * HOURS_PER_MONTH:,.0f}/month at min size (2 reserved node(s) unused" in idle
    assert any(line.startswith("  Reserved: a10g-reserved: 2 x g5.xlarge from cr-0123") for line in lines)
    assert not any("Reserved" in line for line in render_cost(others))
    row = cost_json(cost)["pools"][0]
    assert row["capacity"] == RESERVED and row["reservations"] == ["cr-0123"] and row["max_monthly"] == 0.0
    assert "reservations" not in cost_json(others)["pools"][0]
    assert "idle_reserved_monthly" not in cost_json(others)["total"]


def test_the_cost_command_serves_work_from_the_reservation_first_then_spot(reserved_pool):
    from elastic_gpu.prices import HOURS_PER_MONTH
    from elastic_gpu.tools.cost import pools_work, work_cost, work_total
    from elastic_gpu.tools.offline.report import render_work, work_json

    on_demand, spot = _prices()
    capacity = 2 * 1 * HOURS_PER_MONTH  # 2 nodes x 1 GPU x a month
    (within,) = pools_work(reserved_pool, 1000)
    assert within.capacity == "reserved, spot" and within.reserved is not None
    assert within.reserved.served_gpu_hours == 1000 and within.own_cost == 0.0
    assert within.reserved.idle_cost == pytest.approx((capacity - 1000) * on_demand)
    (beyond,) = pools_work(reserved_pool, 2000)
    rest = work_cost(2000 - capacity, 1, on_demand, spot, beyond.work.eviction_rate if beyond.work else None)
    assert beyond.own_cost == pytest.approx(rest.spot_cost)
    assert beyond.reserved is not None and beyond.reserved.idle_cost == 0.0
    # The baseline columns are the whole work, as for a pool without a reservation.
    (plain,) = pools_work(reserved_pool[1:], 2000)
    assert beyond.work == plain.work and plain.reserved is None and plain.capacity == "spot"
    assert work_total([beyond]).own_cost < work_total([plain]).own_cost
    text = render_work("s", 1000, [within])
    assert "Reserved: a10g serves the first 1,000 GPU-hours on its reserved tier" in text
    idle_line = next(line for line in text.splitlines() if line.startswith("  Idle reserved capacity:"))
    assert f"${(capacity - 1000) * on_demand:,.2f}" in idle_line
    assert "Reserved" not in render_work("s", 1000, [plain])
    data = work_json("s", 1000, [within])
    assert data["pools"][0]["reserved"]["served_gpu_hours"] == 1000
    assert data["total"]["idle_reserved_cost"] == round((capacity - 1000) * on_demand, 2)
    assert "idle_reserved_cost" not in work_json("s", 1000, [plain])["total"]
    assert "reserved" not in work_json("s", 1000, [plain])["pools"][0]


def test_a_pool_of_reservations_only_runs_the_rest_when_the_reservation_frees_up(reserved_pool):
    from elastic_gpu.tools.cost import pools_work
    from elastic_gpu.tools.offline.report import render_work

    (only,) = pools_work(reserved_pool[:1], 2000)
    assert only.capacity == RESERVED and only.own_cost == 0.0 and only.reserved is not None
    assert "wait for it (reservations only)" in render_work("s", 2000, [only])


# --- the preview's Pools table ---------------------------------------------------------------------------------


def test_the_pools_table_shows_a_reserved_groups_capacity_as_reserved(reserved_pool):
    from elastic_gpu.tools.offline.report import pool_row

    assert pool_row(reserved_pool[0]).capacity == RESERVED
    mixed = _view(name="np", capacity_types=[RESERVED, "spot", "on-demand"], spot_first=False)
    assert pool_row(mixed).capacity == "reserved, spot, on-demand"
    assert [pool_row(v).capacity for v in reserved_pool[1:]] == ["spot", "on-demand"]


# --- policy ----------------------------------------------------------------------------------------------------

RESERVATION_RULES = ("gpu-pool-uses-its-reservations", "reservation-used")


def _report(preview: Preview, config: dict | None = None):
    from elastic_gpu.tools.offline.policy_run import run_policies
    from elastic_gpu.tools.policy import POLICIES_BY_NAME

    return run_policies(preview, [POLICIES_BY_NAME[n] for n in RESERVATION_RULES], config=config)


def _with_config(preview: Preview, **reservations: dict) -> Preview:
    """The preview with `gpuPools[].reservations` set in its stack config for the named pools (a pool the stack
    does not declare is added to the config alone)."""
    config = copy.deepcopy(preview.config)
    pools = config["elastic-gpu:gpuPools"]
    for name, entry in reservations.items():
        pool = next((p for p in pools if p["name"] == name), None)
        if pool is None:
            pools.append(pool := {"name": name})
        pool["reservations"] = entry
    return Preview(preview.project, preview.stack, preview.resources, preview.outputs, config)


def test_shipped_stacks_without_reservations_pass_the_reservation_rules():
    for stack in ("aws-dev", "aws-karpenter"):
        assert _report(stack_preview(stack)).violations == []


def test_a_pool_whose_stack_config_names_a_reservation_no_group_uses_is_flagged_and_one_that_uses_it_is_not():
    preview = _with_config(
        _karpenter_with_reserved(),
        inference={"ids": ["cr-0aaa"], "nodes": 2},
        training={"ids": ["cr-0bbb"], "tags": {"team": "ml"}, "nodes": 1},
    )
    report = _report(preview)
    [skip] = report.of("gpu-pool-uses-its-reservations")
    assert skip.level == "advisory"
    assert "GPU pool 'training'" in skip.message and "cr-0bbb, tag:team=ml" in skip.message
    assert "no node group of the pool launches into them" in skip.message
    assert report.of("reservation-used") == []


def test_a_reservation_the_config_names_for_a_pool_the_stack_lacks_is_unused():
    report = _report(_with_config(stack_preview("aws-dev"), nope={"ids": ["cr-0ccc"], "nodes": 1}))
    [unused] = report.of("reservation-used")
    assert "cr-0ccc" in unused.message and "GPU pool 'nope'" in unused.message


def test_a_reservation_the_account_holds_for_a_pools_type_and_zone_is_a_skipped_one():
    held = [{"id": "cr-0ddd", "instanceType": "g4dn.xlarge", "zone": "us-west-2a", "count": 2}]
    config = {"gpu-pool-uses-its-reservations": {"accountReservations": held}}
    [skip] = _report(stack_preview("aws-dev"), config).of("gpu-pool-uses-its-reservations")
    assert "GPU pool 't4' (g4dn.xlarge in us-west-2a) skips reservation cr-0ddd" in skip.message
    assert "2 instance(s)" in skip.message
    # Another zone or another type: not the pool's to use.
    for other in ({"zone": "us-east-1a"}, {"instanceType": "p5.48xlarge"}):
        config = {"gpu-pool-uses-its-reservations": {"accountReservations": [held[0] | other]}}
        assert _report(stack_preview("aws-dev"), config).of("gpu-pool-uses-its-reservations") == []


def test_a_reserved_node_pool_ranked_after_spot_is_flagged():
    preview = _karpenter_with_reserved()
    reserved = next(r for r in preview.resources if r.name == "inference-reserved")
    reserved.inputs["spec"]["weight"] = 10  # below the spot-first NodePool's 50
    [late] = _report(preview).of("reservation-used")
    assert "reserved group 'inference-reserved' is asked only after spot group 'inference-spot-first'" in late.message
    assert _report(_karpenter_with_reserved()).of("reservation-used") == []


def test_a_group_that_names_a_reservation_but_does_not_allow_reserved_capacity_is_flagged(monkeypatch):
    from pulumi_policy import StackValidationArgs

    from elastic_gpu.tools.policy import reservation_rules

    views = [
        _view(name="a10g-od", reservations=("cr-0eee",)),
        _view(name="a10g-reserved", capacity_types=[RESERVED], reservations=("cr-0fff",), max_size=2),
    ]
    monkeypatch.setattr(reservation_rules, "stack_pools", lambda resources, gpu_only: views)
    monkeypatch.setattr(reservation_rules, "_ranked_after_spot", lambda args: [])
    messages: list[str] = []
    reservation_rules.validate_reservation_used(StackValidationArgs([], {}), lambda m, urn=None: messages.append(m))
    assert len(messages) == 1 and "'a10g-od'" in messages[0] and "cr-0eee" in messages[0]
    assert "it allows on-demand" in messages[0]


def test_a_reserved_group_before_spot_is_no_on_demand_group_before_spot_for_the_promise_rule():
    from elastic_gpu.tools.policy.fallback_rules import on_demand_before_spot

    preview, templates, settings = _aws_with_reserved()
    o = simulate_pod(preview, _t4_pod(), templates, settings, pool="t4")
    assert o.first_choice_group == "gpu-dev-t4-reserved-us-west-2a" and on_demand_before_spot(o) == []
    assert o.fallback_group is not None and not o.breaks_promise


def test_the_gate_reads_the_described_accounts_reservations(tmp_path, capsys):
    """Offline, the account file's reservations are the rules' `accountReservations` without any policy config: a
    reservation of the pool's type in its zone that no group uses is reported; the new account holds none."""
    from elastic_gpu.tools.cli import main

    account = tmp_path / "account.yaml"
    account.write_text(
        "aws:\n  reservations:\n    cr-0eee:\n      {instanceType: g4dn.xlarge, availabilityZone: us-west-2a, "
        "instanceCount: 3, state: active}\n"
    )
    assert main(["policy", "--stack", "aws-dev", "--account", str(account)]) == 0
    out = capsys.readouterr().out
    assert "GPU pool 't4' (g4dn.xlarge in us-west-2a) skips reservation cr-0eee" in out
    assert main(["policy", "--stack", "aws-dev"]) == 0
    assert "skips reservation" not in capsys.readouterr().out
