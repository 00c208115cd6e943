"""The elastic-gpu CrossGuard rules, importable without starting a policy server.

`policy/__main__.py` builds the `PolicyPack` from `ALL_POLICIES`; tests and the
offline gate (`python -m elastic_gpu policy`) call the validators directly.
"""

from __future__ import annotations

from pulumi_policy import ResourceValidationPolicy, StackValidationPolicy

from elastic_gpu.clouds import all_clouds
from elastic_gpu.policy_rules.aws_rules import eks_autoscaler_asg_tags, eks_gpu_groups_autoscaled
from elastic_gpu.policy_rules.cost_rules import cost_allocation_tags, gpu_monthly_cost_ceiling
from elastic_gpu.policy_rules.fallback_rules import spot_gpu_pool_fallback_promise
from elastic_gpu.policy_rules.karpenter_rules import karpenter_fallback_ordered, karpenter_gpu_node_pool
from elastic_gpu.policy_rules.scaling_rules import (
    autoscaler_owned_size_ignored,
    gpu_pool_max_size_cap,
    spot_gpu_pool_on_demand_fallback,
    spot_gpu_pool_scales_to_zero,
    spot_pool_is_spot,
)
from elastic_gpu.policy_rules.scheduling_rules import (
    cluster_autoscaler_off_spot_and_gpu,
    device_plugin_tolerates_gpu_taints,
    gpu_node_group_one_model,
    gpu_pool_noschedule_taint,
)
from elastic_gpu.policy_rules.scope import scoped
from elastic_gpu.policy_rules.security_rules import (
    eks_irsa_trusts_an_oidc_provider,
    eks_launch_template_imdsv2,
    no_public_node_ips,
    node_disks_encrypted,
)
from elastic_gpu.policy_rules.version_rules import (
    kubernetes_version_not_end_of_life,
    kubernetes_version_standard_support,
)

PACK_NAME = "elastic-gpu"

#: In the order of the policy issue's rule list (rule 7 is three policies); each judges only the
#: resources elastic-gpu's components declare, plus `includeResources`, minus `exemptResources`
#: (policy_rules/scope.py).
ALL_POLICIES: list[ResourceValidationPolicy | StackValidationPolicy] = [
    scoped(p)
    for p in (
        gpu_pool_noschedule_taint,  # 1
        spot_gpu_pool_scales_to_zero,  # 2
        spot_pool_is_spot,  # 3
        eks_autoscaler_asg_tags,  # 4
        device_plugin_tolerates_gpu_taints,  # 5
        autoscaler_owned_size_ignored,  # 6
        node_disks_encrypted,  # 7
        eks_launch_template_imdsv2,  # 7
        no_public_node_ips,  # 7
        cluster_autoscaler_off_spot_and_gpu,  # 8
        gpu_monthly_cost_ceiling,  # 9
        cost_allocation_tags,  # 10
        spot_gpu_pool_on_demand_fallback,  # 11
        gpu_pool_max_size_cap,  # 12
        eks_gpu_groups_autoscaled,  # issue 16: the autoscaler lists its groups
        kubernetes_version_standard_support,  # 13
        kubernetes_version_not_end_of_life,  # 13
        spot_gpu_pool_fallback_promise,  # 15 (issue 17)
        gpu_node_group_one_model,  # issue 20: an accelerator label names the one GPU model
        eks_irsa_trusts_an_oidc_provider,  # issue 20: IRSA needs the cluster's OIDC provider
        karpenter_gpu_node_pool,  # issue 19: a GPU NodePool has limits, the GPU taint, consolidation
        karpenter_fallback_ordered,  # issue 19: spot NodePool weighs more than its on-demand fallback
        # issue 19: each cloud's rules for its own objects (its folder's `policies`), in CLOUDS order
        *(p for cloud in all_clouds() if cloud.policies is not None for p in cloud.policies.POLICIES),
    )
]

POLICIES_BY_NAME = {p.name: p for p in ALL_POLICIES}

__all__ = ["ALL_POLICIES", "PACK_NAME", "POLICIES_BY_NAME"]
