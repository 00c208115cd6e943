"""The one exception type for bad input."""

from __future__ import annotations


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
