"""What the pack judges: the resources elastic-gpu's components declare, plus any a user opts in.

A program that imports the components also declares its own cluster, node groups and add-ons;
the pack's rules describe how *our* pools and add-ons must look, so they judge only resources
whose URN type chain passes through an `elastic-gpu:index:*` component (the parent chain; the
components themselves included, e.g. a SpotGpuPool's recorded promise), and to resources matched
by `includeResources`. `exemptResources` takes resources out, even ours.
Scope limits what is judged, not what is read: a stack policy reads every resource as context (the
private GKE cluster a library pool joins) and reports only on those in scope.

Both are lists of globs (fnmatch: `*`, `?`, `[...]`) matched against a resource's URN and its
name, in every policy's config (`pulumi preview --policy-pack-config`), e.g.:

    {"cost-allocation-tags": {"exemptResources": ["*lab-*"]},
     "gpu-pool-noschedule-taint": {"includeResources": ["urn:pulumi:*::aws:eks/nodeGroup:NodeGroup::legacy-gpu"]}}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any

from pulumi_policy import (
    PolicyConfigSchema,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

#: The type-token prefix of the library's components.
LIBRARY_TYPE_PREFIX = "elastic-gpu:index:"

SCOPE_PROPERTIES: dict[str, dict[str, Any]] = {
    "includeResources": {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "description": "URN or name globs of resources outside elastic-gpu's components this policy also judges.",
    },
    "exemptResources": {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "description": "URN or name globs of resources this policy never judges (wins over everything).",
    },
}


class ScopedStackArgs(StackValidationArgs):
    """A stack policy's arguments: every resource of the stack, and which of them the policy judges."""

    def __init__(self, args: StackValidationArgs, judged_urns: set[str]) -> None:
        super().__init__(args.resources, args.get_config(), args.stack_tags)
        self.judged_urns = judged_urns


def judged(args: StackValidationArgs, urn: str) -> bool:
    """Whether a stack policy judges the resource `urn` (every resource, when called unscoped, as in tests).
    A stack-wide finding (a total, reported without a URN) counts only the judged resources."""
    urns = getattr(args, "judged_urns", None)
    return urns is None or urn in urns


def type_chain(urn: str) -> list[str]:
    """`urn:pulumi:<stack>::<project>::<parent types>$<type>::<name>` -> the types, outermost first."""
    parts = urn.split("::")
    return parts[2].split("$") if len(parts) >= 4 else []


@lru_cache(maxsize=8192)
def declared_by_library(urn: str) -> bool:
    """One of elastic-gpu's components, or declared inside one (a child, at any depth)."""
    return any(t.startswith(LIBRARY_TYPE_PREFIX) for t in type_chain(urn))


def _matches(globs: Iterable[str], urn: str, name: str) -> bool:
    return any(fnmatchcase(urn, g) or fnmatchcase(name, g) for g in globs)


def in_scope(urn: str, name: str, config: Mapping[str, Any]) -> bool:
    if _matches(config.get("exemptResources") or [], urn, name):
        return False
    return declared_by_library(urn) or _matches(config.get("includeResources") or [], urn, name)


Policy = ResourceValidationPolicy | StackValidationPolicy


def _schema(policy: Policy) -> PolicyConfigSchema:
    own = policy.config_schema
    return PolicyConfigSchema(
        properties={**(own.properties if own else {}), **SCOPE_PROPERTIES},
        required=own.required if own else None,
    )


def _config(args: ResourceValidationArgs | StackValidationArgs) -> Mapping[str, Any]:
    return args.get_config() or {}


def scoped(
    policy: ResourceValidationPolicy | StackValidationPolicy,
) -> ResourceValidationPolicy | StackValidationPolicy:
    """The same policy, judging only the resources in scope (see the module docstring)."""
    if isinstance(policy, ResourceValidationPolicy):
        validators: list[Callable[..., Any]] = (
            list(policy.validate) if isinstance(policy.validate, list) else [policy.validate]
        )

        def validate_resource(args: ResourceValidationArgs, report: Callable[..., None]) -> Any:
            if not in_scope(args.urn, args.name, _config(args)):
                return None
            results = [v(args, report) for v in validators]
            awaitables = [r for r in results if r is not None and hasattr(r, "__await__")]
            if awaitables:
                return _gather(awaitables)
            return None

        return ResourceValidationPolicy(
            name=policy.name,
            description=policy.description,
            validate=validate_resource,
            enforcement_level=policy.enforcement_level,
            config_schema=_schema(policy),
        )
    inner = policy.validate

    def validate_stack(args: StackValidationArgs, report: Callable[..., None]) -> Any:
        # Scope limits what is judged, not what is read: the policy sees every resource (a cluster the
        # program declares next to a library pool says whether the pool's nodes are private), and only
        # violations of in-scope resources are reported.
        config = _config(args)
        judged_urns = {r.urn for r in args.resources if in_scope(r.urn, r.name, config)}

        def report_in_scope(message: str, urn: str | None = None) -> None:
            if urn is None or urn in judged_urns:
                report(message, urn)

        return inner(ScopedStackArgs(args, judged_urns), report_in_scope)

    return StackValidationPolicy(
        name=policy.name,
        description=policy.description,
        validate=validate_stack,
        enforcement_level=policy.enforcement_level,
        config_schema=_schema(policy),
    )


async def _gather(awaitables: list[Any]) -> None:
    for a in awaitables:
        await a
