"""The policy pack's rules for GKE's own objects (its provider's `pack()`, elastic_gpu/provider.py), and its
parts of the cloud-neutral rules (elastic_gpu/tools/policy/)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pulumi_policy import PolicyResource, ResourceValidationArgs

from elastic_gpu.gcp import GKE_CLUSTER, GKE_NODE_POOL
from elastic_gpu.tools.gcp.pack.auto_provisioning import POLICIES as AUTO_PROVISIONING_POLICIES
from elastic_gpu.tools.policy._base import is_true, props_of
from elastic_gpu.tools.policy.pack_parts import PackRules

#: (the cloud-neutral policy each follows in the pack, or None for after all of them; the policy), in order
POLICIES = [
    *((None, p) for p in AUTO_PROVISIONING_POLICIES),  # GKE ComputeClass node pool auto-creation
]


def public_node_ips(resources: Sequence[PolicyResource]) -> Iterator[tuple[PolicyResource, str]]:
    """no-public-node-ips' GKE part (tools/policy/security_rules.py): node pools whose nodes are not private,
    on their own or through their cluster."""
    private_cluster = any(
        r.resource_type == GKE_CLUSTER
        and is_true((props_of(r).get("privateClusterConfig") or {}).get("enablePrivateNodes"))
        for r in resources
    )
    for r in resources:
        if r.resource_type != GKE_NODE_POOL:
            continue
        p = props_of(r)
        private = (p.get("networkConfig") or {}).get("enablePrivateNodes")
        if private is False or (private is None and not private_cluster):
            yield (
                r,
                f"GKE node pool '{p.get('name') or r.name}' has public node IPs: neither its "
                "networkConfig.enablePrivateNodes nor the cluster's privateClusterConfig.enablePrivateNodes "
                "is true. Enable private nodes (with Cloud NAT for egress); if the cluster's nodes are private "
                "already, say so: GkeCluster.existing(..., private_nodes=True) in a program, "
                "cluster.privateNodes: true in a stack file.",
            )


def _node_pool_labels(args: ResourceValidationArgs) -> tuple[str, set[str]]:
    return "nodeConfig.resourceLabels", set((args.props.get("nodeConfig") or {}).get("resourceLabels") or {})


def _cluster_labels(args: ResourceValidationArgs) -> tuple[str, set[str]]:
    return "resourceLabels", set(args.props.get("resourceLabels") or {})


#: cost-allocation-tags' GKE part (tools/policy/cost_rules.py): resource type -> (property path, its label keys)
COST_TAGS = {GKE_NODE_POOL: _node_pool_labels, GKE_CLUSTER: _cluster_labels}


#: The rules above as the tools protocol's record (elastic_gpu/tools/policy/pack_parts.py PackRules).
RULES = PackRules(policies=POLICIES, public_node_ips=public_node_ips, cost_tags=COST_TAGS)
