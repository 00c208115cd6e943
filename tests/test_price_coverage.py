"""Price coverage: every (region, size) the catalog accepts has an on-demand and a spot price in the table or is
in one explicit exceptions list, each with its reason; every pool type a shipped example or docs/library.md
program declares has a price row in its own region, or (where no source we can cite prices it) the preview,
`cost` and the gate say how to give one, naming the setting. The shipped stacks' coverage is tests/test_cost.py's."""

from __future__ import annotations

import csv
import importlib
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from elastic_gpu.clouds import CLOUDS
from elastic_gpu.gpu_catalog import GPU_INSTANCE_TYPES
from elastic_gpu.prices import price_row, price_rows, price_sources
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
PRICES_PATH = Path(__file__).parent.parent / "components" / "elastic_gpu" / "data" / "prices.csv"
#: Why a price is not in the table. The skypilot-* rows and the gaps they leave are written by
#: scripts/prices_from_skypilot.py from the catalogs at the commits elastic_gpu/data/price_sources.csv cites; the
#: Azure GPU rows and gaps outside SkyPilot's US regions by scripts/prices_from_azure_tables.py (karpenter-azure,
#: coroot-azure); the other rows are read by hand. Every gap is a region or size no source we cite prices both
#: ways; live prices at preview (`ELASTIC_GPU_LIVE_PRICES=1`) or `elastic-gpu:prices` give it, and `cost` says so
#: where it is missing.
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
    "azure-no-spot-source": "outside SkyPilot's US regions the one dated source we cite with Azure spot prices, "
    "coroot-azure's 2024-08-09 snapshot of the Retail Prices API, has no spot price for this size in this region "
    "(`*`: for none of its GPU sizes; it has no ND H200 v5 at all); karpenter-azure gives the on-demand price. "
    "SkyPilot's published Azure catalogs list US regions only (sky/catalog/data_fetchers/fetch_azure.py US_REGIONS "
    "is its default) and Azure Karpenter keeps on-demand prices only",
    "azure-spot-as-on-demand": "the source repeats the on-demand price as the spot price for the H100 sizes "
    "(NC40ads/NC80adis_H100_v5, ND96isr_H100_v5: SkyPilot's Azure catalog in the US, coroot-azure's snapshot "
    "elsewhere), so spot is left unknown (price_sources.csv)",
    "azure-not-in-region-table": "Azure Karpenter's generated on-demand table (karpenter-azure), which prices the "
    "sizes Azure sells in each region, has no price for this size in this region (`*`: for none of the catalog's "
    "GPU sizes there), and no other source we cite prices it",
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


#: westeurope's GPU sizes the sources price both ways, and those they do not, with the reason.
WESTEUROPE_PRICED = (
    "Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3", "Standard_NC16as_T4_v3", "Standard_NC64as_T4_v3",
    "Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4", "Standard_NC96ads_A100_v4", "Standard_NV36ads_A10_v5",
)  # fmt: skip
WESTEUROPE_GAPS = {
    "Standard_NC40ads_H100_v5": "azure-spot-as-on-demand",
    "Standard_NC80adis_H100_v5": "azure-spot-as-on-demand",
    "Standard_ND96isr_H100_v5": "azure-spot-as-on-demand",
    "Standard_ND96isr_H200_v5": "azure-not-in-region-table",
}


def test_the_regions_the_issue_names_are_priced() -> None:
    """gcp-dev's sizes in europe-west4 and westeurope's GPU sizes on both capacity types, each figure from a row
    naming its sources; the H100 and H200 sizes in westeurope and g6.xlarge in eu-west-1 stay exceptions with their
    reason, the live source answering at preview."""
    for item in ("n1-standard-4", "nvidia-tesla-t4", "e2-standard-2", "g2-standard-8", "nvidia-l4"):
        row = price_row("gcp", "europe-west4", item)
        assert row is not None and row.spot is not None and row.source in price_sources(), item
    for item in WESTEUROPE_PRICED:
        row = price_row("azure", "westeurope", item)
        assert row is not None and row.spot is not None and 0 < row.spot < row.on_demand, item
        assert row.sources == ("karpenter-azure", "coroot-azure"), item
    gaps = _gaps()
    assert (("azure", "westeurope", ANY)) not in gaps
    assert {i: gaps[("azure", "westeurope", i)] for i in WESTEUROPE_GAPS} == WESTEUROPE_GAPS
    assert set(WESTEUROPE_PRICED) | set(WESTEUROPE_GAPS) == {
        i for c, r, i in _accepted() if (c, r) == ("azure", "westeurope")
    }
    assert gaps[("aws", "eu-west-1", "g6.xlarge")] == "aws-not-in-region"


# --- the Azure rows outside SkyPilot's US regions: scripts/prices_from_azure_tables.py ------------------------


def _azure_tables() -> ModuleType:
    """The script, imported from scripts/ (not a package) as the command line runs it."""
    path = Path(__file__).parent.parent / "scripts" / "prices_from_azure_tables.py"
    spec = importlib.util.spec_from_file_location("prices_from_azure_tables", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_the_azure_rows_outside_the_us_rebuild_from_the_copied_source_lines() -> None:
    """Every karpenter-azure row of a GPU size outside SkyPilot's US regions, and every gap there, is what the
    script computes from the source lines copied to tests/data/prices/: a hand edit of the table, or a copy
    refreshed without `--write`, fails here."""
    script = _azure_tables()
    rows, gaps = script.build(*script.read_copies())
    regions = {r for r, _ in script.scope()}
    sizes = {i for _, i in script.scope()}
    table_lines = PRICES_PATH.read_text(encoding="utf-8").splitlines()
    mine = [
        line
        for line in table_lines[1:]
        if (f := line.split(","))[0] == "azure" and f[1] in regions and f[2] in sizes and f[7].startswith("karpenter")
    ]
    assert mine == [",".join(rows[k]) for k in sorted(rows)]
    assert {(r, i): why for (c, r, i), why in _gaps().items() if c == "azure" and r in regions} == gaps
    # westeurope's T4 row, figure by figure: the copied karpenter line and coroot entry
    karpenter = (GAPS_PATH.parent / "prices" / "karpenter-azure.zz_generated.pricing.go.lines").read_text()
    assert '\t\t"Standard_NC4as_T4_v3":' in karpenter and "// generated at 2026-06-18T03:43:41Z" in karpenter
    assert rows[("westeurope", "Standard_NC4as_T4_v3")] == [
        "azure", "westeurope", "Standard_NC4as_T4_v3", "vm", "0.658", "0.079026", "", "karpenter-azure+coroot-azure",
        "2024-08-09",
    ]  # fmt: skip


def test_the_spot_source_gives_skypilots_linux_spot_price_wherever_both_give_one() -> None:
    """coroot-azure does not tell Linux from Windows (price_sources.csv): its spot figures are used because they
    equal SkyPilot's Linux ones in every US row both give, and its on-demand figures are not, being Windows ones
    for some sizes."""
    script = _azure_tables()
    copy = json.loads((GAPS_PATH.parent / "prices" / "coroot-azure.cloud-pricing.json").read_text())
    spot = script.parse_coroot(copy)
    linux = [r for r in price_rows() if r.source == "skypilot-azure" and r.spot is not None]
    gpu = [r for r in linux if ("azure", r.item) in GPU_INSTANCE_TYPES]
    assert gpu and {(r.region, r.item): spot.get(r.region, {}).get(r.item) for r in gpu} == {
        (r.region, r.item): r.spot for r in gpu
    }
    westeurope_t4 = copy["azure"]["compute"]["westeurope"]["Standard_NC4as_T4_v3"]["on_demand"]
    row = price_row("azure", "westeurope", "Standard_NC4as_T4_v3")
    assert row is not None and westeurope_t4 != row.on_demand  # the Windows price, not used


def test_a_spot_figure_of_the_other_os_is_refused() -> None:
    """One spot/on-demand ratio per GPU family and region is what says coroot-azure's figures are Linux ones: a
    refreshed copy that breaks it stops the script instead of writing rows."""
    script = _azure_tables()
    karpenter, spot = script.read_copies()
    spot["westeurope"]["Standard_NC64as_T4_v3"] = 0.653344 + 64 * 0.046 * 0.1201  # a Windows licence's share
    with pytest.raises(SystemExit, match=r"t4 sizes in westeurope have different spot/on-demand ratios"):
        script.build(karpenter, spot)
