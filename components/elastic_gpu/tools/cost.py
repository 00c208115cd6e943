"""The cost model: what a node pool costs per hour and per month, and what GPU work costs.

Pure functions over the cloud-neutral `NodeGroupView` (elastic_gpu/tools/node_group_view.py) and the price
table (elastic_gpu/data/prices.csv, read by elastic_gpu/prices.py), with the stack config's
`prices` overrides on top. The
preview's cost table, the `cost` command and the `gpu-monthly-cost-ceiling` policy all
price a pool through `node_price`, so they cannot disagree on what a node costs.

- A node's price: its instance type's row; on GKE the machine row plus each accelerator
  row x its count (the machine rows are the VM part only, also for A2/G2/A3).
- A pool with several instance types is priced as its FIRST type, the one the cluster
  autoscaler builds its node template from; `pool_cost(..., upper_bound=True)` takes the
  most expensive instead (the budget policy's upper bound).
- Monthly figures are `HOURS_PER_MONTH` (730) hours at min size (what the pool costs idle)
  and at max size, on the pool's own capacity type (spot or on-demand).
- Work: N GPU-hours on a pool are N / GPUs-per-node node-hours; on spot, evicted runs are
  re-run, so the run hours are node-hours x (1 + eviction rate) (the method of price source
  canonical-blog-2022, elastic_gpu/data/price_sources.csv).
- A reserved tier (a group whose capacity type is "reserved" alone: NodeGroupView.capacity_types) costs nothing
  more per node: the reservation is paid whether used or not. Its nodes are priced at $0 marginal (the budget
  policy's upper bound keeps them at on-demand), its work is served first, up to its nodes x the hours of a month
  (`HOURS_PER_MONTH`, the period of the monthly figures), and the reservation's hours left unused, priced at its
  type's on-demand price, are its idle cost, shown on a line of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from elastic_gpu.config import PriceOverride
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.karpenter_core import RESERVED
from elastic_gpu.prices import (
    HOURS_PER_MONTH,
    SOURCE_SEPARATOR,
    TABLE_PATH,
    live_book,
    live_prices_requested,
    live_quote,
    price_row,
    read_live_prices,
)
from elastic_gpu.tools.clouds import get_cloud
from elastic_gpu.tools.node_group_view import NodeGroupView

if TYPE_CHECKING:
    from elastic_gpu.prices import LivePrices

#: Spot eviction (re-run) rate when neither the price row, the stack config nor the command
#: gives one: the 5% Azure's portal showed for D4s_v3 in UK South (price source canonical-blog-2022; an
#: assumption elsewhere).
DEFAULT_EVICTION_RATE = 0.05
#: Source label of a figure that comes from a price override rather than the table.
OVERRIDE_SOURCE = "override"

Overrides = Mapping[str, PriceOverride]


@runtime_checkable
class LivePriceSource(Protocol):
    """A reader of the cloud's own on-demand and spot prices (`elastic_gpu/<cloud>/prices.py`), asked by `cost`
    and the prices overrides when the user wants live prices; the shipped table answers for whatever it cannot
    (elastic_gpu/prices.py). An optional capability: a cloud's tools implement it (tools/<cloud>/cloud.py)."""

    def price_source(self) -> LivePrices:
        """The cloud's price source (built on each call: it holds no state across programs)."""
        ...


def reserved_only(pool: NodeGroupView) -> bool:
    """A reserved tier's own group: every node comes from the pool's reservations."""
    return pool.capacity_types == [RESERVED]


def reserved_first(pool: NodeGroupView) -> bool:
    """A group that uses reservations before anything else (a reserved group, or a Karpenter NodePool allowing
    `reserved` first)."""
    return pool.capacity_types[:1] == [RESERVED]


@dataclass(frozen=True)
class ItemPrice:
    """One item's price: its table row in the region, with an override's figures on top."""

    item: str
    on_demand: float
    spot: float | None
    eviction_rate: float | None
    source: str  #: the row's source keys, OVERRIDE_SOURCE, or both joined by "+"
    date: str | None  #: the row's date; None for an override with no row under it


def base_price(cloud: str, region: str, item: str) -> ItemPrice | None:
    """The price of ``item`` in ``region`` before the user's overrides: the live quote read this run (when live
    prices were asked for, elastic_gpu/prices.py), its missing figures from the table row; else the row."""
    row = price_row(cloud, region, item)
    live = live_quote(cloud, region, item)
    if live is None:
        return (
            None if row is None else ItemPrice(item, row.on_demand, row.spot, row.eviction_rate, row.source, row.date)
        )
    on_demand = live.on_demand if live.on_demand is not None else (row.on_demand if row else None)
    if on_demand is None:
        return None
    spot = live.spot if live.spot is not None else (row.spot if row else None)
    row_used = row is not None and (live.on_demand is None or live.spot is None or row.eviction_rate is not None)
    keys = [live.source, *([row.source] if row is not None and row_used else [])]
    dates = [live.fetched, *([row.date] if row is not None and row_used else [])]
    return ItemPrice(item, on_demand, spot, row.eviction_rate if row else None, SOURCE_SEPARATOR.join(keys), min(dates))


def item_price(cloud: str, region: str | None, item: str, overrides: Overrides | None = None) -> ItemPrice | None:
    """The effective price of ``item`` in ``region``; None when neither table, live source nor override has one."""
    base = base_price(cloud, region, item) if region else None
    override = (overrides or {}).get(item)
    if override is None:
        return base
    on_demand = override.on_demand if override.on_demand is not None else (base.on_demand if base else None)
    if on_demand is None:
        return None  # config validation asks for onDemand where there is no row; a policy override always has it
    return ItemPrice(
        item,
        on_demand,
        override.spot if override.spot is not None else (base.spot if base else None),
        override.eviction_rate if override.eviction_rate is not None else (base.eviction_rate if base else None),
        f"{OVERRIDE_SOURCE}+{base.source}" if base else OVERRIDE_SOURCE,
        base.date if base else None,
    )


def read_live_prices_of(pools: Sequence[NodeGroupView]) -> list[str]:
    """Read the pools' live prices (each cloud's `LivePriceSource`, once per run and cached) when the user asked
    for them (`ELASTIC_GPU_LIVE_PRICES`), so that every figure of a run prices from the same quotes; returns what
    the reading says (a source unreachable, a cloud without one). Without the setting nothing is read."""
    if not live_prices_requested():
        return []
    wanted: dict[tuple[str, str], list[str]] = {}
    for p in pools:
        if p.region:
            wanted.setdefault((p.cloud, p.region), []).extend([*p.instance_types, *(a for a, _ in p.accelerators)])
    for (cloud, region), items in wanted.items():
        provider = get_cloud(cloud)
        source = provider.price_source() if isinstance(provider, LivePriceSource) else None
        read_live_prices(provider, region, items, source)
    return list(live_book().notes)


@dataclass(frozen=True)
class NodePrice:
    """One node's hourly price: the machine plus (GKE) its accelerators, each x its count."""

    instance_type: str
    accelerators: tuple[tuple[str, int], ...]
    parts: tuple[tuple[ItemPrice, int], ...]  #: (price, count) of every item that has one
    missing: tuple[str, ...]  #: items with no price in the region (no row, no override)

    @property
    def label(self) -> str:
        """What the node is priced as: `g4dn.xlarge`, `g2-standard-8 + 1 x nvidia-l4`."""
        return " + ".join([self.instance_type, *(f"{n} x {a}" for a, n in self.accelerators)])

    @property
    def on_demand(self) -> float | None:
        return None if self.missing else sum(p.on_demand * n for p, n in self.parts)

    @property
    def spot(self) -> float | None:
        if self.missing or any(p.spot is None for p, _ in self.parts):
            return None
        return sum((p.spot or 0.0) * n for p, n in self.parts)

    @property
    def eviction_rate(self) -> float | None:
        """The highest published rate of the node's items (one eviction takes the whole node)."""
        rates = [p.eviction_rate for p, _ in self.parts if p.eviction_rate is not None]
        return max(rates) if rates else None

    @property
    def saving_pct(self) -> float | None:
        """How much cheaper spot is than on-demand, in %."""
        on_demand, spot = self.on_demand, self.spot
        if on_demand is None or spot is None or on_demand <= 0:
            return None
        return (1 - spot / on_demand) * 100

    @property
    def source(self) -> str | None:
        keys = [k for p, _ in self.parts for k in p.source.split("+")]
        return "+".join(dict.fromkeys(keys)) or None

    @property
    def date(self) -> str | None:
        """The oldest date among the node's rows: the figure is at most as fresh as that."""
        dates = [p.date for p, _ in self.parts if p.date]
        return min(dates) if dates else None

    def hourly(self, spot: bool) -> float | None:
        return self.spot if spot else self.on_demand


def node_price(
    cloud: str,
    region: str | None,
    instance_type: str,
    accelerators: Sequence[tuple[str, int]] = (),
    overrides: Overrides | None = None,
) -> NodePrice:
    """The one function that prices a node (report, `cost` command and budget policy call it)."""
    items = [(instance_type, 1), *accelerators]
    priced = [(item_price(cloud, region, item, overrides), n) for item, n in items]
    return NodePrice(
        instance_type,
        tuple(accelerators),
        tuple((p, n) for p, n in priced if p is not None),
        tuple(item for (item, _), (p, _) in zip(items, priced, strict=True) if p is None),
    )


def gpus_per_node(pool: NodeGroupView, instance_type: str) -> int | None:
    """GPUs on one node: GKE's accelerator counts, else the GPU catalog's; None for a CPU pool."""
    if pool.accelerators:
        return sum(n for _, n in pool.accelerators)
    if not pool.gpu:
        return None
    row = pool.gpu_row(instance_type)
    return row.gpus if row else None


def price_hints(prices: Sequence[tuple[NodePrice, str | None, bool]]) -> list[str]:
    """One line per kind of gap in (node price, region, is spot) triples, saying what to do."""
    missing = [f"{item} ({region or 'region unknown'})" for p, region, _ in prices for item in p.missing]
    no_spot = [
        f"{p.label} ({region or 'region unknown'})"
        for p, region, spot in prices
        if spot and not p.missing and p.spot is None
    ]
    hints = []
    if missing:
        hints.append(
            f"no price for {', '.join(dict.fromkeys(missing))}: set `elastic-gpu:prices.<item>.onDemand` (USD per "
            f"hour) in the stack's config, which any program using elastic-gpu reads, or add a row to {TABLE_PATH} "
            "in the repository"
        )
    if no_spot:
        hints.append(
            f"no spot price for {', '.join(dict.fromkeys(no_spot))}: set `elastic-gpu:prices.<item>.spot` in the "
            f"stack's config, which any program using elastic-gpu reads, or add it to {TABLE_PATH} in the repository"
        )
    return hints


def live_sources(prices: Sequence[NodePrice]) -> list[str]:
    """The live sources these prices read, each with when it was fetched ("azure-retail-prices fetched
    2026-11-27T03:10Z"): what a report prints beside the table's path."""
    keys = {k for p in prices for k in (p.source or "").split(SOURCE_SEPARATOR)}
    fetched: dict[str, set[str]] = {}
    for quote in live_book().quotes.values():
        if quote.source in keys:
            fetched.setdefault(quote.source, set()).add(quote.fetched)
    return [f"{name} fetched {min(times)}" for name, times in sorted(fetched.items())]


#: Flex-start nodes bill at Dynamic Workload Scheduler prices: "discounts (up to 53%) on vCPUs, GPUs and TPUs",
#: pay as you go (GKE docs, concepts/dws "Flex-start pricing"). The price table has no flex-start rows (no
#: per-SKU figure was found), so a flex-start pool is priced at on-demand: an upper bound.
FLEX_START_PRICING = (
    "flex-start pools are priced at on-demand, but bill at Dynamic Workload Scheduler prices, up to 53% below "
    "on-demand for vCPUs and GPUs (GKE docs, concepts/dws); the price table has no flex-start rows"
)


@dataclass(frozen=True)
class PoolCost:
    """One node group's prices: per node-hour, per GPU-hour and per month at min and max size."""

    pool: NodeGroupView
    price: NodePrice  #: of the type it is priced as
    gpus_per_node: int | None  #: None: a CPU pool (or a GPU type the catalog does not know)
    #: price a spot pool whose spot price is unknown at on-demand (spot never costs more): the policy's bound
    upper_bound: bool = False

    @property
    def capacity(self) -> str:
        if reserved_first(self.pool):
            return ", ".join(self.pool.capacity_types)
        return "spot" if self.pool.spot else "flex-start" if self.pool.flex_start else "on-demand"

    @property
    def reserved(self) -> bool:
        """Priced at $0 marginal: a reserved tier's group (not for the budget's upper bound)."""
        return reserved_only(self.pool) and not self.upper_bound

    @property
    def reservation_monthly(self) -> float | None:
        """A reserved group: what its reservation costs a month, at its type's on-demand price, used or not."""
        on_demand = self.price.on_demand
        if not reserved_only(self.pool) or on_demand is None:
            return None
        return (self.pool.max_size or 0) * on_demand * HOURS_PER_MONTH

    def idle_reserved_monthly(self, nodes: int | None) -> float | None:
        """A reserved group with ``nodes`` running: its reservation's unused nodes x on-demand x a month."""
        on_demand = self.price.on_demand
        if not reserved_only(self.pool) or on_demand is None:
            return None
        return max((self.pool.max_size or 0) - (nodes or 0), 0) * on_demand * HOURS_PER_MONTH

    @property
    def on_demand_bound(self) -> bool:
        """Priced at on-demand although it bills less: flex-start (FLEX_START_PRICING has why)."""
        return self.pool.flex_start and not self.pool.spot

    @property
    def gap(self) -> str | None:
        """Why the pool has no hourly price: "no price", "no spot price", or None (it has one)."""
        if self.hourly is not None:
            return None
        return "no price" if self.price.missing else "no spot price"

    @property
    def hourly(self) -> float | None:
        """One node-hour on the pool's own capacity type ($0 more on a reservation, which is paid either way)."""
        if self.reserved and not self.price.missing:
            return 0.0
        own = self.price.hourly(self.pool.spot)
        return self.price.on_demand if own is None and self.upper_bound else own

    @property
    def gpu_hourly(self) -> float | None:
        hourly, gpus = self.hourly, self.gpus_per_node
        return hourly / gpus if hourly is not None and gpus else None

    def monthly(self, nodes: int | None) -> float | None:
        if nodes == 0:
            return 0.0  # a pool at zero costs nothing, priced or not
        hourly = self.hourly
        return None if hourly is None or nodes is None else nodes * hourly * HOURS_PER_MONTH

    @property
    def idle_monthly(self) -> float | None:
        """A month at min size: what the pool costs when nothing runs ($0 for a pool that scales to zero)."""
        return self.monthly(self.pool.min_size)

    @property
    def max_monthly(self) -> float | None:
        return self.monthly(self.pool.max_size)


def pool_cost(pool: NodeGroupView, overrides: Overrides | None = None, *, upper_bound: bool = False) -> PoolCost:
    """Price ``pool`` (in ``pool.region``) as its first instance type, or with ``upper_bound`` (or for a pool
    that may launch any of its types, a Karpenter NodePool) as the most expensive of its types on its own
    capacity type."""
    types = pool.instance_types or ["?"]
    read_live_prices_of([pool])  # the gate run on its own (a policy pack) reads what the preview read

    def priced(t: str) -> PoolCost:
        price = node_price(pool.cloud, pool.region, t, pool.accelerators, overrides)
        return PoolCost(pool, price, gpus_per_node(pool, t), upper_bound)

    if not upper_bound and not pool.any_type:
        return priced(types[0])
    costs = [priced(t) for t in types]
    known = [c for c in costs if c.hourly is not None]
    return max(known, key=lambda c: c.hourly or 0.0) if known else costs[0]


#: GiB in bytes (a pod's memory request is in bytes, the catalog's in GiB).
GIB = 2**30


def smallest_fit(cloud: str, instance_types: Sequence[str], requests: Mapping[str, float]) -> str | None:
    """The smallest of `instance_types` (by vCPUs, then memory) whose catalog shape holds a pod's CPU and
    memory `requests`: the machine a provisioner that picks per pod (GKE node pool auto-creation) creates.
    None when the catalog knows none that fits."""
    rows = [r for t in instance_types if (r := gpu_instance_type(cloud, t)) is not None]
    fits = [
        r for r in rows if r.vcpus >= requests.get("cpu", 0.0) and r.memory_gib * GIB >= requests.get("memory", 0.0)
    ]
    return min(fits, key=lambda r: (r.vcpus, r.memory_gib)).name if fits else None


def workload_requests() -> dict[str, float]:
    """The CPU and memory a pool's own workload asks for (the Job of its workload contract)."""
    from elastic_gpu.tools.simulation.pod import quantity
    from elastic_gpu.workload import EXAMPLE_REQUESTS

    return {k: quantity(v) for k, v in EXAMPLE_REQUESTS.items()}


def expected_cost(pool: NodeGroupView, overrides: Overrides | None = None) -> PoolCost | None:
    """A pool GKE creates per pod (an auto-created ComputeClass priority: `shared_cap`, several machine types)
    priced as the smallest of its types that fits its workload; None for any other pool (its price is its
    own)."""
    if pool.shared_cap is None or len(pool.instance_types) < 2:
        return None
    found = smallest_fit(pool.cloud, pool.instance_types, workload_requests())
    if found is None:
        return None
    price = node_price(pool.cloud, pool.region, found, pool.accelerators, overrides)
    return PoolCost(pool, price, gpus_per_node(pool, found))


@dataclass(frozen=True)
class StackCost:
    """A stack's pools and their monthly totals; a total leaves out a figure it has no price for."""

    pools: list[PoolCost]
    #: pools a provisioner sizes per pod (GKE auto-created ComputeClass priorities), by label: priced as the
    #: smallest of their machine types that fits the pool's workload (`expected_max_monthly`)
    expected: dict[str, PoolCost] = field(default_factory=dict)

    @property
    def expected_max_monthly(self) -> float | None:
        """Every pool at its max, those in `expected` as the smallest machine type that fits their workload
        (what GKE creates for it) rather than the largest (`max_monthly`, the worst case); None without any."""
        if not self.expected:
            return None
        return _max_total([self.expected.get(c.pool.name, c) for c in self.pools])

    @property
    def idle_monthly(self) -> float:
        return sum(c.idle_monthly or 0.0 for c in self.pools)

    @property
    def max_monthly(self) -> float:
        """Every pool at its max; pools that share a cap (shared_cap) count it once, at the dearest of them."""
        return _max_total(self.pools)

    @property
    def idle_excludes(self) -> list[str]:
        return [c.pool.name for c in self.pools if c.idle_monthly is None]

    @property
    def max_excludes(self) -> list[str]:
        return [c.pool.name for c in self.pools if c.max_monthly is None]

    @property
    def shared_caps(self) -> list[str]:
        """One line per cap several pools share (shared_cap), saying how the total counts it."""
        groups: dict[str, list[NodeGroupView]] = {}
        for c in self.pools:
            if c.pool.shared_cap is not None:
                groups.setdefault(c.pool.shared_cap, []).append(c.pool)
        return [
            f"{', '.join(p.name for p in pools)} share "
            + (
                f"the cluster's auto-provisioning limit of {cap}"
                if pools[0].cap_held
                else f"their pool's plan of {pools[0].max_size} nodes, which nothing in the cluster holds them to "
                "(no node auto-provisioning: only the project's regional GPU quota bounds them)"
            )
            + ": at max size the total counts it once, at the dearest of them (each priced as its largest machine type)"
            for cap, pools in groups.items()
        ]

    @property
    def reserved(self) -> list[PoolCost]:
        """The reserved tiers' groups (priced at $0 marginal; their reservations' cost is shown apart)."""
        return [c for c in self.pools if reserved_only(c.pool)]

    @property
    def idle_reserved_monthly(self) -> float:
        """The reservations' unused nodes at every pool's min size, at on-demand prices, a month."""
        return sum(c.idle_reserved_monthly(c.pool.min_size) or 0.0 for c in self.reserved)

    @property
    def hints(self) -> list[str]:
        return price_hints([(c.price, c.pool.region, c.pool.spot) for c in self.pools])

    @property
    def live_sources(self) -> list[str]:
        return live_sources([c.price for c in self.pools])

    @property
    def notes(self) -> list[str]:
        """What reading live prices said (a source unreachable: the table answered), this process."""
        return list(live_book().notes)


def _max_total(costs: Sequence[PoolCost]) -> float:
    """Every pool at its max; pools that share a cap (shared_cap) count it once, at the dearest of them."""
    shared: dict[str, float] = {}
    total = 0.0
    for c in costs:
        if c.pool.shared_cap is None:
            total += c.max_monthly or 0.0
        else:
            shared[c.pool.shared_cap] = max(shared.get(c.pool.shared_cap, 0.0), c.max_monthly or 0.0)
    return total + sum(shared.values())


def stack_cost(pools: Sequence[NodeGroupView], overrides: Overrides | None = None) -> StackCost:
    expected = {p.name: c for p in pools if (c := expected_cost(p, overrides)) is not None}
    return StackCost([pool_cost(p, overrides) for p in pools], expected)


# --- work: the cost of N GPU-hours ------------------------------------------------------------

EVICTION_FROM_PRICES = "prices"
EVICTION_FROM_ARGUMENT = "--eviction-rate"
EVICTION_ASSUMED = "assumed"


def eviction_rate_for(published: float | None, given: float | None = None) -> tuple[float, str]:
    """(rate, where it comes from): the price's own rate, else the one given, else the default."""
    if published is not None:
        return published, EVICTION_FROM_PRICES
    if given is not None:
        return given, EVICTION_FROM_ARGUMENT
    return DEFAULT_EVICTION_RATE, EVICTION_ASSUMED


@dataclass(frozen=True)
class WorkCost:
    """N GPU-hours of work on one node type: all on-demand against spot with re-runs."""

    gpu_hours: float
    gpus_per_node: int
    on_demand_hourly: float
    spot_hourly: float | None  #: None: no spot price (or an on-demand-only pool)
    eviction_rate: float
    eviction_source: str  #: EVICTION_FROM_PRICES, EVICTION_FROM_ARGUMENT or EVICTION_ASSUMED

    @property
    def node_hours(self) -> float:
        return self.gpu_hours / self.gpus_per_node

    @property
    def on_demand_cost(self) -> float:
        return self.node_hours * self.on_demand_hourly

    @property
    def spot_run_hours(self) -> float:
        """Node-hours on spot including the re-runs of evicted work."""
        return self.node_hours * (1 + self.eviction_rate)

    @property
    def spot_cost(self) -> float | None:
        return None if self.spot_hourly is None else self.spot_run_hours * self.spot_hourly

    @property
    def saving_pct(self) -> float | None:
        spot = self.spot_cost
        if spot is None or self.on_demand_cost <= 0:
            return None
        return (1 - spot / self.on_demand_cost) * 100


def work_cost(
    gpu_hours: float,
    gpus_per_node: int,
    on_demand_hourly: float,
    spot_hourly: float | None,
    eviction_rate: float | None = None,
    given_eviction_rate: float | None = None,
) -> WorkCost:
    """``gpu_hours`` of work at these node prices; ``eviction_rate`` is the price's published rate."""
    rate, source = eviction_rate_for(eviction_rate, given_eviction_rate)
    return WorkCost(gpu_hours, gpus_per_node, on_demand_hourly, spot_hourly, rate, source)


@dataclass(frozen=True)
class ReservedWork:
    """The part of N GPU-hours a pool's reserved tier serves first: up to its nodes x GPUs x the hours of a month
    (`HOURS_PER_MONTH`, the period of every monthly figure; the `cost` command's work is taken to run within one),
    at $0 marginal; the reservation's node-hours left unused are its idle cost, at its type's on-demand price."""

    groups: list[str]
    nodes: int
    gpus_per_node: int
    on_demand_hourly: float | None  #: the reserved type's on-demand price (None: no price)
    gpu_hours: float  #: the work asked of the pool
    hours: float = HOURS_PER_MONTH

    @property
    def capacity_gpu_hours(self) -> float:
        return self.nodes * self.gpus_per_node * self.hours

    @property
    def served_gpu_hours(self) -> float:
        return min(self.gpu_hours, self.capacity_gpu_hours)

    @property
    def rest_gpu_hours(self) -> float:
        """What spot and on-demand serve after the reservation."""
        return self.gpu_hours - self.served_gpu_hours

    @property
    def unused_node_hours(self) -> float:
        return self.nodes * self.hours - self.served_gpu_hours / self.gpus_per_node

    @property
    def idle_cost(self) -> float | None:
        """The reservation's unused node-hours x its on-demand price: paid, not used."""
        return None if self.on_demand_hourly is None else self.unused_node_hours * self.on_demand_hourly


def reserved_work(
    members: Sequence[NodeGroupView], gpu_hours: float, overrides: Overrides | None = None
) -> ReservedWork | None:
    """A pool's reserved tier (its reserved-only groups) as the first to serve ``gpu_hours``; None without one, or
    when the catalog knows no GPU count for its type."""
    reserved = [m for m in members if reserved_only(m)]
    if not reserved:
        return None
    lead = pool_cost(reserved[0], overrides)
    if not lead.gpus_per_node:
        return None
    nodes = sum(m.max_size or 0 for m in reserved)
    return ReservedWork([m.name for m in reserved], nodes, lead.gpus_per_node, lead.price.on_demand, gpu_hours)


@dataclass(frozen=True)
class PoolWork:
    """N GPU-hours on one GPU pool: its spot node groups and its on-demand fallback, as one."""

    pool: str
    node_groups: list[str]
    region: str | None
    spot: bool  #: the pool runs on spot (it has spot node groups)
    price: NodePrice  #: the pool's own (first) instance type
    gpus_per_node: int | None
    work: WorkCost | None  #: None: no on-demand price or no GPU count
    #: an on-demand-priced flex-start pool: its figures are an upper bound (FLEX_START_PRICING)
    flex_start: bool = False
    #: a pool GKE sizes per pod (auto-created): `price` is the smallest machine type that fits its workload,
    #: and these the same work on its largest type (the worst case); None for any other pool
    worst_price: NodePrice | None = None
    worst_work: WorkCost | None = None
    #: the pool's reserved tier, which serves the work first; None without one
    reserved: ReservedWork | None = None
    #: the pool has only its reserved tier (`only: true`): work beyond the reservation waits for it
    reserved_alone: bool = False

    @property
    def capacity(self) -> str:
        own = "spot" if self.spot else "flex-start" if self.flex_start else "on-demand"
        if self.reserved is None:
            return own
        return RESERVED if self.reserved_alone else f"{RESERVED}, {own}"

    @property
    def own_cost(self) -> float | None:
        """The work on the pool's own capacity: its reserved tier first ($0 marginal), then spot with re-runs for a
        spot pool, else on-demand."""
        if self.work is None:
            return None
        whole = self.work.spot_cost if self.spot else self.work.on_demand_cost
        if self.reserved is None or whole is None:
            return whole
        if self.reserved_alone:
            return 0.0
        return whole * self.reserved.rest_gpu_hours / self.work.gpu_hours

    @property
    def gap(self) -> str | None:
        """Why the pool has no figures: "no price", "no GPU count", "no spot price", or None."""
        if self.price.on_demand is None:
            return "no price"
        if self.work is None:
            return "no GPU count"
        return "no spot price" if self.own_cost is None else None


def pools_work(
    pools: Sequence[NodeGroupView],
    gpu_hours: float,
    overrides: Overrides | None = None,
    eviction_rate: float | None = None,
) -> list[PoolWork]:
    """``gpu_hours`` of work on each GPU pool of ``pools`` (grouped by pool name)."""
    groups: dict[str, list[NodeGroupView]] = {}
    for p in sorted((p for p in pools if p.gpu), key=lambda p: (p.pool, p.name)):
        groups.setdefault(p.pool, []).append(p)
    out = []
    for name, members in groups.items():
        # The reserved tier serves first (reserved_work); the pool's own type is that of its other groups.
        others = [m for m in members if not reserved_only(m)]
        spot_groups = [m for m in others if m.spot or m.spot_first]
        first = (spot_groups or others or members)[0]  # spot is the pool's own type
        worst = pool_cost(first, overrides)
        # A pool GKE sizes per pod runs its work on the smallest type that fits it; the largest is the worst case.
        lead = expected_cost(first, overrides) or worst

        def work_of(c: PoolCost, spot_groups: list[NodeGroupView] = spot_groups) -> WorkCost | None:
            price, gpus = c.price, c.gpus_per_node
            if price.on_demand is None or not gpus:
                return None
            spot = price.spot if spot_groups else None
            return work_cost(gpu_hours, gpus, price.on_demand, spot, price.eviction_rate, eviction_rate)

        flex = not spot_groups and lead.pool.flex_start
        out.append(
            PoolWork(
                name,
                [m.name for m in members],
                lead.pool.region,
                bool(spot_groups),
                lead.price,
                lead.gpus_per_node,
                work_of(lead),
                flex,
                worst_price=worst.price if lead is not worst else None,
                worst_work=work_of(worst) if lead is not worst else None,
                reserved=reserved_work(members, gpu_hours, overrides),
                reserved_alone=not others,
            )
        )
    return out


@dataclass(frozen=True)
class WorkTotal:
    """The same work on every pool, summed: each pool on its own capacity against all on-demand."""

    on_demand_cost: float
    own_cost: float
    #: pool -> why it is in neither sum (no price, or a spot pool with no spot price)
    excludes: dict[str, str]
    #: the reservations' node-hours left unused, at on-demand prices (paid, not in `own_cost`); None: no reserved tier
    idle_reserved_cost: float | None = None

    @property
    def saving_pct(self) -> float | None:
        return (1 - self.own_cost / self.on_demand_cost) * 100 if self.on_demand_cost > 0 else None


def work_total(works: Sequence[PoolWork]) -> WorkTotal:
    counted = [w for w in works if w.gap is None]
    reserved = [w.reserved for w in works if w.reserved is not None]
    return WorkTotal(
        on_demand_cost=sum(w.work.on_demand_cost for w in counted if w.work),
        own_cost=sum(w.own_cost or 0.0 for w in counted),
        excludes={w.pool: w.gap for w in works if w.gap is not None},
        idle_reserved_cost=sum(r.idle_cost or 0.0 for r in reserved) if reserved else None,
    )
