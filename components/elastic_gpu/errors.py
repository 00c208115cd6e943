"""The one exception type for bad input, and the problem each of its lines says."""

from __future__ import annotations

from collections.abc import Iterable


class Problem(str):
    """One problem with a component's Args: the message exactly as the user reads it (a `str`, so every list of
    messages stays a `list[str]`), and, as data, the Args field it is about.

    `field` is the field's name on the Args (`max_size`, `tags`), whatever text leads the message; None when
    the message is about no one field. A stack file's pool names its problem by it (elastic_gpu.compose maps it
    through the section model's aliases to `gpuPools[1].maxSize`), so no one reads a field back out of a
    message's text. A plain `str` among problems is one with no field."""

    field: str | None

    def __new__(cls, message: str, field: str | None = None) -> Problem:
        problem = super().__new__(cls, message)
        problem.field = field
        return problem


def problem(where: str, field: str, text: str) -> Problem:
    """`{where}{field}: {text}`, about the Args field `field` (`where`: the component's prefix, e.g.
    "SpotGpuPool 't4': SpotGpuPoolArgs.")."""
    return Problem(f"{where}{field}: {text}", field)


def about(field: str, problems: Iterable[str]) -> list[str]:
    """`problems`, each about the Args field `field`: a helper's messages on one field (its tags, its labels,
    the cluster handle), which it names by the prefix it was given."""
    return [Problem(p, field) for p in problems]


def field_of(message: str) -> str | None:
    """The Args field a problem is about, None for a message that names none (a plain `str`)."""
    return message.field if isinstance(message, Problem) else None


class ConfigError(ValueError):
    """A stack config or component input is invalid.

    Raised before any resource is declared. ``problems`` holds one line per
    problem, each naming the field path, the value and what is allowed.
    """

    def __init__(self, problems: list[str], source: str = "stack config") -> None:
        self.problems = list(problems)
        self.source = source
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid {source} ({len(self.problems)} problem(s)):\n{lines}")
