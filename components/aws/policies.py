"""The policy pack's rules for EKS's own objects (components/clouds.py, `Cloud.policies`)."""

from __future__ import annotations

from elastic_gpu.aws.karpenter.policy import karpenter_interruption_handling

#: After the cloud-neutral rules, in this order (policy_rules.ALL_POLICIES).
POLICIES = [
    karpenter_interruption_handling,  # issue 19: EKS Karpenter has its interruption queue
]
