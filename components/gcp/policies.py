"""The policy pack's rules for GKE's own objects (components/clouds.py, `Cloud.policies`)."""

from __future__ import annotations

from elastic_gpu.gcp.autoprovisioning.rules import POLICIES as AUTO_PROVISIONING_POLICIES

#: After the cloud-neutral rules, in this order (policy_rules.ALL_POLICIES).
POLICIES = [
    *AUTO_PROVISIONING_POLICIES,  # issue 19: GKE ComputeClass node pool auto-creation
]
