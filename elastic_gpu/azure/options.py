"""Azure's own settings of a GPU pool (merged into elastic_gpu.settings.GpuPoolSettings; refused on other clouds)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from elastic_gpu.settings_base import MAX_USD_PER_HOUR, CloudOptions

#: Spot max price -1: pay up to the on-demand price, never evicted for price (only for capacity).
DEFAULT_AKS_SPOT_MAX_PRICE = -1.0


class AzureGpuPoolOptions(CloudOptions):
    cloud: ClassVar[str] = "azure"

    spot_max_price: float | None = Field(default=None, le=MAX_USD_PER_HOUR)
    """Azure only: max USD/hour per spot VM; default None: DEFAULT_AKS_SPOT_MAX_PRICE (-1, capped at the
    on-demand price)."""
