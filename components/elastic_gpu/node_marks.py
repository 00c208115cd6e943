"""What a change of a node spec's field does to the node pool it feeds, written once on the field, on every cloud.

Each cloud's node spec (`<cloud>/node_spec.py`, a frozen dataclass) marks the fields that set an input of its
node-pool resource, in the field's metadata:

- `replaces(input, source=...)`: a change replaces the node pool. Either the provider marks the input ForceNew,
  or (`refused_in_place=True`) the provider would update it in place and the cloud refuses the change, so the
  only way to change it is a new pool (and a pool inline in its cluster cannot change it at all).
- `rolls(input, source=...)`: updated in place, but the update replaces every node of the pool.
- `sets(input)`: updated in place (named so that what the spec sets is known: a program's own provider
  arguments may not set it).

`marks` lists a spec's marked fields, in declaration order, and `digest_marks` the values that go into a node
pool's name. From them come, per cloud: the name digest (a replacing change renames the pool, so the engine
creates the new one before deleting the old), the replace rows (`<cloud>/replacement.py`), docs/day-two.md's
replace table (`python -m elastic_gpu tables`), and the inputs a program's own arguments may not set.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

#: The field-metadata key a mark is kept under.
MARK = "elastic_gpu.node_mark"

Effect = Literal["sets", "rolls", "replaces"]
#: Whether a replacing field's value goes into the pool name's digest: always; only when set (so that the names
#: of pools without it stayed what they were when the mark was added); never (the value follows another marked
#: field's, or never varies).
Digest = Literal["always", "when_set", "never"]


@dataclass(frozen=True)
class Mark:
    """What a change of one spec field does to the provider input it sets."""

    #: the provider input, as the engine sees it (camelCase, dotted for a nested one: `nodeConfig.spot`)
    input: str
    effect: Effect
    #: why (the upstream source: provider file, API doc); empty for `sets`
    source: str = ""
    digest: Digest = "always"
    #: `replaces` only: the cloud refuses an in-place change (the provider does not mark the input ForceNew)
    refused_in_place: bool = False


def sets(input: str) -> dict[str, Mark]:
    """The field sets `input`, which is updated in place."""
    return {MARK: Mark(input, "sets")}


def rolls(input: str, *, source: str) -> dict[str, Mark]:
    """The field sets `input`, whose in-place update replaces every node of the pool (`source`: why)."""
    return {MARK: Mark(input, "rolls", source)}


def replaces(input: str, *, source: str, digest: Digest = "always", refused_in_place: bool = False) -> dict[str, Mark]:
    """The field sets `input`, whose change replaces the pool (`source`: why)."""
    return {MARK: Mark(input, "replaces", source, digest, refused_in_place)}


def marks(spec: type[Any], effect: Effect | None = None) -> tuple[tuple[str, Mark], ...]:
    """The spec class's marked fields as (field name, mark), in declaration order; of one effect if given."""
    out = []
    for f in dataclasses.fields(spec):
        mark = f.metadata.get(MARK)
        if isinstance(mark, Mark) and (effect is None or mark.effect == effect):
            out.append((f.name, mark))
    return tuple(out)


def marked_inputs(spec: type[Any], effect: Effect, *, refused_in_place: bool | None = None) -> tuple[str, ...]:
    """The inputs the spec's fields of `effect` set, in declaration order, each once (`refused_in_place`: only
    those the cloud refuses to change in place, or only the others)."""
    chosen = (m for _, m in marks(spec, effect) if refused_in_place is None or m.refused_in_place == refused_in_place)
    return tuple(dict.fromkeys(mark.input for mark in chosen))


def is_set(value: object) -> bool:
    """A value the provider receives: not None, and not an empty string, list or mapping."""
    if value is None:
        return False
    return not (isinstance(value, str | tuple | list | Mapping) and len(value) == 0)


def digest_marks(node: object) -> list[tuple[Mark, Any]]:
    """The replacing marks of a node spec (an instance) whose values its pool's name digests, with those values."""
    out = []
    for name, mark in marks(type(node), "replaces"):
        value = getattr(node, name)
        if mark.digest == "always" or (mark.digest == "when_set" and is_set(value)):
            out.append((mark, value))
    return out
