"""The cloud-neutral node security rule, no-public-node-ips: no public IPs on nodes, judged by each cloud's
`policies` part (its other security rules are its own: elastic_gpu/tools/aws/pack/security.py)."""

from __future__ import annotations

from functools import cache

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs, StackValidationPolicy

from elastic_gpu.tools.policy.pack_parts import PublicIpFinder, pack_clouds


@cache
def _finders() -> tuple[PublicIpFinder, ...]:
    return tuple(c.pack().public_node_ips for c in pack_clouds())


def validate_no_public_ips(args: StackValidationArgs, report: ReportViolation) -> None:
    position = {id(r): i for i, r in enumerate(args.resources)}
    found = [(r, message) for finder in _finders() for r, message in finder(args.resources)]
    # in the stack's order, whichever cloud found them (sorted() is stable: one resource's in its cloud's order)
    for r, message in sorted(found, key=lambda f: position[id(f[0])]):
        report(message, r.urn)


no_public_node_ips = StackValidationPolicy(
    name="no-public-node-ips",
    description=(
        "Nodes get no public IPs: no associatePublicIpAddress on EKS launch templates, no enableNodePublicIP on AKS "
        "pools, private nodes on GKE (node pool networkConfig or cluster privateClusterConfig). Fix: use private "
        "subnets / private nodes with NAT for egress."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_no_public_ips,
)
