"""GCP's live prices: the Cloud Billing Catalog API's Compute Engine SKUs, read over HTTPS at preview.

The API (`GET https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus?key=API_KEY`; Cloud Billing's
"Get Google Cloud pricing information" page, cloud.google.com/billing/v1/how-tos/catalog-api: "Before you can
use the Cloud Billing Catalog API, you'll need to enable the Cloud Billing API and get an API key") answers
`{"skus": [...], "nextPageToken": ...}`, at most 5,000 SKUs a page, with no token once everything is listed.
Without a key (`GCP_BILLING_API_KEY_ENV`) the source says so and the table answers; nothing is sent.

The SKUs are read as SkyPilot's catalog generator reads them (skypilot-org/skypilot
sky/catalog/data_fetchers/fetch_gcp.py at commit 21fd5541, which makes the table's skypilot-gcp rows):
- kept: `category.resourceFamily` "Compute", `category.usageType` "OnDemand" (on-demand) or "Preemptible"
  (spot), and a `serviceRegions` that names the region; left out: descriptions with "custom", "premium",
  "reserved" or "sole tenancy", and commitment usage types;
- a unit price is the first tiered rate's `unitPrice` (`units` + `nanos` / 1e9) of the first `pricingInfo`;
- a GPU is the `resourceGroup` "GPU" SKU whose description names it ("T4 GPU", "A100 80GB GPU", "H100 80GB
  GPU", ...), USD per GPU-hour: a table `gpu` row;
- a machine type is its series' vCPU SKU x vCPUs + its RAM SKU x GiB ("N1 Predefined Instance Core/Ram",
  "G2 Instance Core/Ram", ...), with the vCPUs and memory of elastic_gpu/gpu_catalog.py; a machine type the
  catalog lacks is left to the table.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from elastic_gpu.gpu_catalog import GPU_INSTANCE_TYPES
from elastic_gpu.prices import PriceSourceUnavailable, Quote, fetch_json, fetch_time

#: Compute Engine's service id in the Cloud Billing Catalog (cloud.google.com/skus; fetch_gcp.py GCE_SERVICE_ID).
COMPUTE_ENGINE_SERVICE = "6F81-5844-456A"
SKUS_URL = f"https://cloudbilling.googleapis.com/v1/services/{COMPUTE_ENGINE_SERVICE}/skus"
#: The API key the catalog is read with; unset, GCP's prices stay on the table.
GCP_BILLING_API_KEY_ENV = "ELASTIC_GPU_GCP_BILLING_API_KEY"
TIMEOUT_SECONDS = 5.0
#: Compute Engine lists a few thousand SKUs, 5,000 per page at most (`pageSize`): a handful of pages.
MAX_PAGES = 20
PAGE_SIZE = 5000

#: The description each GKE accelerator type's SKU carries (fetch_gcp.py get_gpu_price: f"{name} GPU", with
#: its A100-80GB, H100, H100-MEGA, H200 and B200 exceptions).
ACCELERATOR_DESCRIPTIONS: dict[str, tuple[str, ...]] = {
    "nvidia-tesla-t4": ("T4 GPU",),
    "nvidia-tesla-v100": ("V100 GPU",),
    "nvidia-l4": ("L4 GPU",),
    "nvidia-tesla-a100": ("A100 GPU",),
    "nvidia-a100-80gb": ("A100 80GB GPU",),
    "nvidia-h100-80gb": ("H100 80GB GPU",),
    "nvidia-h100-mega-80gb": ("H100 80GB Mega GPU", "H100 Mega 80GB GPU", "H100 80GB Plus GPU"),
    "nvidia-h200-141gb": ("H200 141GB GPU",),
    "nvidia-b200": ("Nvidia B200 (1 gpu slice)",),
}
#: The description of each machine series' vCPU and RAM SKUs (fetch_gcp.py SERIES_TO_DESCRIPTION).
SERIES_DESCRIPTIONS = {
    "a2": "A2 Instance",
    "a3": "A3 Instance",
    "a4": "A4 Instance",
    "e2": "E2 Instance",
    "g2": "G2 Instance",
    "n1": "N1 Predefined Instance",
    "n2": "N2 Instance",
}
SKIPPED_WORDS = ("custom", "premium", "reserved", "sole tenancy")
USAGE_ON_DEMAND, USAGE_SPOT = "OnDemand", "Preemptible"

Fetcher = Callable[[str], dict[str, Any]]


def urllib_fetcher(url: str) -> dict[str, Any]:
    """GET `url` as JSON within TIMEOUT_SECONDS; any failure is PriceSourceUnavailable (elastic_gpu/prices.py)."""
    return fetch_json(url, TIMEOUT_SECONDS, "the Cloud Billing Catalog")


def page_url(key: str, page_token: str = "") -> str:
    params = {"key": key, "currencyCode": "USD", "pageSize": str(PAGE_SIZE)}
    if page_token:
        params["pageToken"] = page_token
    return f"{SKUS_URL}?{urllib.parse.urlencode(params)}"


def unit_price(sku: Mapping[str, Any]) -> float | None:
    """The SKU's USD price per unit (GPU-hour, vCPU-hour, GiB-hour), None when it has none."""
    try:
        rate = sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]
        return int(rate.get("units") or 0) + int(rate.get("nanos") or 0) / 1e9
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def _kept(sku: Mapping[str, Any], region: str) -> bool:
    category = sku.get("category") or {}
    description = str(sku.get("description", "")).lower()
    return (
        category.get("resourceFamily") == "Compute"
        and category.get("usageType") in (USAGE_ON_DEMAND, USAGE_SPOT)
        and region in (sku.get("serviceRegions") or [])
        and not any(word in description for word in SKIPPED_WORDS)
    )


def _machine_parts(skus: Sequence[Mapping[str, Any]], series: str, usage: str) -> tuple[float | None, float | None]:
    """The series' (vCPU, GiB) hourly prices for `usage` (fetch_gcp.py get_vm_price)."""
    cpu = ram = None
    name = SERIES_DESCRIPTIONS[series].lower()
    for sku in skus:
        category = sku.get("category") or {}
        description = str(sku.get("description", ""))
        if category.get("usageType") != usage or name not in description.lower():
            continue
        group = category.get("resourceGroup")
        if group == "GPU":
            continue
        price = unit_price(sku)
        if group == "CPU" or (group == "N1Standard" and "Core" in description):
            cpu = price
        elif group == "RAM" or (group == "N1Standard" and "Ram" in description):
            ram = price
    return cpu, ram


def _accelerator(skus: Sequence[Mapping[str, Any]], item: str, usage: str) -> float | None:
    names = ACCELERATOR_DESCRIPTIONS[item]
    for sku in skus:
        category = sku.get("category") or {}
        if category.get("resourceGroup") != "GPU" or category.get("usageType") != usage:
            continue
        if any(n in str(sku.get("description", "")) for n in names):
            return unit_price(sku)
    return None


def quotes_of(
    skus: Sequence[Mapping[str, Any]], region: str, items: Sequence[str], fetched: str, source: str
) -> dict[str, Quote]:
    """Each item's on-demand and spot prices in `region` from the catalog's SKUs (the module docstring's rules)."""
    kept = [s for s in skus if _kept(s, region)]
    out: dict[str, Quote] = {}
    for item in items:
        prices: list[float | None] = []
        for usage in (USAGE_ON_DEMAND, USAGE_SPOT):
            if item in ACCELERATOR_DESCRIPTIONS:
                prices.append(_accelerator(kept, item, usage))
                continue
            row = GPU_INSTANCE_TYPES.get(("gcp", item))
            series = item.split("-")[0]
            if row is None or series not in SERIES_DESCRIPTIONS:
                prices.append(None)  # not a machine the catalog describes: the table answers
                continue
            cpu, ram = _machine_parts(kept, series, usage)
            prices.append(None if cpu is None or ram is None else round(cpu * row.vcpus + ram * row.memory_gib, 5))
        on_demand, spot = prices
        if on_demand is not None or spot is not None:
            out[item] = Quote(on_demand, spot, source, fetched)
    return out


class GcpBillingCatalog:
    """`LivePrices` for GKE pools: the Cloud Billing Catalog, read with an API key."""

    name = "gcp-billing-catalog"

    def __init__(self, fetcher: Fetcher | None = None, api_key: str | None = None) -> None:
        self.fetcher = fetcher or urllib_fetcher
        self.api_key = api_key if api_key is not None else os.environ.get(GCP_BILLING_API_KEY_ENV, "")

    def quotes(self, region: str, items: Sequence[str], now: datetime) -> dict[str, Quote]:
        if not self.api_key:
            raise PriceSourceUnavailable(
                f"the Cloud Billing Catalog API needs credentials: set {GCP_BILLING_API_KEY_ENV} to an API key"
            )
        skus: list[dict[str, Any]] = []
        token = ""
        for _ in range(MAX_PAGES):
            page = self.fetcher(page_url(self.api_key, token))
            skus += [s for s in page.get("skus") or [] if isinstance(s, dict)]
            token = str(page.get("nextPageToken") or "")
            if not token:
                break
        return quotes_of(skus, region, items, fetch_time(now), self.name)
