"""AWS-only config rules (called by components.config.validate_stack)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from elastic_gpu.aws.network import MAX_ZONES

if TYPE_CHECKING:
    from elastic_gpu.config import StackConfig


def validate(cfg: StackConfig) -> list[str]:
    problems: list[str] = []
    region = cfg.cluster.region
    for i, zone in enumerate(cfg.cluster.zones):
        if not re.fullmatch(re.escape(region) + r"[a-z]", zone):
            problems.append(
                f"cluster.zones[{i}]: {zone!r} is not a zone of region {region!r}; allowed: {region}a, {region}b, ..."
            )
    if len(cfg.cluster.zones) > MAX_ZONES:
        problems.append(f"cluster.zones: at most {MAX_ZONES} zones (got {len(cfg.cluster.zones)})")
    if cfg.general_pool.spot:
        problems.append(
            "generalPool.spot: the cluster-autoscaler runs on the general pool and must never run on spot nodes; "
            "allowed: false (got true)"
        )
    return problems
