"""Each cloud folder's README.md names every module and subfolder it holds, one line each, and points to
CONTRIBUTING.md for what a cloud must give (a file added without a line fails here)."""

from __future__ import annotations

import re

import pytest

from tests.docs_pages import ROOT

PACKAGE = ROOT / "components" / "elastic_gpu"


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_the_cloud_readme_names_each_file_of_its_folder(cloud: str) -> None:
    folder = PACKAGE / cloud
    readme = (folder / "README.md").read_text(encoding="utf-8")
    held = {p.name for p in folder.glob("*.py") if p.name != "__init__.py"}
    held |= {f"{p.name}/" for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    named = {n for n in re.findall(r"`([\w/]+(?:\.py|/))`", readme) if not n.startswith("elastic_gpu/")}
    assert held - named == set(), f"{cloud}/README.md: add a line for each"
    assert named - held == set(), f"{cloud}/README.md names files the folder does not hold"
    assert "(../../../CONTRIBUTING.md)" in readme and (folder / "../../../CONTRIBUTING.md").resolve().is_file()
    assert len(readme.splitlines()) <= 30
