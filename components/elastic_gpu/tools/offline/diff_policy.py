"""`diff`: which policy violations a change fixes, keeps and adds.

A base whose preview completes is a base, whatever its policy verdict: the upgrade away from an end-of-life minor,
or the change that adds the missing tags, is exactly the diff a user wants to see. Each side is judged by the pack
(the base as its own preview judged it); a violation is the same on both sides when the same policy reports it on
the same resource (URN; None for a stack-wide one), so a message that changed with the change (another minor,
another missing key) is kept, not one fixed and one added.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from elastic_gpu.tools.offline.policy_run import PolicyReport, Violation
from elastic_gpu.tools.offline.terminal import paint

#: How much of a violation's message the diff repeats (the new side's whole report follows it).
MESSAGE_WIDTH = 160
#: Resources named per line before "and N more".
SHOWN_RESOURCES = 4
_LEVEL_COLOUR = {"mandatory": "red", "advisory": "yellow"}


@dataclass
class PolicyChanges:
    """The base's and the new side's violations, matched."""

    fixed: list[Violation] = field(default_factory=list)
    #: (the base's, the new side's)
    kept: list[tuple[Violation, Violation]] = field(default_factory=list)
    added: list[Violation] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "fixed": [asdict(v) for v in self.fixed],
            "kept": [asdict(new) for _, new in self.kept],
            "added": [asdict(v) for v in self.added],
        }


def _key(v: Violation) -> tuple[str, str | None]:
    return v.policy, v.urn


def policy_changes(base: PolicyReport, head: PolicyReport) -> PolicyChanges:
    """Match the new side's violations to the base's: the same message on the same resource first, then the same
    policy on the same resource; what is left of the base is fixed, what is left of the new side added."""
    left = list(base.violations)
    out = PolicyChanges()
    unmatched = []
    for v in head.violations:
        same = next((b for b in left if _key(b) == _key(v) and b.message == v.message), None)
        if same is None:
            unmatched.append(v)
        else:
            left.remove(same)
            out.kept.append((same, v))
    for v in unmatched:
        same = next((b for b in left if _key(b) == _key(v)), None)
        if same is None:
            out.added.append(v)
        else:
            left.remove(same)
            out.kept.append((same, v))
    out.fixed = left
    return out


def _short(message: str) -> str:
    line = message.splitlines()[0] if message else ""
    return line if len(line) <= MESSAGE_WIDTH else line[: MESSAGE_WIDTH - 3] + "..."


def _lines(status: str, violations: Iterable[Violation]) -> list[str]:
    """One line per policy and message, naming the resources it was reported on."""
    groups: dict[tuple[str, str, str], list[Violation]] = {}
    for v in violations:
        groups.setdefault((v.level, v.policy, v.message), []).append(v)
    lines = []
    for (level, policy, message), group in groups.items():
        names = [f"{v.type}: {v.name}" for v in group if v.urn]
        more = f" and {len(names) - SHOWN_RESOURCES} more" if len(names) > SHOWN_RESOURCES else ""
        where = f" ({', '.join(names[:SHOWN_RESOURCES])}{more})" if names else ""
        tag = paint(f"[{level}]", _LEVEL_COLOUR.get(level, "bold"))
        lines.append(f"  {status:<5}  {tag}  {policy}{where}")
        lines.append(f"         {_short(message)}")
    return lines


def render_policy_changes(changes: PolicyChanges | None, base_label: str) -> list[str]:
    """The "Policy" block of the diff text: what the change fixes, keeps and adds against the base."""
    if changes is None:
        return [f"Policy against the base: not known ({base_label}'s preview gave no policy verdict)"]
    fixed, kept, added = changes.fixed, [new for _, new in changes.kept], changes.added
    counts = f"{len(fixed)} fixed, {len(kept)} kept, {len(added)} added"
    mandatory = [v for v in (*kept, *added) if v.level == "mandatory"]
    tail = f"; {len(mandatory)} mandatory left" if mandatory else ""
    lines = [f"Policy against the base ({base_label}): {counts}{tail}"]
    lines += _lines("fixed", fixed) + _lines("kept", kept) + _lines("added", added)
    return lines
