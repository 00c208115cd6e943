"""The price table: on-demand and spot USD per hour per cloud, region and item, as data.

The rows live in `elastic_gpu/data/prices.csv` (columns `cloud,region,item,kind,on_demand,
spot,eviction_rate,source,date`), their sources in `elastic_gpu/data/price_sources.csv`
(`key,url,note`). Both ship as package data and are read once, validated as a whole:
a bad row raises one `PriceTableError` naming the file, line and column of every problem.

- `item`: EC2 instance type, Azure VM size, GCE machine type or GCE accelerator type.
- `kind`: `vm` is one node of that type; `gpu` (GCP only) is ONE accelerator of that type,
  so a GKE node costs its machine row plus the accelerator row x the accelerator count.
- `spot` / `eviction_rate`: empty when not known (not every cloud publishes them).

Stack config can override rows (`elastic-gpu:prices`); `elastic_gpu/tools/cost.py` applies that.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from elastic_gpu.cloud_facts import KnownCloud
from elastic_gpu.clouds import CLOUDS
from elastic_gpu.errors import ConfigError
from elastic_gpu.gpu_catalog import accelerator_priced_clouds

#: Hours in an average month (8760 / 12), the usual cloud-billing convention.
HOURS_PER_MONTH = 730

KIND_VM = "vm"
KIND_GPU = "gpu"
KINDS = (KIND_VM, KIND_GPU)
COLUMNS = ("cloud", "region", "item", "kind", "on_demand", "spot", "eviction_rate", "source", "date")
SOURCE_COLUMNS = ("key", "url", "note")
#: Joins several source keys in one row's `source` column.
SOURCE_SEPARATOR = "+"

#: Where the shipped table lives, as users should edit it (messages name this path).
TABLE_PATH = "elastic_gpu/data/prices.csv"
SOURCES_PATH = "elastic_gpu/data/price_sources.csv"


class PriceTableError(ConfigError):
    """The price table (or its source list) has bad rows; ``problems`` names file, line and column."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems, source="price table")


@dataclass(frozen=True)
class PriceSource:
    key: str
    url: str
    note: str


@dataclass(frozen=True)
class PriceRow:
    """One row of the table: the hourly price of one item in one region."""

    cloud: str
    region: str
    item: str
    kind: str  #: KIND_VM (one node) or KIND_GPU (one GCP accelerator)
    on_demand: float
    spot: float | None  #: None: not known
    eviction_rate: float | None  #: fraction 0..1 of spot runs evicted; None: not published
    source: str  #: source keys joined by SOURCE_SEPARATOR
    date: str  #: YYYY-MM-DD the figures were read

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(self.source.split(SOURCE_SEPARATOR))


@dataclass(frozen=True)
class PriceTable:
    rows: tuple[PriceRow, ...]
    sources: dict[str, PriceSource]
    by_key: dict[tuple[str, str, str], PriceRow] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_key", {(r.cloud, r.region, r.item): r for r in self.rows})

    def row(self, cloud: str, region: str, item: str) -> PriceRow | None:
        return self.by_key.get((cloud, region, item))


# --- parsing ---------------------------------------------------------------------------------


def _number(text: str, column: str, problems: list[str], where: str, required: bool) -> float | None:
    if text == "":
        if required:
            problems.append(f"{where}: column {column}: required (USD per hour), got an empty value")
        return None
    try:
        value = float(text)
    except ValueError:
        problems.append(f"{where}: column {column}: {text!r} is not a number")
        return None
    if not value >= 0:  # also catches nan
        problems.append(f"{where}: column {column}: {text!r} must be a number >= 0")
        return None
    return value


def _reader(text: str, name: str, columns: tuple[str, ...], problems: list[str]) -> list[tuple[int, dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != columns:
        problems.append(f"{name}:1: header must be {','.join(columns)} (got {','.join(reader.fieldnames or ())})")
        return []
    rows = []
    for record in reader:
        where = f"{name}:{reader.line_num}"
        if None in record or any(v is None for v in record.values()):
            problems.append(f"{where}: expected {len(columns)} columns ({','.join(columns)})")
            continue
        rows.append((reader.line_num, {k: v.strip() for k, v in record.items()}))
    return rows


def parse_sources(text: str, name: str, problems: list[str]) -> dict[str, PriceSource]:
    sources: dict[str, PriceSource] = {}
    for line, rec in _reader(text, name, SOURCE_COLUMNS, problems):
        where = f"{name}:{line}"
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", rec["key"]):
            problems.append(f"{where}: column key: {rec['key']!r} must be lower-case letters, digits and '-'")
        elif rec["key"] in sources:
            problems.append(f"{where}: column key: {rec['key']!r} is defined twice")
        elif not rec["url"].startswith("https://"):
            problems.append(f"{where}: column url: {rec['url']!r} must be an https:// address")
        else:
            sources[rec["key"]] = PriceSource(rec["key"], rec["url"], rec["note"])
    return sources


def _row(
    line: int, rec: dict[str, str], name: str, sources: dict[str, PriceSource]
) -> tuple[PriceRow | None, list[str]]:
    where = f"{name}:{line}"
    problems: list[str] = []
    if rec["cloud"] not in CLOUDS:
        problems.append(f"{where}: column cloud: {rec['cloud']!r} is not one of {', '.join(CLOUDS)}")
    if rec["kind"] not in KINDS:
        problems.append(f"{where}: column kind: {rec['kind']!r} is not one of {', '.join(KINDS)}")
    elif rec["kind"] == KIND_GPU and (rec["cloud"] not in CLOUDS or rec["cloud"] not in accelerator_priced_clouds()):
        problems.append(f"{where}: column kind: 'gpu' rows (one accelerator) are GCP only (got cloud {rec['cloud']!r})")
    for column in ("region", "item"):
        if not rec[column]:
            problems.append(f"{where}: column {column}: required, got an empty value")
    on_demand = _number(rec["on_demand"], "on_demand", problems, where, required=True)
    spot = _number(rec["spot"], "spot", problems, where, required=False)
    if on_demand is not None and spot is not None and spot > on_demand:
        problems.append(f"{where}: column spot: {spot} is above on_demand {on_demand}; spot must be <= on_demand")
    eviction = _number(rec["eviction_rate"], "eviction_rate", problems, where, required=False)
    if eviction is not None and eviction > 1:
        problems.append(f"{where}: column eviction_rate: {eviction} must be a fraction between 0 and 1")
    keys = rec["source"].split(SOURCE_SEPARATOR) if rec["source"] else []
    if not keys:
        problems.append(f"{where}: column source: required (keys of {SOURCES_PATH} joined by '{SOURCE_SEPARATOR}')")
    for key in keys:
        if key not in sources:
            problems.append(
                f"{where}: column source: {key!r} is not a key of the sources file; known: {', '.join(sources)}"
            )
    try:
        date.fromisoformat(rec["date"])
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", rec["date"]):
            raise ValueError
    except ValueError:
        problems.append(f"{where}: column date: {rec['date']!r} must be a date YYYY-MM-DD")
    if problems or on_demand is None:
        return None, problems
    row = PriceRow(
        rec["cloud"], rec["region"], rec["item"], rec["kind"], on_demand, spot, eviction, rec["source"], rec["date"]
    )
    return row, []


def parse_price_table(
    prices_text: str, sources_text: str, prices_name: str = TABLE_PATH, sources_name: str = SOURCES_PATH
) -> PriceTable:
    """Parse and validate both files; raises PriceTableError listing every bad row."""
    problems: list[str] = []
    sources = parse_sources(sources_text, sources_name, problems)
    rows: list[PriceRow] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, rec in _reader(prices_text, prices_name, COLUMNS, problems):
        row, row_problems = _row(line, rec, prices_name, sources)
        problems += row_problems
        if row is None:
            continue
        key = (row.cloud, row.region, row.item)
        if key in seen:
            problems.append(
                f"{prices_name}:{line}: column item: {row.cloud}/{row.region}/{row.item} duplicates line {seen[key]}; "
                "rows must be unique per (cloud, region, item)"
            )
            continue
        seen[key] = line
        rows.append(row)
    if problems:
        raise PriceTableError(problems)
    return PriceTable(tuple(rows), sources)


def load_price_table(prices: Path | str, sources: Path | str) -> PriceTable:
    """A price table from two CSV files (tests and forks point this at their own files)."""
    prices, sources = Path(prices), Path(sources)
    return parse_price_table(
        prices.read_text(encoding="utf-8"), sources.read_text(encoding="utf-8"), str(prices), str(sources)
    )


@cache
def price_table() -> PriceTable:
    """The shipped table (package data), loaded and validated once per process."""
    data = resources.files("elastic_gpu") / "data"
    return parse_price_table(
        (data / "prices.csv").read_text(encoding="utf-8"), (data / "price_sources.csv").read_text(encoding="utf-8")
    )


def price_rows() -> tuple[PriceRow, ...]:
    return price_table().rows


def price_row(cloud: str, region: str, item: str) -> PriceRow | None:
    """The shipped table's row for ``item`` in ``region`` of ``cloud``, or None (no price known)."""
    return price_table().row(cloud, region, item)


def price_sources() -> dict[str, PriceSource]:
    return price_table().sources


# --- live prices: read from the cloud's price source at preview, cached on disk ---------------------------------
#
# A cloud whose provider has the `LivePriceSource` capability (elastic_gpu/provider.py) reads on-demand and spot
# prices from its own price source (`elastic_gpu/<cloud>/prices.py`: AWS through the provider's invokes, Azure's
# Retail Prices API, GCP's Cloud Billing Catalog) only when the user asks (`ELASTIC_GPU_LIVE_PRICES=1`, one
# setting for every cloud): by the policy pack under `pulumi preview --policy-pack` (its cost rule prices pools
# through elastic_gpu/tools/cost.py) and by the offline tools (Azure's and GCP's price lists need no cloud
# account; AWS's invokes are answered by the mocks from the table). Without the setting the shipped table is the
# source, so the tests and the default outputs never depend on the network or on the cache. A source that
# cannot answer leaves the table to answer and says so. Answers are kept for this run (each item is asked once,
# a failure included) and in one JSON file under the user's cache directory for `LIVE_PRICE_TTL`, so repeated
# previews do not refetch.

#: Set to 1 (or true/yes) to read live prices (the policy pack under `pulumi preview`, and the offline tools).
LIVE_PRICES_ENV = "ELASTIC_GPU_LIVE_PRICES"
#: Where the cache lives when set; else $XDG_CACHE_HOME/elastic-gpu, else ~/.cache/elastic-gpu.
CACHE_DIR_ENV = "ELASTIC_GPU_CACHE_DIR"
CACHE_FILE = "prices.json"
#: How long a fetched price is used before it is fetched again (spot prices move within the day).
LIVE_PRICE_TTL = timedelta(hours=12)


class PriceSourceUnavailable(Exception):
    """The price source did not answer (network, credentials, no engine): the table answers instead."""


def fetch_json(url: str, timeout: float, service: str) -> dict[str, Any]:
    """GET `url` as JSON within `timeout` seconds, for a price API that needs no SDK (Azure's Retail Prices, GCP's
    Cloud Billing Catalog); any failure is PriceSourceUnavailable, an HTTP error (the API's 4xx/5xx: a bad filter
    is a 400) caught before the URLError it is one of."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        raise PriceSourceUnavailable(f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise PriceSourceUnavailable(str(getattr(exc, "reason", exc)) or type(exc).__name__) from None
    if not isinstance(data, dict):
        raise PriceSourceUnavailable(f"{service} answered with no object")
    return data


@dataclass(frozen=True)
class Quote:
    """One item's prices as a live source gave them; either figure may be unknown."""

    on_demand: float | None
    spot: float | None
    source: str  #: the source's name, e.g. "azure-retail-prices"
    fetched: str  #: when it was fetched, ISO 8601 UTC to the minute ("2026-11-27T03:10Z")


@runtime_checkable
class LivePrices(Protocol):
    """A cloud's price source: hourly USD prices of instance types in one region, read from the cloud."""

    @property
    def name(self) -> str:
        """The source as printed beside its figures ("aws-price-list", "azure-retail-prices")."""
        ...

    def quotes(self, region: str, items: Sequence[str], now: datetime) -> dict[str, Quote]:
        """The prices of ``items`` in ``region`` the source has (an item it lacks is left out); raises
        PriceSourceUnavailable when the source cannot be reached."""
        ...


def live_prices_requested() -> bool:
    return os.environ.get(LIVE_PRICES_ENV, "").strip().lower() in ("1", "true", "yes")


def cache_dir() -> Path:
    if explicit := os.environ.get(CACHE_DIR_ENV):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elastic-gpu"


def fetch_time(now: datetime) -> str:
    return now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


class PriceCache:
    """Fetched quotes by cloud, region and item, in one JSON file; a quote older than `ttl` is not used."""

    def __init__(self, path: Path | None = None, ttl: timedelta = LIVE_PRICE_TTL) -> None:
        self.path = path or cache_dir() / CACHE_FILE
        self.ttl = ttl

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # no cache yet, or a damaged one: fetched again
        return data if isinstance(data, dict) else {}

    def get(self, cloud: str, region: str, item: str, now: datetime) -> Quote | None:
        entry = self._read().get(f"{cloud}/{region}/{item}")
        if not isinstance(entry, dict):
            return None
        try:
            fetched = datetime.strptime(str(entry["fetched"]), "%Y-%m-%dT%H:%MZ").replace(tzinfo=timezone.utc)
            quote = Quote(entry.get("on_demand"), entry.get("spot"), str(entry["source"]), str(entry["fetched"]))
        except (KeyError, ValueError):
            return None
        return quote if now - fetched <= self.ttl else None

    def put(self, cloud: str, region: str, quotes: Mapping[str, Quote]) -> None:
        data = self._read()
        for item, q in quotes.items():
            data[f"{cloud}/{region}/{item}"] = {
                "on_demand": q.on_demand,
                "spot": q.spot,
                "source": q.source,
                "fetched": q.fetched,
            }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
            tmp.replace(self.path)
        except OSError:
            pass  # a read-only home: the figures are used, only not kept


@dataclass
class LiveBook:
    """The live quotes the tools read in this process, and what they say about them (fallbacks)."""

    quotes: dict[tuple[str, str, str], Quote] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: (cloud, region, item) already asked for in this run, answered or not: never asked twice
    asked: set[tuple[str, str, str]] = field(default_factory=set)


_BOOK = LiveBook()


def live_book() -> LiveBook:
    return _BOOK


def clear_live_prices() -> None:
    _BOOK.quotes.clear()
    _BOOK.notes.clear()
    _BOOK.asked.clear()


def live_quote(cloud: str, region: str, item: str) -> Quote | None:
    """The live quote read for ``item`` in ``region`` in this process, None if none was (the table answers)."""
    return _BOOK.quotes.get((cloud, region, item))


def read_live_prices(
    provider: KnownCloud,
    region: str,
    items: Sequence[str],
    source: LivePrices | None,
    cache: PriceCache | None = None,
    now: datetime | None = None,
) -> None:
    """Fill the book with ``items``' prices in ``region``: the cache's fresh answers, then the source's for the
    rest (kept in the cache); an item is asked once per run. An unreachable source, or none, leaves the table to
    answer and says so once. `provider`: the cloud's, whose service the note names."""
    cloud = provider.name
    now = now or datetime.now(timezone.utc)
    cache = cache or PriceCache()
    wanted = [i for i in dict.fromkeys(items) if (cloud, region, i) not in _BOOK.asked]
    _BOOK.asked.update((cloud, region, i) for i in wanted)
    missing = []
    for item in wanted:
        if (hit := cache.get(cloud, region, item, now)) is not None:
            _BOOK.quotes[(cloud, region, item)] = hit
        else:
            missing.append(item)
    if not missing:
        return
    if source is None:
        note = f"{provider.facts.service} has no live price source here: table rows used ({TABLE_PATH})"
        if note not in _BOOK.notes:
            _BOOK.notes.append(note)
        return
    try:
        fetched = source.quotes(region, missing, now)
    except PriceSourceUnavailable as exc:
        note = f"live prices from {source.name} unreachable ({exc}): table rows used for {region}"
        if note not in _BOOK.notes:
            _BOOK.notes.append(note)
        return
    cache.put(cloud, region, fetched)
    for item, quote in fetched.items():
        _BOOK.quotes[(cloud, region, item)] = quote
