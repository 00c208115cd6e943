"""What a cloud hands the policy pack: the `PackRules` record (its own rules, and its parts of the cloud-neutral
ones), the types of those parts, and `PackParts`, the view of a registered cloud that the pack (tools/policy/)
asks for."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from pulumi_policy import PolicyResource, ResourceValidationArgs, ResourceValidationPolicy, StackValidationPolicy

from elastic_gpu.tools.clouds import CloudTools, all_clouds

Policy = ResourceValidationPolicy | StackValidationPolicy

#: a cloud's finder of its nodes' public IPs: (resource, message) in the stack's order (no-public-node-ips,
#: tools/policy/security_rules.py)
PublicIpFinder = Callable[[Sequence[PolicyResource]], Iterator[tuple[PolicyResource, str]]]

#: a cloud's reader of a taggable resource's cost-allocation keys: (property path, the keys it carries)
#: (cost-allocation-tags, tools/policy/cost_rules.py)
TagReader = Callable[[ResourceValidationArgs], tuple[str, set[str]]]


@dataclass(frozen=True)
class PackRules:
    """The cloud's part of the policy pack (tools/policy/)."""

    #: its own rules (EKS node groups, IRSA, Karpenter; GKE's ComputeClass auto-creation), each with the
    #: cloud-neutral rule it follows, so the pack keeps the rule list's order
    policies: Sequence[tuple[str | None, Policy]]
    #: no-public-node-ips' part for its resources
    public_node_ips: PublicIpFinder
    #: cost-allocation-tags' part: resource type -> reader of its tag keys
    cost_tags: Mapping[str, TagReader]


class PackParts(CloudTools, Protocol):
    """A cloud as the policy pack asks for it."""

    def pack(self) -> PackRules:
        """Its part of the policy pack: its own rules, and its parts of the cloud-neutral ones."""
        ...


def pack_clouds() -> list[PackParts]:
    """Every registered cloud, viewed by its part of the pack (the registry's order): the pack is every cloud's,
    as a stack may declare any cloud's resources. Sound because each cloud's class is checked against `ToolCloud`
    (tools/tool_cloud.py), which extends `PackParts`."""
    return cast(list[PackParts], all_clouds())
