"""The stack config: one cloud-neutral shape, parsed once into typed models.

A stack file (`stacks/Pulumi.<stack>.yaml`) holds, under the project's namespace,
the keys `cloud`, `cluster`, `generalPool`, `gpuPools`, `autoscaler`,
`devicePlugin`, `tags` and `prices`. `load_stack_config` turns them into a `StackConfig`
or raises one `ConfigError` that lists every problem (field path, value, what is
allowed) before any resource is declared.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast, runtime_checkable

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel, to_snake

from elastic_gpu.cloud_facts import CloudLimits, RegisteredCloud
from elastic_gpu.clouds import all_clouds, get_cloud
from elastic_gpu.errors import ConfigError
from elastic_gpu.gpu_catalog import (
    GPU_MODELS,
    GpuSpec,
    default_instance_types,
    gpu_instance_type,
    gpu_instance_types,
    gpu_spec_problems,
    resolve_gpu_spec,
)
from elastic_gpu.karpenter_core import time_slicing_problem
from elastic_gpu.prices import TABLE_PATH, price_row
from elastic_gpu.settings import (  # the autoscaler defaults the AKS cluster's profile reads from here
    DEFAULT_EXPANDER as DEFAULT_EXPANDER,
)
from elastic_gpu.settings import (
    DEFAULT_MAX_NODE_PROVISION_TIME as DEFAULT_MAX_NODE_PROVISION_TIME,
)
from elastic_gpu.settings import (
    DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD as DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD,
)
from elastic_gpu.settings import (
    DEFAULT_SCALE_DOWN_UNNEEDED as DEFAULT_SCALE_DOWN_UNNEEDED,
)
from elastic_gpu.settings import (
    DURATION_KEYS,
    MAX_TIME_SLICING_REPLICAS,
    AutoscalerSettings,
    ClusterOptions,
    ClusterSettings,
    DevicePluginSettings,
    GeneralPoolSettings,
    GpuPoolSettings,
    KueueSettings,
    NetworkCidrSetting,
    ProtectSetting,
    RegionSetting,
    Spelling,
    general_pool_settings_problems,
    gpu_pool_settings_problems,
)
from elastic_gpu.settings import (
    Expander as Expander,
)
from elastic_gpu.settings.base import MAX_DISK_GIB, MAX_NODES, MAX_USD_PER_HOUR, StackModel, cloud_only_settings
from elastic_gpu.validation import (
    NAME_PATTERN,
    NODE_DISK_GIB,
    NODES_PER_CLUSTER,
    PATTERN_HELP,
    autoscaler_settings_problems,
    cidr_problems,
    duplicate_problems,
    gpu_instance_type_problems,
    owner_of,
    private_cidr_problems,
    shown_number,
    time_slicing_problems,
)
from elastic_gpu.versions import SUPPORTED_KUBERNETES_VERSIONS, minor_support_warnings

if TYPE_CHECKING:
    from elastic_gpu.pool_args import GeneralPoolArgs, SpotGpuPoolArgs

PROJECT = "elastic-gpu"

Cloud = Literal["aws", "azure", "gcp"]
#: What scales the GPU pools: the cluster-autoscaler over declared node groups (every cloud), Karpenter
#: (EKS; AKS node auto-provisioning), or GKE node pool auto-creation through ComputeClasses. Each cloud
#: lists the ones it can do in its ConfigRules.provisioners.
Provisioner = Literal["cluster-autoscaler", "karpenter", "auto-provisioning"]
DEFAULT_PROVISIONER: Provisioner = "cluster-autoscaler"
#: Address range sizes the network layout supports (elastic_gpu/aws/network.py carves subnets from it).
CIDR_PREFIXES = range(16, 25)
#: The most GPUs one node carries in any cloud's catalog is 16 (GCE a2-megagpu-16g); sharing, disks and prices
#: get sanity bounds here too, the clouds' own in their config_rules.py.
MAX_GPUS_PER_NODE = 16

#: Why each sanity bound of the models is what it is (keyed by the bound), for the error message.
BOUND_SOURCES = {
    MAX_NODES: NODES_PER_CLUSTER.source,
    MAX_GPUS_PER_NODE: "no node of any cloud carries more GPUs",
    MAX_DISK_GIB: NODE_DISK_GIB.source,
    MAX_TIME_SLICING_REPLICAS: "each replica is a pod on the node",
    MAX_USD_PER_HOUR: "USD per hour of one node",
}


#: The stack file's parts: camelCase keys, strict types, an unknown key an error, frozen once parsed.
_Model = StackModel


class ApiAccessConfig(_Model):
    """Who reaches the Kubernetes API endpoint (all clouds)."""

    public: bool = True
    """Default true: a public endpoint (nodes always use the private path). False: private only
    (EKS private endpoint, AKS private cluster, GKE private endpoint; GKE needs `privateNodes`)."""
    public_cidrs: list[str] | None = Field(default=None, min_length=1)
    """IPv4 ranges allowed on the public endpoint (EKS publicAccessCidrs, AKS authorized IP ranges, GKE
    master authorized networks); default: anywhere. Include your CI's and operators' addresses."""
    runner_in_vnet: bool = False
    """Azure and AWS, with `public: false`: default false warns that `pulumi up` must run where the private API
    server answers (the cluster's VNet or VPC, or a network connected to it); true says the runner is there.
    Azure: that silences the warning only with `subnetId` (a VNet AKS creates during `up` has no runner yet).
    AWS: the stack creates the VPC, so the first `up` needs `public: true` (the warning's two steps)."""


class ClusterName(_Model):
    """The cluster's name in a stack file (the Args call it `cluster_name`)."""

    name: str = Field(pattern=NAME_PATTERN)
    """Cluster name; also prefixes node-group names and the autoscaler's discovery tag."""


class ClusterCore(ProtectSetting, NetworkCidrSetting, ClusterSettings, RegionSetting, ClusterName):
    """The cluster's settings every cloud has (elastic_gpu.settings' cluster models, which the clusters' Args
    share), in the stack file's order: name, region, zones, kubernetesVersion, networkCidr, protect, apiAccess."""

    model_config = _Model.model_config

    api_access: ApiAccessConfig = ApiAccessConfig()
    """Who reaches the API endpoint (default: public, from anywhere). Production stacks restrict it."""


class ClusterConfig(ClusterOptions, ClusterCore):
    """`cluster`: the settings every cloud has, then each cloud's own (elastic_gpu/settings/<cloud>.py)."""

    model_config = _Model.model_config


#: The `cluster` keys only one cloud has (its options): the cloud, and the value that leaves them unset.
CLOUD_ONLY_CLUSTER_SETTINGS = cloud_only_settings(ClusterConfig)


class GeneralPoolConfig(GeneralPoolSettings):
    """`generalPool`: the settings of elastic_gpu.settings.GeneralPoolSettings."""

    model_config = _Model.model_config


class GpuSpecConfig(_Model):
    """A catalog row's figures for an instance type the catalog lacks."""

    model: str
    """A GPU model the catalog knows (t4, a10g, l4, l40s, v100, a100, a100-80gb, h100, h200, b200, ...)."""
    count: int = Field(ge=1, le=MAX_GPUS_PER_NODE)
    """GPUs per node."""
    vcpus: int = Field(ge=1)
    memory_gib: int = Field(ge=1)


class GpuPoolStackFields(_Model):
    """What only a stack file says of a GPU pool (a program gives SpotGpuPoolArgs the resolved values)."""

    name: str = Field(pattern=NAME_PATTERN)
    """The pool's name: it prefixes its node groups' names, labels its nodes and keys its price rows."""
    gpu: str | None = None
    """GPU model key (t4, a10g, l4, l40s, v100, a100, h100); picks instance types if none given."""
    instance_types: list[str] | None = Field(default=None, min_length=1)
    """GPU instance types; all must carry the same GPU count and the same GPU model (see mixedGpuModels).
    Default: every catalog type of `gpu` with `gpusPerNode` GPUs."""
    gpus_per_node: int = Field(default=1, ge=1, le=MAX_GPUS_PER_NODE)
    """GPUs per node when instance types are picked from `gpu` (default 1)."""
    gpu_spec: GpuSpecConfig | None = None
    """The GPU of the `instanceTypes` the catalog (elastic_gpu/gpu_catalog.py) lacks, as the cloud's
    instance-type page gives it: `{model: h100, count: 8, vcpus: 192, memoryGib: 2048}`."""


class GpuPoolConfig(GpuPoolSettings, GpuPoolStackFields):
    """`gpuPools[]`: a pool's stack-file fields, then the settings of elastic_gpu.settings.GpuPoolSettings."""

    model_config = _Model.model_config


class AutoscalerConfig(AutoscalerSettings):
    """`autoscaler`: the settings of elastic_gpu.settings.AutoscalerSettings."""

    model_config = _Model.model_config


class DevicePluginConfig(DevicePluginSettings):
    """`devicePlugin`: the settings of elastic_gpu.settings.DevicePluginSettings."""

    model_config = _Model.model_config


class PriceOverride(_Model):
    """One item's prices in USD per hour, over the table row (elastic_gpu/data/prices.csv) of the
    stack's region: only the keys set replace the row's figures. Set at least one key; an item
    with no row in the region needs `onDemand`."""

    on_demand: float | None = Field(default=None, ge=0)
    """USD per hour of one node (GCP accelerators: of one GPU) on on-demand capacity."""
    spot: float | None = Field(default=None, ge=0)
    """USD per hour on spot capacity; must be <= the on-demand price."""
    eviction_rate: float | None = Field(default=None, ge=0, le=1)
    """Fraction 0..1 of spot runs evicted and re-run (the `cost` command's re-run hours)."""


class KueueConfig(KueueSettings):
    """GCP only, with a queuedProvisioning pool: the namespaces that get a LocalQueue."""

    model_config = _Model.model_config


class StackConfig(_Model):
    cloud: Cloud
    cluster: ClusterConfig
    general_pool: GeneralPoolConfig
    gpu_pools: list[GpuPoolConfig] = Field(min_length=1)
    autoscaler: AutoscalerConfig = AutoscalerConfig()
    provisioner: Provisioner = DEFAULT_PROVISIONER
    """What scales the GPU pools (default cluster-autoscaler); `karpenter` on aws: Karpenter's NodePools per
    pool (no GPU node groups), its controller on the general pool; `auto-provisioning` on gcp: a ComputeClass
    per pool that GKE creates the node pools for, no GPU node pools (cluster-wide node auto-provisioning as
    `cluster.nodeAutoProvisioning` says)."""
    device_plugin: DevicePluginConfig = DevicePluginConfig()
    tags: dict[str, str] = Field(default_factory=dict)
    """Cost-allocation tags (AWS tags, Azure tags, GCP labels) on every taggable resource."""
    kueue: KueueConfig | None = None
    """GCP only: Kueue's LocalQueue namespaces (default: a LocalQueue in `default`)."""
    prices: dict[str, PriceOverride] = Field(default_factory=dict)
    """Price overrides by item (instance type, VM size, GCE machine or accelerator type); default none:
    the table's prices. Only the cost report, `cost` command and their figures change, no resource."""

    @property
    def provider(self) -> StackCloud:
        """The provider of the stack's `cloud` (a name in the stack file): where a stack's cloud is chosen. The
        rules and builders below take this provider, never the name. Read from `cloud` on each use, so a copy
        with another cloud (`model_copy(update={"cloud": ...})`) answers for its own."""
        return stack_cloud(get_cloud(self.cloud))

    def instance_types(self, pool: GpuPoolConfig) -> list[str]:
        """The pool's instance types: as configured, or every catalog type of its GPU."""
        if pool.instance_types:
            return list(pool.instance_types)
        assert pool.gpu is not None
        return default_instance_types(self.provider, pool.gpu, pool.gpus_per_node)


TOP_LEVEL_KEYS = tuple(StackConfig.model_fields[f].alias or f for f in StackConfig.model_fields)


# --- parsing -----------------------------------------------------------------


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class whose field `loc` points into (for listing allowed keys)."""
    model: Any = StackConfig
    skip_key = False
    for part in loc[:-1]:
        if isinstance(part, int) or skip_key:
            skip_key = False  # a list index or a dict key (`prices.<item>`): same model below
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return None
        ann = field.annotation
        skip_key = getattr(ann, "__origin__", None) is dict
        for cand in (ann, *getattr(ann, "__args__", ())):
            origin = getattr(cand, "__origin__", None)
            inner = cand.__args__[-1] if origin in (list, dict) else cand
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                model = inner
                break
        else:
            return None
    return cast("type[BaseModel]", model)


def _describe(err: Mapping[str, Any]) -> str:
    loc = tuple(err["loc"])
    path = _path(loc)
    if err["type"] == "extra_forbidden":
        model = _model_at(loc)
        keys = [f.alias or n for n, f in model.model_fields.items()] if model else []
        return f"{path}: unknown key; {did_you_mean(str(loc[-1]), keys)}allowed keys: {', '.join(keys) or '?'}"
    if err["type"] == "missing":
        return f"{path}: required key is missing"
    if err["type"] == "string_pattern_mismatch":
        pattern = (err.get("ctx") or {}).get("pattern")
        if pattern in PATTERN_HELP:
            return f"{path}: {err.get('input')!r} is not allowed; allowed: {PATTERN_HELP[pattern]}"
    if err["type"] == "finite_number":
        return f"{path}: must be a finite number (got {err.get('input')!r}); .inf and .nan are not allowed"
    value = err.get("input")
    hint = ""
    if err["type"] == "less_than_equal" and (err.get("ctx") or {}).get("le") in BOUND_SOURCES:
        hint = f"; {BOUND_SOURCES[err['ctx']['le']]}"
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        hint = f"; the value carries its own quotes: write {value[1:-1]!r} without them"
    return f"{path}: {err['msg']} (got {shown_number(value)}){hint}"


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """`did you mean 'x'? ` for the closest choice (case and `-`/`_` ignored), or nothing."""

    def norm(w: str) -> str:
        return w.lower().replace("-", "").replace("_", "")

    by_norm = {norm(c): c for c in choices}
    if norm(word) in by_norm:
        return f"did you mean {by_norm[norm(word)]!r}? "
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.75)
    return f"did you mean {close[0]!r}? " if close else ""


def parse_stack_config(values: Mapping[str, Any], *, resolve_gpus: bool = False) -> StackConfig:
    """Parse and validate the project's config values (keys without namespace). `resolve_gpus` (a program
    under the engine): the GPU of a pool's type the catalog lacks, when no gpuSpec gives it, is asked of the
    cloud's API (its provider's invoke) and kept as the pool's gpuSpec."""
    problems = [
        f"{key}: unknown key; {did_you_mean(key, TOP_LEVEL_KEYS)}allowed keys: {', '.join(TOP_LEVEL_KEYS)}"
        for key in values
        if key not in TOP_LEVEL_KEYS
    ]
    try:
        cfg = StackConfig.model_validate({k: v for k, v in values.items() if k in TOP_LEVEL_KEYS})
    except ValidationError as exc:
        raise ConfigError(problems + [_describe(e) for e in exc.errors()]) from None
    cfg = _resolved_per_zone(cfg)
    unresolved: dict[int, dict[str, str]] = {}
    if resolve_gpus:
        cfg, unresolved = _resolved_gpus(cfg)
    problems += validate_stack(cfg, unresolved)
    if problems:
        raise ConfigError(problems)
    return cfg


def _resolved_per_zone(cfg: StackConfig) -> StackConfig:
    """`cfg` with each GPU pool's `perZone` set: as given, else the cloud's default (ConfigRules.default_per_zone)."""
    if all(p.per_zone is not None for p in cfg.gpu_pools):
        return cfg
    default = cfg.provider.config_rules().default_per_zone
    pools = [p if p.per_zone is not None else p.model_copy(update={"per_zone": default}) for p in cfg.gpu_pools]
    return cfg.model_copy(update={"gpu_pools": pools})


def _resolved_gpus(cfg: StackConfig) -> tuple[StackConfig, dict[int, dict[str, str]]]:
    """`cfg` with the gpuSpec the cloud's API gives each pool whose types the catalog lacks and that gives
    none; why it gave none, by pool index."""
    pools, unresolved = list(cfg.gpu_pools), {}
    for i, pool in enumerate(pools):
        if pool.gpu_spec is not None or not pool.instance_types:
            continue
        spec, why = resolve_gpu_spec(cfg.provider, pool.instance_types, cfg.cluster.region, cfg.cluster.zones)
        if spec is not None:
            found = GpuSpecConfig(model=spec.model, count=spec.count, vcpus=spec.vcpus, memory_gib=spec.memory_gib)
            pools[i] = pool.model_copy(update={"gpu_spec": found})
        elif why:
            unresolved[i] = why
    return cfg.model_copy(update={"gpu_pools": pools}), unresolved


def load_stack_config(config: Mapping[str, Any], project: str = PROJECT, *, resolve_gpus: bool = False) -> StackConfig:
    """Parse a stack file's `config:` map (`<project>:<key>` entries; other namespaces, such as
    `aws:region`, belong to providers). A namespace that looks like a typo of ours is an error,
    so a section is never dropped without a word."""
    prefix = f"{project}:"
    problems = namespace_problems(config, project)
    try:
        cfg = parse_stack_config(
            {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}, resolve_gpus=resolve_gpus
        )
    except ConfigError as exc:
        raise ConfigError(problems + exc.problems) from None
    if problems:
        raise ConfigError(problems)
    return cfg


def namespace_problems(config: Mapping[str, Any], project: str = PROJECT) -> list[str]:
    problems = []
    for key in config:
        namespace, sep, name = str(key).partition(":")
        if not sep:
            problems.append(
                f"{key}: a config key needs a namespace (`namespace:key`); did you mean {project + ':' + key!r}?"
            )
        elif namespace != project and did_you_mean(namespace, [project]):
            problems.append(
                f"{key}: unknown namespace {namespace!r}; did you mean {project + ':' + name!r}? "
                f"(this project's keys are `{project}:<key>`)"
            )
    return problems


#: The stack config key of the price overrides, read by every program that prices pools (and the offline gate).
PRICES_KEY = f"{PROJECT}:prices"


def load_price_overrides(config: Mapping[str, Any]) -> dict[str, PriceOverride]:
    """`<elastic-gpu>:prices` alone, from the stack config of any program that uses the components."""
    raw = config.get(PRICES_KEY)
    if raw is None:
        return {}
    if isinstance(raw, str):
        raw = json.loads(raw)
    try:
        prices = TypeAdapter(dict[str, PriceOverride]).validate_python(raw)
    except ValidationError as exc:
        raise ConfigError([f"prices.{_describe(e)}" for e in exc.errors()]) from None
    empty = [item for item, o in prices.items() if o.on_demand is None and o.spot is None and o.eviction_rate is None]
    if empty:
        raise ConfigError(
            [f"prices.{item}: set at least one of onDemand, spot, evictionRate (got {{}})" for item in empty]
        )
    return prices


# --- semantic rules: pure functions over the parsed model --------------------


def validate_stack(cfg: StackConfig, unresolved: Mapping[int, Mapping[str, str]] | None = None) -> list[str]:
    """Every cross-field problem in `cfg`, one message each (empty when valid). `unresolved`: why the cloud's
    API gave no GPU for a pool's types (by pool index), for the refusal."""
    problems: list[str] = []
    cloud = cfg.cloud
    provider = cfg.provider

    supported = SUPPORTED_KUBERNETES_VERSIONS.get(cloud, ())
    if cfg.cluster.kubernetes_version not in supported:
        problems.append(
            f"cluster.kubernetesVersion: {cfg.cluster.kubernetes_version!r} is not supported on {cloud}; "
            f"allowed: {', '.join(supported) or 'none yet'}"
        )
    if not cfg.cluster.zones and not provider.facts.zoneless:
        # The cloud's rules divide by the zones: they run only with some.
        return [
            *problems,
            f"cluster.zones: must list at least one zone of region {cfg.cluster.region!r} (got []); {cloud} places "
            "every node group in zones",
        ]
    if len(set(cfg.cluster.zones)) != len(cfg.cluster.zones):
        problems.append(f"cluster.zones: zones must be distinct (got {cfg.cluster.zones})")
    problems += _cidr_problems(cfg)
    problems += _ignored_setting_problems(cfg)
    problems += time_slicing_problems(
        "devicePlugin.timeSlicingReplicas", provider, cfg.device_plugin.time_slicing_replicas
    )
    # The settings' own rules, the ones GeneralPoolArgs and SpotGpuPoolArgs are checked by (elastic_gpu.settings).
    problems += general_pool_settings_problems(Spelling("generalPool.", stack_file=True), provider, cfg.general_pool)
    rules = provider.config_rules()
    provisioners = rules.provisioners
    if cfg.provisioner not in provisioners:
        problems.append(
            f"provisioner: {cfg.provisioner!r} is not available on {cloud}; "
            f"allowed on {cloud}: {', '.join(provisioners)}"
        )
    elif cfg.provisioner == "karpenter" and cfg.device_plugin.time_slicing_replicas is not None:
        problems.append(
            time_slicing_problem("devicePlugin.timeSlicingReplicas", cfg.device_plugin.time_slicing_replicas)
        )
    splits_per_zone = rules.splits_per_zone
    fallback = next((i for i, p in enumerate(cfg.gpu_pools) if p.on_demand_fallback), None)
    problems += autoscaler_settings_problems(
        lambda key: f"autoscaler.{to_camel(key)}",
        {key: getattr(cfg.autoscaler, key) for key in DURATION_KEYS},
        cfg.autoscaler.expander,
        None if fallback is None else f"gpuPools[{fallback}].onDemandFallback",
        provider,
        "[priority, least-waste]",
    )

    names = [p.name for p in cfg.gpu_pools]
    for i, pool in enumerate(cfg.gpu_pools):
        where = f"gpuPools[{i}]"
        if names.count(pool.name) > 1:
            problems.append(f"{where}.name: {pool.name!r} is used by more than one GPU pool; names must be unique")
        problems += gpu_pool_settings_problems(
            Spelling(f"{where}.", stack_file=True), cfg.provider, pool, given=pool.model_fields_set.__contains__
        )
        if pool.max_size < 1 and not (pool.reservations is not None and pool.reservations.only):
            problems.append(
                f"{where}.maxSize: a GPU pool needs a max of at least 1 (got {pool.max_size}), or "
                f"{where}.reservations.only: true for a pool of reservations alone"
            )
        zones = len(cfg.cluster.zones)
        if pool.per_zone and splits_per_zone and 1 <= pool.max_size < zones:
            problems.append(
                f"{where}.maxSize: with perZone the total max is split across {zones} zones, "
                f"so it must be >= {zones} (got {pool.max_size})"
            )
        if pool.instance_types and len(set(pool.instance_types)) != len(pool.instance_types):
            dups = sorted({t for t in pool.instance_types if pool.instance_types.count(t) > 1})
            problems.append(f"{where}.instanceTypes: each type may appear once (repeated: {', '.join(dups)})")
        if "gpus_per_node" in pool.model_fields_set and pool.instance_types and not rules.gpus_per_node_selects(pool):
            problems.append(
                f"{where}.gpusPerNode: only picks instance types from `gpu`; the configured instanceTypes fix the "
                f"GPU count (got gpusPerNode={pool.gpus_per_node} with {pool.instance_types}); remove one of them"
            )
        problems += _gpu_type_problems(cfg, where, pool, (unresolved or {}).get(i, {}))
    problems += cluster_setting_problems(cfg)
    problems += price_override_problems(cfg)
    problems += api_access_problems(cfg)
    if cfg.kueue is not None and not any(p.queued_provisioning for p in cfg.gpu_pools):
        problems.append(
            "kueue: only used with a gpuPools[].queuedProvisioning pool (GCP), which this stack has none of; remove it"
        )
    if cfg.kueue is not None:
        problems += [
            f"kueue.namespaces[{i}]: {ns!r} is not a Kubernetes namespace name (lowercase letters, digits and '-', "
            "at most 63, starting and ending alphanumeric)"
            for i, ns in enumerate(cfg.kueue.queue_namespaces)
            if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", ns)
        ]
        problems += duplicate_problems("kueue.namespaces", list(cfg.kueue.queue_namespaces))
    # The cloud's own rules (regions, zones, machine shapes, tags, API limits): elastic_gpu/<cloud>/config_rules.py.
    problems += rules.problems(cfg)
    return problems


def api_access_problems(cfg: StackConfig) -> list[str]:
    """Ranges are IPv4 networks without host bits; private-only means no ranges (and, on GKE, private nodes)."""
    access = cfg.cluster.api_access
    problems: list[str] = []
    for i, cidr in enumerate(access.public_cidrs or []):
        if ":" in cidr:
            problems.append(f"cluster.apiAccess.publicCidrs[{i}]: {cidr!r} is IPv6; the clouds take IPv4 ranges here")
            continue
        problems += cidr_problems(
            f"cluster.apiAccess.publicCidrs[{i}]", cidr, invalid="is not an IPv4 range like 203.0.113.0/24"
        )
    problems += duplicate_problems("cluster.apiAccess.publicCidrs", list(access.public_cidrs or []))
    if not access.public and access.public_cidrs is not None:
        problems.append(
            "cluster.apiAccess.publicCidrs: set only with a public endpoint (public: true); a private-only "
            f"endpoint has no public ranges (got {access.public_cidrs})"
        )
    runner_clouds = [c.name for c in all_clouds() if c.facts.private_api_needs_runner]
    if "runner_in_vnet" in access.model_fields_set and (cfg.cloud not in runner_clouds or access.public):
        problems.append(
            f"cluster.apiAccess.runnerInVnet: set only on {' or '.join(runner_clouds)} with a private cluster "
            "(public: false); it silences the private-cluster runner warning (got runnerInVnet: "
            f"{access.runner_in_vnet} with cloud {cfg.cloud!r}, public: {access.public})"
        )
    # (A cloud's own rules on its private endpoint, such as GKE's control-plane range: its ConfigRules.problems.)
    return problems


def stack_warnings(cfg: StackConfig) -> list[str]:
    """Printed, not fatal: a Kubernetes minor past its end of standard support (elastic_gpu/versions.py),
    and what deploys only after a quota increase (the cloud's ConfigRules.warnings)."""
    cloud = cfg.provider
    warnings = minor_support_warnings("cluster.kubernetesVersion: ", cloud, cfg.cluster.kubernetes_version)
    return warnings + list(cloud.config_rules().warnings(cfg))


def _cidr_problems(cfg: StackConfig) -> list[str]:
    return private_cidr_problems("cluster.networkCidr", cfg.cluster.network_cidr, CIDR_PREFIXES)


def _ignored_setting_problems(cfg: StackConfig) -> list[str]:
    """Each setting that does nothing on the stack's cloud (its provider's `ignored_settings`) and is set: the
    whole section, or the key (a model attribute name) when one is named."""
    problems = []
    for (section, key), instead in cfg.provider.ignored_settings().items():
        attr = to_snake(section)
        if key is None and attr in cfg.model_fields_set:
            problems.append(f"{section}: does nothing on {cfg.cloud}: {instead}")
        elif key is not None and key in getattr(cfg, attr).model_fields_set:
            problems.append(f"{section}.{to_camel(key)}: does nothing on {cfg.cloud}: {instead}")
    return problems


def cluster_setting_problems(cfg: StackConfig) -> list[str]:
    """Each `cluster` key of another cloud (its options, CLOUD_ONLY_CLUSTER_SETTINGS) that the stack sets. (The
    GPU pools' cloud-only keys: elastic_gpu.settings.gpu_pool_settings_problems.)"""
    problems = []
    for key, (owner, _) in CLOUD_ONLY_CLUSTER_SETTINGS.items():
        if owner != cfg.cloud and key in cfg.cluster.model_fields_set:
            value = getattr(cfg.cluster, key)
            shown = value.model_dump(by_alias=True) if isinstance(value, BaseModel) else value
            problems.append(
                f"cluster.{to_camel(key)}: {owner_of(owner)}-only setting; remove it for cloud {cfg.cloud!r} "
                f"(got {shown!r})"
            )
    return problems


def stack_items(cfg: StackConfig) -> list[str]:
    """What the stack's pools are priced by: instance types / VM sizes / machine types, GKE accelerators."""
    cloud = cfg.provider
    types = list(cfg.general_pool.instance_types)
    # The cluster's own priced items outside its pools (the AKS System pool's VM size).
    types += cloud.cluster_items(cfg) if isinstance(cloud, ClusterItems) else []
    for pool in cfg.gpu_pools:
        if pool.gpu is None and not pool.instance_types:
            continue  # reported by _gpu_type_problems
        for name in cfg.instance_types(pool):
            types.append(name)
            row = gpu_instance_type(cfg.cloud, name, gpu_spec(pool))
            if cloud.facts.prices_accelerators and row is not None and row.accelerator:
                types.append(row.accelerator)
    return list(dict.fromkeys(types))


def price_override_problems(cfg: StackConfig) -> list[str]:
    """Each override sets something, keeps spot <= on-demand (with the table row it overrides)
    and, for an item the table has no row for in the stack's region, gives `onDemand`."""
    problems: list[str] = []
    region = cfg.cluster.region
    used = stack_items(cfg)
    for item, o in cfg.prices.items():
        where = f"prices.{item}"
        if item not in used:
            close = difflib.get_close_matches(item, used, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            problems.append(f"{where}: no pool of this stack uses {item!r}; {hint}allowed: {', '.join(used)}")
            continue
        if o.on_demand is None and o.spot is None and o.eviction_rate is None:
            problems.append(f"{where}: set at least one of onDemand, spot, evictionRate (got {{}})")
            continue
        row = price_row(cfg.cloud, region, item)
        if row is None and o.on_demand is None:
            problems.append(
                f"{where}.onDemand: required: {TABLE_PATH} has no {cfg.cloud} row for {item!r} in region "
                f"{region!r}, so the override must give the on-demand USD per hour"
            )
        on_demand = o.on_demand if o.on_demand is not None else (row.on_demand if row else None)
        spot = o.spot if o.spot is not None else (row.spot if row else None)
        if spot is None or on_demand is None or spot <= on_demand:
            continue
        table = f"{TABLE_PATH} ({region})"
        if o.spot is not None and o.on_demand is not None:
            problems.append(f"{where}.spot: must be <= onDemand (got spot={spot}, onDemand={on_demand})")
        elif o.spot is not None:
            problems.append(f"{where}.spot: must be <= the on-demand price {on_demand} of {table} (got {spot})")
        else:
            problems.append(
                f"{where}.onDemand: must be >= the spot price {spot} of {table} (got {on_demand}); set spot too"
            )
    return problems


def gpu_spec(pool: GpuPoolConfig) -> GpuSpec | None:
    """The pool's `gpuSpec` as the components take it (SpotGpuPoolArgs.gpu_spec)."""
    s = pool.gpu_spec
    return None if s is None else GpuSpec(s.model, s.count, s.vcpus, s.memory_gib)


def _gpu_type_problems(cfg: StackConfig, where: str, pool: GpuPoolConfig, unresolved: Mapping[str, str]) -> list[str]:
    if pool.gpu is None and not pool.instance_types:
        return [f"{where}: set `gpu` (one of {', '.join(GPU_MODELS)}) or `instanceTypes`"]
    if pool.gpu in GPU_MODELS and not pool.instance_types:
        offered = sorted({t.gpu for t in gpu_instance_types(cfg.cloud)})
        if pool.gpu not in offered:
            return [
                f"{where}.gpu: {pool.gpu!r} is not offered on {cfg.cloud} in the catalog "
                f"(elastic_gpu/gpu_catalog.py); allowed on {cfg.cloud}: {', '.join(offered)}"
            ]
    spec = gpu_spec(pool)
    problems = gpu_spec_problems(f"{where}.gpuSpec", cfg.cloud, list(pool.instance_types or []), spec)
    problems = problems or gpu_instance_type_problems(
        f"{where}.",
        cfg.provider,
        list(pool.instance_types or []),
        pool.gpu,
        mixed_models=pool.mixed_gpu_models,
        spec=spec,
        unresolved=unresolved,
    )
    if not problems and not cfg.instance_types(pool):
        problems.append(
            f"{where}.gpusPerNode: no {cfg.cloud} instance type has {pool.gpus_per_node} x {pool.gpu}; "
            "set instanceTypes or another gpusPerNode"
        )
    return problems


# --- what the stack file's layer asks of a cloud (part of `CloudProvider`, elastic_gpu/provider.py) ---------


@dataclass(frozen=True, kw_only=True)
class ConfigRules(CloudLimits):
    """The cloud's config rules: its own checks of a stack config, and the bounds and tables the core's
    checks apply to it (CloudLimits, elastic_gpu/cloud_facts.py: validate_stack, validation.py). Called while a
    stack config is validated, before any resource is declared."""

    #: every problem the cloud's own rules find in a stack config (regions, zones, machine shapes, API limits),
    #: one message each naming the field; empty when valid
    problems: Callable[[StackConfig], list[str]]
    #: what previews but deserves a word (a quota to raise first, a setting the provisioner does not use)
    warnings: Callable[[StackConfig], list[str]]
    #: whether `gpusPerNode` picks from a pool's own `instanceTypes` (GKE N1 with attached GPUs) rather than
    #: only from the catalog's types of its `gpu`
    gpus_per_node_selects: Callable[[GpuPoolConfig], bool]


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


@runtime_checkable
class ClusterItems(Protocol):
    """Priced items of the cluster outside its pools (AKS: the System pool's VM size): an optional capability a
    provider implements too, checked with isinstance."""

    def cluster_items(self, cfg: StackConfig) -> list[str]:
        """The items, priced like the pools' (prices overrides, cost)."""
        ...


@runtime_checkable
class StackCloud(RegisteredCloud, Protocol):
    """A cloud as a stack config asks for it: its rules on a stack file, the settings it ignores, and the
    composition of a stack."""

    def config_rules(self) -> ConfigRules:
        """Its config rules: called while a stack config is validated (config.py, validation.py)."""
        ...

    def ignored_settings(self) -> Mapping[tuple[str, str | None], str]:
        """The stack settings that do nothing on this cloud: (section, model key or None for the whole
        section) -> what to do instead. Setting one is a config error naming it; empty when all apply."""
        ...

    def stack_builder(self) -> StackBuilder:
        """The composition of a stack on this cloud: called by `compose.build_stack` in a Pulumi program."""
        ...


def stack_cloud(cloud: RegisteredCloud) -> StackCloud:
    """The registry's provider as the stack's layer reads it: every registered provider is a `CloudProvider`
    (its folder's `PROVIDER` is annotated so, and the type checker holds it to that), hence a StackCloud."""
    if not isinstance(cloud, StackCloud):
        raise TypeError(f"{cloud!r} lacks the members a stack asks of its cloud (config.StackCloud)")
    return cloud
