"""What every layer may know of a cloud: its plain records, and the small protocols the low layers ask of it.

The bottom floor of the seam between the cloud-neutral core and a cloud (`CloudProvider`, elastic_gpu/provider.py,
combines these with the parts the layers above declare: config.StackCloud, pool_args.PoolCloud,
cluster_autoscaler.AutoscalerCloud). Everything here is plain data or a protocol over plain data, so any module
of the library may import it: it imports nothing of the library, and no module here names a type from above.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class MinorSupport:
    """One Kubernetes minor on one managed service: until when it is in standard support, when it
    reaches end of life (no support at all; the service refuses new clusters or upgrades them), and
    the source of both dates."""

    minor: str
    end_of_standard_support: date
    end_of_life: date
    source: str
    note: str = ""
    #: the end of the service's paid long-term support, where it has one for the minor (AKS LTS, Premium tier
    #: with supportPlan AKSLongTermSupport): a cluster on that plan is judged by it, not by `end_of_life`
    lts_end_of_life: date | None = None
    #: for a row whose dates are estimates (the service has not published them yet): when to read the source
    #: again, at the latest
    review_by: date | None = None

    @property
    def next_change(self) -> date:
        """The row's last date (past it the service no longer lists the minor at all), or its review date when
        that comes first (elastic_gpu/facts.py)."""
        last = max(self.end_of_life, self.lts_end_of_life or self.end_of_life)
        return min(last, self.review_by) if self.review_by else last


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
class TagRules:
    """One cloud's rules for the tags (labels) put on every resource; each cloud's config_rules.py holds its own."""

    what: str  # "tag" or "label"
    max_count: int
    key_max: int
    value_max: int
    key_pattern: str | None = None  # full-match regex; None: any characters
    value_pattern: str | None = None
    pattern_help: str = ""
    forbidden_key_chars: str = ""
    reserved_key_prefixes: tuple[str, ...] = ()  # compared case-insensitively
    reserved_value_prefixes: tuple[str, ...] = ()
    reserved_keys: tuple[str, ...] = ()  # keys the components set themselves
    #: None: any characters; else keys and values are Unicode letters, digits, white space and these
    allowed_punctuation: str | None = None


@dataclass(frozen=True)
class Bounds:
    """An API's inclusive bounds for one number, with where they come from."""

    low: int
    high: int
    source: str


@dataclass(frozen=True, kw_only=True)
class CloudLimits:
    """The plain part of a cloud's config rules: the bounds, patterns and tables the core's checks apply to it
    (validation.py, settings, versions). `ConfigRules` (elastic_gpu/config.py) adds the cloud's own checks of a
    stack config; each cloud builds one `ConfigRules` (`RULES`, the end of its config_rules.py), which is this."""

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
class VersionRows:
    """The cloud's Kubernetes minors and where its resources carry a version (versions.py, diff, policy)."""

    #: its Kubernetes minors and their support dates, oldest first
    kubernetes_support: Sequence[MinorSupport]
    #: resource type -> the input carrying the control plane's minor, and the nodes'
    version_inputs: Mapping[str, str]
    node_version_inputs: Mapping[str, str]


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


# --- what the low layers ask of a cloud: each a part of `CloudProvider` (elastic_gpu/provider.py) --------------


@runtime_checkable
class KnownCloud(Protocol):
    """A cloud by its identity and plain facts: what a message names and a check compares against."""

    @property
    def name(self) -> str:
        """The stack config's `cloud` and the cluster handle's `cloud`: the registry key."""
        ...

    @property
    def facts(self) -> CloudFacts:
        """Plain, SDK-free facts the core checks against or says in messages."""
        ...

    @property
    def owner(self) -> str:
        """The cloud in a message on one of its settings set elsewhere: "an AWS"-only setting."""
        ...


@runtime_checkable
class RuledCloud(KnownCloud, Protocol):
    """A cloud whose limits the validators apply (validation.py, the settings' checks)."""

    def config_rules(self) -> CloudLimits:
        """Its config rules (`ConfigRules`, whose plain part the validators read): called while a stack config
        or a component's Args are checked."""
        ...


@runtime_checkable
class VersionedCloud(KnownCloud, Protocol):
    """A cloud whose Kubernetes minors are known (versions.py)."""

    def versions(self) -> VersionRows:
        """Its Kubernetes minors and version inputs: read when versions.py loads (the stack's version checks,
        the autoscaler's image), and by the version policy and `diff`."""
        ...


@runtime_checkable
class RegisteredCloud(RuledCloud, VersionedCloud, Protocol):
    """What the registry (elastic_gpu/clouds.py) hands back for a name: the low layers' parts of a provider. A
    layer above that needs more of the same provider declares its own part (config.StackCloud,
    pool_args.PoolCloud, cluster_autoscaler.AutoscalerCloud) and narrows to it where it chooses the cloud."""
