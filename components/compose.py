"""Composition: wires the components for one cloud from a parsed StackConfig (no resource logic)."""

from __future__ import annotations

from typing import Any

from components.clouds import cloud_module
from components.config import StackConfig


def build_stack(cfg: StackConfig) -> dict[str, Any]:
    """Declare the stack's resources; returns the stack outputs to export."""
    return cloud_module(cfg.cloud, "stack").build_stack(cfg)
