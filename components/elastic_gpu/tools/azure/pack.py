"""The policy pack's rows for AKS's own objects (its provider's `pack()`, elastic_gpu/provider.py): its parts of the
cloud-neutral rules (elastic_gpu/tools/policy/); no rules of its own."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pulumi_policy import PolicyResource, ResourceValidationArgs

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_MANAGED_CLUSTER
from elastic_gpu.tools.policy._base import is_true, props_of
from elastic_gpu.tools.policy.pack_parts import PackRules

#: (the cloud-neutral policy each follows in the pack, or None for after all of them; the policy)
POLICIES: list[tuple[str | None, Any]] = []


def public_node_ips(resources: Sequence[PolicyResource]) -> Iterator[tuple[PolicyResource, str]]:
    """no-public-node-ips' AKS part (tools/policy/security_rules.py): pools that set enableNodePublicIP."""
    for r in resources:
        p = props_of(r)
        if r.resource_type == AKS_AGENT_POOL and is_true(p.get("enableNodePublicIP")):
            yield r, f"AKS agent pool '{r.name}' sets enableNodePublicIP: nodes get public IPs. Remove it."
        elif r.resource_type == AKS_MANAGED_CLUSTER:
            for prof in p.get("agentPoolProfiles") or []:
                if is_true(prof.get("enableNodePublicIP")):
                    yield (
                        r,
                        f"AKS agent pool profile '{prof.get('name', '?')}' sets enableNodePublicIP: nodes get "
                        "public IPs. Remove it.",
                    )


def _tags(args: ResourceValidationArgs) -> tuple[str, set[str]]:
    return "tags", set(args.props.get("tags") or {})


#: cost-allocation-tags' AKS part (tools/policy/cost_rules.py): resource type -> (property path, its tag keys)
COST_TAGS = {
    t: _tags
    for t in (
        AKS_MANAGED_CLUSTER,
        AKS_AGENT_POOL,
        "azure-native:resources:ResourceGroup",
        "azure-native:network:VirtualNetwork",
    )
}


#: The rules above as the tools protocol's record (elastic_gpu/tools/policy/pack_parts.py PackRules).
RULES = PackRules(policies=POLICIES, public_node_ips=public_node_ips, cost_tags=COST_TAGS)
