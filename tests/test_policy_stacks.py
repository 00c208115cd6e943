"""Every shipped stack passes the pack with no mandatory violation; the gate CLI and the pack itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, stack_preview
from policy_programs import AWS, OPT_IN, judge, write_program

from elastic_gpu.__main__ import main
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import run_preview

STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stack_has_no_mandatory_violation(stack: str) -> None:
    report = run_policies(stack_preview(stack))
    assert report.mandatory == [], "\n".join(f"{v.policy}: {v.message}" for v in report.mandatory)


def test_aws_prod_training_pool_has_only_the_advisory_fallback_note() -> None:
    report = run_policies(stack_preview("aws-prod"))
    # and the account preflight's findings on a new account (tests/test_preflight.py)
    assert {v.policy for v in report.violations} == {"spot-gpu-pool-on-demand-fallback", "account-preflight"}
    fallback = report.of("spot-gpu-pool-on-demand-fallback")
    assert {v.name for v in fallback} == {f"training-spot-us-east-1{z}" for z in "abc"}


def test_gate_exits_non_zero_on_a_mandatory_violation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = write_program(AWS, tmp_path / "prog")
    # The program's own resources are not elastic-gpu's: the pack leaves them alone ...
    assert main(["policy", "--program", str(program), "--stack", "test"]) == 0
    assert "no violations" in capsys.readouterr().out
    # ... unless the user opts them in.
    cfg = tmp_path / "policy-config.json"
    cfg.write_text(json.dumps(OPT_IN))
    assert main(["policy", "--program", str(program), "--stack", "test", "--config", str(cfg)]) == 1
    out = capsys.readouterr().out
    assert "[mandatory]  elastic-gpu  gpu-pool-noschedule-taint (aws:eks/nodeGroup:NodeGroup: bad-notaint)" in out
    # A per-resource exemption takes one of them out again.
    cfg.write_text(json.dumps(OPT_IN | {"gpu-pool-noschedule-taint": {"exemptResources": ["bad-notaint"]}}))
    main(["policy", "--program", str(program), "--stack", "test", "--config", str(cfg)])
    assert "gpu-pool-noschedule-taint (aws:eks/nodeGroup:NodeGroup: bad-notaint)" not in capsys.readouterr().out


def test_gate_passes_a_shipped_stack_and_reports_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "--stack", "aws-dev", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["aws-dev"]["passed"] is True


def test_gate_config_file_can_downgrade(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every mandatory policy that the AWS test program violates, set to advisory: the gate passes."""
    program = write_program(AWS, tmp_path / "prog")
    mandatory = {v.policy for v in judge(run_preview("test", program)).mandatory}
    cfg = tmp_path / "policy-config.json"
    cfg.write_text(json.dumps(OPT_IN | dict.fromkeys(sorted(mandatory - {"gpu-pool-noschedule-taint"}), "advisory")))
    assert main(["policy", "--program", str(program), "--stack", "test", "--config", str(cfg)]) == 1
    capsys.readouterr()
    cfg.write_text(json.dumps(OPT_IN | dict.fromkeys(sorted(mandatory), "advisory")))
    assert main(["policy", "--program", str(program), "--stack", "test", "--config", str(cfg)]) == 0
    assert "[mandatory]" not in capsys.readouterr().out


def test_preview_shows_the_policy_report(capsys: pytest.CaptureFixture[str]) -> None:
    # An account with the quotas aws-dev needs (on a new one, the account-preflight findings: test_preflight.py)
    account = ["--account", str(ROOT / "examples" / "account.yaml")]
    assert main(["preview", "--stack", "aws-dev", "--json", *account]) == 0
    assert json.loads(capsys.readouterr().out)["policy"] == {"pack": "elastic-gpu", "passed": True, "violations": []}
    assert main(["preview", "--stack", "aws-dev", *account]) == 0
    assert "elastic-gpu: no violations" in capsys.readouterr().out


def test_policy_pack_starts() -> None:
    """`policy/__main__.py` builds the PolicyPack: it prints its gRPC port and serves (so run it, never import it)."""
    pack = str(ROOT / "policy" / "__main__.py")
    proc = subprocess.Popen([sys.executable, pack], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert port.isdigit(), proc.stderr.read() if proc.poll() is not None else port  # type: ignore[union-attr]
    finally:
        proc.kill()
        proc.wait()
