"""The Pulumi program behind `__main__.py`: read the stack config, compose, export."""

from __future__ import annotations

import json
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from elastic_gpu.config import PROJECT, load_stack_config, stack_warnings
from elastic_gpu.errors import ConfigError


def stack_config_values() -> dict[str, Any]:
    """Every config value of the running stack, structured values decoded from JSON.

    Read as a whole (not key by key) so that a misspelt key is reported, not ignored.
    """
    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            decoded = json.loads(value) if isinstance(value, str) else value
        except json.JSONDecodeError:
            decoded = value
        # A bare string such as `cloud: aws` is not JSON. A string that *is* a JSON string (`'"aws"'` in the
        # stack file) was written with quotes inside the value: it stays as written, quotes and all, so it is
        # judged the same here and in the offline tools that read the stack file (and refused by name).
        values[key] = value if isinstance(decoded, str) else decoded
    return values


def main() -> None:
    from elastic_gpu.compose import build_stack

    try:
        # A GPU type the catalog lacks: asked of the cloud (its provider's invoke) at preview.
        cfg = load_stack_config(stack_config_values(), project=PROJECT, resolve_gpus=True)
    except ConfigError as exc:
        # RunError: the CLI prints the message without a Python traceback.
        raise pulumi.RunError(str(exc)) from exc
    for warning in stack_warnings(cfg):
        pulumi.log.warn(warning)
    for key, value in build_stack(cfg).items():
        pulumi.export(key, value)
