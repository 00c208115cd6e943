"""Price coverage: every (region, size) the catalog accepts has an on-demand and a spot price in the table or is
in one explicit exceptions list, each with its reason; every pool type a shipped example or docs/library.md
program declares has a price row in its own region, or (where no source we can cite prices it) the preview,
`cost` and the gate say how to give one, naming the setting. The shipped stacks' coverage is tests/test_cost.py's."""

from __future__ import annotations

import csv
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_gpu.clouds import CLOUDS
from elastic_gpu.gpu_catalog import GPU_INSTANCE_TYPES
from elastic_gpu.prices import price_row, price_sources
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.report import to_json
from elastic_gpu.tools.offline.runner import Preview, run_preview
from tests.test_examples import LIBRARY_PROGRAMS, NAMES, README_PROGRAMS, _readme_block, example

#: (cloud, region, item) a program declares that no source we can cite prices: SkyPilot's AWS catalog lists no
#: g6 type in eu-west-1 and Karpenter's AWS table covers us-east-1 only (elastic_gpu/data/price_sources.csv).
UNPRICED = {("aws", "eu-west-1", "g6.xlarge")}


def _missing(preview: Preview) -> set[tuple[str, str, str]]:
    cloud = preview.config.get("elastic-gpu:cloud")
    rows = to_json(preview)["cost"]["pools"]
    assert rows, "the program declares pools"
    found = set()
    for row in rows:
        for item in row["missing"]:
            found.add((cloud or _cloud_of(preview), row["region"], item))
    return found


def _cloud_of(preview: Preview) -> str:
    types = {r.type.split(":")[0] for r in preview.resources}
    [cloud] = {"aws": "aws", "azure-native": "azure", "gcp": "gcp"}.keys() & types
    return {"aws": "aws", "azure-native": "azure", "gcp": "gcp"}[cloud]


def _says_how_to_give(preview: Preview, unpriced: set[tuple[str, str, str]]) -> None:
    cost = to_json(preview)["cost"]
    mandatory = {v.message for v in run_policies(preview).violations if v.policy == "gpu-monthly-cost-ceiling"}
    for _, region, item in unpriced:
        assert any(f"no price for {item} ({region})" in h and "`elastic-gpu:prices.<item>.onDemand`" in h
                   for h in cost["hints"]), cost["hints"]  # fmt: skip
        assert any(f"`elastic-gpu:prices: {{{item}: {{onDemand: <USD/h>" in m for m in mandatory), mandatory


@pytest.mark.parametrize("name", NAMES)
def test_every_example_pool_is_priced_in_its_region(name: str) -> None:
    preview = example(name)
    missing = _missing(preview)
    assert missing <= UNPRICED, f"add rows to elastic_gpu/data/prices.csv: {sorted(missing - UNPRICED)}"
    _says_how_to_give(preview, missing)


#: The provider config a README program runs with: the EKS one's node groups bill in the AWS provider's region
#: (its resources name none), which its stack sets to the cluster's region.
README_STACK_CONFIG = ["config: {aws:region: eu-west-1}\n", "config: {}\n", "config: {}\n"]


@pytest.mark.parametrize("index", range(len(README_PROGRAMS)))
def test_every_readme_program_pool_is_priced_or_says_how(tmp_path: Path, index: int) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text("name: consumer\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks" / "Pulumi.test.yaml").write_text(README_STACK_CONFIG[index])
    (tmp_path / "__main__.py").write_text(_readme_block(LIBRARY_PROGRAMS, index))
    preview = run_preview("test", tmp_path)
    missing = _missing(preview)
    assert missing <= UNPRICED, f"add rows to elastic_gpu/data/prices.csv: {sorted(missing - UNPRICED)}"
    _says_how_to_give(preview, missing)
    if index == 0:  # the EKS program's GPU type in eu-west-1: the known gap, said where the user looks
        assert missing == UNPRICED


# --- every (region, size) the catalog accepts -----------------------------------------------------------------

#: The exceptions: (cloud, region, item) the table prices without both figures, one row each in
#: tests/data/price_gaps.csv (`item` "*": every catalog size of that region), with the key of its reason here.
GAPS_PATH = Path(__file__).parent / "data" / "price_gaps.csv"
#: Why a price is not in the table. The skypilot-* rows and the gaps they leave are written by
#: scripts/prices_from_skypilot.py from the catalogs at the commits elastic_gpu/data/price_sources.csv cites; the
#: other rows are read by hand. Every gap is a region or size no source we cite prices both ways; live prices at
#: preview (`ELASTIC_GPU_LIVE_PRICES=1`) or `elastic-gpu:prices` give it, and `cost` says so where it is missing.
REASONS = {
    "aws-other-partition": "GovCloud and China are the aws-us-gov and aws-cn partitions, with price lists of their "
    "own; SkyPilot's AWS catalog (skypilot-aws) covers the commercial partition only",
    "aws-region-not-in-catalog": "SkyPilot's AWS catalog at the cited commit has no row for this region (its m5 "
    "and GPU types, listed in every region it covers, skip it), and no other source we cite prices it",
    "aws-not-in-region": "SkyPilot's AWS catalog at the cited commit lists this type in other regions but not in "
    "this one (e.g. no g6 or g6e type in eu-west-1); Karpenter's AWS table covers us-east-1 only",
    "aws-not-in-catalog": "SkyPilot's AWS catalog at the cited commit has no row for this type in any region",
    "aws-no-price-in-catalog": "SkyPilot's AWS catalog at the cited commit lists this type in this region with no "
    "on-demand price",
    "aws-no-spot-in-catalog": "SkyPilot's AWS catalog at the cited commit gives the on-demand price but no zone's "
    "spot price for this type in this region, so spot is unknown",
    "azure-no-spot-source": "no source we cite publishes Azure spot prices outside the US: SkyPilot's published "
    "Azure catalogs list US regions only (sky/catalog/data_fetchers/fetch_azure.py US_REGIONS is its default) and "
    "Azure Karpenter keeps on-demand prices only (pkg/providers/pricing: spot defaults to on-demand until a live "
    "update)",
    "azure-spot-as-on-demand": "SkyPilot's Azure catalog repeats the on-demand price as the spot price for the H100 "
    "sizes (NC40ads/NC80adis_H100_v5, ND96isr_H100_v5), so spot is left unknown (price_sources.csv, skypilot-azure)",
    "azure-not-in-region": "SkyPilot's Azure catalog at the cited commit lists this size in other US regions but "
    "not in this one (`*`: none of the catalog's GPU sizes)",
    "azure-not-in-catalog": "SkyPilot's Azure catalog at the cited commit has no row for this size in any region",
    "gcp-region-not-in-catalog": "SkyPilot's GCP catalog at the cited commit has no row for this region (its n2d "
    "and t2d rows, listed in every other region, skip it)",
    "gcp-not-in-region": "SkyPilot's GCP catalog at the cited commit lists this machine type or GPU in other "
    "regions but not in this one (`*`: none of the catalog's GPU machine types or GPUs)",
    "gcp-not-in-catalog": "SkyPilot's GCP catalog at the cited commit has no row for this machine type in any "
    "region: no A4 machine, its generator noting Compute Engine's SKU list had no A4 instance "
    "(sky/catalog/data_fetchers/fetch_gcp.py SERIES_TO_DESCRIPTION)",
    "gcp-no-spot-in-catalog": "SkyPilot's GCP catalog at the cited commit gives the on-demand but no spot price for "
    "this GPU in this region, so spot is unknown",
    "gcp-spot-above-on-demand": "SkyPilot's GCP catalog at the cited commit gives this GPU a spot price above its "
    "on-demand price here (H100: on-demand 4.20076, the us-central1 figure, in asia-northeast1 and "
    "northamerica-northeast2), so spot is left unknown",
    "not-yet-read": "a row from a source other than the SkyPilot catalogs without a spot price, its own source "
    "not read again (scripts/prices_from_skypilot.py leaves it as it was)",
}
ANY = "*"


def _gaps() -> dict[tuple[str, str, str], str]:
    with GAPS_PATH.open(encoding="utf-8") as f:
        return {(r["cloud"], r["region"], r["item"]): r["reason"] for r in csv.DictReader(f)}


def _accepted() -> Iterator[tuple[str, str, str]]:
    """(cloud, region, item): every region a cloud's config rules accept (`REGIONS` in elastic_gpu/<cloud>/
    config_rules.py) x every catalog size sold there, and on GCP its accelerator type too (a GKE node is priced
    as machine + accelerators)."""
    for cloud in CLOUDS:
        regions: tuple[str, ...] = importlib.import_module(f"elastic_gpu.{cloud}.config_rules").REGIONS
        for region in regions:
            for (c, name), t in GPU_INSTANCE_TYPES.items():
                if c != cloud or (t.regions is not None and region not in t.regions):
                    continue
                yield cloud, region, name
                if t.accelerator:
                    yield cloud, region, t.accelerator


def _priced(cloud: str, region: str, item: str) -> bool:
    row = price_row(cloud, region, item)
    return row is not None and row.spot is not None


def test_every_region_and_size_the_catalog_accepts_is_priced_or_an_explained_exception() -> None:
    gaps = _gaps()
    accepted = list(dict.fromkeys(_accepted()))
    unexplained = [
        (c, r, i) for c, r, i in accepted if not _priced(c, r, i) and (c, r, i) not in gaps and (c, r, ANY) not in gaps
    ]
    assert not unexplained, f"price these in elastic_gpu/data/prices.csv or explain them in {GAPS_PATH.name}: " + (
        ", ".join("/".join(k) for k in unexplained[:20])
    )
    assert set(gaps.values()) <= set(REASONS), set(gaps.values()) - set(REASONS)


def test_the_exceptions_list_holds_only_what_is_still_missing() -> None:
    """A row added to the table retires its exception: a stale one fails here, so the list stays the truth."""
    gaps = _gaps()
    accepted = set(_accepted())
    by_region: dict[tuple[str, str], list[str]] = {}
    for c, r, i in accepted:
        by_region.setdefault((c, r), []).append(i)
    stale = []
    for (c, r, i), _ in gaps.items():
        if i == ANY:
            # a whole region is an exception only while none of its sizes is priced both ways
            if (c, r) not in by_region or any(_priced(c, r, x) for x in by_region[(c, r)]):
                stale.append((c, r, i))
        elif (c, r, i) not in accepted or _priced(c, r, i) or (c, r, ANY) in gaps:
            stale.append((c, r, i))
    assert not stale, f"remove from {GAPS_PATH.name}: " + ", ".join("/".join(k) for k in stale[:20])


def test_the_regions_the_issue_names_are_priced() -> None:
    """gcp-dev's sizes in europe-west4 on both capacity types; westeurope's spot and g6.xlarge in eu-west-1 stay
    exceptions with their reason, the live source answering at preview."""
    for item in ("n1-standard-4", "nvidia-tesla-t4", "e2-standard-2", "g2-standard-8", "nvidia-l4"):
        row = price_row("gcp", "europe-west4", item)
        assert row is not None and row.spot is not None and row.source in price_sources(), item
    assert _gaps()[("azure", "westeurope", ANY)] == "azure-no-spot-source"
    assert _gaps()[("aws", "eu-west-1", "g6.xlarge")] == "aws-not-in-region"
