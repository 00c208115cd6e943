"""Live prices: each cloud's price source read at preview (the policy pack under `pulumi preview`, when asked),
once per run and cached on disk, the shipped table the answer offline and for whatever a source cannot give.

The recorded responses are shaped as the APIs document them: Azure's "Azure Retail Prices REST API" page
(learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices: `Items`, `NextPageLink`,
`retailPrice`, `armSkuName`, `armRegionName`, `skuName`, `productName`, `meterName`, `type`) and Cloud
Billing's "Get Google Cloud pricing information" page (cloud.google.com/billing/v1/how-tos/catalog-api: `skus`,
`nextPageToken`, `description`, `category`, `serviceRegions`, `pricingInfo[].pricingExpression.tieredRates[]
.unitPrice{units,nanos}`)."""

from __future__ import annotations

import asyncio
import contextvars
import io
import json
import urllib.error
import urllib.parse
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pulumi
import pytest
from pulumi_policy import StackValidationArgs

import elastic_gpu.azure.prices as azure_prices
import elastic_gpu.gcp.prices as gcp_prices
from elastic_gpu.aws.prices import AwsPriceList
from elastic_gpu.azure.prices import AzureRetailPrices, query_url
from elastic_gpu.clouds import get_cloud
from elastic_gpu.gcp.prices import GCP_BILLING_API_KEY_ENV, GcpBillingCatalog
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
from elastic_gpu.tools.offline.report import render_text, to_json
from elastic_gpu.tools.offline.runner import Preview, run_preview
from elastic_gpu.tools.offline.stack_resources import stack_resources
from elastic_gpu.tools.policy.cost_rules import validate_cost_ceiling
from tests.conftest import stack_values

NOW = datetime(2026, 11, 27, 3, 10, tzinfo=timezone.utc)
T4 = "Standard_NC4as_T4_v3"
ROOT = Path(__file__).parent.parent


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(GCP_BILLING_API_KEY_ENV, raising=False)
    clear_live_prices()
    yield
    clear_live_prices()


# --- Azure: the Retail Prices API ------------------------------------------------------------------------------


def _retail_rows(on_demand: float, spot: float, region: str = "westeurope") -> list[dict[str, Any]]:
    """Rows as the Retail Prices API lists them for one size: Linux on-demand and spot, plus the rows that must not
    count: Windows, Batch's Low Priority, a reservation, a dev/test price and a non-primary meter."""
    base = {
        "armSkuName": T4,
        "armRegionName": region,
        "type": "Consumption",
        "currencyCode": "USD",
        "unitOfMeasure": "1 Hour",
        "serviceName": "Virtual Machines",
        "isPrimaryMeterRegion": True,
    }
    series = "Virtual Machines NCasT4_v3 Series"
    return [
        {**base, "retailPrice": on_demand, "skuName": "NC4as T4 v3", "meterName": "NC4as T4 v3", "productName": series},
        {**base, "retailPrice": spot, "skuName": "NC4as T4 v3 Spot", "meterName": "NC4as T4 v3 Spot",
         "productName": series},
        {**base, "retailPrice": 9.99, "skuName": "NC4as T4 v3", "meterName": "NC4as T4 v3",
         "productName": f"{series} Windows"},
        {**base, "retailPrice": 0.01, "skuName": "NC4as T4 v3 Low Priority", "meterName": "NC4as T4 v3 Low Priority",
         "productName": series},
        {**base, "retailPrice": 0.02, "skuName": "NC4as T4 v3", "meterName": "NC4as T4 v3", "productName": series,
         "type": "Reservation", "reservationTerm": "1 Year"},
        {**base, "retailPrice": 0.03, "skuName": "NC4as T4 v3", "meterName": "NC4as T4 v3", "productName": series,
         "type": "DevTestConsumption"},
        {**base, "retailPrice": 0.04, "skuName": "NC4as T4 v3 Spot", "meterName": "NC4as T4 v3 Spot",
         "productName": series, "isPrimaryMeterRegion": False},
    ]  # fmt: skip


class FakeRetailApi:
    """An injected fetcher: answers with the pages given (the last page has no NextPageLink), or fails; counts the
    requests."""

    def __init__(self, *pages: list[dict[str, Any]], error: str | None = None) -> None:
        self.pages, self.error, self.urls = list(pages) or [[]], error, []

    def __call__(self, url: str) -> dict[str, Any]:
        self.urls.append(url)
        if self.error:
            raise PriceSourceUnavailable(self.error)
        index = int(url.partition("$skip=")[2] or 0) // 100  # a first request, or the page a link names
        more = index + 1 < len(self.pages)
        link = f"https://prices.azure.com:443/api/retail/prices?$skip={100 * (index + 1)}" if more else None
        return {"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
                "Items": self.pages[index], "NextPageLink": link, "Count": len(self.pages[index])}  # fmt: skip


def test_the_retail_api_answer_keeps_linux_pay_as_you_go_on_demand_and_spot_only() -> None:
    api = FakeRetailApi(_retail_rows(0.7, 0.2))
    [(size, quote)] = AzureRetailPrices(api).quotes("westeurope", [T4], NOW).items()
    assert (size, quote.on_demand, quote.spot) == (T4, 0.7, 0.2)
    assert (quote.source, quote.fetched) == ("azure-retail-prices", "2026-11-27T03:10Z")
    # the request names the region and size, pay-as-you-go, in USD (case-sensitive filter values)
    assert api.urls == [query_url("westeurope", [T4])]
    assert "armRegionName+eq+%27westeurope%27" in api.urls[0] and "priceType+eq+%27Consumption%27" in api.urls[0]


def test_the_retail_api_pages_are_followed_to_the_last() -> None:
    """The spot row is on the second page: the first page's NextPageLink is requested as given."""
    rows = _retail_rows(0.7, 0.2)
    api = FakeRetailApi([rows[0], rows[2]], [rows[1], rows[3]])
    quote = AzureRetailPrices(api).quotes("westeurope", [T4], NOW)[T4]
    assert (quote.on_demand, quote.spot) == (0.7, 0.2)
    assert api.urls[1] == "https://prices.azure.com:443/api/retail/prices?$skip=100" and len(api.urls) == 2


def test_an_empty_retail_answer_leaves_the_table_to_answer() -> None:
    api = FakeRetailApi([])
    assert AzureRetailPrices(api).quotes("westeurope", [T4], NOW) == {}
    read_live_prices(get_cloud("azure"), "westeurope", [T4], AzureRetailPrices(FakeRetailApi([])), now=NOW)
    assert live_book().quotes == {} and live_book().notes == []


def test_an_http_error_from_the_retail_api_falls_back_to_the_table_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(url: str, timeout: float) -> Any:
        raise urllib.error.HTTPError(url, 400, "Bad Request", {}, io.BytesIO(b'{"Error": "Invalid OData"}'))  # type: ignore[arg-type]

    monkeypatch.setattr(azure_prices.urllib.request, "urlopen", refuse)
    read_live_prices(get_cloud("azure"), "westeurope", [T4], AzureRetailPrices(), now=NOW)
    assert live_book().quotes == {}
    assert live_book().notes == [
        "live prices from azure-retail-prices unreachable (HTTP 400 Bad Request): table rows used for westeurope"
    ]


# --- the policy pack at preview and the offline tools ---------------------------------------------------------


def _preview(stack: str, region: str | None, zones: list[str] | None, tmp: Path) -> Preview:
    """A shipped stack, moved to `region` when given, captured offline with live prices off."""
    if region is None:
        return run_preview(stack, ROOT)
    values = stack_values(stack)
    values["elastic-gpu:cluster"] = {**values["elastic-gpu:cluster"], "region": region, "zones": zones}
    (tmp / "stacks").mkdir(exist_ok=True)
    (tmp / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (tmp / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    import yaml

    (tmp / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": values}))
    return run_preview(stack, tmp)


def _pack_gate(preview: Preview, budget: float = 1) -> list[str]:
    """The cost rule as the policy pack runs it under `pulumi preview`: the resources, no offline runner."""
    clear_live_prices()
    found: list[str] = []
    args = StackValidationArgs(stack_resources(preview), {"monthlyBudgetUsd": budget})
    validate_cost_ceiling(args, lambda message, urn=None: found.append(message))
    return found


def test_at_preview_the_gate_prices_from_the_retail_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """At preview the live source's figures for azure-dev's westeurope T4 pool replace the table's (2024 spot,
    elastic_gpu/data/price_sources.csv) in the gate's figure, named with their source and fetch time."""
    monkeypatch.delenv(LIVE_PRICES_ENV, raising=False)
    preview = _preview("azure-dev", None, None, tmp_path)
    api = FakeRetailApi(_retail_rows(0.7, 0.2))
    monkeypatch.setattr(azure_prices, "urllib_fetcher", api)
    monkeypatch.setenv(LIVE_PRICES_ENV, "1")
    [over] = _pack_gate(preview)
    assert "x Standard_NC4as_T4_v3 at $0.200/h" in over and "at $0.700/h" in over
    assert "azure-retail-prices" in over
    assert len(api.urls) == 1  # the pools' sizes in one request, each asked once per run
    table = price_row("azure", "westeurope", T4)
    assert table is not None and (table.on_demand, table.spot) != (0.7, 0.2)  # the source's figures, not the table's


def test_offline_with_the_setting_the_retail_api_prices_the_cost_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Azure's price list needs no cloud account: asked for, the offline tools read it too, and the cost table
    names the source; the request is made once for the run."""
    api = FakeRetailApi(_retail_rows(0.7, 0.2))
    monkeypatch.setattr(azure_prices, "urllib_fetcher", api)
    monkeypatch.setenv(LIVE_PRICES_ENV, "1")
    preview = run_preview("azure-dev", ROOT)
    [t4] = [r for r in to_json(preview)["cost"]["pools"] if r["pool"] == "t4" and r["capacity"] == "spot"]
    assert (t4["on_demand_hourly"], t4["spot_hourly"], t4["source"]) == (0.7, 0.2, "azure-retail-prices")
    assert len(api.urls) == 1
    assert "live from azure-retail-prices fetched " in render_text(preview)


def test_an_unreachable_source_at_preview_falls_back_to_the_table_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(LIVE_PRICES_ENV, raising=False)
    preview = _preview("azure-dev", None, None, tmp_path)
    api = FakeRetailApi(error="timed out")
    monkeypatch.setattr(azure_prices, "urllib_fetcher", api)
    monkeypatch.setenv(LIVE_PRICES_ENV, "1")
    [over] = _pack_gate(preview)
    table = price_row("azure", "westeurope", T4)
    assert table is not None and f"at ${table.on_demand:.3f}/h" in over and "karpenter-azure" in over
    assert live_book().notes == [
        "live prices from azure-retail-prices unreachable (timed out): table rows used for westeurope"
    ]
    # asked once per run, an unanswered question too: the gate's second look does not ask again
    args = StackValidationArgs(stack_resources(preview), {"monthlyBudgetUsd": 1})
    validate_cost_ceiling(args, lambda message, urn=None: None)
    assert len(api.urls) == 1


def test_the_cache_answers_the_second_time_until_it_expires(tmp_path: Path) -> None:
    api = FakeRetailApi(_retail_rows(0.7, 0.2))
    source = AzureRetailPrices(api)
    read_live_prices(get_cloud("azure"), "westeurope", [T4], source, now=NOW)
    clear_live_prices()  # a new process: only the file remains
    read_live_prices(get_cloud("azure"), "westeurope", [T4], source, now=NOW + timedelta(hours=1))
    assert len(api.urls) == 1
    cached = json.loads((tmp_path / "cache" / "prices.json").read_text())
    assert cached[f"azure/westeurope/{T4}"] == {
        "on_demand": 0.7,
        "spot": 0.2,
        "source": "azure-retail-prices",
        "fetched": "2026-11-27T03:10Z",
    }
    clear_live_prices()
    read_live_prices(get_cloud("azure"), "westeurope", [T4], source, now=NOW + PriceCache().ttl + timedelta(minutes=1))
    assert len(api.urls) == 2  # expired: fetched again


def test_without_the_setting_nothing_is_fetched(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    api = FakeRetailApi(_retail_rows(0.7, 0.2))
    monkeypatch.delenv(LIVE_PRICES_ENV, raising=False)
    monkeypatch.setattr(azure_prices, "urllib_fetcher", api)
    preview = _preview("azure-dev", None, None, tmp_path)
    [over] = _pack_gate(preview)
    assert api.urls == [] and "karpenter-azure" in over and live_book().notes == []


# --- GCP: the Cloud Billing Catalog ---------------------------------------------------------------------------


def _sku(description: str, group: str, usage: str, price: float, region: str = "europe-west4") -> dict[str, Any]:
    units, nanos = int(price), round((price - int(price)) * 1e9)
    return {
        "name": f"services/6F81-5844-456A/skus/{abs(hash((description, usage, region))) % 10**12:012d}",
        "skuId": "0000-0000-0000",
        "description": description,
        "category": {"serviceDisplayName": "Compute Engine", "resourceFamily": "Compute", "resourceGroup": group,
                     "usageType": usage},
        "serviceRegions": [region],
        "pricingInfo": [{
            "summary": "",
            "pricingExpression": {"usageUnit": "GiBy.h" if group == "RAM" or "Ram" in description else "h",
                                  "displayQuantity": 1,
                                  "tieredRates": [{"startUsageAmount": 0,
                                                   "unitPrice": {"currencyCode": "USD", "units": str(units),
                                                                 "nanos": nanos}}]},
            "currencyConversionRate": 1,
            "effectiveTime": "2026-11-30T12:00:00.000Z",
        }],
        "serviceProviderName": "Google",
    }  # fmt: skip


def _catalog() -> list[dict[str, Any]]:
    """N1 vCPU and RAM and the T4, on-demand and spot, in europe-west4; plus what must not count: a commitment, a
    sole-tenancy and a custom SKU, and the T4 in another region."""
    return [
        _sku("Commitment v1: Nvidia Tesla T4 GPU running in Netherlands", "GPU", "Commit1Yr", 0.01),
        _sku("Nvidia Tesla T4 GPU running in Belgium", "GPU", "OnDemand", 0.02, "europe-west1"),
        _sku("Nvidia Tesla T4 GPU running in Netherlands", "GPU", "OnDemand", 0.4),
        _sku("Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Netherlands", "GPU", "Preemptible", 0.15),
        _sku("N1 Sole Tenancy Instance Core running in Netherlands", "N1Standard", "OnDemand", 0.9),
        _sku("Custom Instance Core running in Netherlands", "N1Standard", "OnDemand", 0.8),
        _sku("N1 Predefined Instance Core running in Netherlands", "N1Standard", "OnDemand", 0.035),
        _sku("N1 Predefined Instance Ram running in Netherlands", "N1Standard", "OnDemand", 0.004),
        _sku("Spot Preemptible N1 Predefined Instance Core running in Netherlands", "N1Standard", "Preemptible", 0.01),
        _sku("Spot Preemptible N1 Predefined Instance Ram running in Netherlands", "N1Standard", "Preemptible", 0.001),
    ]  # fmt: skip


class FakeBillingCatalog:
    """An injected fetcher: the catalog in pages of `size` SKUs linked by nextPageToken, or an error."""

    def __init__(self, skus: list[dict[str, Any]], size: int = 4, error: str | None = None) -> None:
        self.skus, self.size, self.error, self.urls = skus, size, error, []

    def __call__(self, url: str) -> dict[str, Any]:
        self.urls.append(url)
        if self.error:
            raise PriceSourceUnavailable(self.error)
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("pageToken", ["0"])[0]
        start = int(token)
        end = start + self.size
        return {"skus": self.skus[start:end], **({"nextPageToken": str(end)} if end < len(self.skus) else {})}


def test_the_billing_catalog_prices_gke_machines_and_gpus_across_pages() -> None:
    api = FakeBillingCatalog(_catalog())
    quotes = GcpBillingCatalog(api, api_key="k").quotes("europe-west4", ["n1-standard-4", "nvidia-tesla-t4"], NOW)
    t4, n1 = quotes["nvidia-tesla-t4"], quotes["n1-standard-4"]
    assert (t4.on_demand, t4.spot) == (0.4, 0.15)
    # n1-standard-4: 4 vCPUs and 15 GiB (elastic_gpu/gpu_catalog.py), at the N1 vCPU and RAM prices
    assert (n1.on_demand, n1.spot) == (round(4 * 0.035 + 15 * 0.004, 5), round(4 * 0.01 + 15 * 0.001, 5))
    assert len(api.urls) == 3 and all("key=k" in u and "currencyCode=USD" in u for u in api.urls)
    assert "pageToken=4" in api.urls[1] and "pageToken=8" in api.urls[2]


def test_without_an_api_key_the_billing_catalog_is_not_asked() -> None:
    api = FakeBillingCatalog(_catalog())
    read_live_prices(get_cloud("gcp"), "europe-west4", ["nvidia-tesla-t4"], GcpBillingCatalog(api), now=NOW)
    assert api.urls == [] and live_book().quotes == {}
    assert live_book().notes == [
        "live prices from gcp-billing-catalog unreachable (the Cloud Billing Catalog API needs credentials: set "
        f"{GCP_BILLING_API_KEY_ENV} to an API key): table rows used for europe-west4"
    ]


def test_an_http_error_from_the_billing_catalog_falls_back_to_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(url: str, timeout: float) -> Any:
        raise urllib.error.HTTPError(url, 403, "Forbidden", {}, io.BytesIO(b"{}"))  # type: ignore[arg-type]

    monkeypatch.setattr(gcp_prices.urllib.request, "urlopen", refuse)
    read_live_prices(get_cloud("gcp"), "europe-west4", ["nvidia-tesla-t4"], GcpBillingCatalog(api_key="k"), now=NOW)
    assert live_book().quotes == {}
    assert live_book().notes == [
        "live prices from gcp-billing-catalog unreachable (HTTP 403 Forbidden): table rows used for europe-west4"
    ]


def test_at_preview_gcp_dev_in_europe_west4_is_priced_from_the_catalog(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(LIVE_PRICES_ENV, raising=False)
    preview = _preview("gcp-dev", "europe-west4", ["europe-west4-a"], tmp_path)
    api = FakeBillingCatalog(_catalog(), size=100)
    monkeypatch.setattr(gcp_prices, "urllib_fetcher", api)
    monkeypatch.setenv(GCP_BILLING_API_KEY_ENV, "k")
    monkeypatch.setenv(LIVE_PRICES_ENV, "1")
    [over] = _pack_gate(preview)
    spot = round(4 * 0.01 + 15 * 0.001, 5) + 0.15
    assert f"at ${spot:.3f}/h" in over and "gcp-billing-catalog" in over
    assert len(api.urls) == 1


# --- AWS: the price list and spot history through the provider's invokes --------------------------------------


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


def test_aws_without_an_engine_falls_back_to_the_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Offline and in the pack with no engine to invoke through, the table answers and the note says why."""
    values = stack_values("aws-dev")
    monkeypatch.setenv(LIVE_PRICES_ENV, "1")
    preview = run_preview("aws-dev", ROOT)
    cost = to_json(preview)["cost"]
    assert cost["regions"] == [values["elastic-gpu:cluster"]["region"]]
    assert all(row["source"] == "skypilot-aws" for row in cost["pools"])
    [offline_note] = cost["price_notes"]
    assert offline_note.startswith("live prices from aws-price-list unreachable")
    _pack_gate(preview, budget=10**9)
    [note] = live_book().notes
    assert note.startswith("live prices from aws-price-list unreachable (AWS prices are read through the provider's")
