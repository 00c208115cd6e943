"""During a real preview some props are unknown; the rules behave as under the Pulumi CLI."""

from __future__ import annotations

import copy

from policy_programs import flagged, judge, program_preview
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE


def _with_unknown(type_: str, key: str, names: set[str] | None = None):
    preview = copy.deepcopy(program_preview("aws"))
    for r in preview.resources:
        if r.type == type_ and (names is None or r.name in names):
            r.inputs[key] = UNKNOWN_STRING_VALUE
    return preview


def test_asg_tags_match_by_parent_and_name_when_the_asg_name_is_unknown() -> None:
    report = judge(_with_unknown("aws:autoscaling/tag:Tag", "autoscalingGroupName"))
    assert {v.name for v in report.of("eks-autoscaler-asg-tags")} == flagged("aws", "eks-autoscaler-asg-tags")


def test_an_unknown_value_gives_an_advisory_cannot_run_note() -> None:
    preview = copy.deepcopy(program_preview("aws"))
    [lt] = [r for r in preview.resources if r.name == "ok-spot-lt"]
    lt.inputs["metadataOptions"] = UNKNOWN_STRING_VALUE
    [note] = [v for v in judge(preview).of("eks-launch-template-imdsv2") if v.name == "ok-spot-lt"]
    assert note.level == "advisory" and "can't run policy" in note.message


def test_stack_rules_skip_a_pool_whose_props_are_unknown() -> None:
    preview = _with_unknown("aws:eks/nodeGroup:NodeGroup", "instanceTypes", {"bad-nofallback"})
    report = judge(preview)
    assert "bad-nofallback" not in {v.name for v in report.of("spot-gpu-pool-on-demand-fallback")}
    assert report.of("device-plugin-tolerates-gpu-taints")  # the rest of the stack is still checked
