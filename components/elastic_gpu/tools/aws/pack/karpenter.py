"""The EKS rule of the Karpenter install: Karpenter's GPU NodePools need interruption handling.

Without the interruption queue a spot GPU node gets its two-minute warning and nobody drains it: the
GPU job dies with the instance and Karpenter learns of it only when the node goes NotReady. Upstream's
install always has the queue, its EventBridge rules and `settings.interruptionQueue`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs, StackValidationPolicy

from elastic_gpu.aws.karpenter.events import RULES
from elastic_gpu.aws.karpenter.release import CHART
from elastic_gpu.tools.node_group_reading import resource_pools
from elastic_gpu.tools.node_group_view import KARPENTER_NODE_POOL

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
EVENT_RULE = "aws:cloudwatch/eventRule:EventRule"
#: The events a spot GPU node must be drained on (cloudformation.yaml SpotInterruptionRule).
SPOT_WARNING = RULES["spot-interruption"]["detail-type"][0]


def _eks_node_pools(resources: list[Any]) -> list[str]:
    """The names of the NodePools whose node class is an EC2NodeClass (none yet for one not known in a preview)."""
    return [
        v.name
        for r in resources
        if r.resource_type == KARPENTER_NODE_POOL
        for v in resource_pools(r)
        if v.cloud == "aws"
    ]


def _queue_setting(props: Mapping[str, Any]) -> Any:
    return ((props.get("values") or {}).get("settings") or {}).get("interruptionQueue")


def _detail_types(props: Mapping[str, Any]) -> list[str]:
    pattern = props.get("eventPattern")
    try:
        data = json.loads(pattern) if isinstance(pattern, str) else {}
    except ValueError:
        return []
    return list(data.get("detail-type") or [])


def validate_interruption_handling(args: StackValidationArgs, report: ReportViolation) -> None:
    resources = list(args.resources)
    node_pools = _eks_node_pools(resources)
    if not node_pools:
        return
    releases = [r for r in resources if r.resource_type == HELM_RELEASE and r.props.get("chart") == CHART]
    missing = []
    if not any(_queue_setting(r.props) for r in releases):
        missing.append("the Karpenter chart's settings.interruptionQueue")
    if not any(SPOT_WARNING in _detail_types(r.props) for r in resources if r.resource_type == EVENT_RULE):
        missing.append(f"an EventBridge rule for '{SPOT_WARNING}'")
    if missing:
        report(
            f"Karpenter NodePools ({', '.join(node_pools)}) without interruption handling: "
            f"no {' and no '.join(missing)}. "
            "A spot GPU node would be reclaimed undrained. Declare the interruption queue and its rules "
            "(elastic_gpu.aws.karpenter.Karpenter does) and pass it as settings.interruptionQueue.",
            None,
        )


karpenter_interruption_handling = StackValidationPolicy(
    name="karpenter-interruption-handling",
    description=(
        "EKS Karpenter NodePools come with interruption handling: the chart's settings.interruptionQueue and an "
        "EventBridge rule for spot interruption warnings (upstream's getting-started CloudFormation)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_interruption_handling,
)
