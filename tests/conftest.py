"""Shared fixtures: stack previews run once per session under the mock engine."""

from __future__ import annotations

import copy
import re
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from elastic_gpu.tools.offline.runner import Preview, run_preview

ROOT = Path(__file__).resolve().parent.parent
#: The package's source folder (the import name `elastic_gpu`, under components/).
PACKAGE = ROOT / "components" / "elastic_gpu"
#: Other projects' programs with the lines a user adds for GPU pools (tests/data/upstream/SOURCE.md).
UPSTREAM = ROOT / "tests" / "data" / "upstream"
#: A node-pool name ends in "-" and the digest of its replacement-forcing fields (elastic_gpu.tools.replacement).
DIGEST_SUFFIX = re.compile(r"-[0-9a-f]{6}$")


def stem(name: str) -> str:
    """A node-pool name without its digest ("gpu-dev-general-3f9a1c" -> "gpu-dev-general")."""
    assert DIGEST_SUFFIX.search(name), f"{name!r} has no digest suffix"
    return DIGEST_SUFFIX.sub("", name)


@cache
def stack_preview(stack: str) -> Preview:
    """The shipped stack's preview (cached: treat as read-only)."""
    return run_preview(stack, ROOT)


def stack_values(stack: str) -> dict[str, Any]:
    """A shipped stack's `config:` map, as a fresh copy to modify."""
    data = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return copy.deepcopy(data["config"])


def write_program_dir(root: Path, config: dict[str, Any], stack: str = "test") -> Path:
    """Write into `root` a program dir (this repo's __main__.py and Pulumi.yaml) with a custom stack config."""
    (root / "stacks").mkdir(exist_ok=True)
    (root / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (root / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    (root / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))
    return root


@pytest.fixture
def program_dir(tmp_path: Path):
    """Write a program dir (this repo's __main__.py and Pulumi.yaml) with a custom stack config."""

    def make(config: dict[str, Any], stack: str = "test") -> Path:
        return write_program_dir(tmp_path, config, stack)

    return make


@pytest.fixture
def run_program(tmp_path: Path):
    """Run a small Pulumi program (source text) that imports the components, under the mock engine."""

    def run(source: str) -> Preview:
        (tmp_path / "stacks").mkdir(exist_ok=True)
        (tmp_path / "Pulumi.yaml").write_text("name: consumer\nruntime: python\nstackConfigDir: stacks\n")
        (tmp_path / "stacks" / "Pulumi.test.yaml").write_text("config: {}\n")
        (tmp_path / "__main__.py").write_text(source)
        return run_preview("test", tmp_path)

    return run


def upstream_copy(name: str, tmp_path: Path, *replacements: tuple[str, str]) -> Path:
    """A copy of the upstream program `name` in `tmp_path`, each (old, new) replaced once in its __main__.py (old
    must be there: a test that edits a line the program no longer has fails, not passes)."""
    program = tmp_path / name
    shutil.copytree(UPSTREAM / name, program)
    main_py = program / "__main__.py"
    text = main_py.read_text()
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    main_py.write_text(text)
    return program
