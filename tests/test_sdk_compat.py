"""The two SDK functions the offline runner replaces during a run (tools/offline/sdk_compat.py): only on the SDK
they were checked against, answering as the SDK's own, and given back after the run. These tests fail when the
SDK under them changes: read the new SDK's `rpc.contains_unknowns` and `resource._get_stack_trace`, then move
SDK_VERSION (or delete the patch the SDK made needless)."""

from __future__ import annotations

import gc
import re
import threading
from importlib.metadata import version
from typing import Any

import pytest
from pulumi.output import Unknown
from pulumi.runtime import resource as runtime_resource
from pulumi.runtime import rpc

from elastic_gpu.tools.offline import runner, sdk_compat
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import ROOT, stack_values


def test_the_patches_were_checked_against_the_pinned_and_installed_sdk() -> None:
    pin = re.search(r"^pulumi==(\S+)$", (ROOT / "requirements.txt").read_text(), re.MULTILINE)
    assert pin is not None
    moved = "the Pulumi SDK moved: check tools/offline/sdk_compat.py's two patches against it, then move SDK_VERSION"
    assert pin.group(1) == sdk_compat.SDK_VERSION, moved
    assert version("pulumi") == sdk_compat.SDK_VERSION, moved
    assert sdk_compat.sdk_is_the_checked_one()


def _freed_by_collection_after(calls: int, function: Any) -> int:
    """How many objects the cyclic collector frees after `calls` calls of `function` on a nested value."""
    value: dict[str, Any] = {"a": [1, {"b": "x"}], "c": None}
    gc.collect()
    gc.disable()
    try:
        for _ in range(calls):
            function(value)
        return gc.collect()
    finally:
        gc.enable()


def test_the_sdks_contains_unknowns_still_leaves_a_cycle_per_call_and_the_replacement_none() -> None:
    """The reason for patch 1. When this fails on the SDK's side, the SDK fixed it: delete the patch."""
    assert _freed_by_collection_after(100, rpc.contains_unknowns) >= 100, "the SDK's walk no longer leaves cycles"
    assert _freed_by_collection_after(100, sdk_compat.contains_unknowns) == 0


def _values() -> list[Any]:
    """Values as Outputs settle them: plain, nested, with an unknown at some depth, shared and cyclic."""
    unknown = Unknown()
    shared: dict[str, Any] = {"a": [1, 2]}
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    return [
        None,
        "x",
        rpc.UNKNOWN,  # the wire's marker is a string to this walk
        unknown,
        [1, [2, [3, unknown]]],
        {"a": {"b": [{"c": unknown}]}},
        {"a": shared, "b": shared},
        cyclic,
        [cyclic, unknown],
        ("tuple", unknown),  # the SDK walks dicts and lists only
        {"k": ("tuple", unknown)},
    ]


def test_the_replacement_walk_answers_as_the_sdks_own_on_every_shape() -> None:
    values = _values()
    answers = [rpc.contains_unknowns(v) for v in values]
    assert [sdk_compat.contains_unknowns(v) for v in values] == answers
    assert any(answers) and not all(answers)


def test_the_empty_trace_is_the_sdks_own_answer_off_a_resource_constructor() -> None:
    """The SDK gives the empty trace when no resource constructor is on the stack (a thread's stack has none)."""
    traces = []
    thread = threading.Thread(target=lambda: traces.append(runtime_resource._get_stack_trace()))
    thread.start()
    thread.join()
    assert traces == [sdk_compat.no_stack_trace()]


def test_a_preview_runs_the_replacements_and_gives_the_sdk_its_own_back(program_dir) -> None:
    sdk = rpc.contains_unknowns, runtime_resource._get_stack_trace
    seen: list[Any] = []
    real = sdk_compat.contains_unknowns

    def spy(val: Any) -> bool:
        seen.append((rpc.contains_unknowns, runtime_resource._get_stack_trace))
        return real(val)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sdk_compat, "contains_unknowns", spy)
        run_preview("aws-dev", program_dir(stack_values("aws-dev"), stack="aws-dev"))
    assert seen and set(seen) == {(spy, sdk_compat.no_stack_trace)}
    assert (rpc.contains_unknowns, runtime_resource._get_stack_trace) == sdk


def test_a_preview_prints_the_same_with_the_sdks_own_functions(program_dir, monkeypatch) -> None:
    """Both patches are for speed alone: on another SDK version (none replaced) a preview is the same."""
    directory = program_dir(stack_values("aws-dev"), stack="aws-dev")
    patched = run_preview("aws-dev", directory)
    monkeypatch.setattr(sdk_compat, "SDK_VERSION", "0.0.0")
    calls: list[Any] = []
    monkeypatch.setattr(sdk_compat, "contains_unknowns", lambda val: calls.append(val))
    own = run_preview("aws-dev", directory)
    assert not calls  # the SDK's own walk ran
    assert own.to_json() == patched.to_json() and own.warnings == patched.warnings


def test_the_runners_wire_markers_are_the_sdks() -> None:
    """The runner reads secrets and resource references on the wire by the protocol's markers (runner.WIRE_*),
    not by the SDK's private names; they are the ones the installed SDK writes."""
    assert rpc._special_sig_key == runner.WIRE_SIG_KEY
    assert rpc._special_secret_sig == runner.WIRE_SECRET_SIG
    assert rpc._special_resource_sig == runner.WIRE_RESOURCE_SIG
