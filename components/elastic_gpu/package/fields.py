"""What the package schema needs to know of each setting, read from where the setting is declared.

A component's settings are declared once, on its Args (a dataclass today; a pydantic model is read the
same way), with the docstring under each field that `help()` prints. `fields_of` turns either into
`Field`s (name, resolved type, required or not, description), so the schema generator never depends on
how the Args are written; the keyword arguments of a constructor such as `EksCluster.existing` are read
with `keyword_fields`, their descriptions from the class docstring's "Arguments:" paragraph.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pulumi
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from elastic_gpu.args_doc import field_docs


@dataclass(frozen=True)
class Field:
    """One setting as the package schema sees it."""

    name: str
    """The Python name (`max_size`)."""
    annotation: Any
    """The resolved type (`int`, `list[str]`, `GpuSpec | None`, ...)."""
    required: bool
    """No default: the program must set it."""
    description: str | None
    """The docstring under the field (what `help()` prints), or None."""

    @property
    def schema_name(self) -> str:
        """The name in the package schema and in every other language's SDK (`maxSize`)."""
        return to_camel(self.name)


def fields_of(args: type) -> list[Field]:
    """The fields of a dataclass or a pydantic model, in declaration order (a base class's first)."""
    if isinstance(args, type) and issubclass(args, BaseModel):
        return [
            Field(name, info.annotation, info.is_required(), info.description)
            for name, info in args.model_fields.items()
        ]
    if not dataclasses.is_dataclass(args):
        raise TypeError(f"{args.__name__} is neither a dataclass nor a pydantic model")
    hints = typing.get_type_hints(args)
    docs: dict[str, str] = {}
    for klass in reversed(args.__mro__):  # a base's fields (NodeOverrides) are documented where declared
        if dataclasses.is_dataclass(klass):
            docs |= field_docs(klass)
    return [
        Field(
            f.name,
            hints[f.name],
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
            docs.get(f.name),
        )
        for f in dataclasses.fields(args)
    ]


#: A handle constructor's keywords that are no package input: Pulumi's options, and the Python constructor a
#: message names (`made_by`, which EksCluster.from_cluster and the like pass).
NOT_INPUTS = ("opts", "made_by")


def keyword_fields(
    function: Callable[..., Any], documented_in: type, skip: tuple[str, ...] = NOT_INPUTS
) -> list[Field]:
    """The keyword-only parameters of `function` (a handle's constructor), described by `documented_in`'s
    "Arguments:" paragraph (`` `name` (what it is); `a` / `b` (what they are); ...``)."""
    docs = argument_docs(inspect.getdoc(documented_in) or "")
    return [
        Field(p.name, _resolved(p.annotation, function), p.default is inspect.Parameter.empty, docs.get(p.name))
        for p in inspect.signature(function).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in skip
    ]


class _Inputs:
    """`pulumi.Input[T]` as `T | pulumi.Output[T]`: pulumi's own alias holds a forward reference
    ("Output[T]") that `typing.get_type_hints` cannot resolve outside pulumi's module."""

    def __getitem__(self, item: Any) -> Any:
        return typing.Union[item, pulumi.Output[item]]  # noqa: UP007 (a runtime value, not an annotation)


class _Pulumi:
    Input = _Inputs()

    def __getattr__(self, name: str) -> Any:
        return getattr(pulumi, name)


def _resolved(annotation: Any, function: Callable[..., Any]) -> Any:
    """A parameter's annotation as a type (`from __future__ import annotations` keeps it a string)."""
    return _evaluated(annotation, function.__globals__)


def _evaluated(annotation: Any, namespace: dict[str, Any]) -> Any:
    if not isinstance(annotation, str):
        return annotation
    return eval(annotation, namespace, {"pulumi": _Pulumi()})  # the module's own annotation text


def argument_docs(docstring: str) -> dict[str, str]:
    """`` `name` (text) `` entries of a docstring's "Arguments:" paragraph, parentheses balanced; a text
    shared by `` `a` / `b` (text) `` documents both."""
    start = docstring.find("Arguments:")
    if start < 0:
        return {}
    paragraph = docstring[start:].split("\n\n", 1)[0].replace("\n", " ")
    docs: dict[str, str] = {}
    for match in re.finditer(r"((?:`\w+`(?: / )?)+) \(", paragraph):
        depth, end = 1, match.end()
        while end < len(paragraph) and depth:
            depth += {"(": 1, ")": -1}.get(paragraph[end], 0)
            end += 1
        text = re.sub(r"\s+", " ", paragraph[match.end() : end - 1]).strip()
        for name in re.findall(r"`(\w+)`", match.group(1)):
            docs[name] = text[0].upper() + text[1:] + "." if text else ""
    return docs


def output_fields(component: type, handle: type | None = None) -> list[Field]:
    """The documented, annotated attributes and properties of a component and its elastic-gpu bases (base
    first), after those of the cluster-handle protocol it implements: what `help()` lists under "Outputs"."""
    found: dict[str, Field] = {}
    for klass in [*(reversed(handle.__mro__) if handle else ()), *reversed(component.__mro__)]:
        if not klass.__module__.startswith("elastic_gpu"):
            continue
        docs = field_docs(klass)
        namespace = vars(sys.modules[klass.__module__])
        for name, annotation in vars(klass).get("__annotations__", {}).items():
            if name in docs and not name.startswith("_"):
                found[name] = Field(name, _evaluated(annotation, namespace), True, docs[name])
        for name, value in vars(klass).items():
            if isinstance(value, property) and value.fget and value.__doc__ and not name.startswith("_"):
                returns = _evaluated(value.fget.__annotations__.get("return"), namespace)
                found[name] = Field(name, returns, True, inspect.cleandoc(value.__doc__))
    return list(found.values())
