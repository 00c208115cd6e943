"""The events Karpenter's interruption queue receives (cloudformation.yaml at v1.14.1: the five AWS::Events::Rule
resources targeting KarpenterInterruptionQueue). Apart from interruption.py so the policy pack reads them without
the AWS SDK (an install with another cloud's extra loads every cloud's rules)."""

from __future__ import annotations

#: Rule suffix -> its event pattern (the template's five AWS::Events::Rule resources).
RULES: dict[str, dict[str, list[str]]] = {
    "scheduled-change": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
    "spot-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
    "rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
    "instance-state-change": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
    "capacity-reservation-interruption": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
    },
}
