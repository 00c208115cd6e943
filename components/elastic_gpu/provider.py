"""What the cloud-neutral core asks of a cloud: the `CloudProvider` protocol.

A cloud is one class implementing `CloudProvider` (`elastic_gpu/<cloud>/provider.py`, exported by its folder
as `PROVIDER`; `elastic_gpu.clouds` lists them). The core (components, config, validation, simulation, offline
reports, policy rules) never branches on a cloud's name and never looks a part up by string: it calls the
stack's provider (`get_cloud(name)`), or every provider in turn (`all_clouds()`, in registry order, so merged
tables keep one order). The type checker verifies that each provider has every member, with its signature.

As Karpenter's `pkg/cloudprovider/types.go` and cluster-autoscaler's `cloudprovider/cloud_provider.go` do, each
member says what it is, when the core calls it and what it returns. The members are grouped by what a cloud
must supply:

- identity and facts: `name`, `facts` (plain, SDK-free data);
- how messages name it: `owner` ("an AWS"-only setting); its own settings are typed parts of its folder
  (`<cloud>/options.py`), merged into the settings models by elastic_gpu/settings.py;
- its config rules: `config_rules()`, `ignored_settings()`;
- its builders: `stack_builder()` (the composition of a stack), `pool_builder()` (general and GPU pools),
  `autoscaler_builder()` (the autoscaler or provisioner);
- its reader of node groups: `reader()`;
- its timing model: `autoscaler_settings(preview)`;
- its offline mocks: `mocks()`;
- its policies: `pack()`;
- its rows: `versions()`, `replacement()`.

Capabilities only some clouds have are small protocols a provider implements too, checked with `isinstance`
(never looked up by name): `OwnProvisioner` (a provisioner of its own that the simulation models),
`AccountPreflight`, `QueueAdmission` (GKE's Kueue), `GroupOrder` (GKE ComputeClass priorities), `ClusterItems`
(AKS's System pool, priced outside the pools), `GpuResolver` (EC2 describes a type's GPU), `RunningVersion` (GKE's
release channel), `UpgradePath` (GKE's and AKS's own upgrade rules), `LivePriceSource` (the cloud's own prices, read
at preview over the shipped table).

Importing a provider loads no cloud SDK: its methods import the cloud's modules when called, so a stack on one
cloud needs only that cloud's extra, and tables merged over every cloud (mocks, readers, rows) import only the
SDK-free modules of the others. They import each module by its full name (`import elastic_gpu.aws.stack as
stack`): the offline runner forgets the modules a program imported between two runs in one process, and
`from elastic_gpu.aws import stack` would hand back the package's attribute, the forgotten module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from datetime import date

    import pulumi

    from elastic_gpu.clouds import InlinePoolRule, MinorSupport, ReplaceRule
    from elastic_gpu.cluster_autoscaler import ClusterAutoscalerArgs
    from elastic_gpu.config import GpuPoolConfig, StackConfig
    from elastic_gpu.general_pool import GeneralPoolArgs
    from elastic_gpu.gpu_catalog import GpuSpec
    from elastic_gpu.node_group_view import NodeGroupView, StackResource
    from elastic_gpu.pool_types import BuiltPool
    from elastic_gpu.preflight import Finding
    from elastic_gpu.prices import LivePrices
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs
    from elastic_gpu.tools.offline.mocks import RemoteComponentMock
    from elastic_gpu.tools.offline.runner import Preview
    from elastic_gpu.tools.policy import Policy
    from elastic_gpu.tools.policy.cost_rules import TagReader
    from elastic_gpu.tools.policy.security_rules import PublicIpFinder
    from elastic_gpu.tools.simulation.fit import NodeTemplate
    from elastic_gpu.tools.simulation.pod import PodShape
    from elastic_gpu.tools.simulation.run import PoolOutcome
    from elastic_gpu.tools.simulation.timings import AutoscalerSettings, Evidence
    from elastic_gpu.validation import Bounds, TagRules
    from elastic_gpu.versions import SupportStatus
    from elastic_gpu.workload import WorkloadContract


# --- plain data a provider hands the core -----------------------------------------------------------------


@dataclass(frozen=True)
class CloudFacts:
    """What the core says of a cloud or checks against, with no SDK: plain values only."""

    #: the managed Kubernetes service (EKS, AKS, GKE), as messages and the README name it
    service: str
    #: what the cloud's cluster handle adds to `ClusterHandle` (attribute names), and how to wrap a cluster one
    #: already has (for the message that refuses an object that is not a handle)
    handle_attributes: tuple[str, ...]
    existing_hint: str
    #: how the cloud names its instance types (a full-match regex), and one such name for messages
    instance_type_pattern: str
    example_instance_type: str
    #: what to set so that a pool is billed as spot (the spot-pool-is-spot policy's advice)
    spot_fix: str
    #: one scaling group may hold several instance types (an EKS managed node group): they must share a shape,
    #: since the autoscaler scales an empty group from the first type's
    one_group_many_types: bool
    #: its GPUs are attached and priced per accelerator (`gpu` rows of the price table), not per machine
    prices_accelerators: bool
    #: we run a cluster-autoscaler image pinned per Kubernetes minor (False: the service runs its own), so a
    #: minor without a pinned image is refused
    pins_autoscaler_image: bool
    #: a private API server answers only inside the cluster's network, so its rules warn about where
    #: `pulumi up` runs unless `cluster.apiAccess.runnerInVnet` says so
    private_api_needs_runner: bool = False
    #: the API group of its Karpenter node class (`nodeClassRef.group` of a NodePool), when it runs Karpenter
    karpenter_node_class_group: str | None = None
    #: its pools may be in no zone (`zones: []`): regions without availability zones, or nodes the cloud places
    #: without pinning them to one
    zoneless: bool = False
    #: how to give the cluster's own nodes a label (the advice of controllers-schedulable when the autoscaler's
    #: selector fits no known node); `{labels}` is k=v,k=v and `{labels_spaced}` is k=v k=v
    node_label_howto: str = ""
    #: the provider config (namespace, key) that names the region or location where resources go (`aws:region`,
    #: `azure-native:location`, `gcp:region`): a program's pools are checked there when the handle's is an Output
    region_config: tuple[str, str] | None = None
    #: a full-match regex whose group is the region of one of its zone names (us-east-1a, us-central1-a); None:
    #: zones do not name their region (Azure's 1, 2, 3)
    region_of_zone: str | None = None


@dataclass(frozen=True)
class ConfigRules:
    """The cloud's config rules: its own checks of a stack config, and the bounds and tables the core's
    checks apply to it (config.validate_stack, validation.py). Called while a stack config is validated,
    before any resource is declared."""

    #: every problem the cloud's own rules find in a stack config (regions, zones, machine shapes, API limits),
    #: one message each naming the field; empty when valid
    problems: Callable[[StackConfig], list[str]]
    #: what previews but deserves a word (a quota to raise first, a setting the provisioner does not use)
    warnings: Callable[[StackConfig], list[str]]
    #: whether `gpusPerNode` picks from a pool's own `instanceTypes` (GKE N1 with attached GPUs) rather than
    #: only from the catalog's types of its `gpu`
    gpus_per_node_selects: Callable[[GpuPoolConfig], bool]
    #: the stack's `provisioner` values this cloud takes
    provisioners: tuple[str, ...]
    #: a per-zone pool splits its max across the zones (so the max must cover them)
    splits_per_zone: bool
    #: a GPU pool's `per_zone` when it sets none
    default_per_zone: bool
    #: a pool with an on-demand fallback needs the priority expander (the autoscaler ranks spot above it)
    priority_expander: bool
    #: the families the cloud's machine types come from, and where that list is from
    machine_type_pattern: str
    machine_type_source: str
    #: its rules for the tags (labels) on every resource, its node disk bounds, GPU time-slicing replicas
    tag_rules: TagRules
    disk_gib: Bounds
    time_slicing_replicas: Bounds
    #: the autoscaler's durations (by attribute name) within the cloud's bounds
    autoscaler_durations: Mapping[str, Bounds] = field(default_factory=dict)
    #: how the cloud writes a duration (regex, and the words that say it), when it takes fewer than Go's
    duration_format: tuple[str, str] | None = None
    #: how many instance types one general pool takes, and the message when more are given (None: no limit)
    general_pool_types: tuple[int, str] | None = None

    @classmethod
    def of(cls, rules: ModuleType) -> ConfigRules:
        """A cloud's `config_rules` module's rules, under the names every cloud's gives them (a cloud's own
        extra, such as AKS's duration format, is set by its provider on top)."""
        return cls(
            problems=rules.validate,
            warnings=rules.warnings,
            gpus_per_node_selects=rules.gpus_per_node_selects,
            provisioners=rules.PROVISIONERS,
            splits_per_zone=rules.SPLITS_PER_ZONE,
            default_per_zone=rules.DEFAULT_PER_ZONE,
            priority_expander=rules.PRIORITY_EXPANDER,
            machine_type_pattern=rules.MACHINE_TYPE_PATTERN,
            machine_type_source=rules.MACHINE_TYPE_SOURCE,
            tag_rules=rules.TAG_RULES,
            disk_gib=rules.DISK_GIB,
            time_slicing_replicas=rules.TIME_SLICING_REPLICAS,
            autoscaler_durations=rules.AUTOSCALER_DURATIONS,
            general_pool_types=rules.GENERAL_POOL_TYPES,
        )


@dataclass(frozen=True)
class StackBuilder:
    """The composition of a stack config into the cloud's cluster, pools and add-ons (`elastic_gpu.compose`)."""

    #: the problems of the stack's cluster a component would raise, found before anything is declared
    cluster_problems: Callable[[StackConfig], list[str]]
    #: the cloud's own SpotGpuPoolArgs fields of a GPU pool of the stack
    pool_args: Callable[[StackConfig, GpuPoolConfig], dict[str, Any]]
    #: declares the stack's resources (in a Pulumi program); returns its exports
    build_stack: Callable[[StackConfig], dict[str, Any]]


@dataclass(frozen=True)
class PoolBuilder:
    """The builders of the cloud's node groups, which `GeneralPool` and `SpotGpuPool` call after validating."""

    #: the problems of the node overrides (AMI, disk, labels) a pool component's Args set on this cloud
    override_problems: Callable[[str, GeneralPoolArgs | SpotGpuPoolArgs], list[str]]
    #: the problems only this cloud's GPU pool has (name lengths, group counts)
    pool_problems: Callable[[str, SpotGpuPoolArgs], list[str]]
    #: how many node groups a GPU pool makes: (spot groups, on-demand fallback groups); its max and its
    #: fallback's max must cover one node per group
    node_group_counts: Callable[[SpotGpuPoolArgs], tuple[int, int]]
    #: what a pod needs to land on a GPU pool (tolerations, node selector, Job labels)
    workload_contract: Callable[[str, SpotGpuPoolArgs], WorkloadContract]
    #: declare the general pool's, and a GPU pool's, node groups as children of `parent`
    build_general_pool: Callable[[str, GeneralPoolArgs, pulumi.Resource], BuiltPool]
    build_spot_gpu_pool: Callable[[str, SpotGpuPoolArgs, pulumi.Resource], BuiltPool]
    #: the promise a GPU pool with an on-demand fallback makes when its Args set none: minutes to fallback
    default_max_minutes_to_fallback: float

    @classmethod
    def of(cls, pools: ModuleType) -> PoolBuilder:
        """A cloud's `pools` module's builders, under the names every cloud's gives them."""
        return cls(
            override_problems=pools.override_problems,
            pool_problems=pools.pool_problems,
            node_group_counts=pools.node_group_counts,
            workload_contract=pools.workload_contract,
            build_general_pool=pools.build_general_pool,
            build_spot_gpu_pool=pools.build_spot_gpu_pool,
            default_max_minutes_to_fallback=pools.DEFAULT_MAX_MINUTES_TO_FALLBACK,
        )


@dataclass(frozen=True)
class AutoscalerBuilder:
    """The cloud's cluster autoscaler, which `ClusterAutoscaler` builds after validating."""

    #: declares what the cloud's autoscaler needs (its role, Deployment, or the managed profile's checks);
    #: returns the component's outputs by name (image, role, role_arn, service_account_name, deployment), each
    #: typed by the ClusterAutoscaler attribute it sets
    build_autoscaler: Callable[[str, ClusterAutoscalerArgs, pulumi.Resource], dict[str, Any]]
    #: we run the autoscaler's pod (False: the cloud manages it, GKE and AKS)
    runs_pod: bool = True
    #: the autoscaler reads the priority expander's ConfigMap (False: GKE's own)
    supports_priority_expander: bool = True


@dataclass(frozen=True)
class NodeGroupReader:
    """How the core reads the cloud's node groups from captured resources: the policy rules, cost, report,
    simulation and diff read nothing of a node group but its `NodeGroupView` (elastic_gpu/node_group_view.py)."""

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

    @classmethod
    def of(cls, pack: ModuleType) -> PackRules:
        """A cloud's `pack` module's rules, under the names each cloud's gives them."""
        return cls(policies=pack.POLICIES, public_node_ips=pack.public_node_ips, cost_tags=pack.COST_TAGS)


@dataclass(frozen=True)
class VersionRows:
    """The cloud's Kubernetes minors and where its resources carry a version (versions.py, diff, policy)."""

    #: its Kubernetes minors and their support dates, oldest first
    kubernetes_support: Sequence[MinorSupport]
    #: resource type -> the input carrying the control plane's minor, and the nodes'
    version_inputs: Mapping[str, str]
    node_version_inputs: Mapping[str, str]

    @classmethod
    def of(cls, versions: ModuleType) -> VersionRows:
        """A cloud's `versions` module's rows, under the names each cloud's gives them."""
        return cls(
            kubernetes_support=versions.KUBERNETES_SUPPORT,
            version_inputs=versions.VERSION_INPUTS,
            node_version_inputs=versions.NODE_VERSION_INPUTS,
        )


@dataclass(frozen=True)
class ReplacementRows:
    """What replaces the cloud's resources on change (elastic_gpu/replacement.py, `diff`)."""

    pool_replace_fields: Mapping[str, ReplaceRule]
    other_replace_fields: Mapping[str, ReplaceRule]
    #: the input that is a pool's cloud name
    pool_name_field: Mapping[str, str]
    inline_pool_refused_fields: Mapping[str, InlinePoolRule]
    #: node-pool inputs whose in-place update replaces every node of the pool
    node_rolling_fields: Mapping[str, ReplaceRule]

    @classmethod
    def of(cls, replacement: ModuleType) -> ReplacementRows:
        """A cloud's `replacement` module's rows, under the names each cloud's gives them."""
        return cls(
            pool_replace_fields=replacement.POOL_REPLACE_FIELDS,
            other_replace_fields=replacement.OTHER_REPLACE_FIELDS,
            pool_name_field=replacement.POOL_NAME_FIELD,
            inline_pool_refused_fields=replacement.INLINE_POOL_REFUSED_FIELDS,
            node_rolling_fields=replacement.NODE_ROLLING_FIELDS,
        )


# --- the protocol ------------------------------------------------------------------------------------------


class CloudProvider(Protocol):
    """One cloud, as the cloud-neutral core asks for it. Every method may be called with no cloud SDK
    installed but the one its result needs (see the module docstring)."""

    # identity and facts

    @property
    def name(self) -> str:
        """The stack config's `cloud` and the cluster handle's `cloud`: the registry key."""
        ...

    @property
    def facts(self) -> CloudFacts:
        """Plain, SDK-free facts the core checks against or says in messages."""
        ...

    # the cloud-only settings (read by the settings model, config.py and validation.py)

    @property
    def owner(self) -> str:
        """The cloud in a message on one of its settings set elsewhere: "an AWS"-only setting."""
        ...

    # config rules

    def config_rules(self) -> ConfigRules:
        """Its config rules: called while a stack config is validated (config.py, validation.py)."""
        ...

    def ignored_settings(self) -> Mapping[tuple[str, str | None], str]:
        """The stack settings that do nothing on this cloud: (section, model key or None for the whole
        section) -> what to do instead. Setting one is a config error naming it; empty when all apply."""
        ...

    # builders

    def stack_builder(self) -> StackBuilder:
        """The composition of a stack on this cloud: called by `compose.build_stack` in a Pulumi program."""
        ...

    def pool_builder(self) -> PoolBuilder:
        """Its node-group builders: called by `GeneralPool` and `SpotGpuPool`."""
        ...

    def autoscaler_builder(self) -> AutoscalerBuilder:
        """Its autoscaler: called by `ClusterAutoscaler`."""
        ...

    # reader, timing model, mocks, policies, rows

    def reader(self) -> NodeGroupReader:
        """How its node groups are read from captured resources (policy, cost, report, simulation, diff): the
        one place the core learns what a node group of this cloud is. Called when those tables are first
        merged (pool_view, the offline report) and once per simulation. Each table is filled today from the
        cloud's reader modules (pool_view.py, report.py, node_templates.py)."""
        ...

    def autoscaler_settings(self, preview: Preview) -> AutoscalerSettings | None:
        """The timing model of its autoscaler in the preview: its settings, clocks and evidence, as the
        simulation times a pending pod; None when the preview has none of this cloud's autoscalers."""
        ...

    def mocks(self) -> Mocks:
        """The offline mock engine's answers for its resource types and invokes, and its new account."""
        ...

    def pack(self) -> PackRules:
        """Its part of the policy pack: its own rules, and its parts of the cloud-neutral ones."""
        ...

    def versions(self) -> VersionRows:
        """Its Kubernetes minors and version inputs: read when versions.py and the version policy load."""
        ...

    def replacement(self) -> ReplacementRows:
        """Its replacement rows: read when elastic_gpu/replacement.py loads (diff, docs/day-two.md's table)."""
        ...


# --- optional capabilities: a provider implements these too, the core checks them with isinstance ------------


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
class AccountPreflight(Protocol):
    """A check of what the account lacks for the stack (quotas, roles, enabled services), read through the
    cloud's invokes before anything is declared (elastic_gpu/preflight.py)."""

    def preflight(self, cfg: StackConfig) -> list[Finding]:
        """Every finding for the stack's pools at their max."""
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
class ClusterItems(Protocol):
    """Priced items of the cluster outside its pools (AKS: the System pool's VM size)."""

    def cluster_items(self, cfg: StackConfig) -> list[str]:
        """The items, priced like the pools' (prices overrides, cost)."""
        ...


@runtime_checkable
class GpuResolver(Protocol):
    """A reader of the GPU an instance type carries from the cloud's API through its provider's invoke (EC2's
    DescribeInstanceTypes, GCE's machine types), for a type the catalog lacks."""

    def resolve_gpu(self, instance_type: str, region: str | None, zones: Sequence[str]) -> GpuSpec | str:
        """The type's GPU as the cloud describes it in `region` (None: the provider's) or its `zones`, or why
        the cloud gave none."""
        ...


@runtime_checkable
class RunningVersion(Protocol):
    """A cluster that runs another version than it declares (GKE: the release channel upgrades past a floor)."""

    def running_support(self, status: SupportStatus, props: Mapping[str, Any]) -> SupportStatus:
        """The support status of the version the cluster resource (`props`) will run, from its declared one's."""
        ...


@dataclass(frozen=True)
class UpgradeReach:
    """Where one `up` can take a cluster's control plane from the minor its deployed program declares (`diff`)."""

    #: the oldest minor the cluster can be running on the day asked (the cloud may have upgraded it on its own)
    runs_at_least: str
    #: the newest minor one upgrade may target from there
    reaches: str
    #: the cloud's rule, with its source, where either differs from the declared minor and the one after it
    why: str = ""


@runtime_checkable
class UpgradePath(Protocol):
    """A control plane that can run, or move to, another minor than the one after the declared one: GKE upgrades a
    cluster on its own at the end of its minor's support; AKS moves an unsupported minor straight to the oldest
    supported one. Without it a cloud runs the declared minor and upgrades one minor at a time."""

    def upgrade_reach(self, minor: str, props: Mapping[str, Any], on: date) -> UpgradeReach:
        """From `minor` ("1.33"), declared by the cluster resource whose inputs are `props` ({} when only a stack
        file is known), on the day `on`."""
        ...


@runtime_checkable
class LivePriceSource(Protocol):
    """A reader of the cloud's own on-demand and spot prices (`elastic_gpu/<cloud>/prices.py`), asked at preview
    when the user wants live prices; the shipped table answers for whatever it cannot (elastic_gpu/prices.py)."""

    def price_source(self) -> LivePrices:
        """The cloud's price source (built on each call: it holds no state across programs)."""
        ...
