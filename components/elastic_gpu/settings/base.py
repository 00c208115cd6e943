"""The base classes of every settings model, and the sanity bounds the clouds' options share.

A setting is declared once, as a field of a pydantic model: its type, its default (a named constant), its
bounds or pattern, and its docstring (the field's description: `help()`, the JSON Schema of the stack
file). The stack file's sections parse into models built on these classes (elastic_gpu/config.py) and the
components' Args are the same models plus what only a program has (elastic_gpu/settings/__init__.py). A cloud's
own settings of a section are a `CloudOptions` part declared in `elastic_gpu/settings/<cloud>.py`
and merged into the section; set for another cloud, they are refused.

This module imports nothing of the library but the validators' bounds, so a cloud's options import it
without loading the config or the components.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr
from pydantic.alias_generators import to_camel

from elastic_gpu.args_doc import python_signature
from elastic_gpu.validation import NODE_DISK_GIB, NODES_PER_CLUSTER

#: Every node count is bounded before any arithmetic: no pool of a cluster holds more nodes than Kubernetes
#: supports in one cluster (validation.NODES_PER_CLUSTER); the clouds' own, lower limits are in their rules.
MAX_NODES = NODES_PER_CLUSTER.high
#: A node disk's bounds on every cloud (validation.NODE_DISK_GIB); the clouds' own are in their rules, and a pool's
#: disk is checked against both (validation.disk_bounds).
MIN_DISK_GIB = NODE_DISK_GIB.low
MAX_DISK_GIB = NODE_DISK_GIB.high
#: USD per hour of one node: the dearest GPU VMs cost about $100/h, so $10,000/h is a typo, not a price.
MAX_USD_PER_HOUR = 10_000.0


class SettingsModel(BaseModel):
    """A section's settings: snake_case attributes, camelCase keys in a stack file, strict types (a "4" is no
    integer, 4.5 is never rounded), no infinities, and each field's docstring as its description."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        strict=True,
        allow_inf_nan=False,  # `.inf` / `.nan` are YAML floats; no cloud API takes them
        use_attribute_docstrings=True,
    )


class StackModel(SettingsModel):
    """A part of the stack file: an unknown key is an error (with the allowed keys), and a parsed config is frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class CloudOptions(SettingsModel):
    """One cloud's own settings of a section, declared in `settings/<cloud>.py` and
    merged into the section's model: on every other cloud a value other than the default is refused
    (`cloud_only_settings`)."""

    cloud: ClassVar[str]
    """The cloud (elastic_gpu/clouds.py CLOUDS) whose settings these are; each part sets it in its own body."""


def cloud_only_settings(model: type[BaseModel]) -> dict[str, tuple[str, object]]:
    """Each field of `model` that a cloud's `CloudOptions` declares: the cloud, and the default that leaves it
    unset; in the model's field order."""
    owners: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if "cloud" in vars(klass) and issubclass(klass, CloudOptions):  # a cloud's part, not a merged model
            owners |= {name: klass.cloud for name in vars(klass).get("__annotations__", {}) if name != "cloud"}
    return {name: (owners[name], f.default) for name, f in model.model_fields.items() if name in owners}


class ArgsModel(SettingsModel):
    """A component's Args: built with keywords, never refused on construction (a program may hold Outputs and
    handles pydantic cannot judge); the component checks every field when it is declared and names each bad
    one (`<Component> '<name>': <Args>.<field>: ...`), before any resource is registered."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    _checked_by_stack: bool = PrivateAttr(default=False)

    @property
    def checked_by_stack(self) -> bool:
        """Made from a stack file whose settings and the cloud's rules on them were checked before any resource
        was declared (elastic_gpu.compose): the component does not check them again."""
        return self._checked_by_stack

    def mark_checked_by_stack(self) -> None:
        self._checked_by_stack = True

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        # pydantic sets the class's signature again when it completes a deferred model (on first use): the
        # stack file's camelCase aliases with their validation bounds. A program calls the Python names.
        cls.__signature__ = python_signature(cls)

    if not TYPE_CHECKING:  # the type checker sees pydantic's keyword __init__, with every field's type

        def __init__(self, /, *args: Any, **values: Any) -> None:
            cls = type(self)
            name = cls.__name__
            if args:
                raise TypeError(f"{name}() takes keyword arguments only (got {len(args)} positional)")
            if unknown := [key for key in values if key not in cls.model_fields]:
                raise TypeError(f"{name}() got an unexpected keyword argument {unknown[0]!r}")
            if missing := [key for key, f in cls.model_fields.items() if f.is_required() and key not in values]:
                raise TypeError(f"{name}() missing required keyword argument(s): {_quoted(missing)}")
            built = cls.model_construct(**values)
            for attr in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"):
                object.__setattr__(self, attr, getattr(built, attr))


@dataclass(frozen=True)
class Spelling:
    """How a caller names a setting and writes a flag in its messages: a stack file's `gpuPools[0].maxSize`
    and `false`, or a program's `SpotGpuPool 'x': SpotGpuPoolArgs.max_size` and `False`. A rule takes one and
    names the setting through it, so the stack file and a program run the same rule with the same message.
    Declared here, below the clouds' options, so a cloud's rule beside its setting can take one."""

    #: what leads each setting's name: "gpuPools[0]." or "SpotGpuPool 'x': SpotGpuPoolArgs."
    where: str
    #: camelCase keys and YAML's true/false (a stack file), or attribute names and Python's True/False
    stack_file: bool

    def word(self, key: str) -> str:
        """The setting's name as the caller writes it (`maxSize`, `max_size`)."""
        return to_camel(key) if self.stack_file else key

    def path(self, key: str) -> str:
        """Where the setting is (`gpuPools[0].maxSize`, `SpotGpuPool 'x': SpotGpuPoolArgs.max_size`)."""
        return f"{self.where}{self.word(key)}"

    def flag(self, value: bool) -> str:
        return str(value).lower() if self.stack_file else str(value)


def _quoted(names: Iterable[str]) -> str:
    return ", ".join(repr(n) for n in names)
