"""The offline policy gate: preview each stack under the mock engine, run the pack, exit non-zero on mandatory."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from elastic_gpu.errors import ConfigError
from elastic_gpu.offline.policy_run import render_report, run_policies
from elastic_gpu.offline.runner import Program, run_preview

EXIT_MANDATORY = 1
EXIT_CONFIG = 2


def load_policy_config(path: str | None) -> dict[str, Any] | None:
    """A policy-pack config file: `{policy-name: level | {enforcementLevel?, ...properties}}`."""
    if not path:
        return None
    data = yaml.safe_load(Path(path).read_text())  # YAML is a superset of JSON
    if not isinstance(data, dict):
        raise ConfigError([f"{path}: a policy config must be a mapping of policy name to settings"], source="policy")
    return data


def gate(program: str, stack: str | None, config_path: str | None, *, as_json: bool = False) -> int:
    try:
        config = load_policy_config(config_path)
        stacks = [stack] if stack else Program(Path(program).resolve()).stacks()
        results = {s: run_policies(run_preview(s, program), config=config) for s in stacks}
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if as_json:
        print(json.dumps({s: r.to_json() for s, r in results.items()}, indent=2, sort_keys=True))
    else:
        for s, report in results.items():
            print(f"Stack {s}:")
            print(render_report(report))
    failed = [s for s, r in results.items() if r.mandatory]
    if failed:
        print(f"policy gate failed: mandatory violations in {', '.join(failed)}", file=sys.stderr)
        return EXIT_MANDATORY
    return 0
