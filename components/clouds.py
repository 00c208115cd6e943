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
#: The SDK each extra brings (pyproject's optional-dependencies).
EXTRAS = {"pulumi_aws": "aws", "pulumi_eks": "aws", "pulumi_azure_native": "azure", "pulumi_gcp": "gcp"}
EXTRAS["pulumi_policy"] = "policy"


def missing_extra(exc: ModuleNotFoundError, what: str) -> ModuleNotFoundError | None:
    """For an SDK an extra brings, an error that says which extra to install; None for any other module."""
    root = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(root)
    if extra is None:
        return None
    error = ModuleNotFoundError(
        f"{what} needs the {root} package, which the [{extra}] extra installs: pip install 'elastic-gpu[{extra}]'",
        name=exc.name,
    )
    return error


def cloud_module(cloud: str, part: str, *, optional: bool = False) -> ModuleType | None:
    if cloud not in CLOUDS:
        raise ConfigError([f"cloud: {cloud!r} is unknown; allowed: {', '.join(CLOUDS)}"])
    try:
        return import_module(f"elastic_gpu.{cloud}.{part}")
    except ModuleNotFoundError as exc:
        if exc.name != f"elastic_gpu.{cloud}.{part}" and exc.name != f"elastic_gpu.{cloud}":
            if (error := missing_extra(exc, f"cloud {cloud!r}")) is not None:
                raise ConfigError([f"cloud: {error}"]) from None
            raise
        if optional:
            return None
        raise ConfigError([f"cloud: {cloud!r} has no {part} implementation yet"]) from None
