"""Rebuild the Azure price rows outside SkyPilot's US regions, and the gaps they leave, from two dated tables.

    PYTHONPATH=components:. python scripts/prices_from_azure_tables.py [--write]
    PYTHONPATH=components:. python scripts/prices_from_azure_tables.py --copy KARPENTER_GO COROOT_JSON_GZ

The rows are read from the copies in tests/data/prices/ (the lines of each source this scope needs, copied
verbatim, so tests/test_price_coverage.py rebuilds the rows byte for byte offline). `--copy` refreshes those copies
from the full source files, which price_sources.csv cites at their commits:
- karpenter-azure, pkg/providers/pricing/zz_generated.pricing.go of Azure/karpenter-provider-azure: Linux
  on-demand USD/hour per region and VM size, from the Azure Retail Prices API, with the date it was generated;
  `git -C <mirror> show <commit>:pkg/providers/pricing/zz_generated.pricing.go > KARPENTER_GO`;
- coroot-azure, data/cloud-pricing.json.gz on the gh-pages branch of coroot/cloud-pricing: a daily dump of
  Infracost's price data (Azure: the Retail Prices API's items) with one `on_demand` and one `spot` per region and
  armSkuName; `git -C <mirror> show <commit>:data/cloud-pricing.json.gz > COROOT_JSON_GZ`. Only its `spot` is
  used: the dump does not keep Linux and Windows apart, and its `on_demand` mixes them (price_sources.csv).

Scope: each region azure/config_rules.py accepts outside SkyPilot's US regions (those are skypilot-azure's, from
scripts/prices_from_skypilot.py) x each GPU size of elastic_gpu/gpu_catalog.py sold there. A size gets a row when
karpenter-azure prices it there, with coroot-azure's spot where that is below the on-demand price (source
`karpenter-azure+coroot-azure`, dated by the older source), else on-demand only (`karpenter-azure`). Every size in
scope without both figures is a gap of tests/data/price_gaps.csv with its reason; a region none of whose sizes is
priced both ways is one `*` gap. Rows and gaps of these regions from other sources are left alone; only rows of
these regions' GPU sizes are written (the general-pool sizes' hand-read rows stay as they are).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from price_tables import GAPS, PRICES, write_tables  # noqa: E402
from prices_from_skypilot import _fmt, accepted  # noqa: E402

COPIES = ROOT / "tests" / "data" / "prices"
KARPENTER_COPY = COPIES / "karpenter-azure.zz_generated.pricing.go.lines"
COROOT_COPY = COPIES / "coroot-azure.cloud-pricing.json"
#: The date of the coroot-azure dump: its gh-pages commit (af03ead, "Deploying to gh-pages", written by the
#: repository's daily update-cost workflow at 08:00 UTC); the JSON itself carries no date.
COROOT_DATE = "2024-08-09"
KARPENTER = "karpenter-azure"
BOTH = "karpenter-azure+coroot-azure"

#: SkyPilot's Azure catalog regions (sky/catalog/data_fetchers/fetch_azure.py US_REGIONS, its default): their rows
#: and gaps are scripts/prices_from_skypilot.py's. The coroot-azure copy keeps them too, to check its spot figures
#: against skypilot-azure's (tests/test_price_coverage.py).
US_REGIONS = (
    "centralus", "eastus", "eastus2", "northcentralus", "southcentralus", "westcentralus", "westus", "westus2",
    "westus3",
)  # fmt: skip

#: The gap reasons this script decides (tests/test_price_coverage.py REASONS has their text).
NOT_IN_TABLE = "azure-not-in-region-table"
NO_SPOT = "azure-no-spot-source"
AS_ON_DEMAND = "azure-spot-as-on-demand"

_REGION_LINE = re.compile(r'\tinitialOnDemandPrices\["([a-z0-9]+)"\] = map\[string\]float64\{')
_PRICE_LINE = re.compile(r'\t\t"([A-Za-z0-9_]+)": +([0-9.]+),')
_GENERATED_LINE = re.compile(r"// generated at (\d{4}-\d{2}-\d{2})T")


@dataclass(frozen=True)
class Karpenter:
    date: str  #: the day the table says it was generated
    on_demand: dict[str, dict[str, float]]  #: region -> size -> USD/hour


def parse_karpenter(lines: Iterable[str]) -> Karpenter:
    """The generated Go file (or the copy of its lines): `// generated at <RFC 3339>`, then per region
    `initialOnDemandPrices["<region>"] = map[string]float64{` and one `"<size>": <price>,` line per size."""
    date, region = "", ""
    prices: dict[str, dict[str, float]] = {}
    for line in lines:
        line = line.rstrip("\n")
        if m := _GENERATED_LINE.match(line):
            date = m.group(1)
        elif m := _REGION_LINE.fullmatch(line):
            region = m.group(1)
            prices.setdefault(region, {})
        elif (m := _PRICE_LINE.fullmatch(line)) and region:
            prices[region][m.group(1)] = float(m.group(2))
    if not date:
        raise SystemExit("karpenter-azure: no '// generated at' line")
    return Karpenter(date, prices)


def parse_coroot(model: dict[str, Any]) -> dict[str, dict[str, float]]:
    """region -> size -> spot USD/hour from the dump's `azure.compute` (a zero or absent spot is no price)."""
    spot: dict[str, dict[str, float]] = {}
    for region, sizes in model["azure"]["compute"].items():
        for size, figures in sizes.items():
            if figures.get("spot"):
                spot.setdefault(region, {})[size] = float(figures["spot"])
    return spot


def scope() -> list[tuple[str, str]]:
    return [(r, i) for r, i in accepted("azure") if r not in US_REGIONS]


def build(
    karpenter: Karpenter, spot: dict[str, dict[str, float]]
) -> tuple[dict[tuple[str, str], list[str]], dict[tuple[str, str], str]]:
    """The rows (CSV fields) and gaps ((region, item) -> reason) of the scope."""
    rows: dict[tuple[str, str], list[str]] = {}
    reasons: dict[tuple[str, str], str] = {}
    for region, item in scope():
        on_demand = karpenter.on_demand.get(region, {}).get(item)
        s = spot.get(region, {}).get(item)
        if on_demand is None:
            reasons[(region, item)] = NOT_IN_TABLE
            continue
        if s is not None and s < on_demand:
            date = min(karpenter.date, COROOT_DATE)
            rows[(region, item)] = ["azure", region, item, "vm", _fmt(on_demand), _fmt(s), "", BOTH, date]
            continue
        rows[(region, item)] = ["azure", region, item, "vm", _fmt(on_demand), "", "", KARPENTER, karpenter.date]
        # the dump repeats the on-demand price as the spot price where it found no spot meter (the H100 sizes)
        reasons[(region, item)] = NO_SPOT if s is None else AS_ON_DEMAND
    check_one_ratio_per_family(rows)
    gaps: dict[tuple[str, str], str] = {}
    for region in dict.fromkeys(r for r, _ in scope()):
        items = [i for r, i in scope() if r == region]
        missing = {i: reasons[(region, i)] for i in items if (region, i) in reasons}
        if len(missing) == len(items) and len(set(missing.values())) == 1:
            gaps[(region, "*")] = missing[items[0]]  # no size priced both ways, all for one reason
        else:
            gaps.update({(region, i): why for i, why in missing.items()})
    return rows, gaps


#: Two spot/on-demand ratios closer than this are one ratio (spot figures have 6 decimals).
RATIO_TOLERANCE = 5e-4


def check_one_ratio_per_family(rows: dict[tuple[str, str], list[str]]) -> None:
    """coroot-azure does not tell Linux from Windows. Azure prices a GPU family's sizes in a region at one
    spot/on-demand ratio per OS, and a Windows licence priced per vCPU would make the ratios of sizes with
    different vCPU counts differ, so one ratio per family and region against karpenter-azure's Linux on-demand
    figure says the spot figures are Linux ones. Refuses (rather than guesses) when a refreshed copy breaks it."""
    from elastic_gpu.gpu_catalog import GPU_INSTANCE_TYPES

    ratios: dict[tuple[str, str], dict[str, float]] = {}
    for (region, item), row in rows.items():
        if row[5]:
            family = GPU_INSTANCE_TYPES[("azure", item)].gpu
            ratios.setdefault((region, family), {})[item] = float(row[5]) / float(row[4])
    for (region, family), by_size in sorted(ratios.items()):
        if max(by_size.values()) - min(by_size.values()) > RATIO_TOLERANCE:
            found = ", ".join(f"{size} {ratio:.4f}" for size, ratio in sorted(by_size.items()))
            raise SystemExit(
                f"coroot-azure: {family} sizes in {region} have different spot/on-demand ratios ({found}); "
                "some spot figure may be a Windows one: compare them with the Retail Prices API before using them"
            )


def read_copies() -> tuple[Karpenter, dict[str, dict[str, float]]]:
    karpenter = parse_karpenter(KARPENTER_COPY.read_text(encoding="utf-8").splitlines())
    coroot = json.loads(COROOT_COPY.read_text(encoding="utf-8"))
    return karpenter, parse_coroot(coroot)


def write_copies(karpenter_go: Path, coroot_gz: Path) -> None:
    """Keep of each source only the lines (karpenter) or entries (coroot) the scope and the US check need."""
    sizes = {i for _, i in accepted("azure")}
    regions = {r for r, _ in scope()}
    kept, region = [], ""
    for line in karpenter_go.read_text(encoding="utf-8").splitlines():
        if _GENERATED_LINE.match(line):
            kept.append(line)
        elif m := _REGION_LINE.fullmatch(line):
            region = m.group(1)
            if region in regions:
                kept.append(line)
        elif (m := _PRICE_LINE.fullmatch(line)) and region in regions and m.group(1) in sizes:
            kept.append(line)
    KARPENTER_COPY.parent.mkdir(parents=True, exist_ok=True)
    KARPENTER_COPY.write_text("\n".join(kept) + "\n", encoding="utf-8")
    with gzip.open(coroot_gz, "rt", encoding="utf-8") as f:
        model = json.load(f)
    compute = model["azure"]["compute"]
    wanted = regions | set(US_REGIONS)
    extract = {r: {s: compute[r][s] for s in sorted(compute[r]) if s in sizes} for r in sorted(compute) if r in wanted}
    text = json.dumps({"azure": {"compute": extract}}, indent=1, sort_keys=True)
    COROOT_COPY.write_text(text + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copy", nargs=2, type=Path, metavar=("KARPENTER_GO", "COROOT_JSON_GZ"))
    ap.add_argument("--write", action="store_true", help="rewrite prices.csv and price_gaps.csv")
    args = ap.parse_args(argv)
    if args.copy:
        write_copies(*args.copy)
        print(f"wrote {KARPENTER_COPY.relative_to(ROOT)} and {COROOT_COPY.relative_to(ROOT)}")
        return 0
    rows, gaps = build(*read_copies())
    regions = {r for r, _ in scope()}

    with PRICES.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        table = {(r[0], r[1], r[2]): r for r in reader}
    with GAPS.open(encoding="utf-8", newline="") as f:
        gap_rows = {(r["cloud"], r["region"], r["item"]): r["reason"] for r in csv.DictReader(f)}

    changed = 0
    for (region, item), row in rows.items():
        old = table.get(("azure", region, item))
        if old is not None and not old[7].startswith(KARPENTER):
            continue  # a row from another source stays
        changed += old != row
        table[("azure", region, item)] = row
    for key in [k for k in gap_rows if k[0] == "azure" and k[1] in regions]:
        del gap_rows[key]
    gap_rows.update({("azure", r, i): why for (r, i), why in gaps.items()})
    both = sum(1 for r in rows.values() if r[5])
    print(f"rows: {len(rows)} ({both} with spot); changed or added: {changed}; gaps: {len(gaps)}")
    if args.write:
        write_tables(header, table, gap_rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
