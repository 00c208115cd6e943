"""The only place the offline runner changes the Pulumi SDK's own code: two functions, replaced during a run
(`run_preview`) and given back after it, and only on the SDK version they were checked against (SDK_VERSION, the
pin in requirements.txt). Both are for speed alone: on another version nothing is replaced, and a preview prints
the same, slower. No public SDK setting or hook does either (pulumi/pulumi master at 1b59498 checked).

1. `pulumi.runtime.rpc.contains_unknowns` (pulumi/pulumi sdk/python/lib/pulumi/runtime/rpc.py:1460 in 3.272.0,
   rpc.py:1442 on master, unchanged) defines its recursive helper as a closure at each call; the helper refers to
   itself through its closure cell, so each call leaves a reference cycle (a function, a cell, its annotations)
   that only the cyclic garbage collector frees. Outputs call it for every value they settle: about 87,000 calls in
   a preview of 100 GPU pools (scripts/bench_policy.py 100), which took about 1.25x the CPU seconds with the SDK's
   own. During a run the SDK calls `contains_unknowns` below: the same walk, its helper at module level. No
   upstream issue or fix was found (pulumi/pulumi issues searched for it).
2. `pulumi.runtime.resource._get_stack_trace` (resource.py:741 in 3.272.0, resource.py:719 on master; added by
   pulumi/pulumi#20430, "Add support for resource stack traces") walks and encodes the Python stack of each
   registration, twice, for the engine's source positions. The mock engine reads none (the runner's capture keeps
   no position); with the SDK's own, that preview took about 3x the CPU seconds. During a run it gives the empty
   trace, as the SDK's own does when it finds no resource constructor on the stack.

tests/test_sdk_compat.py fails when the pin moves off SDK_VERSION, when the SDK's `contains_unknowns` stops making a
cycle (then delete patch 1), and when either replacement answers otherwise than the SDK's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from typing import Any

from pulumi.runtime import known_types, rpc
from pulumi.runtime import resource as runtime_resource
from pulumi.runtime.proto import source_pb2

#: The Pulumi SDK whose two functions were read and are replaced (requirements.txt pins it).
SDK_VERSION = "3.272.0"


def contains_unknowns(val: Any) -> bool:
    """`rpc.contains_unknowns` without the cycle: whether `val` is unknown, or a dict or list within it holds one."""
    return _any_unknown(val, set())


def _any_unknown(val: Any, seen_ids: set[int]) -> bool:
    """The SDK's nested `impl`, line for line: each object walked once (a value may hold itself)."""
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


def no_stack_trace() -> source_pb2.StackTrace:
    """What the SDK's `_get_stack_trace` returns when it finds no resource constructor on the stack."""
    return source_pb2.StackTrace()


def sdk_is_the_checked_one() -> bool:
    return version("pulumi") == SDK_VERSION


@contextmanager
def faster_sdk() -> Iterator[None]:
    """Within the block the SDK calls this module's two functions instead of its own (on SDK_VERSION only)."""
    if not sdk_is_the_checked_one():
        yield
        return
    own = rpc.contains_unknowns, runtime_resource._get_stack_trace
    rpc.contains_unknowns = contains_unknowns
    runtime_resource._get_stack_trace = no_stack_trace
    try:
        yield
    finally:
        rpc.contains_unknowns, runtime_resource._get_stack_trace = own
