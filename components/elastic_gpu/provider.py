"""What a `pulumi up` asks of a cloud: the deploy protocol `CloudProvider`.

A cloud is one class implementing `CloudProvider` (`elastic_gpu/<cloud>/provider.py`, exported by its folder
as `PROVIDER`; `elastic_gpu.clouds` lists them). The library (components, config, validation, compose,
preflight) never branches on a cloud's name and never looks a part up by string: it calls the stack's provider
(`get_cloud(name)`), or every provider in turn (`all_clouds()`, in registry order, so merged tables keep one
order). The type checker verifies that each provider has every member, with its signature, and each record
below is built by the cloud's own module from its names (`RULES = ConfigRules(...)` at the end of
`<cloud>/config_rules.py`, `BUILDER = PoolBuilder(...)` at the end of `<cloud>/pools.py`, ...), so a cloud that
lacks a member fails the type check, not a run.

As Karpenter's `pkg/cloudprovider/types.go` and cluster-autoscaler's `cloudprovider/cloud_provider.go` do, each
member says what it is, when the library calls it and what it returns. The members, by what a cloud supplies:

- identity and facts: `name`, `facts` (plain, SDK-free data);
- how messages name it: `owner` ("an AWS"-only setting); its own settings are typed parts of its folder
  (`<cloud>/options.py`), merged into the settings models by elastic_gpu/settings.py;
- its config rules: `config_rules()`, `ignored_settings()`;
- its builders: `stack_builder()` (the composition of a stack), `pool_builder()` (general and GPU pools),
  `autoscaler_builder()` (the autoscaler or provisioner);
- its version rows: `versions()`.

Capabilities only some clouds have are small protocols a provider implements too, checked with `isinstance`
(never looked up by name): `AccountPreflight`, `ClusterItems` (AKS's System pool, priced outside the pools),
`GpuResolver` (EC2 describes a type's GPU), `UpgradePath` (GKE's and AKS's own upgrade rules, in the version
advice).

The offline tools (elastic_gpu/tools/) ask more of a cloud (its reader of node groups, mocks, timing, policy
pack, replacement rows, simulations): that is their own protocol, `ToolCloud` in elastic_gpu/tools/clouds.py,
which extends this one. Nothing here imports the tools, not even for types: a `pulumi up` loads none of them.

Importing a provider loads no cloud SDK: its methods import the cloud's modules when called, so a stack on one
cloud needs only that cloud's extra. They import each module by its full name (`import elastic_gpu.aws.stack as
stack`): the offline runner forgets the modules a program imported between two runs in one process, and
`from elastic_gpu.aws import stack` would hand back the package's attribute, the forgotten module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from elastic_gpu.clouds import importing

if TYPE_CHECKING:
    from datetime import date

    import pulumi

    from elastic_gpu.clouds import MinorSupport
    from elastic_gpu.cluster_autoscaler import ClusterAutoscalerArgs
    from elastic_gpu.config import GpuPoolConfig, StackConfig
    from elastic_gpu.general_pool import GeneralPoolArgs
    from elastic_gpu.gpu_catalog import GpuSpec
    from elastic_gpu.pool_types import BuiltPool
    from elastic_gpu.preflight import Finding
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs
    from elastic_gpu.validation import Bounds, TagRules
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


@dataclass(frozen=True)
class StackBuilder:
    """The composition of a stack config into the cloud's cluster, pools and add-ons (`elastic_gpu.compose`)."""

    #: the problems of the stack's cluster a component would raise, found before anything is declared
    cluster_problems: Callable[[StackConfig], list[str]]
    #: the cloud's own SpotGpuPoolArgs fields of a GPU pool of the stack
    pool_args: Callable[[StackConfig, GpuPoolConfig], dict[str, Any]]
    #: declares the stack's resources (in a Pulumi program), its pools from the Args `compose.build_stack`
    #: planned and checked (the general pool's, each GPU pool's); returns its exports
    build_stack: Callable[[StackConfig, GeneralPoolArgs, list[SpotGpuPoolArgs]], dict[str, Any]]


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
class VersionRows:
    """The cloud's Kubernetes minors and where its resources carry a version (versions.py, diff, policy)."""

    #: its Kubernetes minors and their support dates, oldest first
    kubernetes_support: Sequence[MinorSupport]
    #: resource type -> the input carrying the control plane's minor, and the nodes'
    version_inputs: Mapping[str, str]
    node_version_inputs: Mapping[str, str]


# --- the protocol ------------------------------------------------------------------------------------------


class CloudProvider(Protocol):
    """One cloud, as a `pulumi up` asks for it. Every method may be called with no cloud SDK
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

    # rows

    def versions(self) -> VersionRows:
        """Its Kubernetes minors and version inputs: read when versions.py loads (the stack's version checks,
        the autoscaler's image), and by the version policy and `diff`."""
        ...


# --- optional capabilities: a provider implements these too, the core checks them with isinstance ------------


@runtime_checkable
class AccountPreflight(Protocol):
    """A check of what the account lacks for the stack (quotas, roles, enabled services), read through the
    cloud's invokes before anything is declared (elastic_gpu/preflight.py)."""

    def preflight(self, cfg: StackConfig) -> list[Finding]:
        """Every finding for the stack's pools at their max."""
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


# --- the shape every cloud's provider shares -------------------------------------------------------------------


class Cloud:
    """What the clouds' provider classes share (elastic_gpu/<cloud>/provider.py subclasses it): their identity as
    class attributes, no ignored settings unless a cloud names some, and `loading()`, the guard around each
    method's import of its cloud's modules. Each subclass's methods only import one module of its folder and hand
    back the record that module builds (`RULES`, `BUILDER`, `ROWS`), so the type checker sees every member."""

    #: `CloudProvider.name`, `.facts`, `.owner`, set by each cloud's class
    name: str
    facts: CloudFacts
    owner: str

    def loading(self) -> AbstractContextManager[None]:
        """Around an import of the cloud's modules: a missing SDK its extra brings is a ConfigError naming the
        extra (elastic_gpu.clouds.importing)."""
        guard: AbstractContextManager[None] = importing(self.name)
        return guard

    def ignored_settings(self) -> Mapping[tuple[str, str | None], str]:
        """`CloudProvider.ignored_settings`: none unless the cloud names some."""
        return {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
