"""The price overrides a captured program sets (`elastic-gpu:prices`), for every report that prices pools.

A module of its own so that the simulation (which the policy pack imports) and the preview report can
both read it without importing each other.
"""

from __future__ import annotations

from elastic_gpu.config import load_price_overrides
from elastic_gpu.prices import live_prices_requested
from elastic_gpu.tools.cost import Overrides, read_live_prices_of
from elastic_gpu.tools.node_group_reading import stack_pools
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.offline.stack_resources import stack_resources


def price_overrides(preview: Preview) -> Overrides:
    """The stack config's `elastic-gpu:prices` overrides, in an elastic-gpu stack or any other program.

    An elastic-gpu stack's config was validated as a whole by the program, under the engine, where a GPU
    type the catalog lacks was described by the cloud's API; read again here (no engine to ask), such a pool
    would be refused, so only its `prices` are read, as any other program (one that imports the components)
    may set `elastic-gpu:prices` alone, validated here.
    """
    if live_prices_requested():  # the pools' live prices, read once per process (elastic_gpu/prices.py)
        read_live_prices_of(stack_pools(stack_resources(preview)))
    return load_price_overrides(preview.config)
