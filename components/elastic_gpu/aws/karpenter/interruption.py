"""The interruption queue: EventBridge sends EC2 and AWS Health events to SQS, Karpenter reads them and
drains a node before EC2 takes it (cloudformation.yaml at v1.14.1: KarpenterInterruptionQueue, its
QueuePolicy and the five rules targeting it)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from elastic_gpu.aws.karpenter.events import RULES

#: KarpenterInterruptionQueue.MessageRetentionPeriod: an event older than this is no use any more.
MESSAGE_RETENTION_SECONDS = 300

#: The target id upstream gives each rule's target.
TARGET_ID = "KarpenterInterruptionQueueTarget"


def queue_policy(queue_arn: str) -> dict[str, Any]:
    """KarpenterInterruptionQueuePolicy: EventBridge (and SQS) may send; nothing over plain HTTP."""
    return {
        "Id": "EC2InterruptionPolicy",
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                "Principal": "*",
            },
        ],
    }


@dataclass
class InterruptionQueue:
    queue: aws.sqs.Queue
    #: the queue, its policy and the rules' targets: the controller starts after them
    resources: list[pulumi.Resource]


def build_interruption_queue(
    name: str, cluster_name: pulumi.Input[str], tags: dict[str, str], parent: pulumi.Resource
) -> InterruptionQueue:
    opts = pulumi.ResourceOptions(parent=parent)
    queue = aws.sqs.Queue(
        f"{name}-interruption",
        name=cluster_name,  # QueueName: !Sub "${ClusterName}"; the chart's settings.interruptionQueue names it
        message_retention_seconds=MESSAGE_RETENTION_SECONDS,
        sqs_managed_sse_enabled=True,
        tags=tags,
        opts=opts,
    )
    policy = aws.sqs.QueuePolicy(
        f"{name}-interruption",
        queue_url=queue.url,
        policy=queue.arn.apply(lambda arn: json.dumps(queue_policy(arn), indent=2)),
        opts=opts,
    )
    out: list[pulumi.Resource] = [queue, policy]
    for suffix, pattern in RULES.items():
        rule = aws.cloudwatch.EventRule(f"{name}-{suffix}", event_pattern=json.dumps(pattern), tags=tags, opts=opts)
        out.append(
            aws.cloudwatch.EventTarget(
                f"{name}-{suffix}", rule=rule.name, arn=queue.arn, target_id=TARGET_ID, opts=opts
            )
        )
    return InterruptionQueue(queue, out)
