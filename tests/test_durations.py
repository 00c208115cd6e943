"""One Go-duration parser for the stack config, the components, the simulation and the policies: a duration
the config takes is one the simulation reads and the fallback-promise rule judges, and a duration nobody can
read is reported, never skipped."""

from __future__ import annotations

import copy
import json

import pytest
from pulumi_policy import StackValidationArgs

from elastic_gpu.__main__ import main
from elastic_gpu.durations import duration_text, parse_duration
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.tools.offline.stack_resources import stack_resources
from elastic_gpu.tools.policy.fallback_rules import validate_fallback_promise
from elastic_gpu.tools.simulation.timings import autoscaler_settings
from tests.conftest import stack_preview, stack_values

P = "elastic-gpu:"
RULE = "spot-gpu-pool-fallback-promise"
FLAG = "--max-node-provision-time="


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("14m30s", 870),
        ("1h30m", 5400),
        ("90s", 90),
        ("0", 0),
        ("1.5h", 5400),
        (".5m", 30),
        ("5.s", 5),
        ("300ms", 0.3),
        ("-1.5h", -5400),
        ("2h45m10s", 9910),
    ],
)
def test_go_durations_parse_as_time_parse_duration_does(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "15", "1d", ".s", "5mx", "1mus", "0s0", "-", ".", "1 m", " 5m"])
def test_what_go_refuses_is_refused(text):
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


def test_go_writes_durations_back_in_whole_units():
    assert [duration_text(s) for s in (870, 5400, 0, 45)] == ["14m30s", "1h30m0s", "0s", "45s"]


def test_a_duration_in_minutes_and_seconds_is_configured_simulated_and_judged(program_dir, capsys):
    values = stack_values("aws-dev")
    values[P + "autoscaler"]["maxNodeProvisionTime"] = "14m30s"
    values[P + "gpuPools"][0]["maxMinutesToFallback"] = 1  # aws-dev falls back after at most 2.33 min
    program = program_dir(values)
    preview = run_preview("test", program)
    assert autoscaler_settings(preview).max_node_provision == 14.5
    assert main(["simulate", "--stack", "test", "--program", str(program), "--json"]) == 0
    (pool,) = json.loads(capsys.readouterr().out)["pools"]
    assert pool["max_minutes_to_fallback"] == 1.0
    (v,) = [v for v in run_policies(preview).violations if v.policy == RULE]
    assert v.level == "mandatory" and "within 1 min (maxMinutesToFallback)" in v.message


@pytest.mark.parametrize("value", ["15", "1d", "15 m", "-5m"])
def test_a_bad_duration_is_a_config_error_naming_the_field(program_dir, value):
    values = stack_values("aws-dev")
    values[P + "autoscaler"]["maxNodeProvisionTime"] = value
    with pytest.raises(ConfigError) as exc:
        run_preview("test", program_dir(values))
    assert f"autoscaler.maxNodeProvisionTime: {value!r} is not allowed; allowed: a Go duration" in str(exc.value)


def test_the_fallback_rule_reports_a_duration_it_cannot_read():
    """A program that writes the autoscaler's flags itself: a flag the simulation cannot read leaves the
    promise unchecked, which the mandatory rule reports instead of passing."""
    preview = copy.deepcopy(stack_preview("aws-dev"))
    (deployment,) = preview.of_type("kubernetes:apps/v1:Deployment")
    (container,) = deployment.inputs["spec"]["template"]["spec"]["containers"]
    container["command"] = [FLAG + "15 minutes" if w.startswith(FLAG) else w for w in container["command"]]
    reports: list[str] = []
    validate_fallback_promise(StackValidationArgs(stack_resources(preview), {}), lambda m, urn=None: reports.append(m))
    (message,) = reports
    assert "Spot GPU pool 't4' promises its on-demand fallback within 10 min" in message
    assert "cannot be computed" in message and "'15 minutes'" in message


def test_karpenter_takes_the_idle_time_in_its_own_pattern(program_dir):
    values = stack_values("aws-karpenter")
    values[P + "autoscaler"]["scaleDownUnneededTime"] = "1.5h"
    preview = run_preview("test", program_dir(values))
    pools = preview.of_type("kubernetes:karpenter.sh/v1:NodePool")
    assert pools and {p.inputs["spec"]["disruption"]["consolidateAfter"] for p in pools} == {"1h30m0s"}
    values[P + "autoscaler"]["scaleDownUnneededTime"] = "90500ms"
    with pytest.raises(ConfigError) as exc:
        run_preview("test", program_dir(values))
    assert "autoscaler.scaleDownUnneededTime: under provisioner karpenter" in str(exc.value)
