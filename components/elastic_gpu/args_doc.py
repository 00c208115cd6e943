"""`help()` for the Args (settings models, dataclasses): each field's type, default and meaning in its docstring.

The meaning is written once, as the docstring under the field (where an editor shows it); Python
drops those strings at run time, so pydantic keeps them as the fields' descriptions (settings models) or
`documented` reads them from the source (dataclasses), and appends a "Fields" section to the class
docstring, which is what `help()` and `pydoc` print.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic.fields import FieldInfo

T = TypeVar("T")


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each annotated field of `cls`'s source."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):  # no source (e.g. a frozen build): fields stay undocumented
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for stmt, after in itertools.pairwise(body):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return docs


def _default(f: dataclasses.Field[Any]) -> str:
    if f.default is not dataclasses.MISSING:
        return repr(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return repr(f.default_factory())
    return "required"


def _model_default(f: FieldInfo) -> str:
    if f.is_required():
        return "required"
    if f.default_factory is not None:
        return repr(f.default_factory())  # type: ignore[call-arg]  # our factories take no argument
    return repr(f.default)


def _declared_annotation(cls: type, name: str) -> str:
    """The annotation of field `name` as written where it is declared (`list[Expander]`, not the Literal)."""
    for klass in cls.__mro__:
        annotation = vars(klass).get("__annotations__", {}).get(name)
        if annotation is not None:
            return _annotation_text(annotation)
    return "?"


def _field_rows(cls: type) -> list[tuple[str, str, str, str]]:
    """(name, type, default, meaning) of each field of a dataclass or a settings model."""
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        return [
            (name, _declared_annotation(cls, name), _model_default(f), f.description or "(undocumented)")
            for name, f in cls.model_fields.items()
        ]
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):  # a base's fields are documented where declared
        docs |= field_docs(klass) if dataclasses.is_dataclass(klass) else {}
    return [
        (f.name, _annotation_text(f.type), _default(f), docs.get(f.name, "(undocumented)"))
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]  # a dataclass, by the test above
    ]


def documented(cls: type[T]) -> type[T]:
    """Append "Fields: name: type = default, meaning" to the docstring of a dataclass (after @dataclass) or a
    settings model (whose field docstrings pydantic keeps as descriptions)."""
    lines = []
    for name, annotation, default, doc in _field_rows(cls):
        lines.append(f"    {name}: {annotation} = {default}")
        lines += [f"        {line}" for line in doc.splitlines()]
    own = cls.__doc__ or ""
    if own.startswith(f"{cls.__name__}("):  # the signature dataclass writes when there is no docstring
        own = ""
    cls.__doc__ = (
        (inspect.cleandoc(own) + "\n\n" if own else "") + "Fields (name: type = default):\n" + "\n".join(lines)
    )
    cls.__signature__ = python_signature(cls)  # type: ignore[attr-defined]  # read by inspect.signature and help()
    return cls


class _Text:
    """An annotation or a default shown as written (`list[Expander]`, `['priority', 'least-waste']`): inspect
    prints a parameter's annotation and default by their repr."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def python_signature(cls: type) -> inspect.Signature:
    """The constructor as a program calls it: the Python field names (`max_size`, not the stack file's
    `maxSize` that pydantic's own signature shows), each field's declared type (not its validation bounds and
    patterns) and its documented default (a factory's value, not `<factory>`). A settings model's Args take
    keywords only (ArgsModel.__init__); a dataclass's, its fields in order."""
    kind = inspect.Parameter.KEYWORD_ONLY if issubclass(cls, BaseModel) else inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [
        inspect.Parameter(
            name,
            kind,
            annotation=_Text(annotation),
            default=inspect.Parameter.empty if default == "required" else _Text(default),
        )
        for name, annotation, default, _ in _field_rows(cls)
    ]
    return inspect.Signature(params, return_annotation=None)


def _annotation_text(annotation: object) -> str:
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation))


def output_docs(cls: type, handle: type | None = None) -> list[tuple[str, str, str]]:
    """(name, type, meaning) of each output of a component: the annotated, docstringed attributes and the
    documented properties of the cluster-handle protocol it implements, then of `cls` and its elastic-gpu
    bases (base first)."""
    seen: dict[str, tuple[str, str, str]] = {}
    classes = [*(reversed(handle.__mro__) if handle is not None else ()), *reversed(cls.__mro__)]
    for klass in classes:
        if not klass.__module__.startswith("elastic_gpu"):
            continue
        docs = field_docs(klass)
        for attr, annotation in vars(klass).get("__annotations__", {}).items():
            if attr in docs:
                seen[attr] = (attr, _annotation_text(annotation), docs[attr])
        for attr, value in vars(klass).items():
            if isinstance(value, property) and value.__doc__ and not attr.startswith("_"):
                returns = value.fget.__annotations__.get("return", "") if value.fget else ""
                seen[attr] = (attr, _annotation_text(returns), inspect.cleandoc(value.__doc__))
    return list(seen.values())


def documented_component(args: type | None, handle: type | None = None) -> Callable[[type[T]], type[T]]:
    """`help()` for a ComponentResource: how to declare it (not Pulumi's `:param str t` of
    ComponentResource.__init__) and an "Outputs" section listing what it exposes, written once as
    the docstring under each annotated attribute."""

    def wrap(cls: type[T]) -> type[T]:
        init = vars(cls).get("__init__")
        if init is not None and not (init.__doc__ or "").strip():
            how = (
                f"`args` is a {args.__name__} (help({args.__name__}) lists its fields with defaults)"
                if args is not None
                else "the arguments are described in the class docstring"
            )
            init.__doc__ = (
                f"Declare the {cls.__name__} `name` (its children's names derive from it); {how}; `opts` are "
                "Pulumi's ResourceOptions (parent, provider, depends_on, protect, ...). Bad arguments raise "
                "elastic_gpu.ConfigError before anything is declared."
            )
        lines = []
        for attr, annotation, doc in output_docs(cls, handle):
            lines.append(f"    {attr}: {annotation}")
            lines += [f"        {line}" for line in doc.splitlines()]
        own = inspect.cleandoc(cls.__doc__ or "")
        cls.__doc__ = own + ("\n\nOutputs (attribute: type):\n" + "\n".join(lines) if lines else "")
        return cls

    return wrap
