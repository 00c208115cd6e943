"""Azure's live prices: the public Retail Prices API (no authentication), read over HTTPS at preview.

One request per region lists the pools' VM sizes (`armSkuName`), pay-as-you-go (`priceType eq 'Consumption'`),
in USD, following `NextPageLink` while it is set; its rows are sorted as Azure Karpenter sorts them
(pkg/providers/pricing/pricing.go at commit 352646f5, processPage and categorizePrices): Windows products (a
`productName` containing "Windows") and "Low Priority" meters (Batch's, in `skuName` or `meterName`) are left
out, as are rows of another `type` than "Consumption" (reservations, dev/test) and non-primary meters
(`isPrimaryMeterRegion` false: this API version "returns the full set of meters, including primary meters and
nonprimary meters", the page says); a `skuName` containing "Spot" is the spot price, any other the on-demand
one. Field names and the response shape (`Items`, `NextPageLink`, `retailPrice`, `armSkuName`, `armRegionName`,
`skuName`, `productName`, `meterName`, `type`, `isPrimaryMeterRegion`): Azure's "Azure Retail Prices REST API"
page (learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices) and Karpenter's
client/pricingapi_types.go.

The fetcher is injectable (tests hand one that never touches the network); the default uses urllib with a
short timeout, so an unreachable API costs a preview a few seconds at most and the table answers instead.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from elastic_gpu.prices import Quote, fetch_json, fetch_time

#: The API and version Azure Karpenter reads (client/pricingapi.go: apiVersion, pricingURL).
RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"
#: Seconds one request may take before the source counts as unreachable.
TIMEOUT_SECONDS = 5.0
#: Pages followed (`NextPageLink`) per request at most: a region's rows for a few sizes fit in one page.
MAX_PAGES = 5
#: The pay-as-you-go price type (the rows' `type`, the filter's `priceType`).
CONSUMPTION = "Consumption"

Fetcher = Callable[[str], dict[str, Any]]


def urllib_fetcher(url: str) -> dict[str, Any]:
    """GET `url` as JSON within TIMEOUT_SECONDS; any failure is PriceSourceUnavailable (elastic_gpu/prices.py)."""
    return fetch_json(url, TIMEOUT_SECONDS, "the Retail Prices API")


def query_url(region: str, sizes: Sequence[str]) -> str:
    """The request for `sizes` in `region` (filter values are case-sensitive from this API version on)."""
    skus = " or ".join(f"armSkuName eq '{s}'" for s in sizes)
    odata = (
        f"serviceName eq 'Virtual Machines' and priceType eq '{CONSUMPTION}' and currencyCode eq 'USD' "
        f"and armRegionName eq '{region}' and ({skus})"
    )
    return f"{RETAIL_PRICES_URL}?{urllib.parse.urlencode({'api-version': API_VERSION, '$filter': odata})}"


def quotes_of(items: list[dict[str, Any]], sizes: Sequence[str], fetched: str, source: str) -> dict[str, Quote]:
    """The on-demand and spot prices per size in the API's rows (Linux, not Low Priority)."""
    on_demand: dict[str, float] = {}
    spot: dict[str, float] = {}
    for row in items:
        sku, price = row.get("armSkuName"), row.get("retailPrice")
        if sku not in sizes or not isinstance(price, int | float):
            continue
        sku_name = str(row.get("skuName", ""))
        if (
            "Windows" in str(row.get("productName", ""))
            or "Low Priority" in sku_name
            or "Low Priority" in str(row.get("meterName", ""))
            or row.get("type", CONSUMPTION) != CONSUMPTION
            or row.get("isPrimaryMeterRegion") is False
        ):
            continue
        target = spot if "Spot" in sku_name else on_demand
        target[str(sku)] = float(price)
    return {
        size: Quote(on_demand.get(size), spot.get(size), source, fetched)
        for size in sizes
        if size in on_demand or size in spot
    }


class AzureRetailPrices:
    """`LivePrices` for AKS pools."""

    name = "azure-retail-prices"

    def __init__(self, fetcher: Fetcher | None = None) -> None:
        self.fetcher = fetcher or urllib_fetcher

    def quotes(self, region: str, items: Sequence[str], now: datetime) -> dict[str, Quote]:
        rows: list[dict[str, Any]] = []
        url: str | None = query_url(region, items)
        for _ in range(MAX_PAGES):
            if not url:
                break
            page = self.fetcher(url)
            rows += [r for r in page.get("Items") or [] if isinstance(r, dict)]
            url = page.get("NextPageLink") or None
        return quotes_of(rows, items, fetch_time(now), self.name)
