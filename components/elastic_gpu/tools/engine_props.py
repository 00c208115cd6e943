"""The engine's props as plain values: a real `pulumi preview` hands the analyzer props whose values may not be
known yet (pulumi_policy's proxies raise UnknownValueError where such a value is read). The readers
(tools/<cloud>/reader.py), the policy rules and the simulation read props through these, each choosing what an
unknown value becomes: skipped (`known`, `read_known`), a marker (`plain_props`, UNKNOWN), or an error raised
where it is read (`strict_props`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy.proxy import UnknownValueError


def known(props: Mapping[str, Any] | None, key: str) -> Any:
    """props[key], or None when missing or not known yet (during a real preview)."""
    try:
        value = (props or {}).get(key)
    except UnknownValueError:
        return None
    return value if isinstance(value, str) and value else None


#: A value the engine does not know yet (a real `pulumi preview`), in `plain_props`' result.
UNKNOWN = object()


def _copy_props(
    value: Any, unknown: Callable[[UnknownValueError], Any], mapping: type[dict[str, Any]], sequence: type[list[Any]]
) -> Any:
    """The engine's props (its Mapping and Sequence proxies, which raise UnknownValueError at a value not known
    yet) copied into `mapping`s and `sequence`s, each unknown value replaced by `unknown(its error)`."""
    if isinstance(value, Mapping):
        out = mapping()
        for key in value:
            try:
                out[key] = _copy_props(value[key], unknown, mapping, sequence)
            except UnknownValueError as exc:
                out[key] = unknown(exc)
        return out
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        items = sequence()
        for i in range(len(value)):
            try:
                items.append(_copy_props(value[i], unknown, mapping, sequence))
            except UnknownValueError as exc:
                items.append(unknown(exc))
        return items
    return value


def plain_props(value: Any) -> Any:
    """The engine's props as plain dicts and lists; a value not known yet becomes UNKNOWN."""
    return _copy_props(value, lambda _: UNKNOWN, dict, list)


class _Unknown:
    """A value the engine does not know yet, in `strict_props`' result: the proxy's error, raised where read."""

    __slots__ = ("error",)

    def __init__(self, error: UnknownValueError) -> None:
        self.error = error


def _read(value: Any) -> Any:
    if isinstance(value, _Unknown):
        raise UnknownValueError(value.error.unknown_type_sentinel, value.error.props)
    return value


class StrictDict(dict[str, Any]):
    """A dict of the engine's props whose values not known yet raise UnknownValueError where they are read, as
    the engine's proxy does (so a rule fails "can't run during preview" only when it needs such a value)."""

    def __getitem__(self, key: str) -> Any:
        return _read(super().__getitem__(key))

    def get(self, key: str, default: Any = None) -> Any:
        return _read(super().get(key, default))

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]  # a list: each value read once
        return [(k, self[k]) for k in self]

    def values(self) -> list[Any]:  # type: ignore[override]  # a list: each value read once
        return [self[k] for k in self]

    def __iter__(self) -> Iterator[str]:
        # Defined so that dict(d) and {**d} read through __getitem__ (CPython copies an unchanged dict's values
        # as they are stored).
        return super().__iter__()


class StrictList(list[Any]):
    """A list of the engine's props whose elements not known yet raise UnknownValueError where they are read."""

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return StrictList(super().__getitem__(index))
        return _read(super().__getitem__(index))

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))


def strict_props(value: Any) -> Any:
    """The engine's props as a StrictDict and StrictLists: plain containers for code that reads dicts and lists,
    raising UnknownValueError at a value not known yet when (and only when) it is read."""
    return _copy_props(value, _Unknown, StrictDict, StrictList)


def has_unknown(value: Any) -> bool:
    """Whether `plain_props`' result holds a value not known yet."""
    if value is UNKNOWN:
        return True
    if isinstance(value, dict):
        return any(has_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(has_unknown(v) for v in value)
    return False


def known_part(value: Any) -> Any:
    """`plain_props`' result without what is not known yet: a list keeps its known elements, a dict its known
    keys; UNKNOWN itself stays UNKNOWN."""
    if isinstance(value, dict):
        return {k: known_part(v) for k, v in value.items() if v is not UNKNOWN}
    if isinstance(value, list):
        return [known_part(v) for v in value if v is not UNKNOWN]
    return value


def read_known(props: Mapping[str, Any], key: str, default: Any = None, *, prune: bool = True) -> Any:
    """props[key] as plain values (`plain_props`) without the parts not known yet (`known_part`; with `prune`
    False they stay UNKNOWN, for a reader that shows each), or `default` when it is missing or not known at
    all: for what only the reports and the simulation read, so an unknown there never hides a node group from
    a policy, nor reaches a report as the engine's placeholder."""
    try:
        value = props.get(key)
    except UnknownValueError:
        return default
    value = plain_props(value)
    if value is None or value is UNKNOWN:
        return default
    return known_part(value) if prune else value
