"""Live prices: each cloud's price source read at preview (when asked), cached on disk, the shipped table the
answer offline and for what a source cannot give; the preview's cost and the gate's figure read the same."""

from __future__ import annotations

import asyncio
import contextvars
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pulumi
import pytest

import elastic_gpu.azure.prices as azure_prices
from elastic_gpu.aws.prices import AwsPriceList
from elastic_gpu.azure.prices import AzureRetailPrices, query_url
from elastic_gpu.prices import (
    CACHE_DIR_ENV,
    LIVE_PRICES_ENV,
    PriceCache,
    PriceSourceUnavailable,
    clear_live_prices,
    live_book,
    price_row,
    read_live_prices,
)
from elastic_gpu.tools.offline.mocks import StackMocks
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.report import render_text, to_json
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import stack_values

NOW = datetime(2026, 11, 27, 3, 10, tzinfo=timezone.utc)
T4 = "Standard_NC4as_T4_v3"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    clear_live_prices()
    yield
    clear_live_prices()


def _retail_rows(on_demand: float, spot: float) -> list[dict[str, Any]]:
    """Rows as the Retail Prices API lists them for one size: Linux on-demand and spot, plus the Windows and
    Low Priority meters that must not count."""
    base = {"armSkuName": T4, "armRegionName": "westeurope", "type": "Consumption", "currencyCode": "USD"}
    return [
        {**base, "retailPrice": on_demand, "skuName": "NC4as T4 v3", "meterName": "NC4as T4 v3",
         "productName": "Virtual Machines NCasT4_v3 Series"},
        {**base, "retailPrice": spot, "skuName": "NC4as T4 v3 Spot", "meterName": "NC4as T4 v3 Spot",
         "productName": "Virtual Machines NCasT4_v3 Series"},
        {**base, "retailPrice": 9.99, "skuName": "NC4as T4 v3", "meterName": "NC4as T4 v3",
         "productName": "Virtual Machines NCasT4_v3 Series Windows"},
        {**base, "retailPrice": 0.01, "skuName": "NC4as T4 v3 Low Priority", "meterName": "NC4as T4 v3 Low Priority",
         "productName": "Virtual Machines NCasT4_v3 Series"},
    ]  # fmt: skip


class FakeRetailApi:
    """An injected fetcher: answers every request with the rows given (or fails), counting the requests."""

    def __init__(self, rows: list[dict[str, Any]] | None = None, error: str | None = None) -> None:
        self.rows, self.error, self.urls = rows or [], error, []

    def __call__(self, url: str) -> dict[str, Any]:
        self.urls.append(url)
        if self.error:
            raise PriceSourceUnavailable(self.error)
        return {"Items": self.rows, "NextPageLink": None}


def _azure_dev_with(monkeypatch: pytest.MonkeyPatch, api: FakeRetailApi) -> Any:
    monkeypatch.setenv(LIVE_PRICES_ENV, "1")
    monkeypatch.setattr(azure_prices, "urllib_fetcher", api)
    return run_preview("azure-dev", Path(__file__).parent.parent)


def _t4_spot(preview: Any) -> list[dict[str, Any]]:
    return [r for r in to_json(preview)["cost"]["pools"] if r["pool"] == "t4" and r["capacity"] == "spot"]


def test_the_retail_api_answer_keeps_linux_on_demand_and_spot_only() -> None:
    api = FakeRetailApi(_retail_rows(0.7, 0.2))
    [(size, quote)] = AzureRetailPrices(api).quotes("westeurope", [T4], NOW).items()
    assert (size, quote.on_demand, quote.spot) == (T4, 0.7, 0.2)
    assert (quote.source, quote.fetched) == ("azure-retail-prices", "2026-11-27T03:10Z")
    # the request names the region and size, pay-as-you-go, in USD (case-sensitive filter values)
    assert api.urls == [query_url("westeurope", [T4])]
    assert "armRegionName+eq+%27westeurope%27" in api.urls[0] and "priceType+eq+%27Consumption%27" in api.urls[0]


def test_a_described_price_changes_the_preview_cost_and_the_gate_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """azure-dev runs in westeurope, where the table has no spot price: the live one fills it, in the preview's
    cost table and in the gate's figure, and the report says where it came from and when."""
    preview = _azure_dev_with(monkeypatch, FakeRetailApi(_retail_rows(0.7, 0.2)))
    [t4] = _t4_spot(preview)
    assert (t4["on_demand_hourly"], t4["spot_hourly"]) == (0.7, 0.2)
    assert (
        t4["source"] == "azure-retail-prices" and t4["date"] == live_book().quotes[("azure", "westeurope", T4)].fetched
    )
    text = render_text(preview)
    assert "live from azure-retail-prices fetched " in text
    [over] = run_policies(preview, config={"gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": 1}}).of(
        "gpu-monthly-cost-ceiling"
    )
    assert "x Standard_NC4as_T4_v3 at $0.200/h" in over.message and "at $0.700/h" in over.message
    table = price_row("azure", "westeurope", T4)
    assert table is not None and table.on_demand != 0.7  # the figures are the source's, not the table's


def test_an_unreachable_source_falls_back_to_the_table_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    preview = _azure_dev_with(monkeypatch, FakeRetailApi(error="timed out"))
    [t4] = _t4_spot(preview)
    table = price_row("azure", "westeurope", T4)
    assert table is not None
    assert (t4["on_demand_hourly"], t4["spot_hourly"], t4["source"]) == (table.on_demand, None, "karpenter-azure")
    note = "live prices from azure-retail-prices unreachable (timed out): table rows used for westeurope"
    assert to_json(preview)["cost"]["price_notes"] == [note]
    assert f"  Prices: {note}." in render_text(preview)


def test_the_cache_answers_the_second_time_until_it_expires(tmp_path: Path) -> None:
    api = FakeRetailApi(_retail_rows(0.7, 0.2))
    source = AzureRetailPrices(api)
    read_live_prices("azure", "westeurope", [T4], source, now=NOW)
    clear_live_prices()  # a new process: only the file remains
    read_live_prices("azure", "westeurope", [T4], source, now=NOW + timedelta(hours=1))
    assert len(api.urls) == 1
    cached = json.loads((tmp_path / "cache" / "prices.json").read_text())
    assert cached[f"azure/westeurope/{T4}"] == {
        "on_demand": 0.7,
        "spot": 0.2,
        "source": "azure-retail-prices",
        "fetched": "2026-11-27T03:10Z",
    }
    clear_live_prices()
    read_live_prices("azure", "westeurope", [T4], source, now=NOW + PriceCache().ttl + timedelta(minutes=1))
    assert len(api.urls) == 2  # expired: fetched again


def test_without_the_setting_nothing_is_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeRetailApi(_retail_rows(0.7, 0.2))
    monkeypatch.delenv(LIVE_PRICES_ENV, raising=False)
    monkeypatch.setattr(azure_prices, "urllib_fetcher", api)
    preview = run_preview("azure-dev", Path(__file__).parent.parent)
    [t4] = _t4_spot(preview)
    assert api.urls == [] and t4["spot_hourly"] is None and t4["source"] == "karpenter-azure"


class DescribedAws(pulumi.runtime.Mocks):
    """A Pulumi engine whose AWS answers a described price: on-demand 0.9, spot 0.3/0.5/0.4 in three zones."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], str]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        self.calls.append((args.token, dict(args.args), args.provider))
        if args.token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            return {"names": ["eu-west-1a", "eu-west-1b", "eu-west-1c"], "id": "eu-west-1"}, []
        if args.token == "aws:pricing/getProduct:getProduct":
            dim = {"pricePerUnit": {"USD": "0.9000000000"}}
            product = {"terms": {"OnDemand": {"t": {"priceDimensions": {"d": dim}}}}}
            return {"result": json.dumps(product), "id": "p"}, []
        spot = {"eu-west-1a": "0.3", "eu-west-1b": "0.5", "eu-west-1c": "0.4"}[args.args["availabilityZone"]]
        return {"spotPrice": spot, "spotPriceTimestamp": "t", "id": "s", "region": "eu-west-1"}, []


def _under(mocks: pulumi.runtime.Mocks, region: str, item: str) -> Any:
    def run() -> Any:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)  # a program's loop (the offline runner leaves none behind)
        try:
            pulumi.runtime.set_mocks(mocks, project="p", stack="s", preview=True)
            return AwsPriceList().quotes(region, [item], NOW)
        finally:
            asyncio.set_event_loop(None)
            loop.close()

    return contextvars.Context().run(run)


def test_aws_prices_come_from_the_invokes_spot_as_the_zones_median() -> None:
    mocks = DescribedAws()
    quote = _under(mocks, "eu-west-1", "g6.xlarge")["g6.xlarge"]
    assert (quote.on_demand, quote.spot, quote.source) == (0.9, 0.4, "aws-price-list")
    [(_, product_args, provider)] = [c for c in mocks.calls if c[0] == "aws:pricing/getProduct:getProduct"]
    # the Pricing API through an explicit us-east-1 provider; the filter names the stack's region
    assert "elastic-gpu-price-list" in provider
    filters = {f["field"]: f["value"] for f in product_args["filters"]}
    assert filters["regionCode"] == "eu-west-1" and filters["instanceType"] == "g6.xlarge"
    assert filters["operatingSystem"] == "Linux" and filters["marketoption"] == "OnDemand"
    spot_calls = [c[1] for c in mocks.calls if c[0] == "aws:ec2/getSpotPrice:getSpotPrice"]
    assert sorted(c["availabilityZone"] for c in spot_calls) == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]


def test_offline_the_aws_price_invokes_answer_the_table() -> None:
    row = price_row("aws", "us-west-2", "g5.xlarge")
    assert row is not None
    quote = _under(StackMocks(), "us-west-2", "g5.xlarge")["g5.xlarge"]
    assert (quote.on_demand, quote.spot) == (row.on_demand, row.spot)
    assert _under(StackMocks(), "eu-west-1", "g6.xlarge") == {}  # no row: no product, no spot history


def test_aws_without_an_engine_falls_back_to_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    values = stack_values("aws-dev")
    monkeypatch.setenv(LIVE_PRICES_ENV, "1")
    from tests.conftest import stack_preview

    preview = stack_preview("aws-dev")
    cost = to_json(preview)["cost"]
    assert cost["regions"] == [values["elastic-gpu:cluster"]["region"]]
    assert all(row["source"] == "skypilot-aws" for row in cost["pools"])
    [note] = cost["price_notes"]
    assert note.startswith("live prices from aws-price-list unreachable (AWS prices are read through the provider's")
