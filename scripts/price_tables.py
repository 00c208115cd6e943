"""The two tables the price scripts rewrite, and how they are written: elastic_gpu/data/prices.csv and
tests/data/price_gaps.csv, each sorted by cloud (in the registry's order, elastic_gpu/clouds.py `CLOUDS`), then
region, then item. scripts/prices_from_skypilot.py and scripts/prices_from_azure_tables.py both write them here, so
a table one script wrote reads the same, line for line, after the other rewrites it.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

from elastic_gpu.clouds import CLOUDS

ROOT = Path(__file__).resolve().parent.parent
PRICES = ROOT / "components" / "elastic_gpu" / "data" / "prices.csv"
GAPS = ROOT / "tests" / "data" / "price_gaps.csv"

#: A table's key: (cloud, region, item).
Key = tuple[str, str, str]

_ORDER = {c: i for i, c in enumerate(CLOUDS)}


def _sort_key(key: Key) -> tuple[int, str, str]:
    """Cloud in the registry's order (a cloud it does not name after them all), then region, then item."""
    return (_ORDER.get(key[0], len(_ORDER)), key[1], key[2])


def write_tables(header: Sequence[str], rows: Mapping[Key, Sequence[str]], gaps: Mapping[Key, str]) -> None:
    """Rewrite prices.csv (`header`, then each row's fields) and price_gaps.csv (each gap's key and reason)."""
    with PRICES.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for k in sorted(rows, key=_sort_key):
            w.writerow(rows[k])
    with GAPS.open("w", encoding="utf-8", newline="") as f:
        gw = csv.writer(f, lineterminator="\n")
        gw.writerow(["cloud", "region", "item", "reason"])
        for k in sorted(gaps, key=_sort_key):
            gw.writerow([*k, gaps[k]])
