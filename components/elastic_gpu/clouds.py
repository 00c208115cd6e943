"""The registry of clouds: each is a folder `elastic_gpu/<cloud>/` (aws, azure, gcp) exporting its provider.

What a cloud must supply to a `pulumi up` is the `CloudProvider` protocol (elastic_gpu/provider.py); the offline
tools' registry is elastic_gpu/tools/clouds.py and their protocol elastic_gpu/tools/tool_cloud.py. The cloud-neutral
core never branches on a cloud's name: the edges turn a name into its provider (`get_cloud(name)`: a stack's `cloud`
in `StackConfig.provider`, a handle's in `cluster_handle.cloud_provider`) and hand it down, and the tables merged
over every cloud read every provider in turn (`all_clouds()`, always in `REGISTRY` order, so merged tables keep one
order). Each folder's `provider.py` exports its provider as `PROVIDER`; importing it loads no cloud SDK (the
provider's methods import the cloud's modules when called). This module sits low (it imports only
elastic_gpu/cloud_facts.py and errors.py), so every layer may reach the registry; it also holds the row types of the
folders' tables, so a folder's table imports no module that merges it, and `Cloud`, the base the providers share.

Adding a cloud is a folder with one class implementing the protocol, and a line in `REGISTRY` (and the config
schema's `cloud`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from importlib import import_module
from typing import Any

# the row type of the folders' version tables, declared with the records the low layers read
from elastic_gpu.cloud_facts import CloudFacts, RegisteredCloud
from elastic_gpu.cloud_facts import MinorSupport as MinorSupport
from elastic_gpu.errors import ConfigError

#: The registry: cloud name -> the module that exports its provider as `PROVIDER` (its folder's provider.py; the
#: folder's `__init__` holds only the names its modules share, so no module of the folder imports back into it).
#: Tests may add a provider of their own to it (monkeypatch.setitem); the core reads it on every call.
REGISTRY: dict[str, str] = {
    "aws": "elastic_gpu.aws.provider",
    "azure": "elastic_gpu.azure.provider",
    "gcp": "elastic_gpu.gcp.provider",
}
#: The clouds this package ships, in order (the config schema's `cloud`, the price table's `cloud` column).
CLOUDS = tuple(REGISTRY)
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


@contextmanager
def importing(cloud: str) -> Iterator[None]:
    """Around a provider's import of its cloud's modules: an SDK its extra brings, missing, is a ConfigError
    that names the extra (the error of any other missing module passes unchanged)."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (error := missing_extra(exc, f"cloud {cloud!r}")) is not None:
            raise ConfigError([f"cloud: {error}"]) from None
        raise


# --- the row types of the folders' tables (here, so a folder's table imports no module that merges it) ---


#: The input a cluster-handle component records its Kubernetes minor under (elastic_gpu/cluster_handle.py
#: handle_inputs): the version policy judges an existing cluster's handle by it.
HANDLE_VERSION_INPUT = "kubernetesVersion"


def minor_key(minor: str) -> tuple[int, int]:
    """ "1.33" (or "1.33.2") -> (1, 33): minors ordered as numbers, not text."""
    major, m = minor.split(".")[:2]
    return int(major), int(m)


def next_minor(minor: str) -> str:
    """ "1.33" -> "1.34"."""
    major, m = minor_key(minor)
    return f"{major}.{m + 1}"


@dataclass(frozen=True)
class ReplaceRule:
    """The inputs of one resource type whose change replaces it (elastic_gpu/tools/replacement.py)."""

    #: input paths (camelCase, as the engine sees them; "a.b" = nested key) whose change replaces
    fields: tuple[str, ...]
    #: where the list comes from
    source: str


@dataclass(frozen=True)
class InlinePoolRule:
    """Node pools declared inside their cluster resource (a list input, one entry per pool, by name)."""

    #: the list input holding the pools, and the key that names each entry
    list_field: str
    key: str
    #: fields of one pool the cloud refuses to change on an existing pool
    fields: tuple[str, ...]
    source: str
    #: the steps that make such a change by hand: (pool name, cluster inputs, the pool's new inputs) -> text
    way_out: Callable[[str, Mapping[str, Any], Mapping[str, Any]], str]


@dataclass(frozen=True)
class KeptRule:
    """Inputs of one resource type that its provider keeps at their last value when the program drops them
    (Optional and Computed in the bridged Terraform schema: the plan has no change for an input the config leaves
    out), and the value each of them takes when a resource is created without it."""

    #: input paths (camelCase, "a.b" = nested key); a path covers everything under it
    fields: tuple[str, ...]
    #: path -> what the provider stores when the input is never given (an absent input, then this value, is no change)
    created_as: Mapping[str, Any]
    source: str

    def covers(self, path: str) -> bool:
        return any(path == f or path.startswith(f"{f}.") for f in self.fields)


@dataclass(frozen=True)
class ReplacementRows:
    """What replaces the cloud's resources on change (`diff`, elastic_gpu/tools/replacement.py), each cloud's
    built by its `<cloud>/replacement.py` as `ROWS`; its builders read the same rows (the pool name digest)."""

    pool_replace_fields: Mapping[str, ReplaceRule]
    other_replace_fields: Mapping[str, ReplaceRule]
    #: the input that is a pool's cloud name
    pool_name_field: Mapping[str, str]
    inline_pool_refused_fields: Mapping[str, InlinePoolRule]
    #: node-pool inputs whose in-place update replaces every node of the pool
    node_rolling_fields: Mapping[str, ReplaceRule]
    #: inputs the provider keeps when the program drops them (no change in `pulumi preview --diff`)
    kept_when_dropped: Mapping[str, KeptRule]


def get_cloud(name: str) -> RegisteredCloud:
    """The provider of a name from the registry; an unknown name is a ConfigError. Typed as what the low layers
    ask of it (cloud_facts.RegisteredCloud): each folder's `PROVIDER` is annotated, and so checked, as the whole
    `CloudProvider` (elastic_gpu/provider.py), and an edge that needs more of it narrows it to its own layer's part
    (`StackConfig.provider`, `pool_args.pool_cloud`, `cluster_autoscaler.autoscaler_cloud`)."""
    if name not in REGISTRY:
        raise ConfigError([f"cloud: {name!r} is unknown; allowed: {', '.join(REGISTRY)}"])
    provider: RegisteredCloud = import_module(REGISTRY[name]).PROVIDER
    return provider


def all_clouds() -> list[RegisteredCloud]:
    """Every provider, in `REGISTRY` order: for the tables merged over every cloud, which read its low part."""
    return [get_cloud(name) for name in REGISTRY]


# --- the shape every cloud's provider shares -------------------------------------------------------------------


class Cloud:
    """What the clouds' provider classes share (elastic_gpu/<cloud>/provider.py subclasses it): their identity as
    class attributes, no ignored settings unless a cloud names some, and `loading()`, the guard around each
    method's import of its cloud's modules. Each subclass's methods only import one module of its folder and hand
    back the record that module builds (`RULES`, `BUILDER`, `ROWS`), so the type checker sees every member."""

    #: `CloudProvider.name`, `.facts`, `.owner`, set by each cloud's class
    name: str
    facts: CloudFacts
    owner: str

    def loading(self) -> AbstractContextManager[None]:
        """Around an import of the cloud's modules: a missing SDK its extra brings is a ConfigError naming the
        extra (`importing`)."""
        guard: AbstractContextManager[None] = importing(self.name)
        return guard

    def ignored_settings(self) -> Mapping[tuple[str, str | None], str]:
        """`CloudProvider.ignored_settings`: none unless the cloud names some."""
        return {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
