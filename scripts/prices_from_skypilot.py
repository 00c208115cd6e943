"""Rebuild the skypilot-* rows of elastic_gpu/data/prices.csv, and the gaps they leave, from SkyPilot's catalogs.

    PYTHONPATH=components:. python scripts/prices_from_skypilot.py MIRROR_GIT_DIR [--write]
    PYTHONPATH=components:. python scripts/prices_from_skypilot.py --csv skypilot-aws=aws_vms.csv ... [--write]

MIRROR_GIT_DIR is a clone of github.com/skypilot-org/skypilot-catalog (a bare one will do): each source's
`vms.csv` is read with `git show <commit>:<path>` at the commit and path its URL in
elastic_gpu/data/price_sources.csv names, so a newer catalog is read by changing that URL. `--csv KEY=FILE`
reads one source from a file instead (a copy of that vms.csv, or the rows of it this scope needs with its header).
Without `--write` it prints what it would change; with it, it rewrites prices.csv and tests/data/price_gaps.csv.

Scope: every (cloud, region, item) tests/test_price_coverage.py checks, i.e. each region a cloud's config rules
accept x each GPU size of elastic_gpu/gpu_catalog.py (and on GCP its accelerator type). Other rows are left alone.
Azure's regions outside SkyPilot's US ones are scripts/prices_from_azure_tables.py's: their rows come from other
sources and their gaps carry reasons this script keeps (run that one after this one when both are refreshed).

The rules are the ones price_sources.csv states for each source:
- skypilot-aws (vms.csv: one row per instance type and availability zone): on-demand is the row's `Price` (the
  same in every zone); spot is the median of the zones' `SpotPrice`, zones without one left out;
- skypilot-gcp (one row per machine type or accelerator count and zone): a machine row is the VM part only, an
  accelerator row (no InstanceType) costs `Price` for `AcceleratorCount` GPUs, so the table's `gpu` row is the
  price of one, from the smallest count listed (SkyPilot's names map to GKE's as sky/clouds/gcp.py
  `GCP._get_gpu_acc_type` maps them); zones of a region are expected to agree, and their median is taken if not;
- skypilot-azure (one row per size and region): on-demand `Price`; spot `SpotPrice`, left unknown where it
  repeats the on-demand price.
A row of the table from the same source is rewritten only where the catalog gives another figure (beyond the
table's 5-decimal rounding); rows from other sources stay. Rows this script writes carry today's date (or --date).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import io
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from price_tables import GAPS, PRICES, write_tables

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "components" / "elastic_gpu" / "data" / "price_sources.csv"

CLOUD_OF_SOURCE = {"skypilot-aws": "aws", "skypilot-gcp": "gcp", "skypilot-azure": "azure"}
#: Two figures closer than this are the same figure (the table keeps at most 5 decimals, older rows 4).
SAME = 5e-5 + 1e-9
#: The catalogs' own rounding: a SkyPilot spot price is printed to 4 decimals where the on-demand has 5.
ROUNDING = 1e-4 + 1e-9

#: The gap reasons this script decides (tests/test_price_coverage.py REASONS); a gap with any other reason (a
#: partition, a region no source prices, a series without SKUs) was put there by hand and is kept.
REGION_NOT_LISTED = {"aws": "aws-region-not-in-catalog", "gcp": "gcp-region-not-in-catalog"}
SIZE_NOT_LISTED = {"aws": "aws-not-in-region", "gcp": "gcp-not-in-region", "azure": "azure-not-in-region"}
NOT_IN_CATALOG = {"aws": "aws-not-in-catalog", "gcp": "gcp-not-in-catalog", "azure": "azure-not-in-catalog"}
NO_ON_DEMAND = {"aws": "aws-no-price-in-catalog", "gcp": "gcp-no-price-in-catalog", "azure": "azure-not-in-region"}
AS_ON_DEMAND = "azure-spot-as-on-demand"
#: "gcp-no-a4-sku" is the older, narrower name of gcp-not-in-catalog: decided again like the rest.
SCRIPT_REASONS = {"not-yet-read", AS_ON_DEMAND, "gcp-no-a4-sku"}
for _table in (REGION_NOT_LISTED, SIZE_NOT_LISTED, NOT_IN_CATALOG, NO_ON_DEMAND):
    SCRIPT_REASONS |= set(_table.values())
SCRIPT_REASONS |= {f"{c}-{r}" for c in ("aws", "gcp", "azure") for r in ("no-spot-in-catalog", "spot-above-on-demand")}


def gcp_accelerator(name: str) -> str:
    """GKE's accelerator type for a SkyPilot accelerator name (sky/clouds/gcp.py `GCP._get_gpu_acc_type`)."""
    special = {
        "A100-80GB": "nvidia-a100-80gb",
        "L4": "nvidia-l4",
        "B200": "nvidia-b200",
        "H100": "nvidia-h100-80gb",
        "H100-MEGA": "nvidia-h100-mega-80gb",
        "H200": "nvidia-h200-141gb",
    }
    return special.get(name, "nvidia-tesla-" + name.lower())


@dataclass(frozen=True)
class Computed:
    on_demand: float | None
    spot: float | None
    kind: str
    #: why spot is unknown where it is: the catalog lists none, or (Azure) it repeats the on-demand price
    no_spot: str = "no-spot-in-catalog"


def _number(text: str | None) -> float | None:
    text = (text or "").strip()
    return float(text) if text else None


def _median(values: Iterable[float]) -> float | None:
    values = list(values)
    return round(statistics.median(values), 6) if values else None


def _agreed(values: list[float], what: str) -> float | None:
    if not values:
        return None
    if max(values) - min(values) > SAME:
        print(f"note: {what}: zones differ ({min(values)}..{max(values)}); the median is used", file=sys.stderr)
    return _median(values)


def aws_rows(records: Iterable[dict[str, str]]) -> tuple[dict[tuple[str, str], Computed], set[str]]:
    by_key: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    regions: set[str] = set()
    for r in records:
        regions.add(r["Region"])
        by_key[(r["Region"], r["InstanceType"])].append(r)
    out = {}
    for (region, item), rows in by_key.items():
        on_demand = _agreed([p for r in rows if (p := _number(r["Price"])) is not None], f"aws {region} {item}")
        spot = _median(p for r in rows if (p := _number(r["SpotPrice"])) is not None)
        out[(region, item)] = Computed(on_demand, spot, "vm")
    return out, regions


def gcp_rows(records: Iterable[dict[str, str]]) -> tuple[dict[tuple[str, str], Computed], set[str]]:
    machines: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    gpus: dict[tuple[str, str], dict[int, list[dict[str, str]]]] = defaultdict(lambda: defaultdict(list))
    regions: set[str] = set()
    for r in records:
        regions.add(r["Region"])
        if r["InstanceType"]:
            machines[(r["Region"], r["InstanceType"])].append(r)
        elif r["AcceleratorName"] and not r["AcceleratorName"].startswith("tpu-"):
            count = int(float(r["AcceleratorCount"]))
            gpus[(r["Region"], gcp_accelerator(r["AcceleratorName"]))][count].append(r)
    out = {}
    for (region, item), rows in machines.items():
        what = f"gcp {region} {item}"
        on_demand = _agreed([p for r in rows if (p := _number(r["Price"])) is not None], what)
        spot = _agreed([p for r in rows if (p := _number(r["SpotPrice"])) is not None], what + " spot")
        out[(region, item)] = Computed(on_demand, spot, "vm")
    for (region, item), by_count in gpus.items():
        count = min(by_count)  # one GPU's price: every count is a multiple of it
        rows = by_count[count]
        what = f"gcp {region} {item} x{count}"
        on_demand = _agreed([p / count for r in rows if (p := _number(r["Price"])) is not None], what)
        spot = _agreed([p / count for r in rows if (p := _number(r["SpotPrice"])) is not None], what + " spot")
        out[(region, item)] = Computed(on_demand, spot, "gpu")
    return out, regions


def azure_rows(records: Iterable[dict[str, str]]) -> tuple[dict[tuple[str, str], Computed], set[str]]:
    out = {}
    regions: set[str] = set()
    for r in records:
        region = r["Region"].lower()
        regions.add(region)
        on_demand, spot = _number(r["Price"]), _number(r["SpotPrice"])
        no_spot = "no-spot-in-catalog"
        if spot is not None and on_demand is not None and abs(spot - on_demand) <= SAME:
            spot, no_spot = None, AS_ON_DEMAND  # SkyPilot repeats the on-demand price: no spot meter was found
        out[(region, r["InstanceType"])] = Computed(on_demand, spot, "vm", no_spot)
    return out, regions


READERS = {"aws": aws_rows, "gcp": gcp_rows, "azure": azure_rows}


def source_location(url: str) -> tuple[str, str]:
    """(commit, path) of a github.com/<owner>/<repo>/blob/<commit>/<path> URL."""
    m = re.fullmatch(r"https://github\.com/[^/]+/[^/]+/blob/([0-9a-f]{7,40})/(.+)", url)
    if not m:
        raise SystemExit(f"{SOURCES.name}: {url!r} is not a github blob URL at a commit")
    return m.group(1), m.group(2)


def read_sources(mirror: Path | None, files: dict[str, Path]) -> dict[str, str]:
    with SOURCES.open(encoding="utf-8") as f:
        urls = {r["key"]: r["url"] for r in csv.DictReader(f)}
    texts = {}
    for key in CLOUD_OF_SOURCE:
        if key in files:
            texts[key] = files[key].read_text(encoding="utf-8")
        elif mirror is not None:
            commit, path = source_location(urls[key])
            git = ["git", "-C", str(mirror), "show", f"{commit}:{path}"]
            texts[key] = subprocess.run(git, check=True, capture_output=True, text=True).stdout
    return texts


def accepted(cloud: str) -> Iterator[tuple[str, str]]:
    """(region, item) the coverage test checks for one cloud (tests/test_price_coverage.py `_accepted`)."""
    from elastic_gpu.gpu_catalog import GPU_INSTANCE_TYPES

    regions: tuple[str, ...] = importlib.import_module(f"elastic_gpu.{cloud}.config_rules").REGIONS
    seen: set[tuple[str, str]] = set()
    for region in regions:
        for (c, name), t in GPU_INSTANCE_TYPES.items():
            if c != cloud or (t.regions is not None and region not in t.regions):
                continue
            for item in (name, t.accelerator) if t.accelerator else (name,):
                if (region, item) not in seen:
                    seen.add((region, item))
                    yield region, item


def checked(c: Computed) -> Computed:
    """The table refuses a spot price above the on-demand one (elastic_gpu/prices.py). Above it by no more than
    the catalog's rounding (SpotPrice printed to 4 decimals, Price to 5: 20.0281 for 20.02809) it is the on-demand
    price; further above, the catalog's spot figure is not a spot discount and spot is left unknown."""
    if c.spot is None or c.on_demand is None or c.spot <= c.on_demand:
        return c
    if c.spot - c.on_demand <= ROUNDING:
        return Computed(c.on_demand, c.on_demand, c.kind, c.no_spot)
    return Computed(c.on_demand, None, c.kind, "spot-above-on-demand")


def _fmt(x: float | None) -> str:
    return "" if x is None else f"{x:.6f}".rstrip("0").rstrip(".")


def _same(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= SAME)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mirror", nargs="?", type=Path, help="git directory of skypilot-org/skypilot-catalog")
    ap.add_argument("--csv", action="append", default=[], metavar="KEY=FILE", help="read a source from a file")
    ap.add_argument("--date", default=date.today().isoformat(), help="date of the rows written (YYYY-MM-DD)")
    ap.add_argument("--write", action="store_true", help="rewrite prices.csv and price_gaps.csv")
    args = ap.parse_args(argv)
    files = {k: Path(v) for k, _, v in (s.partition("=") for s in args.csv)}
    unknown = set(files) - set(CLOUD_OF_SOURCE)
    if unknown:
        ap.error(f"--csv: unknown source {sorted(unknown)}; known: {sorted(CLOUD_OF_SOURCE)}")
    texts = read_sources(args.mirror, files)
    if not texts:
        ap.error("give MIRROR_GIT_DIR or --csv KEY=FILE")

    with PRICES.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or [])
        table = {(r["cloud"], r["region"], r["item"]): r for r in reader}
    with GAPS.open(encoding="utf-8", newline="") as f:
        gaps = {(r["cloud"], r["region"], r["item"]): r["reason"] for r in csv.DictReader(f)}

    added, changed, kept = [], [], 0
    for key, text in texts.items():
        cloud = CLOUD_OF_SOURCE[key]
        computed, regions = READERS[cloud](csv.DictReader(io.StringIO(text)))
        scope = list(accepted(cloud))
        listed = {i for _, i in computed}
        for region, item in scope:
            key3 = (cloud, region, item)
            c = computed.get((region, item))
            c = checked(c) if c is not None else None
            old = table.get(key3)
            before = gaps.get(key3)
            if c is not None and c.on_demand is not None:
                if old is None:
                    table[key3] = row = dict.fromkeys(header, "")
                    row.update(cloud=cloud, region=region, item=item, kind=c.kind, source=key, date=args.date)
                    row.update(on_demand=_fmt(c.on_demand), spot=_fmt(c.spot))
                    added.append(key3)
                elif old["source"] == key:
                    if _same(_number(old["on_demand"]), c.on_demand) and _same(_number(old["spot"]), c.spot):
                        kept += 1
                    else:
                        changed.append((*key3, old["on_demand"], old["spot"], c.on_demand, c.spot))
                        old.update(on_demand=_fmt(c.on_demand), spot=_fmt(c.spot), date=args.date)
            priced = table.get(key3)
            if priced is not None and priced["spot"] != "":
                gaps.pop(key3, None)  # priced both ways: no longer an exception, whatever it was
                continue
            if (before is not None and before not in SCRIPT_REASONS) or (
                gaps.get((cloud, region, "*"), "not-yet-read") not in SCRIPT_REASONS
            ):
                continue  # an exception put there by hand (a partition, a region no source prices)
            if priced is not None and (priced["source"] != key or c is None):  # a row this run did not read: as it was
                reason = before or "not-yet-read"
            elif priced is not None and c is not None:  # priced on demand, no spot
                reason = c.no_spot if c.no_spot == AS_ON_DEMAND else f"{cloud}-{c.no_spot}"
            elif region not in regions:
                reason = REGION_NOT_LISTED.get(cloud, SIZE_NOT_LISTED[cloud])
            elif item not in listed:
                reason = NOT_IN_CATALOG[cloud]
            elif c is None:
                reason = SIZE_NOT_LISTED[cloud]
            else:
                reason = NO_ON_DEMAND[cloud]
            gaps[key3] = reason
        # a region none of whose sizes the catalog lists there is one `*` gap, not one per size
        for region in dict.fromkeys(r for r, _ in scope):
            keys = [(cloud, region, i) for r, i in scope if r == region]
            reasons = {gaps.get(k) for k in keys}
            star = (cloud, region, "*")
            not_listed = REGION_NOT_LISTED.get(cloud, SIZE_NOT_LISTED[cloud])
            if reasons == {not_listed} or (reasons and reasons <= {SIZE_NOT_LISTED[cloud], NOT_IN_CATALOG[cloud]}):
                for k in keys:
                    del gaps[k]
                gaps[star] = reasons.pop() if len(reasons) == 1 else SIZE_NOT_LISTED[cloud]
            elif star in gaps and gaps[star] in SCRIPT_REASONS:
                del gaps[star]

    print(f"rows added: {len(added)}; kept (same figure): {kept}; changed: {len(changed)}")
    for cloud in CLOUD_OF_SOURCE.values():
        n = sum(1 for a in added if a[0] == cloud)
        if n:
            print(f"  added {cloud}: {n}")
    for ch in changed:
        print("  changed {}/{}/{}: on-demand {} -> {}, spot {} -> {}".format(*ch[:3], ch[3], ch[5], ch[4], ch[6]))
    counts: dict[str, int] = defaultdict(int)
    for reason in gaps.values():
        counts[reason] += 1
    print("gaps: " + ", ".join(f"{r} {n}" for r, n in sorted(counts.items())))
    if args.write:
        write_tables(header, {k: [row[h] for h in header] for k, row in table.items()}, gaps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
