"""The account preflight: what a first `pulumi up` of a stack will meet in the user's account, read at preview.

Each cloud's `preflight` (an `AccountPreflight` provider, elastic_gpu/provider.py) reads what the account allows
through its provider SDK's own invokes (they run in `pulumi preview`, with the user's credentials): quotas
against what the pools need at their max, enabled services, and the zones that offer each instance type (a
role the stack can create, such as the EC2 Spot service-linked role, the stack creates or adopts instead).
Where a cloud has no invoke for a fact, its finding says which command shows it. Offline, the mock engine
answers the invokes from a described account (elastic_gpu/tools/offline/account.py: a new account by default).

A finding names the pool, what is short and by how much, and the exact request or command that fixes it. An
`error` is a stack that cannot work as declared (a zone that offers none of a pool's types): the preview fails
before anything is declared. A `warning` is one that works once a request is granted: the preview prints it and
the policy pack's advisory `account-preflight` reports it from the `Preflight` component, which records every
finding as its inputs.

The API server's allow-list is checked here for every cloud (`api_access_findings`): a documentation range
(RFC 5737, RFC 3849) or an empty list lets nothing reach the server, so `pulumi up` would create the cluster and
then time out on its first Kubernetes object.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

import pulumi

from elastic_gpu.cloud_facts import KnownCloud
from elastic_gpu.errors import ConfigError
from elastic_gpu.gpu_catalog import GpuSpec, gpu_instance_type

if TYPE_CHECKING:
    from elastic_gpu.config import GpuPoolConfig, StackConfig

TYPE_TOKEN = "elastic-gpu:index:Preflight"
#: The Preflight component's input holding its findings (read by the account-preflight policy).
FINDINGS_INPUT = "findings"

Level = Literal["error", "warning"]
T = TypeVar("T")


@dataclass(frozen=True)
class Finding:
    """One thing the account lacks for the stack."""

    #: the pool(s) it concerns (their names), or "cluster"
    pool: str
    #: kebab-case kind: spot-quota, on-demand-quota (GPU pools; on AKS every on-demand pool), flex-start-quota
    #: (GKE queued provisioning), gpu-quota (GKE: a GPU quota several capacity types draw on), cpu-quota (vCPUs of
    #: the general pool, and on GKE of every pool), zone-offering, service, unread (a fact the credentials could
    #: not read, or a quota no table row covers), api-access, ...
    check: str
    level: Level
    #: what is short and by how much
    message: str
    #: the exact request or command that fixes it
    fix: str

    def text(self) -> str:
        return f"{self.pool}: {self.message}. Fix: {self.fix}"


# --- what the pools need at their max ----------------------------------------------------------------


@dataclass(frozen=True)
class Capacity:
    """Nodes of one capacity type a pool may run at its max, and the types they may be."""

    pool: str
    spot: bool
    nodes: int
    instance_types: tuple[str, ...]
    #: the GPU of its types the catalog lacks (the pool's gpuSpec, given or described by the cloud)
    spec: GpuSpec | None = None

    def per_node(self, cloud: str, unit: str) -> int:
        """vCPUs (`unit="vcpus"`) or GPUs (`unit="gpus"`) of the largest type the pool may run (the catalog's,
        or the pool's gpuSpec's)."""
        rows = [gpu_instance_type(cloud, t, self.spec) for t in self.instance_types]
        return max((getattr(r, unit) for r in rows if r is not None), default=0)


def capacities(cfg: StackConfig) -> list[Capacity]:
    """Per GPU pool: its own capacity (spot or on-demand, `maxSize` nodes) and its on-demand fallback
    (`fallbackMaxSize`, default `maxSize`)."""
    from elastic_gpu.config import gpu_spec

    out = []
    for p in cfg.gpu_pools:
        types, spec = tuple(cfg.instance_types(p)), gpu_spec(p)
        if p.max_size:
            out.append(Capacity(p.name, p.spot, p.max_size, types, spec))
        if p.on_demand_fallback:
            out.append(Capacity(p.name, False, p.fallback_total, types, spec))
    return out


@dataclass(frozen=True)
class QuotaNeed:
    """What some pools need of one quota, and what the account has."""

    #: the quota's name as the cloud's console shows it
    quota: str
    #: pool -> its need, in the quota's unit
    by_pool: dict[str, int]
    have: float
    unit: str

    @property
    def need(self) -> int:
        return sum(self.by_pool.values())

    @property
    def short(self) -> float:
        return max(0.0, self.need - self.have)

    def message(self) -> str:
        shares = ", ".join(f"{pool} {n}" for pool, n in self.by_pool.items())
        return (
            f"the pools need {self.need} {self.unit} of {self.quota} at their max ({shares}); the account has "
            f"{_number(self.have)}: short by {_number(self.short)}"
        )


def quota_findings(needs: Iterable[QuotaNeed], check: str, fix: str | Any) -> list[Finding]:
    """A warning for each need the account's quota does not cover; `fix(need)` is the request's text."""
    return [
        Finding(", ".join(n.by_pool), check, "warning", n.message(), fix(n) if callable(fix) else fix)
        for n in needs
        if n.short > 0
    ]


def attempt(read: Callable[[], T]) -> T | str:
    """What `read` (an invoke) returns, or its error as text: an account fact the credentials may not read
    (no right to, an API not enabled yet) is reported as a finding, never a failed preview."""
    try:
        return read()
    except Exception as exc:  # the provider's error, whatever its class
        return str(exc) or type(exc).__name__


def unread(pools: Iterable[str], what: str, error: str, fix: str) -> Finding:
    """A warning: `what` could not be read (`error`); `fix` says how to read or allow it."""
    return Finding(", ".join(pools) or "cluster", "unread", "warning", f"{what} could not be read ({error})", fix)


def add_need(needs: dict[Any, dict[str, int]], key: Any, pool: str, amount: int) -> None:
    """Sum `amount` into `needs[key][pool]` (pools in the stack's order)."""
    if amount > 0:
        by_pool = needs.setdefault(key, {})
        by_pool[pool] = by_pool.get(pool, 0) + amount


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# --- the API server's allow-list (every cloud) -------------------------------------------------------

#: Address ranges reserved for documentation: nothing on the internet has them (RFC 5737 section 3,
#: RFC 3849), so an API server that allows only these answers no runner.
DOCUMENTATION_RANGES = tuple(
    ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)


def documentation_range(cidr: str) -> bool:
    """The range lies inside a documentation range (a malformed one is config validation's to refuse)."""
    try:
        net = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False
    return any(net.version == d.version and net.subnet_of(d) for d in DOCUMENTATION_RANGES)  # type: ignore[arg-type]


def api_access_findings(cfg: StackConfig) -> list[Finding]:
    """A public endpoint whose allow-list is empty or only documentation ranges answers no runner."""
    access = cfg.cluster.api_access
    if not access.public or access.public_cidrs is None:
        return []
    cidrs = list(access.public_cidrs)
    if cidrs and not all(documentation_range(c) for c in cidrs):
        return []
    what = "is empty" if not cidrs else f"holds only documentation ranges ({', '.join(cidrs)}; RFC 5737/3849)"
    return [
        Finding(
            "cluster",
            "api-access",
            "warning",
            f"the API server's allow-list cluster.apiAccess.publicCidrs {what}: `pulumi up` creates the "
            "cluster, then cannot reach it to create the first Kubernetes object and times out",
            "set `publicCidrs: [<your runner's and operators' ranges>]` under `cluster.apiAccess` in the stack file "
            "(`curl -s https://checkip.amazonaws.com` shows this machine's address)",
        )
    ]


# --- running it ---------------------------------------------------------------------------------------


@runtime_checkable
class AccountPreflight(Protocol):
    """A check of what the account lacks for the stack (quotas, roles, enabled services), read through the
    cloud's invokes before anything is declared: an optional capability a provider implements too
    (elastic_gpu/provider.py), checked with isinstance."""

    def preflight(self, cfg: StackConfig) -> list[Finding]:
        """Every finding for the stack's pools at their max."""
        ...


def findings(cfg: StackConfig, cloud: KnownCloud) -> list[Finding]:
    """Every finding for the stack on `cloud` (its cloud's provider): the cloud's `preflight` part (when it has
    one), then the API access."""
    found: list[Finding] = cloud.preflight(cfg) if isinstance(cloud, AccountPreflight) else []
    return found + api_access_findings(cfg)


class Preflight(pulumi.ComponentResource):
    """The account preflight's findings, recorded as inputs (`findings`) so that the policy pack's advisory
    `account-preflight` reports the warnings in the gate. It creates no resource."""

    def __init__(self, name: str, found: list[Finding], opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {FINDINGS_INPUT: [asdict(f) for f in found]}, opts)
        self.findings = found
        self.register_outputs({})


def run_preflight(cfg: StackConfig) -> Preflight:
    """Read the account, fail on errors (before any resource is declared), print the warnings, and record
    every finding on a `Preflight` component named `preflight`."""
    found = findings(cfg, cfg.provider)
    errors = [f.text() for f in found if f.level == "error"]
    if errors:
        raise ConfigError(errors, source="account (preflight)")
    for f in found:
        pulumi.log.warn(f"preflight: {f.text()}")
    return Preflight("preflight", found)


def pool_config(cfg: StackConfig, name: str) -> GpuPoolConfig:
    return next(p for p in cfg.gpu_pools if p.name == name)
