"""Helpers shared by the rules: config with schema defaults, reading resources in both argument kinds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_policy import PolicyConfigSchema, PolicyResource, ResourceValidationArgs, StackValidationArgs

from elastic_gpu.tools.node_group_reading import resource_pools
from elastic_gpu.tools.node_group_view import NodeGroupView


def schema(**properties: dict[str, Any]) -> PolicyConfigSchema:
    """A config schema; every property carries its `default` (the Pulumi CLI fills them in)."""
    return PolicyConfigSchema(properties=dict(properties))


def config(args: ResourceValidationArgs | StackValidationArgs, policy_schema: PolicyConfigSchema) -> dict[str, Any]:
    """The policy's config: schema defaults overlaid with what the user configured.

    The Pulumi CLI already applies defaults; tests and the offline gate may call a
    validator with no config, so the defaults are applied here too.
    """
    merged = {k: v["default"] for k, v in policy_schema.properties.items() if "default" in v}
    merged.update(dict(args.get_config() or {}))
    return merged


def is_true(value: object) -> bool:
    """A boolean input, which a provider may hold as the string "true"."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def props_of(resource: PolicyResource) -> Mapping[str, Any]:
    return resource.props or {}


def parent_urn(resource: PolicyResource) -> str | None:
    if resource.parent is not None:
        return resource.parent.urn
    return getattr(resource.opts, "parent", None)


def known_gpu_pools(resource: PolicyResource, stack: Iterable[PolicyResource] = ()) -> list[NodeGroupView]:
    """A stack resource's GPU pools, with their region read against ``stack``; none when a prop
    they need is unknown during a real preview (elastic_gpu/tools/node_group_reading.resource_pools)."""
    return resource_pools(resource, stack, gpu_only=True)
