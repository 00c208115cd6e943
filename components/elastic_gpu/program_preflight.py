"""The account preflight for a program's own pools (elastic_gpu/preflight.py runs it for a stack).

A program builds pools on a cluster handle one component at a time (`GeneralPool`, `SpotGpuPool`), where a stack
declares them all from one file. Each pool a program declares runs the same checks, by the same code, over the
stack the pools on its handle make so far (`ProgramStack`: the handle's zones and region, the general pool and
the GPU pools already declared there, this one included), and keeps the findings that name it: a quota two
pools share is reported with the second pool with both pools' need, as a stack reports it. A finding of level
`error` fails the pool before any of its resources is declared; the rest are printed and recorded on a
`Preflight` component `<pool>-preflight`, which the policy pack's advisory `account-preflight` reads.

Offline, the invokes are answered from the described account (`--account FILE`, a new one by default), as for a
stack. A pool the stack file declared (`checked_by_stack`) is left to the stack's own preflight.
"""

from __future__ import annotations

import dataclasses
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pulumi

from elastic_gpu.cloud_facts import CloudFacts, KnownCloud
from elastic_gpu.errors import ConfigError

if TYPE_CHECKING:
    from elastic_gpu.config import StackConfig
    from elastic_gpu.pool_args import GeneralPoolArgs, SpotGpuPoolArgs
    from elastic_gpu.preflight import Finding, Preflight

#: The preflight's own name for the general pool (elastic_gpu/<cloud>/preflight.py).
GENERAL = "general"


@dataclass
class ProgramStack:
    """The pools a program declared on one cluster handle, in its order."""

    general: tuple[str, GeneralPoolArgs] | None = None
    gpu_pools: list[tuple[str, SpotGpuPoolArgs]] = field(default_factory=list)


_STACKS: weakref.WeakKeyDictionary[Any, ProgramStack] = weakref.WeakKeyDictionary()


def _stack_of(handle: Any) -> ProgramStack:
    """The pools declared on `handle` so far (a handle that cannot be a weak key: its pools alone)."""
    try:
        return _STACKS.setdefault(handle, ProgramStack())
    except TypeError:
        return ProgramStack()


def plain_region(handle: Any, facts: CloudFacts) -> str | None:
    """The handle's region (AWS region, Azure location, GCP region) when known before deployment: its own plain
    value (a zonal GKE location read as its region), else the provider's config (the cloud's `region_config`:
    `aws:region`, `azure-native:location`, `gcp:region`), else the region its first zone names. `facts`: the
    handle's cloud's."""

    def region(value: str) -> str:
        found = re.fullmatch(facts.region_of_zone, value) if facts.region_of_zone else None
        return found.group(1) if found else value

    for attribute in ("region", "plain_location", "location"):
        value = getattr(handle, attribute, None)
        if isinstance(value, str) and value:
            return region(value)
    if facts.region_config is not None and (
        configured := pulumi.Config(facts.region_config[0]).get(facts.region_config[1])
    ):
        return configured
    zones = [z for z in getattr(handle, "zones", []) or [] if isinstance(z, str)]
    first = region(zones[0]) if zones else None
    return first if first is not None and first != zones[0] else None


def stack_view(handle: Any, cloud: KnownCloud, stack: ProgramStack, region: str) -> StackConfig:
    """The pools on `handle` (whose cloud's provider is `cloud`) as the stack config the preflight reads (built,
    not validated: each pool's Args were checked by its component)."""
    from elastic_gpu.config import (
        ClusterConfig,
        GeneralPoolConfig,
        GpuPoolConfig,
        GpuSpecConfig,
        StackConfig,
    )
    from elastic_gpu.settings import GeneralPoolSettings, GpuPoolSettings

    cluster: dict[str, Any] = {
        "name": "program",
        "region": region,
        "zones": list(handle.zones),
        "kubernetes_version": handle.kubernetes_version if isinstance(handle.kubernetes_version, str) else "",
    }
    if hasattr(handle, "project"):  # a project-scoped cloud's handle: the project, else its provider's
        project = getattr(handle, "project", None)
        namespace = cloud.facts.region_config or ("", "")
        cluster["project"] = project if isinstance(project, str) else pulumi.Config(namespace[0]).get("project")
    general: dict[str, Any] = {"instance_types": [], "max_size": 0, "min_size": 0}
    if stack.general is not None:
        general = {f: getattr(stack.general[1], f) for f in GeneralPoolSettings.model_fields}
    pools = []
    for name, args in stack.gpu_pools:
        settings = {f: getattr(args, f) for f in GpuPoolSettings.model_fields if hasattr(args, f)}
        settings["per_zone"] = args.pool_per_zone  # unset: the cloud's default, as the stack file stores it
        spec = args.gpu_spec
        pools.append(
            GpuPoolConfig.model_construct(
                name=name,
                gpu=None,
                instance_types=list(args.instance_types),
                gpus_per_node=args.gpus_per_node,
                gpu_spec=None if spec is None else GpuSpecConfig.model_construct(**dataclasses.asdict(spec)),
                **settings,
            )
        )
    # a pool built by a provisioner object (EKS: Karpenter(...).nodes), else the handle's own (GKE, AKS)
    karpenter = any(a.provisioner is not None for _, a in stack.gpu_pools)
    provisioner = "karpenter" if karpenter else getattr(handle, "provisioner", None) or "cluster-autoscaler"
    return StackConfig.model_construct(
        cloud=cloud.name,
        cluster=ClusterConfig.model_construct(**cluster),
        general_pool=GeneralPoolConfig.model_construct(**general),
        gpu_pools=pools,
        provisioner=provisioner,
    )


def pool_findings(name: str, handle: Any, cloud: KnownCloud, stack: ProgramStack, own: str) -> list[Finding]:
    """What the account lacks for the pools on `handle` (whose cloud's provider is `cloud`), as the findings that
    name the pool `own` (the preflight's name for it) shown under the program's `name`."""
    from elastic_gpu.preflight import AccountPreflight, findings, unread

    if not isinstance(cloud, AccountPreflight) or cloud.facts.region_config is None:
        return []  # a cloud without an account preflight (a test's fake cloud)
    region = plain_region(handle, cloud.facts)
    if region is None:
        namespace, key = cloud.facts.region_config
        return [
            unread(
                [name],
                "the account's quotas and offerings for the pool",
                "the cluster's region is not known before deployment",
                f"set `{namespace}:{key}` in the stack's config (pulumi config set {namespace}:{key} <region>)",
            )
        ]
    found = findings(stack_view(handle, cloud, stack, region), cloud)
    mine = [f for f in found if own in f.pool.split(", ")]
    return [dataclasses.replace(f, pool=name) if own == GENERAL and f.pool == GENERAL else f for f in mine]


def check_pool(
    name: str, args: GeneralPoolArgs | SpotGpuPoolArgs, cloud: KnownCloud, *, general: bool
) -> list[Finding]:
    """Add the pool to its handle's pools and read what the account lacks for them (`cloud`: the provider of the
    handle's cloud, which the pool's component chose); raise ConfigError on an `error` finding (before the pool
    declares anything), print the warnings, and return every finding for `record`. A pool the stack declared
    (its preflight ran) or one read outside the engine: none."""
    if args.checked_by_stack:
        return []
    handle = args.cluster
    stack = _stack_of(handle)
    if general:
        stack.general = (name, args)  # type: ignore[assignment]
    else:
        stack.gpu_pools.append((name, args))  # type: ignore[arg-type]
    found = pool_findings(name, handle, cloud, stack, GENERAL if general else name)
    errors = [f.text() for f in found if f.level == "error"]
    if errors:
        raise ConfigError(errors, source=f"account (preflight of '{name}')")
    for f in found:
        pulumi.log.warn(f"preflight: {f.text()}")
    return found


def record(name: str, found: list[Finding], parent: pulumi.Resource) -> Preflight | None:
    """The pool's findings on a `Preflight` component `<name>-preflight` (none without findings)."""
    from elastic_gpu.preflight import Preflight

    if not found:
        return None
    return Preflight(f"{name}-preflight", found, opts=pulumi.ResourceOptions(parent=parent))
