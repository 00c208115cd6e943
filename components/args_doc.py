"""`help()` for the Args dataclasses: each field's type, default and meaning in the class docstring.

The meaning is written once, as the docstring under the field (where an editor shows it); Python
drops those strings at run time, so `documented` reads them from the source and appends a
"Fields" section to the class docstring, which is what `help()` and `pydoc` print.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import textwrap
from typing import Any, TypeVar

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


def documented(cls: type[T]) -> type[T]:
    """Append "Fields: name: type = default, meaning" to a dataclass's docstring (after @dataclass)."""
    docs = field_docs(cls)
    lines = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        annotation = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", repr(f.type))
        lines.append(f"    {f.name}: {annotation} = {_default(f)}")
        lines += [f"        {line}" for line in docs.get(f.name, "(undocumented)").splitlines()]
    own = cls.__doc__ or ""
    if own.startswith(f"{cls.__name__}("):  # the signature dataclass writes when there is no docstring
        own = ""
    cls.__doc__ = (
        (inspect.cleandoc(own) + "\n\n" if own else "") + "Fields (name: type = default):\n" + "\n".join(lines)
    )
    return cls
