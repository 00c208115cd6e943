"""The offline policy gate: preview each stack under the mock engine, run the pack, exit non-zero on mandatory.

The gate cannot pass by accident: a policy config with an unknown policy, level or setting, a program
with no stack, and a stack that declares no resource are all errors (exit 2), not a green run.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from elastic_gpu.errors import ConfigError
from elastic_gpu.files import read_mapping
from elastic_gpu.tools.offline.account import load_account
from elastic_gpu.tools.offline.policy_run import policy_config_problems, render_report, run_policies
from elastic_gpu.tools.offline.report import dump_json
from elastic_gpu.tools.offline.runner import Program, run_preview
from elastic_gpu.tools.offline.terminal import once_each

EXIT_MANDATORY = 1
EXIT_CONFIG = 2


def load_policy_config(path: str | None) -> dict[str, Any] | None:
    """A policy-pack config file: `{policy-name | all: level | {enforcementLevel?, ...properties}}`."""
    if not path:
        return None
    data = read_mapping(path, what="policy config")  # YAML is a superset of JSON
    if problems := policy_config_problems(data):
        raise ConfigError([f"{path}: {p}" for p in problems], source="policy config")
    return data


def gate(
    program: str, stack: str | None, config_path: str | None, *, as_json: bool = False, account: str | None = None
) -> int:
    warned: dict[str, list[str]] = {}  # each warning's text -> the stacks whose program logged it
    try:
        config = load_policy_config(config_path)
        described = load_account(account)
        prog = Program(Path(program).resolve())
        stacks = [stack] if stack else prog.stacks()
        if not stacks:
            raise ConfigError(
                [f"{prog.config_dir}: no stack file (Pulumi.<stack>.yaml); the gate has nothing to check"],
                source="program",
            )
        results = {}
        for s in stacks:
            preview = run_preview(s, program, described)
            for warning in once_each(preview.warnings):
                warned.setdefault(warning, []).append(s)
            if not [r for r in preview.resources if r.type != "pulumi:pulumi:Stack"]:
                raise ConfigError(
                    [f"stack {s!r}: the program declared no resource; the gate has nothing to check"], source="program"
                )
            results[s] = run_policies(preview, config=config)
    except ConfigError as exc:
        _print_warnings(warned)
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    _print_warnings(warned)
    if as_json:
        print(dump_json({s: r.to_json() for s, r in results.items()}))
    else:
        for s, report in results.items():
            print(f"Stack {s}:")
            print(render_report(report))
    failed = [s for s, r in results.items() if r.mandatory]
    if failed:
        print(f"policy gate failed: mandatory violations in {', '.join(failed)}", file=sys.stderr)
        return EXIT_MANDATORY
    return 0


def _print_warnings(warned: dict[str, list[str]]) -> None:
    """Each warning once per run, naming the stacks it concerns: one program run for several stacks logs the same
    advice for each (an existing EKS cluster's `eks` interface endpoint), which is one thing to read."""
    for warning, stacks in warned.items():
        print(f"warning: {', '.join(stacks)}: {warning}", file=sys.stderr)
