"""Per-hour prices (USD, Linux): the single price table for the cost ceiling and the cost estimate.

Rows come from ../shared/reference/facts.md §9, each with its region, source and date.
Spot prices are point-in-time and vary per zone: where a range was given, the upper
end is used, so the ceiling errs on the expensive side. Where no spot price is known
(Azure), `spot` is None and callers fall back to the on-demand price.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    cloud: str
    item: str  #: instance type / VM size / GCE machine type or accelerator type
    region: str
    on_demand: float
    spot: float | None
    source: str
    date: str

    def hourly(self, spot: bool) -> float:
        return self.spot if spot and self.spot is not None else self.on_demand


_KARPENTER_AWS = "Karpenter AWS price table; SkyPilot catalog for spot"
_KARPENTER_AZURE = "Azure Karpenter price table"
_CA_GCE = "cluster-autoscaler gce_price_info.go constants (approx.)"

PRICES: dict[tuple[str, str], Price] = {
    (p.cloud, p.item): p
    for p in (
        Price("aws", "g4dn.xlarge", "us-east-1", 0.526, 0.216, _KARPENTER_AWS, "2026-07-20"),
        Price("aws", "g5.xlarge", "us-east-1", 1.006, 0.451, _KARPENTER_AWS, "2026-07-20"),
        Price("aws", "p3.2xlarge", "us-east-1", 3.06, 0.428, _KARPENTER_AWS, "2026-07-20"),
        Price("azure", "Standard_NC4as_T4_v3", "eastus", 0.526, None, _KARPENTER_AZURE, "2026-06-18"),
        Price("azure", "Standard_NC6s_v3", "eastus", 3.06, None, _KARPENTER_AZURE, "2026-06-18"),
        Price("azure", "Standard_D4s_v3", "eastus", 0.192, None, _KARPENTER_AZURE, "2026-06-18"),
        Price("azure", "Standard_NC24ads_A100_v4", "eastus", 3.673, None, _KARPENTER_AZURE, "2026-06-18"),
        Price("azure", "Standard_NC40ads_H100_v5", "eastus", 6.98, None, _KARPENTER_AZURE, "2026-06-18"),
        Price("gcp", "n1-standard-4", "us-central1", 0.19, 0.04, _CA_GCE, "date unknown"),
        Price("gcp", "nvidia-tesla-t4", "us-central1", 0.35, 0.11, _CA_GCE, "date unknown"),
        Price("gcp", "a2-highgpu-1g", "us-central1", 3.673385, 1.102016, _CA_GCE, "date unknown"),
    )
}

#: Hours in an average month (8760 / 12), the usual cloud-billing convention.
HOURS_PER_MONTH = 730


def price(cloud: str, item: str) -> Price | None:
    return PRICES.get((cloud, item))
