"""Composition: wires the components for one cloud from a parsed StackConfig (no resource logic)."""

from __future__ import annotations

from typing import Any

from components.config import StackConfig


def build_stack(cfg: StackConfig) -> dict[str, Any]:
    """Declare the stack's resources; returns the stack outputs to export."""
    if cfg.cloud == "aws":
        from components.stacks.aws import build_aws_stack  # noqa: PLC0415 - import one cloud's SDK only

        return build_aws_stack(cfg)
    raise NotImplementedError(f"cloud {cfg.cloud!r} has no stack composition yet")
