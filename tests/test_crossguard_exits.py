"""CrossGuard's semantics offline: a mandatory violation fails `preview` and `diff` (exit 1) as it fails
`pulumi preview --policy-pack`; `diff` judges the new side; the exit codes are in `--help`."""

from __future__ import annotations

import json

import pytest

from elastic_gpu.__main__ import main
from tests.conftest import ROOT, stack_values

P = "elastic-gpu:"
RULE = "spot-gpu-pool-fallback-promise"


def broken_promise() -> dict:
    """aws-dev with a promise its spot groups cannot keep (they fall back after up to 2.33 min)."""
    values = stack_values("aws-dev")
    values[P + "gpuPools"][0]["maxMinutesToFallback"] = 1
    return values


def test_preview_exits_1_on_a_mandatory_violation(program_dir, capsys):
    program = str(program_dir(broken_promise()))
    assert main(["preview", "--stack", "test", "--program", program]) == 1
    out, err = capsys.readouterr()
    assert f"[mandatory]  elastic-gpu  {RULE}" in out
    assert "error: preview failed: 1 mandatory policy violation(s)" in err
    assert main(["preview", "--stack", "test", "--program", program, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["policy"]["passed"] is False


def test_preview_exits_0_without_one(capsys):
    assert main(["preview", "--stack", "aws-dev"]) == 0
    assert "error:" not in capsys.readouterr().err


def test_diff_runs_the_pack_on_the_new_side(program_dir, capsys, tmp_path):
    base_file = tmp_path / "base.yaml"
    base_file.write_text((ROOT / "stacks" / "Pulumi.aws-dev.yaml").read_text())
    directory = str(program_dir(broken_promise(), stack="aws-dev"))
    args = ["diff", "--stack", "aws-dev", "--program", directory, "--base-file", str(base_file)]
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert f"[mandatory]  elastic-gpu  {RULE}" in out and "within 1 min" in out
    assert "error: diff failed: 1 mandatory policy violation(s)" in err
    assert main([*args, "--json"]) == 1
    violations = json.loads(capsys.readouterr().out)["policy"]["violations"]
    assert [v["policy"] for v in violations if v["level"] == "mandatory"] == [RULE]
    # The other way round, the new side keeps its promise: the diff passes.
    base_file.write_text(json.dumps({"config": broken_promise()}))
    healthy = str(program_dir(stack_values("aws-dev"), stack="aws-dev"))
    assert main(["diff", "--stack", "aws-dev", "--program", healthy, "--base-file", str(base_file)]) == 0


@pytest.mark.parametrize("command", [[], ["preview"], ["diff"], ["policy"]])
def test_help_documents_the_exit_codes(command, capsys):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert "exit codes:" in out and "1  preview, diff and policy: a mandatory policy violation" in out
