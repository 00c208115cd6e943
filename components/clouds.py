"""Per-cloud modules by convention: `components.<cloud>.<part>` (aws, azure, gcp).

Each cloud package provides `pools` (build_general_pool, build_spot_gpu_pool),
`stack` (build_stack), `autoscaler` (build_autoscaler) and optionally `rules`
(validate(cfg) -> list[str], its config checks). Importing only the stack's
cloud keeps the other SDKs unloaded.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from elastic_gpu.errors import ConfigError

CLOUDS = ("aws", "azure", "gcp")


def cloud_module(cloud: str, part: str, *, optional: bool = False) -> ModuleType | None:
    if cloud not in CLOUDS:
        raise ConfigError([f"cloud: {cloud!r} is unknown; allowed: {', '.join(CLOUDS)}"])
    try:
        return import_module(f"elastic_gpu.{cloud}.{part}")
    except ModuleNotFoundError as exc:
        if exc.name != f"elastic_gpu.{cloud}.{part}" and exc.name != f"elastic_gpu.{cloud}":
            raise
        if optional:
            return None
        raise ConfigError([f"cloud: {cloud!r} has no {part} implementation yet"]) from None
