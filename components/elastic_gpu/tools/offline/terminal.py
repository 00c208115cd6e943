"""Text for a terminal: colour only where a person reads it (stdout is a TTY, and NO_COLOR unset, as
no-color.org asks), never in a pipe, a file or CI logs that parse the output."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterable

_CODES = {"red": "31", "yellow": "33", "green": "32", "bold": "1"}


def colour_on() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def paint(text: str, colour: str) -> str:
    """`text` in `colour` (red, yellow, green, bold) on a terminal; as is elsewhere."""
    return f"\033[{_CODES[colour]}m{text}\033[0m" if colour_on() else text


def once_each(lines: Iterable[str]) -> list[str]:
    """Each distinct line once, in first-seen order, a repeated one marked with its count: a warning the
    program logs per resource says its thing once."""
    counts = Counter(lines)
    return [line if counts[line] == 1 else f"{line} ({counts[line]} times)" for line in counts]
