"""The quota each pool's VMs really draw on, read from one dated table per cloud, and what the finding asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, stack_values

from elastic_gpu.aws.quotas import ec2_quota
from elastic_gpu.config import PROJECT
from elastic_gpu.preflight import FINDINGS_INPUT, TYPE_TOKEN
from elastic_gpu.tools.offline.account import described_account
from elastic_gpu.tools.offline.runner import Preview, run_preview


def preview(stack: str, account: dict[str, Any] | None = None, program: Path = ROOT) -> Preview:
    return run_preview(stack, program, described_account(account))


def findings(p: Preview, check: str | None = None) -> list[dict[str, Any]]:
    [component] = p.of_type(TYPE_TOKEN)
    return [f for f in component.inputs[FINDINGS_INPUT] if check is None or f["check"] == check]


# --- EKS ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("instance_type", ["p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge"])
def test_p5_spot_draws_on_the_p5_spot_quota(instance_type: str) -> None:
    spot = ec2_quota(instance_type, spot=True)
    assert spot is not None and (spot.code, spot.name) == ("L-C4BD4855", "All P5 Spot Instance Requests")
    on_demand = ec2_quota(instance_type, spot=False)
    assert on_demand is not None and on_demand.code == "L-417A185B"


@pytest.mark.parametrize("instance_type", ["p3.2xlarge", "p4d.24xlarge"])
def test_p2_to_p4_spot_keeps_its_own_quota(instance_type: str) -> None:
    spot = ec2_quota(instance_type, spot=True)
    assert spot is not None and spot.code == "L-7212CCBC"


def test_a_p5_spot_pool_asks_for_the_p5_spot_quota(program_dir: Any) -> None:
    values = stack_values("aws-prod")
    values[f"{PROJECT}:gpuPools"] = [
        {"name": "h100", "gpu": "h100", "instanceTypes": ["p5.48xlarge"], "maxSize": 3, "onDemandFallback": False}
    ]
    [spot] = findings(preview("test", None, program_dir(values)), "spot-quota")
    assert "need 576 vCPUs of 'All P5 Spot Instance Requests' (L-C4BD4855) in us-east-1" in spot["message"]
    assert "--quota-code L-C4BD4855 --desired-value 576" in spot["fix"]
    enough = preview("test", {"aws": {"quotas": {"L-C4BD4855": 576}}}, program_dir(values))
    assert findings(enough, "spot-quota") == []
