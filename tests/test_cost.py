"""The cost model: the price table loader, node and pool prices, the preview's cost table, the `cost` command.

Prices are never written here (the table changes): every expectation is computed from the
table's rows, except the worked example (Azure portal figures, price source canonical-blog-2022), whose
figures are the test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from elastic_gpu.__main__ import main
from elastic_gpu.config import PriceOverride, load_stack_config
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.prices import (
    COLUMNS,
    HOURS_PER_MONTH,
    PriceTableError,
    load_price_table,
    price_row,
    price_rows,
    price_sources,
)
from elastic_gpu.tools.cost import (
    DEFAULT_EVICTION_RATE,
    EVICTION_ASSUMED,
    EVICTION_FROM_ARGUMENT,
    EVICTION_FROM_PRICES,
    item_price,
    node_price,
    pool_cost,
    work_cost,
)
from elastic_gpu.tools.gcp.reader import gce_region
from elastic_gpu.tools.node_group_reading import stack_pools
from elastic_gpu.tools.node_group_view import NodeGroupView
from elastic_gpu.tools.offline.policy_run import stack_resources
from elastic_gpu.tools.offline.report import pool_rows, render_text, to_json
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import ROOT, stack_preview, stack_values, stem

STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
P = "elastic-gpu:"


def _pool(
    cloud: str, region: str | None, types: list[str], *, spot: bool = True, gpu: bool = True, **kw
) -> NodeGroupView:
    return NodeGroupView(
        cloud,
        "ng",
        "p",
        gpu,
        spot,
        spot,
        types,
        kw.get("min_size", 0),
        kw.get("max_size", 4),
        None,
        True,
        accelerators=kw.get("accelerators", []),
        region=region,
    )


# --- the worked example (canonical-blog-2022) ---------------------------------------------------


def test_seed_003_example_from_the_table_row() -> None:
    """3400 h on Azure D4s_v3 (uksouth): ~$788 on-demand against ~$174 on spot with 5% re-runs, 78% saved."""
    row = price_row("azure", "uksouth", "Standard_D4s_v3")
    assert row is not None and (row.on_demand, row.spot, row.eviction_rate) == (0.232, 0.0487, 0.05)
    work = work_cost(3400, 1, row.on_demand, row.spot, row.eviction_rate)
    assert work.on_demand_cost == pytest.approx(788.8)
    assert work.spot_run_hours == pytest.approx(3570)
    assert work.spot_cost == pytest.approx(173.86, abs=0.01)  # 3570 h x 0.0487
    assert round(work.saving_pct or 0) == 78
    assert work.eviction_source == EVICTION_FROM_PRICES


def test_eviction_rate_row_then_argument_then_assumed_default() -> None:
    assert work_cost(10, 1, 1.0, 0.5, 0.2, 0.3).eviction_rate == 0.2
    given = work_cost(10, 1, 1.0, 0.5, None, 0.3)
    assert (given.eviction_rate, given.eviction_source) == (0.3, EVICTION_FROM_ARGUMENT)
    assumed = work_cost(10, 2, 1.0, 0.5)
    assert (assumed.eviction_rate, assumed.eviction_source) == (DEFAULT_EVICTION_RATE, EVICTION_ASSUMED)
    assert assumed.node_hours == 5 and assumed.spot_run_hours == pytest.approx(5 * (1 + DEFAULT_EVICTION_RATE))
    no_spot = work_cost(10, 1, 1.0, None)
    assert no_spot.spot_cost is None and no_spot.saving_pct is None and no_spot.on_demand_cost == 10


# --- the table: loader validation and the shipped files ---------------------------------------

SOURCES = "key,url,note\nsrc-a,https://example.com/a,first\nsrc-b,https://example.com/b,second\n"
HEADER = ",".join(COLUMNS) + "\n"
GOOD = "aws,us-east-1,g4dn.xlarge,vm,0.5,0.2,,src-a+src-b,2026-01-02\n"


def _load(tmp_path: Path, rows: str, sources: str = SOURCES):
    prices, srcs = tmp_path / "prices.csv", tmp_path / "sources.csv"
    prices.write_text(HEADER + rows)
    srcs.write_text(sources)
    return load_price_table(prices, srcs)


def _problems(tmp_path: Path, rows: str) -> list[str]:
    with pytest.raises(PriceTableError) as exc:
        _load(tmp_path, rows)
    return exc.value.problems


def test_a_good_table_loads(tmp_path: Path) -> None:
    table = _load(tmp_path, GOOD + "gcp,us-central1,nvidia-tesla-t4,gpu,0.35,,0.1,src-a,2026-01-02\n")
    row = table.row("aws", "us-east-1", "g4dn.xlarge")
    assert row is not None and (row.on_demand, row.spot, row.eviction_rate) == (0.5, 0.2, None)
    assert row.sources == ("src-a", "src-b")
    t4 = table.row("gcp", "us-central1", "nvidia-tesla-t4")
    assert t4 is not None and (t4.spot, t4.eviction_rate) == (None, 0.1)
    assert table.row("aws", "us-west-2", "g4dn.xlarge") is None


def test_duplicate_row_names_both_lines(tmp_path: Path) -> None:
    [problem] = _problems(tmp_path, GOOD + GOOD)
    assert problem == (
        f"{tmp_path / 'prices.csv'}:3: column item: aws/us-east-1/g4dn.xlarge duplicates line 2; "
        "rows must be unique per (cloud, region, item)"
    )


def test_unknown_source_key(tmp_path: Path) -> None:
    [problem] = _problems(tmp_path, GOOD.replace("src-a+src-b", "src-a+src-c"))
    assert (
        problem
        == f"{tmp_path / 'prices.csv'}:2: column source: 'src-c' is not a key of the sources file; known: src-a, src-b"
    )


def test_spot_above_on_demand(tmp_path: Path) -> None:
    [problem] = _problems(tmp_path, GOOD.replace("0.5,0.2", "0.5,0.6"))
    assert problem == f"{tmp_path / 'prices.csv'}:2: column spot: 0.6 is above on_demand 0.5; spot must be <= on_demand"


def test_eviction_rate_above_one(tmp_path: Path) -> None:
    [problem] = _problems(tmp_path, GOOD.replace("0.2,,", "0.2,1.5,"))
    assert problem == f"{tmp_path / 'prices.csv'}:2: column eviction_rate: 1.5 must be a fraction between 0 and 1"


def test_every_bad_value_is_reported_at_once(tmp_path: Path) -> None:
    rows = GOOD + "ibm,x,y,vm,-1,,,src-a,2026-01-02\n" + "aws,us-east-1,g5.xlarge,gpu,1,,,src-a,02/01/2026\n"
    problems = _problems(tmp_path, rows)
    where = str(tmp_path / "prices.csv")
    assert f"{where}:3: column cloud: 'ibm' is not one of aws, azure, gcp" in problems
    assert f"{where}:3: column on_demand: '-1' must be a number >= 0" in problems
    assert f"{where}:4: column kind: 'gpu' rows (one accelerator) are GCP only (got cloud 'aws')" in problems
    assert f"{where}:4: column date: '02/01/2026' must be a date YYYY-MM-DD" in problems


def test_the_shipped_table_loads_and_every_source_key_resolves() -> None:
    rows = price_rows()  # raises PriceTableError on a bad row
    assert rows
    sources = price_sources()
    for row in rows:
        assert set(row.sources) <= set(sources), row
        assert row.spot is None or row.spot <= row.on_demand
    assert all(s.url.startswith("https://") for s in sources.values())


@pytest.mark.parametrize("stack", STACKS)
def test_every_item_of_a_shipped_stack_has_a_row_for_its_region(stack: str) -> None:
    """Instance types, VM sizes, machine and accelerator types of every pool the stack creates."""
    missing = sorted(
        {
            f"{p.cloud}/{p.region}/{item}"
            for p in stack_pools(stack_resources(stack_preview(stack)))
            for item in [*p.instance_types, *(a for a, _ in p.accelerators)]
            if p.region is None or price_row(p.cloud, p.region, item) is None
        }
    )
    assert not missing, f"add rows to elastic_gpu/data/prices.csv: {missing}"


# --- region, node price, pool cost ---------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_pool_regions_from_the_resources_are_the_stack_region(stack: str) -> None:
    """The policy sees no stack config: the region it reads off the resources must be cluster.region."""
    region = load_stack_config(stack_values(stack)).cluster.region
    pools = stack_pools(stack_resources(stack_preview(stack)))
    assert pools and {p.region for p in pools} == {region}


def test_gce_zone_maps_to_its_region() -> None:
    assert gce_region("us-central1-c") == "us-central1"
    assert gce_region("europe-west4") == "europe-west4"


def test_gke_node_price_is_machine_plus_accelerators_times_count() -> None:
    machine, t4 = price_row("gcp", "us-central1", "n1-standard-4"), price_row("gcp", "us-central1", "nvidia-tesla-t4")
    assert machine is not None and t4 is not None and t4.kind == "gpu"
    node = node_price("gcp", "us-central1", "n1-standard-4", [("nvidia-tesla-t4", 2)])
    assert node.label == "n1-standard-4 + 2 x nvidia-tesla-t4"
    assert node.on_demand == pytest.approx(machine.on_demand + 2 * t4.on_demand)
    if machine.spot is not None and t4.spot is not None:
        assert node.spot == pytest.approx(machine.spot + 2 * t4.spot)
    pool = _pool("gcp", "us-central1", ["n1-standard-4"], accelerators=[("nvidia-tesla-t4", 2)], max_size=3)
    cost = pool_cost(pool)
    assert cost.gpus_per_node == 2
    assert cost.gpu_hourly == pytest.approx((cost.hourly or 0) / 2)
    assert cost.max_monthly == pytest.approx(3 * (cost.hourly or 0) * HOURS_PER_MONTH)


def test_a_pool_at_min_zero_costs_nothing_idle_even_unpriced() -> None:
    unpriced = pool_cost(_pool("aws", "us-east-1", ["g9.nonexistent"]))
    assert unpriced.idle_monthly == 0.0 and unpriced.max_monthly is None
    assert unpriced.price.missing == ("g9.nonexistent",) and unpriced.gap == "no price"
    no_region = pool_cost(_pool("aws", None, ["g4dn.xlarge"], min_size=1))
    assert no_region.idle_monthly is None and no_region.price.missing == ("g4dn.xlarge",)


def test_a_cpu_pool_is_priced_without_a_gpu_hour() -> None:
    row = next(r for r in price_rows() if r.cloud == "aws" and gpu_instance_type("aws", r.item) is None)
    cost = pool_cost(_pool("aws", row.region, [row.item], spot=False, gpu=False, min_size=2, max_size=5))
    assert cost.gpus_per_node is None and cost.gpu_hourly is None
    assert cost.idle_monthly == pytest.approx(2 * row.on_demand * HOURS_PER_MONTH)
    assert cost.max_monthly == pytest.approx(5 * row.on_demand * HOURS_PER_MONTH)


def test_an_override_replaces_only_what_it_sets() -> None:
    row = next(r for r in price_rows() if r.spot is not None)
    o = item_price(row.cloud, row.region, row.item, {row.item: PriceOverride(eviction_rate=0.25)})
    assert o is not None and (o.on_demand, o.spot, o.eviction_rate) == (row.on_demand, row.spot, 0.25)
    assert o.source == f"override+{row.source}" and o.date == row.date
    new = item_price("aws", "us-east-1", "x1.new", {"x1.new": PriceOverride(on_demand=2.0)})
    assert new is not None and (new.on_demand, new.spot, new.source, new.date) == (2.0, None, "override", None)


# --- the preview's cost table --------------------------------------------------------------------


def _expected_row(summary, region: str, cloud: str) -> dict:
    """A pool row priced straight from the table and the Pools table (not through the cost model)."""
    first, *accelerators = summary.instance_types
    if summary.any_type:  # a Karpenter NodePool: priced as its priciest type on its own capacity
        field = "spot" if summary.capacity == "spot" else "on_demand"
        first = max(summary.instance_types, key=lambda t: getattr(price_row(cloud, region, t), field))
        accelerators = []
    if cloud == "gcp":
        items = [(first, 1)] + [(a.split("x", 1)[1], int(a.split("x", 1)[0])) for a in accelerators]
    else:
        items = [(first, 1)]
    rows = [(price_row(cloud, region, item), n) for item, n in items]
    on_demand = None if any(r is None for r, _ in rows) else sum(r.on_demand * n for r, n in rows)
    spot = None if on_demand is None or any(r.spot is None for r, _ in rows) else sum(r.spot * n for r, n in rows)
    own = spot if summary.capacity == "spot" else on_demand
    if cloud == "gcp":
        gpus = sum(n for _, n in items[1:]) or None
    else:
        gpu = gpu_instance_type(cloud, first)
        gpus = gpu.gpus if gpu else None

    def monthly(nodes: int) -> float | None:
        return 0.0 if nodes == 0 else (None if own is None else nodes * own * HOURS_PER_MONTH)

    return {
        "on_demand_hourly": on_demand,
        "spot_hourly": spot,
        "gpu_hourly": own / gpus if own is not None and gpus else None,
        "gpus_per_node": gpus,
        "idle_monthly": monthly(summary.min_size),
        "max_monthly": monthly(summary.max_size),
        "min_size": summary.min_size,
        "max_size": summary.max_size,
    }


def _approx(value):
    return None if value is None else pytest.approx(value, abs=0.01)


@pytest.mark.parametrize("stack", STACKS)
def test_preview_cost_equals_the_table_times_the_captured_pools(stack: str) -> None:
    preview = stack_preview(stack)
    cfg = load_stack_config(stack_values(stack))
    cost = to_json(preview)["cost"]
    summaries = {s.node_group: s for s in pool_rows(preview)}
    assert {r["node_group"] for r in cost["pools"]} == set(summaries)  # every pool is priced, system pool too
    for row in cost["pools"]:
        if summaries[row["node_group"]].capacity == "reserved":
            # a reserved tier's group: $0 marginal, its reservation's cost on lines of its own (docs/cost.md)
            assert (row["gpu_hourly"], row["idle_monthly"], row["max_monthly"]) == (0.0, 0.0, 0.0), row["node_group"]
            continue
        expected = _expected_row(summaries[row["node_group"]], cfg.cluster.region, cfg.cloud)
        got = {k: row[k] for k in expected}
        assert got == {k: _approx(v) if isinstance(v, float) else v for k, v in expected.items()}, row["node_group"]
        priced = summaries[row["node_group"]]
        assert row["priced_as"].split(" + ")[0] in (
            priced.instance_types if priced.any_type else priced.instance_types[:1]
        )
    total = cost["total"]
    assert total["idle_monthly"] == pytest.approx(sum(r["idle_monthly"] or 0 for r in cost["pools"]), abs=0.05)
    # Rows that share a cap (GKE auto-provisioning's GPU limit) count it once, at the dearest of them.
    shared: dict[str, float] = {}
    for r in cost["pools"]:
        if r["cap_group"] is not None:
            shared[r["cap_group"]] = max(shared.get(r["cap_group"], 0.0), r["max_monthly"] or 0)
    own = sum(r["max_monthly"] or 0 for r in cost["pools"] if r["cap_group"] is None)
    assert total["max_monthly"] == pytest.approx(own + sum(shared.values()), abs=0.05)
    assert total["max_excludes"] == [r["node_group"] for r in cost["pools"] if r["max_monthly"] is None]
    assert cost["hours_per_month"] == HOURS_PER_MONTH and cost["regions"] == [cfg.cluster.region]


def test_preview_text_has_the_cost_table_and_its_caveat() -> None:
    preview = stack_preview("aws-prod")
    text = render_text(preview)
    cost = to_json(preview)["cost"]
    assert (
        "Cost (USD list prices from elastic_gpu/data/prices.csv, region us-east-1, 730 h/month; "
        "node pools only: no control plane, disks or network):"
    ) in text
    assert re.search(r"POOL +NODE GROUP +CAPACITY +PRICED AS +ON-DEMAND \$/H +SPOT \$/H +\$/GPU-H", text)
    assert "m6i.xlarge (1st of 4)" in text  # several types: priced as the first, and it says so
    assert f"Total: idle ${cost['total']['idle_monthly']:,.0f}/month" in text
    general = next(
        line for line in text.splitlines() if re.search(r"gpu-prod-general-\w{6} ", line) and "1st of" in line
    )
    assert general.split()[-4] == "-"  # a CPU pool has no $/GPU-hour
    assert text.index("Pools:") < text.index("Cost (") < text.index("Outputs:")


def test_preview_json_cost_rows_carry_source_date_and_nulls() -> None:
    cost = to_json(stack_preview("azure-dev"))["cost"]
    for row in cost["pools"]:
        assert all(isinstance(row[k], float | int | type(None)) for k in ("on_demand_hourly", "max_monthly"))
        if row["on_demand_hourly"] is not None:
            assert row["source"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["date"])
        if row["capacity"] == "spot" and row["spot_hourly"] is None:
            assert row["max_monthly"] is None and row["gap"] in ("no price", "no spot price")


# --- stack-config overrides ------------------------------------------------------------------------


def test_stack_config_overrides_change_the_preview_and_the_cost_command(program_dir, capsys) -> None:
    values = stack_values("azure-dev")
    values[P + "prices"] = {"Standard_NC4as_T4_v3": {"onDemand": 1.0, "spot": 0.25, "evictionRate": 0.1}}
    directory = program_dir(values)
    preview = run_preview("test", directory)
    rows = {r["node_group"]: r for r in to_json(preview)["cost"]["pools"]}
    ap = {r.name: r.inputs["agentPoolName"] for r in preview.of_type("azure-native:containerservice:AgentPool")}
    spot, fallback = rows[ap["t4-t4s0"]], rows[ap["t4-t4o0"]]
    assert (spot["on_demand_hourly"], spot["spot_hourly"], spot["eviction_rate"]) == (1.0, 0.25, 0.1)
    assert spot["max_monthly"] == pytest.approx(4 * 0.25 * HOURS_PER_MONTH)  # one agent pool, both zones
    assert fallback["max_monthly"] == pytest.approx(4 * 1.0 * HOURS_PER_MONTH)
    assert spot["source"].startswith("override") and spot["saving_pct"] == 75
    assert rows[ap["general-pool"]]["on_demand_hourly"] == _approx(
        price_row("azure", "westeurope", "Standard_D4s_v5").on_demand
    )

    assert main(["cost", "--stack", "test", "--program", str(directory), "--gpu-hours", "100", "--json"]) == 0
    [t4] = json.loads(capsys.readouterr().out)["pools"]
    assert (t4["on_demand_cost"], t4["spot_run_hours"], t4["eviction_rate_source"]) == (100.0, 110.0, "prices")
    assert t4["spot_cost"] == pytest.approx(110 * 0.25)


# --- the `cost` command ----------------------------------------------------------------------------


@pytest.fixture
def cached_runs(monkeypatch):
    """The command runs the stack's preview; the session's cached previews keep the tests fast."""
    monkeypatch.setattr(
        "elastic_gpu.tools.offline.runner.run_preview", lambda stack, program=".", account=None: stack_preview(stack)
    )


def test_cost_command_json_equals_the_table(cached_runs, capsys) -> None:
    assert main(["cost", "--stack", "gcp-dev", "--gpu-hours", "1000", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [t4] = data["pools"]
    machine, gpu = price_row("gcp", "us-central1", "n1-standard-4"), price_row("gcp", "us-central1", "nvidia-tesla-t4")
    on_demand, spot = machine.on_demand + gpu.on_demand, machine.spot + gpu.spot
    assert t4["pool"] == "t4" and [stem(n) for n in t4["node_groups"]] == ["t4-spot"] and t4["gpus_per_node"] == 1
    assert t4["on_demand_cost"] == pytest.approx(1000 * on_demand, abs=0.01)
    assert (t4["eviction_rate"], t4["eviction_rate_source"], t4["eviction_assumed"]) == (0.05, "assumed", True)
    assert t4["spot_run_hours"] == pytest.approx(1050)
    assert t4["spot_cost"] == pytest.approx(1050 * spot, abs=0.01)
    assert t4["saving_pct"] == pytest.approx((1 - 1050 * spot / (1000 * on_demand)) * 100, abs=0.01)
    assert data["total"]["own_cost"] == t4["spot_cost"] and data["total"]["excludes"] == {}

    assert main(["cost", "--stack", "gcp-dev", "--gpu-hours", "1000", "--eviction-rate", "0.2", "--json"]) == 0
    [t4] = json.loads(capsys.readouterr().out)["pools"]
    assert (t4["eviction_rate"], t4["eviction_assumed"], t4["spot_run_hours"]) == (0.2, False, pytest.approx(1200))


def test_cost_command_text_aggregates_a_pools_node_groups(cached_runs, capsys) -> None:
    assert main(["cost", "--stack", "aws-prod", "--gpu-hours", "500"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("elastic-gpu cost: 500 GPU-hours of work on each GPU pool of stack aws-prod")
    lines = out.splitlines()
    assert re.search(
        r"POOL +CAPACITY +PRICED AS +GPUS/NODE +NODE-H +ON-DEMAND +SPOT RUN-H +EVICTION +SPOT +SAVING", out
    )
    # one line per pool: the spot groups of three zones and the on-demand fallback are one pool
    inference = [line for line in lines if line.startswith("  inference ")]
    assert len(inference) == 1 and "g4dn.xlarge" in inference[0]
    row = price_row("aws", "us-east-1", "g4dn.xlarge")
    assert f"${500 * row.on_demand:,.2f}" in inference[0]
    assert "525.0" in inference[0] and "5% (assumed)" in inference[0]
    assert "Total (500 GPU-hours on each pool)" in out and "Spot run hours = node-hours x (1 + eviction rate)" in out


def test_cost_command_config_error_exits_2(program_dir, capsys) -> None:
    values = stack_values("aws-dev")
    values[P + "prices"] = {"g4dn.xlarge": {"onDemand": 0.1, "spot": 0.2}}
    directory = program_dir(values)
    assert main(["cost", "--stack", "test", "--program", str(directory), "--gpu-hours", "10"]) == 2
    captured = capsys.readouterr()
    assert "prices.g4dn.xlarge.spot: must be <= onDemand (got spot=0.2, onDemand=0.1)" in captured.err
    assert captured.out == ""


def _cost_json(
    program_dir, capsys: pytest.CaptureFixture[str], stack: str, region: str, zones: list[str], values=None
) -> dict:
    """`python -m elastic_gpu cost --json` on a copy of a shipped stack (or of `values`) moved to `region`."""
    values = values or stack_values(stack)
    values["elastic-gpu:cluster"] = {**values["elastic-gpu:cluster"], "region": region, "zones": zones}
    d = program_dir(values, stack=stack)
    assert main(["cost", "--stack", stack, "--gpu-hours", "100", "--program", str(d), "--json"]) == 0
    out: dict = json.loads(capsys.readouterr().out)
    return out


def test_cost_prices_gcp_dev_in_europe_west4_on_demand_and_spot(program_dir, capsys) -> None:
    out = _cost_json(program_dir, capsys, "gcp-dev", "europe-west4", ["europe-west4-a"])
    [pool] = out["pools"]
    machine = price_row("gcp", "europe-west4", "n1-standard-4")
    t4 = price_row("gcp", "europe-west4", "nvidia-tesla-t4")
    assert machine is not None and t4 is not None and machine.spot is not None and t4.spot is not None
    # a GKE node is its machine row plus its accelerator row, on each capacity type
    assert pool["region"] == "europe-west4"
    assert pool["on_demand_hourly"] == pytest.approx(machine.on_demand + t4.on_demand)
    assert pool["spot_hourly"] == pytest.approx(machine.spot + t4.spot)
    assert pool["source"] == "skypilot-gcp" and out["hints"] == []


def test_cost_prices_azure_dev_in_westeurope_on_demand_and_spot_from_the_table(program_dir, capsys) -> None:
    """azure-dev runs in westeurope: `cost` prices its T4 pool on both capacity types from the table's row, whose
    on-demand figure is karpenter-azure's and spot figure coroot-azure's (price_sources.csv), and needs no hint."""
    values = stack_values("azure-dev")
    assert values["elastic-gpu:cluster"]["region"] == "westeurope"
    out = _cost_json(program_dir, capsys, "azure-dev", "westeurope", values["elastic-gpu:cluster"]["zones"])
    [pool] = out["pools"]
    row = price_row("azure", "westeurope", "Standard_NC4as_T4_v3")
    assert row is not None and row.spot is not None
    assert (pool["region"], pool["priced_as"]) == ("westeurope", "Standard_NC4as_T4_v3")
    assert (pool["on_demand_hourly"], pool["spot_hourly"]) == (row.on_demand, row.spot)
    assert pool["source"] == row.source == "karpenter-azure+coroot-azure"
    assert out["hints"] == []


def test_cost_in_a_region_without_an_azure_spot_price_says_how_to_give_it(program_dir, capsys) -> None:
    """Where no source we cite has the spot price (ND H100 v5 in westeurope repeats on-demand:
    tests/data/price_gaps.csv), offline `cost` prices on-demand from the table and names the setting that gives
    spot; at preview the Retail Prices API gives it (tests/test_live_prices.py)."""
    values = stack_values("azure-dev")
    values["elastic-gpu:gpuPools"] = [
        {**values["elastic-gpu:gpuPools"][0], "gpu": "h100", "instanceTypes": ["Standard_ND96isr_H100_v5"]}
    ]
    out = _cost_json(program_dir, capsys, "azure-dev", "westeurope", values["elastic-gpu:cluster"]["zones"], values)
    [pool] = out["pools"]
    row = price_row("azure", "westeurope", "Standard_ND96isr_H100_v5")
    assert row is not None and row.spot is None
    assert (pool["on_demand_hourly"], pool["spot_hourly"]) == (row.on_demand, None)
    assert any("Standard_ND96isr_H100_v5" in h and "spot" in h for h in out["hints"]), out["hints"]
