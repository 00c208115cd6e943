"""What the offline tools ask of a cloud: the `ToolCloud` protocol, and its registry.

The library's deploy protocol (`CloudProvider`, elastic_gpu/provider.py) is what a `pulumi up` asks of a cloud; it
knows nothing of the tools. The tools (preview, policy, simulate, cost, diff) ask more: how a cloud's node groups
are read from captured resources, their scale-from-zero templates, the timing of its autoscaler, its mocks and new
account, its part of the policy pack, its replacement rows, and the capabilities only some clouds have. A
`ToolCloud` is a `CloudProvider` with those members too: each cloud's class (`elastic_gpu/tools/<cloud>/cloud.py`,
exported as `TOOLS`) subclasses its deploy provider, so every tool holds one object per cloud.

The registry follows the library's (`elastic_gpu.clouds.REGISTRY`: its names, its order, its error for an unknown
name); `REGISTRY` here maps each name to the module that exports its tools. Tests may add a cloud of their own to
both (monkeypatch.setitem).

Importing a cloud's tools loads no cloud SDK: its methods import the cloud's modules when called, by full name
(elastic_gpu/provider.py says why).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from elastic_gpu import clouds
from elastic_gpu.clouds import ReplacementRows
from elastic_gpu.provider import CloudProvider

if TYPE_CHECKING:
    from elastic_gpu.prices import LivePrices
    from elastic_gpu.tools.node_group_view import NodeGroupView, StackResource
    from elastic_gpu.tools.offline.mocks import RemoteComponentMock
    from elastic_gpu.tools.offline.runner import Preview
    from elastic_gpu.tools.policy import Policy
    from elastic_gpu.tools.policy.cost_rules import TagReader
    from elastic_gpu.tools.policy.security_rules import PublicIpFinder
    from elastic_gpu.tools.simulation.fit import NodeTemplate
    from elastic_gpu.tools.simulation.pod import PodShape
    from elastic_gpu.tools.simulation.run import PoolOutcome
    from elastic_gpu.tools.simulation.timings import AutoscalerTiming, Evidence
    from elastic_gpu.versions import SupportStatus

#: cloud name -> the module that exports its tools as `TOOLS` (`elastic_gpu/tools/<cloud>/cloud.py`).
REGISTRY: dict[str, str] = {
    "aws": "elastic_gpu.tools.aws.cloud",
    "azure": "elastic_gpu.tools.azure.cloud",
    "gcp": "elastic_gpu.tools.gcp.cloud",
}


# --- plain data a cloud hands the tools ----------------------------------------------------------------------


@dataclass(frozen=True)
class NodeGroupReader:
    """How the core reads the cloud's node groups from captured resources: the policy rules, cost, report,
    simulation and diff read nothing of a node group but its `NodeGroupView` (elastic_gpu/tools/node_group_view.py)."""

    #: the node groups a resource declares (empty for a type it does not read), from its props alone (a
    #: resource policy) or placed against the stack's resources (region, zones, shared caps) when given;
    #: props may be the policy engine's proxies, which raise on an unknown value
    read_node_groups: Callable[[StackResource, Sequence[StackResource] | None], list[NodeGroupView]]
    #: the scale-from-zero templates of the preview's node groups of this cloud, from their views: what the
    #: view adds of the catalog's shape, the node's reserves and the autoscaler's template tags (the simulation)
    node_templates: Callable[[Preview, list[NodeGroupView]], list[NodeTemplate]]


@dataclass(frozen=True)
class Mocks:
    """The mock engine's answers for the cloud's resource types and invokes (tools/offline/mocks.py)."""

    #: resource type -> the outputs the cloud would add to its inputs
    resources: Mapping[str, Callable[[str, dict[str, Any]], dict[str, Any]]]
    #: invoke token -> the answer, from its arguments alone
    invokes: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]
    #: type prefix -> the outputs every resource of that provider has unless its inputs give them
    provider_defaults: Mapping[str, Callable[[str, str], dict[str, Any]]] = field(default_factory=dict)
    #: remote (multi-language) components: their mock registers the children a real run would create
    remote_components: Mapping[str, RemoteComponentMock] = field(default_factory=dict)
    #: a new account's documented defaults (tools/offline/account.py), and the invokes answered from the
    #: described account: token -> (arguments, the cloud's part of the account) -> answer
    new_account: Mapping[str, Any] = field(default_factory=dict)
    account_invokes: Mapping[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = field(
        default_factory=dict
    )
    #: the REST reads the preflight makes where the provider has no invoke (elastic_gpu/http_reads.py), answered
    #: from the described account: reader name -> (URL, the cloud's part of the account) -> JSON answer
    account_readers: Mapping[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)
    #: the reservations the described account holds (its cloud's part -> each as {id, instanceType, zone, count}),
    #: which the offline gate hands the reservation rules as `accountReservations`
    account_reservations: Callable[[dict[str, Any]], list[dict[str, Any]]] = lambda part: []


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


# --- the protocol ----------------------------------------------------------------------------------------------


class ToolCloud(CloudProvider, Protocol):
    """One cloud, as the offline tools ask for it: its deploy provider's members, and these."""

    def reader(self) -> NodeGroupReader:
        """How its node groups are read from captured resources (policy, cost, report, simulation, diff): the
        one place the tools learn what a node group of this cloud is. Called when those tables are first
        merged (node_group_view, the offline report) and once per simulation."""
        ...

    def autoscaler_timing(self, preview: Preview) -> AutoscalerTiming | None:
        """The timing model of its autoscaler in the preview: its settings, clocks and evidence, as the
        simulation times a pending pod; None when the preview has none of this cloud's autoscalers."""
        ...

    def mocks(self) -> Mocks:
        """The offline mock engine's answers for its resource types and invokes, and its new account."""
        ...

    def pack(self) -> PackRules:
        """Its part of the policy pack: its own rules, and its parts of the cloud-neutral ones."""
        ...

    def replacement(self) -> ReplacementRows:
        """Its replacement rows: read when elastic_gpu/tools/replacement.py loads (diff, docs/day-two.md's table)."""
        ...


# --- optional capabilities: a cloud's tools implement these too, the tools check them with isinstance ------------


@runtime_checkable
class OwnProvisioner(Protocol):
    """A provisioner of the cloud's own beside the cluster-autoscaler (EKS: Karpenter; AKS: node
    auto-provisioning), which the simulation models for the pods its objects take."""

    def simulate_pod(
        self, preview: Preview, pod: PodShape, region: str | None, pool: str | None, promise: float | None
    ) -> PoolOutcome | None:
        """The outcome of `pod` under the provisioner's objects in the preview; None when the preview has
        none (the autoscaler's model runs)."""
        ...


@runtime_checkable
class QueueAdmission(Protocol):
    """A queue in front of some of the cloud's groups (GKE: Kueue and queued provisioning): the simulation
    scales a `queued` group only for what the queue admits."""

    def queued_evidence(self) -> Evidence:
        """What a queued group's figure rests on."""
        ...

    def admission_problem(self, preview: Preview, pod: PodShape) -> str | None:
        """Why the queue would never admit the pod; None when it would."""
        ...

    def admission_path(self, preview: Preview, pod: PodShape) -> str:
        """The way an admitted workload gets its nodes, by the objects' names."""
        ...


@runtime_checkable
class GroupOrder(Protocol):
    """A ranking of groups a pod itself selects (GKE: its ComputeClass's priorities)."""

    def group_order(self, preview: Preview, pod: PodShape) -> list[str]:
        """The groups the pod's own selector ranks, first to last; empty without one."""
        ...


@runtime_checkable
class RunningVersion(Protocol):
    """A cluster that runs another version than it declares (GKE: the release channel upgrades past a floor; AKS:
    Long Term Support), as the version policy judges it."""

    def running_support(self, status: SupportStatus, props: Mapping[str, Any]) -> SupportStatus:
        """The support status of the version the cluster resource (`props`) will run, from its declared one's."""
        ...


@runtime_checkable
class LivePriceSource(Protocol):
    """A reader of the cloud's own on-demand and spot prices (`elastic_gpu/<cloud>/prices.py`), asked by `cost`
    and the prices overrides when the user wants live prices; the shipped table answers for whatever it cannot
    (elastic_gpu/prices.py)."""

    def price_source(self) -> LivePrices:
        """The cloud's price source (built on each call: it holds no state across programs)."""
        ...


# --- the registry ------------------------------------------------------------------------------------------------


def get_cloud(name: str) -> ToolCloud:
    """The tools of a cloud by name; an unknown name is the library registry's ConfigError."""
    clouds.get_cloud(name)  # the name's check, and its error, are the library registry's
    tools: ToolCloud = import_module(REGISTRY[name]).TOOLS
    return tools


def all_clouds() -> list[ToolCloud]:
    """Every cloud's tools, in the library registry's order."""
    return [get_cloud(name) for name in clouds.REGISTRY]
