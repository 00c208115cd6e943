"""Where the tests find the documentation: README.md is the front page, docs/<topic>.md the rest."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """The text of README.md (`page("README.md")`) or of a page in docs/ (`page("azure.md")`)."""
    path = ROOT / name if name == "README.md" else DOCS / name
    return path.read_text(encoding="utf-8")


def all_pages() -> dict[Path, str]:
    """README.md and every docs/*.md, by path."""
    paths = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    return {p: p.read_text(encoding="utf-8") for p in paths}
