"""Each offline run starts from the SDK's state of its own (runner._run: pulumi.runtime.reset_options)."""

from __future__ import annotations

from pathlib import Path

from policy_programs import write_program

from elastic_gpu.tools.offline.runner import run_preview

GOOD = """
import pulumi

pulumi.export("answer", pulumi.Output.from_input(41).apply(lambda v: v + 1))
pulumi.export("root", pulumi.get_root_directory())
"""


def test_a_program_reads_its_root_directory_as_under_the_cli(tmp_path: Path) -> None:
    """pulumi.get_root_directory() is the directory of the project's Pulumi.yaml, as the CLI sets it."""
    directory = write_program(GOOD, tmp_path / "good")
    assert run_preview("test", directory).outputs["root"].value == str(directory.resolve())
