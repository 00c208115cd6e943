"""Each offline run starts from the SDK's state of its own (runner._run: pulumi.runtime.reset_options)."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_gpu.tools.offline.runner import ProgramError, run_preview

FAILING = """
import pulumi

pulumi.export("pending", pulumi.Output.from_input(2).apply(lambda v: v + 1))
raise ValueError("the program's own error")
"""

GOOD = """
import pulumi

pulumi.export("answer", pulumi.Output.from_input(41).apply(lambda v: v + 1))
pulumi.export("root", pulumi.get_root_directory())
"""


def _program(directory: Path, source: str) -> Path:
    (directory / "stacks").mkdir(parents=True)
    (directory / "Pulumi.yaml").write_text("name: consumer\nruntime: python\nstackConfigDir: stacks\n")
    (directory / "stacks" / "Pulumi.test.yaml").write_text("config: {}\n")
    (directory / "__main__.py").write_text(source)
    return directory


def test_a_run_after_a_failed_one_does_not_wait_on_its_outputs(tmp_path: Path) -> None:
    """A program that raises leaves its pending Output tasks, bound to its closed loop, in the SDK's set of outputs
    to wait for; the next run has a set of its own, so it neither waits on them nor fails on their loop."""
    with pytest.raises(ProgramError, match="the program's own error"):
        run_preview("test", _program(tmp_path / "failing", FAILING))
    preview = run_preview("test", _program(tmp_path / "good", GOOD))
    assert preview.outputs["answer"].value == 42


def test_a_program_reads_its_root_directory_as_under_the_cli(tmp_path: Path) -> None:
    """pulumi.get_root_directory() is the directory of the project's Pulumi.yaml, as the CLI sets it."""
    directory = _program(tmp_path / "good", GOOD)
    assert run_preview("test", directory).outputs["root"].value == str(directory.resolve())
