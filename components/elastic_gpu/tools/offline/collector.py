"""The cyclic garbage collector during an offline run: paused, then run once over what the run made; and the
cycle the SDK makes on each call of one of its helpers, not made (`without_per_call_cycles`, at the end).

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
from types import CodeType
from typing import Any

from pulumi.runtime import known_types, rpc


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


# --- a cycle the SDK makes per call ---------------------------------------------------------------------------
#
# pulumi.runtime.rpc.contains_unknowns (pulumi 3.272.0, and pulumi/pulumi master at 1b59498) defines
# its recursive helper as a closure on every call: the function refers to itself through its closure cell, and
# its annotations make a `set[int]` alias each time, so every call leaves a function, a cell, a tuple and an alias
# that only the cyclic collector frees. Outputs call it for each value they settle: in a 100-pool preview about
# 87,000 calls, two thirds of the objects the collection at the end scans, and a third of the preview's CPU time.
# During an offline run the SDK calls `_contains_unknowns` instead: the same walk, with the helper at module level.


def _any_unknown(val: Any, seen_ids: set[int]) -> bool:
    """The SDK's `impl`, line for line (a value is unknown, or a dict or list holds one; each object walked once)."""
    if known_types.is_unknown(val):
        return True
    val_id = id(val)
    if val_id in seen_ids:
        return False
    seen_ids.add(val_id)
    if isinstance(val, dict):
        return any(_any_unknown(val[k], seen_ids) for k in val)
    if isinstance(val, list):
        return any(_any_unknown(x, seen_ids) for x in val)
    return False


def _contains_unknowns(val: Any) -> bool:
    return _any_unknown(val, set())


def _sdk_walk_is_the_known_one() -> bool:
    """Whether the installed SDK's `contains_unknowns` is the walk `_any_unknown` repeats: one nested `impl(val,
    seen_ids)` that calls itself. Another SDK's is left alone (correct, only slower)."""
    inner = [c for c in rpc.contains_unknowns.__code__.co_consts if isinstance(c, CodeType)]
    return (
        len(inner) == 1
        and inner[0].co_name == "impl"
        and inner[0].co_varnames[:2] == ("val", "seen_ids")
        and inner[0].co_freevars == ("impl",)
    )


@contextmanager
def without_per_call_cycles() -> Iterator[None]:
    """The SDK calls `_contains_unknowns` for the block, its own function again after it."""
    sdk = rpc.contains_unknowns
    if sdk is _contains_unknowns or not _sdk_walk_is_the_known_one():
        yield
        return
    rpc.contains_unknowns = _contains_unknowns
    try:
        yield
    finally:
        rpc.contains_unknowns = sdk
