"""A preview's captured resources as the Pulumi engine hands them to a CrossGuard pack: `PolicyResource`s
with their options, providers (a resource's own or the engine's default one), parents and dependencies
linked, and inputs that raise on an unknown value. The offline policy run, the reports and the simulation
read a stack through them."""

from __future__ import annotations

from pulumi_policy import PolicyCustomTimeouts, PolicyProviderResource, PolicyResource, PolicyResourceOptions
from pulumi_policy.proxy import unknown_checking_proxy

from elastic_gpu.tools.engine_props import StrictDict
from elastic_gpu.tools.node_group_reading import Stack, stack_pools
from elastic_gpu.tools.node_group_view import NodeGroupView
from elastic_gpu.tools.offline.runner import CapturedResource, Preview


def _options(r: CapturedResource) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        protect=r.protect,
        ignore_changes=list(r.ignore_changes),
        delete_before_replace=None,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
        parent=r.parent,
    )


def _providers(preview: Preview) -> dict[str, PolicyProviderResource]:
    """Provider references are `<provider urn>::<id>`; map both forms to the provider's inputs."""
    out: dict[str, PolicyProviderResource] = {}
    for r in preview.resources:
        if r.type.startswith("pulumi:providers:"):
            prov = PolicyProviderResource(r.type, r.inputs, r.urn, r.name)
            out[r.urn] = prov
            if r.id:
                out[f"{r.urn}::{r.id}"] = prov
    return out


def _default_provider(r: CapturedResource, preview: Preview) -> PolicyProviderResource | None:
    """The engine's default provider of a resource declared without one: its inputs are the package's
    config (`aws:region`, ...). The mock engine registers none, so build what the engine would pass."""
    package = r.type.split(":", 1)[0]
    if not r.custom or package == "pulumi":
        return None
    props = preview.provider_inputs(r)
    urn = f"urn:pulumi:{preview.stack}::{preview.project}::pulumi:providers:{package}::default"
    return PolicyProviderResource(f"pulumi:providers:{package}", props, urn, "default")


def _provider_of(
    r: CapturedResource,
    providers: dict[str, PolicyProviderResource],
    preview: Preview,
    defaults: dict[str, PolicyProviderResource | None],
) -> PolicyProviderResource | None:
    """`r`'s provider; the engine's default provider of a package is built once per stack (`defaults`)."""
    if not r.provider:
        key = "pulumi" if not r.custom else r.type.split(":", 1)[0]
        if key not in defaults:
            defaults[key] = _default_provider(r, preview)
        return defaults[key]
    return providers.get(r.provider) or providers.get(r.provider.rsplit("::", 1)[0])


class CapturedPolicyResource(PolicyResource):
    """A `PolicyResource` that also carries what the mock engine knows of it: its id and whether it is a
    custom resource (the readers place an EKS node group in the zones of the subnets the stack declares)."""

    id: str | None = None
    custom: bool = True


def stack_resources(preview: Preview) -> Stack:
    """Every captured resource as a `PolicyResource`, with parents and dependencies linked: made once per
    `preview.reading()` block (`Preview.memo`: a policy run, a simulation), the same Stack for every reader
    there, so what the node-group readers derive from the whole stack is derived once too. Treat it as
    read-only."""
    return preview.memo("stack_resources", lambda: Stack(_stack_resources(preview)))


def node_groups(preview: Preview) -> list[NodeGroupView]:
    """Every node group the captured resources declare, each read by its cloud's reader against the stack:
    within a `preview.reading()` block (the simulation asks once per pod) read once, the views
    `stack_pools` keeps on the block's one Stack."""
    return stack_pools(stack_resources(preview))


def _stack_resources(preview: Preview) -> list[PolicyResource]:
    providers = _providers(preview)
    defaults: dict[str, PolicyProviderResource | None] = {}
    by_urn: dict[str, PolicyResource] = {}
    for r in preview.resources:
        by_urn[r.urn] = captured = CapturedPolicyResource(
            resource_type=r.type,
            # as the engine hands them: unknowns raise on access (a StrictDict, read from the engine, already does)
            props=r.inputs if isinstance(r.inputs, StrictDict) else unknown_checking_proxy(r.inputs),
            urn=r.urn,
            name=r.name,
            opts=_options(r),
            provider=_provider_of(r, providers, preview, defaults),
            parent=None,
            dependencies=[],
            property_dependencies={},
        )
        captured.id, captured.custom = r.id, r.custom
    for r in preview.resources:
        pr = by_urn[r.urn]
        pr.parent = by_urn.get(r.parent) if r.parent else None
        pr.dependencies = [by_urn[d] for d in r.depends_on if d in by_urn]
    return list(by_urn.values())
