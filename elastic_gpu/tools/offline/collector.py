"""The cyclic garbage collector during an offline run: paused, then run once over what the run made.

The Pulumi SDK makes reference cycles for every output property of every resource it registers (each
`Output`'s future, the task and coroutine that compute it, their closures and contexts): a 100-pool
preview makes about a million such objects, nearly all of them garbage by the end of the run, and many
still alive (pending) when the collector's young generations are scanned, so they reach the oldest one.
Under the default thresholds the collector then runs full collections over a heap that grows with the
stack: half of such a preview's CPU time, and growing faster than the stack. Paused for the run and run
once at its end over the young generation (everything the run made), the same garbage is freed in one
pass over the run's objects, never over the interpreter's whole heap.

This changes when cyclic garbage is freed, nothing a program or a policy can observe: no Pulumi API and
none of this library's code depends on the collector's timing (asyncio reports a never-retrieved future
exception when the future is collected: at the end of the run instead of during it). A run that raises
still collects. When the caller already paused the collector, it is left as it is.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collected_at_end() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block, then collect the young generation once."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)
