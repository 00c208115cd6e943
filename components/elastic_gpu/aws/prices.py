"""AWS's live prices, through the provider's invokes: the price list for on-demand (`aws.pricing.get_product`)
and the spot price history for spot (`aws.ec2.get_spot_price`, per availability zone).

On-demand: one product per instance type, filtered as Karpenter's AWS pricing provider filters the price list
(karpenter-provider-aws pkg/providers/pricing/pricing.go:258-290 at commit 1d927085: regionCode,
preInstalledSw NA, operatingSystem Linux, capacitystatus Used, marketoption OnDemand; with tenancy Shared and
productFamily "Compute Instance" at :210-221); its USD price per hour is the product's OnDemand term's
`pricePerUnit.USD` (onDemandPage). The Pricing API answers only in some regions (pulumi-aws
pricing/get_product.py: "only available in a us-east-1 or ap-south-1 provider"), so that invoke goes through an
explicit us-east-1 provider whatever the stack's region; the filter names the stack's region.

Spot: the latest Linux/UNIX price in each of the region's available zones; the figure is their median, the same
aggregate the shipped table's skypilot-aws rows use (elastic_gpu/data/price_sources.csv).

Invokes need the Pulumi engine: inside a program under `pulumi preview` (or the mock engine, where
elastic_gpu/tools/aws/mocks.py answers them from the shipped table), never from the offline tools alone, which use
the table and say so.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from elastic_gpu.prices import PriceSourceUnavailable, Quote, fetch_time

#: The region whose Pricing API endpoint the on-demand invoke uses.
PRICING_API_REGION = "us-east-1"
#: The provider resource that invoke goes through (a provider only: no cloud resource).
PRICING_PROVIDER_NAME = "elastic-gpu-price-list"
SPOT_PRODUCT = "Linux/UNIX"


def product_filters(region: str, instance_type: str) -> list[tuple[str, str]]:
    """The price-list filters (field, value) that describe one Linux, shared-tenancy, on-demand product."""
    return [
        ("instanceType", instance_type),
        ("regionCode", region),
        ("operatingSystem", "Linux"),
        ("preInstalledSw", "NA"),
        ("capacitystatus", "Used"),
        ("marketoption", "OnDemand"),
        ("tenancy", "Shared"),
        ("productFamily", "Compute Instance"),
    ]


def on_demand_of(product: str) -> float | None:
    """The USD hourly price in a price-list product (the JSON `get_product` returns as `result`)."""
    try:
        data = json.loads(product)
        terms = data["terms"]["OnDemand"]
        prices = [float(d["pricePerUnit"]["USD"]) for term in terms.values() for d in term["priceDimensions"].values()]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    prices = [p for p in prices if p > 0]
    return prices[0] if prices else None


class AwsPriceList:
    """`LivePrices` for EKS pools, read through pulumi-aws's invokes."""

    name = "aws-price-list"

    def __init__(self) -> None:
        self._provider: Any = None

    def _pricing_provider(self) -> Any:
        import pulumi
        import pulumi_aws as aws

        if self._provider is None:
            self._provider = aws.Provider(PRICING_PROVIDER_NAME, region=PRICING_API_REGION)
        return pulumi.InvokeOptions(provider=self._provider)

    def quotes(self, region: str, items: Sequence[str], now: datetime) -> dict[str, Quote]:
        from pulumi.runtime.settings import get_monitor

        if get_monitor() is None:
            raise PriceSourceUnavailable(
                "AWS prices are read through the provider's invokes (aws.pricing.get_product, "
                "aws.ec2.get_spot_price), which need the Pulumi engine"
            )
        import pulumi_aws as aws

        try:
            zones = aws.get_availability_zones(region=region, state="available").names
        except Exception as exc:  # the provider's error, whatever its class
            raise PriceSourceUnavailable(str(exc) or type(exc).__name__) from None
        fetched = fetch_time(now)
        out = {}
        for item in items:
            on_demand = spot = None
            try:
                filters = [aws.pricing.GetProductFilterArgs(field=f, value=v) for f, v in product_filters(region, item)]
                product = aws.pricing.get_product(
                    service_code="AmazonEC2", filters=filters, opts=self._pricing_provider()
                )
                on_demand = on_demand_of(product.result)
            except Exception:  # no such product in the region (or several): the table answers for it
                on_demand = None
            zonal = []
            for zone in zones:
                try:
                    found = aws.ec2.get_spot_price(
                        instance_type=item,
                        availability_zone=zone,
                        region=region,
                        filters=[aws.ec2.GetSpotPriceFilterArgs(name="product-description", values=[SPOT_PRODUCT])],
                    )
                    zonal.append(float(found.spot_price))
                except Exception:  # not offered in that zone
                    continue
            spot = statistics.median(zonal) if zonal else None
            if on_demand is not None or spot is not None:
                out[item] = Quote(on_demand, spot, self.name, fetched)
        return out
