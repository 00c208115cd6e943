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
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel, to_snake

from elastic_gpu.clouds import all_clouds, get_cloud
from elastic_gpu.durations import DURATION_HELP, DURATION_PATTERN
from elastic_gpu.errors import ConfigError
from elastic_gpu.gpu_catalog import (
    GPU_MODELS,
    GpuSpec,
    declare_instance_types,
    default_instance_types,
    gpu_instance_type,
    gpu_instance_types,
    resolving,
)
from elastic_gpu.karpenter_core import time_slicing_problem
from elastic_gpu.prices import TABLE_PATH, price_row
from elastic_gpu.validation import (
    CLOUD_ONLY_POOL_SETTINGS,
    NODES_PER_CLUSTER,
    autoscaler_settings_problems,
    cidr_problems,
    cloud_only_problems,
    duplicate_problems,
    general_pool_problems,
    gpu_instance_type_problems,
    private_cidr_problems,
    shown_number,
    size_problems,
    time_slicing_problems,
)
from elastic_gpu.versions import KUBERNETES_MINOR_PATTERN, SUPPORTED_KUBERNETES_VERSIONS, minor_support_warnings

PROJECT = "elastic-gpu"

Cloud = Literal["aws", "azure", "gcp"]
Expander = Literal["priority", "least-waste", "most-pods", "random", "price"]
#: What scales the GPU pools: the cluster-autoscaler over declared node groups (every cloud), Karpenter
#: (EKS; AKS node auto-provisioning), or GKE node pool auto-creation through ComputeClasses. Each cloud
#: lists the ones it can do in its rules.PROVISIONERS.
Provisioner = Literal["cluster-autoscaler", "karpenter", "auto-provisioning"]
DEFAULT_PROVISIONER: Provisioner = "cluster-autoscaler"
#: A cluster-autoscaler duration, a Go `time.Duration`: "90s", "14m30s", "1h30m" (the stack config and
#: ClusterAutoscalerArgs are checked against the same pattern; elastic_gpu.durations parses it).
Duration = Annotated[str, Field(pattern=DURATION_PATTERN)]
NAME_PATTERN = r"^[a-z]([a-z0-9-]{0,18}[a-z0-9])?$"
#: What each pattern means, for the error message (pydantic would print the regex).
PATTERN_HELP = {
    DURATION_PATTERN: DURATION_HELP,
    NAME_PATTERN: "lowercase letters, digits and '-', starting with a letter, at most 20 characters",
    r"^1\.[0-9]+$": 'a Kubernetes minor such as "1.33" (quoted, so YAML keeps it a string)',
}
#: Address range sizes the network layout supports (elastic_gpu/aws/network.py carves subnets from it).
CIDR_PREFIXES = range(16, 25)
#: The longest fallback promise: a day. A pool that may wait longer for on-demand capacity has no promise to keep
#: (leave maxMinutesToFallback unset); larger figures only hide a typo (1e12).
MAX_MINUTES_TO_FALLBACK = 1440
#: Every node count is bounded before any arithmetic: no pool of a cluster holds more nodes than Kubernetes
#: supports in one cluster (validation.NODES_PER_CLUSTER); the clouds' own, lower limits are in their rules.py.
MAX_NODES = NODES_PER_CLUSTER.high
#: The most GPUs one node carries in any cloud's catalog is 16 (GCE a2-megagpu-16g); sharing, disks and prices
#: get sanity bounds here too, the clouds' own in their rules.py.
MAX_GPUS_PER_NODE = 16
MAX_DISK_GIB = 65536
MAX_TIME_SLICING_REPLICAS = 1000
#: USD per hour of one node: the dearest GPU VMs cost about $100/h, so $10,000/h is a typo, not a price.
MAX_USD_PER_HOUR = 10_000.0

# Defaults, named once. Each is documented on the field that uses it.
DEFAULT_GENERAL_MIN = 1
DEFAULT_GPU_MIN = 0
DEFAULT_GENERAL_DISK_GIB = 50
DEFAULT_GPU_DISK_GIB = 100
DEFAULT_SCALE_DOWN_UNNEEDED = "10m"
DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD = "10m"
#: How long the autoscaler waits for a requested node to become Ready before it gives up on the
#: group and tries the next one. A cold GPU node needs VM start plus driver install: 15m is the
#: upstream default (cluster-autoscaler FAQ), AKS's default (autoScalerProfile), and what a
#: maintainer measured in kubernetes/autoscaler#3464 ("15 minutes until the node is fully ready,
#: this includes both VM creation and GPU driver installation"). Shorter gives up on spot nodes
#: that were coming and pays for the fallback too.
DEFAULT_MAX_NODE_PROVISION_TIME = "15m"
DEFAULT_EXPANDER: tuple[Expander, ...] = ("priority", "least-waste")
# GCP-only defaults (cloud: gcp).
#: GKE's recommended release channel for production clusters.
DEFAULT_RELEASE_CHANNEL = "REGULAR"
#: Nodes with public IPs by default; private nodes get a Cloud NAT for image pulls.
DEFAULT_PRIVATE_NODES = False
#: Zonal control plane by default (the free tier covers one zonal cluster); regional for production.
DEFAULT_REGIONAL = False
#: GKE installs the "Default" NVIDIA driver of the node's GKE version ("LATEST" for the newest).
DEFAULT_GPU_DRIVER_VERSION = "DEFAULT"
ReleaseChannel = Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"]
GpuDriverVersion = Literal["DEFAULT", "LATEST"]
#: AWS: the EKS-optimised AMI family of a GPU pool's nodes.
AmiFamily = Literal["al2023", "bottlerocket"]

# Azure-only defaults (AKS).
#: Azure CNI (in overlay mode): kubenet is being retired by Azure.
DEFAULT_AKS_NETWORK_PLUGIN = "azure"
#: System-pool VM size: the AKS docs want >= 4 vCPUs for system pools and no B-series.
DEFAULT_AKS_SYSTEM_VM_SIZE = "Standard_D4s_v5"
#: AKS's System pool never scales below 1 (its count range is 1..1000); docs recommend 3 in production.
DEFAULT_AKS_SYSTEM_MIN = 1
DEFAULT_AKS_SYSTEM_MAX = 3
#: Spot max price -1: pay up to the on-demand price, never evicted for price (only for capacity).
DEFAULT_AKS_SPOT_MAX_PRICE = -1.0


#: Why each sanity bound of the models is what it is (keyed by the bound), for the error message.
BOUND_SOURCES = {
    MAX_NODES: NODES_PER_CLUSTER.source,
    MAX_GPUS_PER_NODE: "no node of any cloud carries more GPUs",
    MAX_DISK_GIB: "no cloud's node disk is larger",
    MAX_TIME_SLICING_REPLICAS: "each replica is a pod on the node",
    MAX_USD_PER_HOUR: "USD per hour of one node",
}


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        strict=True,
        allow_inf_nan=False,  # `.inf` / `.nan` are YAML floats; no cloud API takes them
        use_attribute_docstrings=True,  # each field's docstring is its description (the stack file's JSON Schema)
    )


class ApiAccessConfig(_Model):
    """Who reaches the Kubernetes API endpoint (all clouds)."""

    public: bool = True
    """Default true: a public endpoint (nodes always use the private path). False: private only
    (EKS private endpoint, AKS private cluster, GKE private endpoint; GKE needs `privateNodes`)."""
    public_cidrs: list[str] | None = Field(default=None, min_length=1)
    """IPv4 ranges allowed on the public endpoint (EKS publicAccessCidrs, AKS authorized IP ranges, GKE
    master authorized networks); default: anywhere. Include your CI's and operators' addresses."""
    runner_in_vnet: bool = False
    """Azure only, with `public: false`: default false warns that `pulumi up` must run where the private API
    server answers (the cluster's VNet or a network connected to it); true says the runner is there, which
    silences the warning only with `subnetId` (a VNet AKS creates during `up` has no runner yet)."""


#: NAT gateways for an EKS VPC: one per zone (a zone failure cuts no other zone's egress) or one in total.
NatGateways = Literal["perZone", "single"]
DEFAULT_NAT_GATEWAYS: NatGateways = "perZone"
#: The EC2 Spot service-linked role under Karpenter (elastic_gpu.aws.karpenter.spot_role).
SpotRoleMode = Literal["auto", "create", "exists"]
DEFAULT_SPOT_ROLE_MODE: SpotRoleMode = "auto"
#: GKE control plane range for private clusters (a /28 outside the VPC's ranges; GKE docs' example).
DEFAULT_GKE_CONTROL_PLANE_CIDR = "172.16.0.0/28"


class ResourceGroupConfig(_Model):
    """Azure only: the resource group the cluster lives in."""

    name: str = Field(pattern=r"^[-\w.()]{0,89}[-\w()]$")
    create: bool = True
    """Default true: create the group; false: use an existing one (it is never deleted by us)."""


class SystemPoolConfig(_Model):
    """Azure only: the AKS System-mode pool (on-demand, >= 1 node) for kube-system pods."""

    vm_size: str = DEFAULT_AKS_SYSTEM_VM_SIZE
    min_size: int = Field(default=DEFAULT_AKS_SYSTEM_MIN, ge=0, le=MAX_NODES)
    """Default 1; must stay >= 1 (AKS requires a node in a System pool)."""
    max_size: int = Field(default=DEFAULT_AKS_SYSTEM_MAX, ge=0, le=MAX_NODES)
    spot: bool = False
    """Must stay false: AKS does not allow spot System pools."""
    critical_addons_only: bool = False
    """Default false; true taints it CriticalAddonsOnly=true:NoSchedule (system pods only)."""


class ClusterConfig(_Model):
    name: str = Field(pattern=NAME_PATTERN)
    """Cluster name; also prefixes node-group names and the autoscaler's discovery tag."""
    region: str = Field(min_length=1)
    """Cloud region; one of the cloud's table in elastic_gpu/<cloud>/rules.py."""
    zones: list[str] = Field(min_length=1)
    """Zones the node pools span; each must be in `region`."""
    kubernetes_version: str = Field(pattern=KUBERNETES_MINOR_PATTERN)
    """Kubernetes minor, e.g. "1.33"; picks the matching cluster-autoscaler image."""
    network_cidr: str = "10.0.0.0/16"
    """AWS only: address range of the VPC created for the cluster (default 10.0.0.0/16), /16 to /24."""
    protect: bool = False
    """Protect the cluster from `pulumi destroy` (production stacks set true)."""
    project: str | None = None
    """GCP only, required there: the project that holds the cluster (and its Workload Identity pool)."""
    release_channel: ReleaseChannel = DEFAULT_RELEASE_CHANNEL
    """GCP only: GKE release channel (default REGULAR). On RAPID, REGULAR and STABLE `kubernetesVersion` is a
    floor that GKE upgrades past as the channel moves; EXTENDED keeps that minor (extended support, billed)."""
    private_nodes: bool = DEFAULT_PRIVATE_NODES
    """GCP only: nodes without public IPs, with a Cloud NAT (default false)."""
    regional: bool = DEFAULT_REGIONAL
    """GCP only: regional control plane across the region's zones (default false: zonal, in zones[0])."""
    resource_group: ResourceGroupConfig | None = None
    """Azure only: default: create `<name>-rg` in `region`."""
    network_plugin: Literal["azure", "kubenet", "none"] | None = None
    """Azure only: AKS network plugin (default DEFAULT_AKS_NETWORK_PLUGIN, Azure CNI overlay)."""
    system_pool: SystemPoolConfig | None = None
    """Azure only: the System-mode pool (default SystemPoolConfig())."""
    subnet_id: str | None = None
    """Azure only: the ARM id of a VNet subnet you own for the System pool, the general pool and every GPU
    pool (default: AKS creates a VNet). The cluster's identity gets Network Contributor on it. A private
    cluster's DNS zone is then linked to your VNet, so a runner in it or peered with it reaches the API."""
    api_server_subnet_id: str | None = None
    """Azure only, with `subnetId`: a subnet of the same VNet delegated to Microsoft.ContainerService/
    managedClusters (/28 or larger) for API Server VNet Integration."""
    api_access: ApiAccessConfig = ApiAccessConfig()
    """Who reaches the API endpoint (default: public, from anywhere). Production stacks restrict it."""
    nat_gateways: NatGateways = DEFAULT_NAT_GATEWAYS
    """AWS only: `perZone` (default: each zone keeps egress when another zone fails) or `single` (dev)."""
    spot_service_linked_role: SpotRoleMode = DEFAULT_SPOT_ROLE_MODE
    """AWS with provisioner karpenter only: the account's EC2 Spot service-linked role, without which Karpenter
    launches no spot node. `auto` (default): created unless the preview finds one this stack did not create,
    which is then used as it is; `create`: always declared (`up` fails where the account has one); `exists`:
    never declared. A declared role is kept on `pulumi destroy` (other stacks may use it)."""
    ecr_endpoints: bool = False
    """AWS only: ECR interface endpoints (api, dkr) so image pulls skip the NAT (pays off with heavy pulls
    such as multi-GB CUDA images), and the EKS one (the autoscaler's eks:DescribeNodegroup); default
    false. The S3 gateway endpoint (layers) is always there."""
    control_plane_cidr: str = DEFAULT_GKE_CONTROL_PLANE_CIDR
    """GCP only, with privateNodes: the control plane's /28 (the firewall for webhooks such as Kueue's
    allows it); default 172.16.0.0/28. Changing it replaces the cluster."""
    network: str | None = None
    """GCP only: the VPC network (name or self link) the cluster joins. Default: the stack creates
    `<name>-net` and a subnetwork of `networkCidr` with Pod and Service ranges (it never uses the project's
    `default` network). Changing it replaces the cluster."""
    subnetwork: str | None = None
    """GCP only, with `network`: the subnetwork the nodes use (default: GKE picks the network's subnetwork
    of the region, as an auto-mode network has)."""
    node_service_account: str | None = None
    """GCP only: the service account email every node runs as, node pools and auto-created ones alike.
    Default: the stack creates `<name>-nodes` with roles/container.defaultNodeServiceAccount only (never
    the Compute Engine default account). Changing it replaces the node pools."""
    enable_services: bool = False
    """GCP only: enable the APIs the stack calls (compute, container, and iam for the node service account)
    in the project; never disabled on destroy. Default false: enable them yourself."""


class GeneralPoolConfig(_Model):
    instance_types: list[str] = Field(min_length=1)
    """Diversified CPU instance types (several, so capacity is easier to find)."""
    min_size: int = Field(default=DEFAULT_GENERAL_MIN, ge=0, le=MAX_NODES)
    """Default 1: system pods and the autoscaler need a node; must stay >= 1."""
    max_size: int = Field(ge=0, le=MAX_NODES)
    spot: bool = False
    """Default false (on-demand): the autoscaler runs here and must not be evicted."""
    disk_size_gib: int = Field(default=DEFAULT_GENERAL_DISK_GIB, ge=20, le=MAX_DISK_GIB)


class GpuSpecConfig(_Model):
    """A catalog row's figures for an instance type the catalog lacks."""

    model: str
    """A GPU model the catalog knows (t4, a10g, l4, l40s, v100, a100, a100-80gb, h100, h200, b200, ...)."""
    count: int = Field(ge=1, le=MAX_GPUS_PER_NODE)
    """GPUs per node."""
    vcpus: int = Field(ge=1)
    memory_gib: int = Field(ge=1)


class GpuPoolConfig(_Model):
    name: str = Field(pattern=NAME_PATTERN)
    gpu: str | None = None
    """GPU model key (t4, a10g, l4, l40s, v100, a100, h100); picks instance types if none given."""
    instance_types: list[str] | None = Field(default=None, min_length=1)
    """GPU instance types; all must carry the same GPU count and the same GPU model (see mixedGpuModels)."""
    mixed_gpu_models: bool = False
    """Default false: all instanceTypes carry one GPU model. True: the pool takes any of their GPUs; its
    nodes get no accelerator label, so workloads select the pool, not a model."""
    gpus_per_node: int = Field(default=1, ge=1, le=MAX_GPUS_PER_NODE)
    """GPUs per node when instance types are picked from `gpu` (default 1)."""
    gpu_spec: GpuSpecConfig | None = None
    """The GPU of the `instanceTypes` the catalog (elastic_gpu/gpu_catalog.py) lacks, as the cloud's
    instance-type page gives it: `{model: h100, count: 8, vcpus: 192, memoryGib: 2048}`."""
    min_size: int = Field(default=DEFAULT_GPU_MIN, ge=0, le=MAX_NODES)
    """Default 0: the pool scales to zero when no GPU pod is pending."""
    max_size: int = Field(ge=0, le=MAX_NODES)
    """The most nodes of the pool's own capacity (spot, or on-demand when `spot` is false), in total
    over all its node groups (zones, and VM sizes on AKS): split between them, never per group."""
    fallback_max_size: int | None = Field(default=None, ge=1, le=MAX_NODES)
    """With `onDemandFallback`: the most on-demand fallback nodes, in total over the fallback's groups
    (default: maxSize). The pool's worst case is maxSize + fallbackMaxSize nodes. Under provisioner karpenter
    the fallback is within the pool's one NodePool (spot first) and maxSize caps both; fallbackMaxSize caps
    on-demand separately, as a second, lower-weight on-demand NodePool."""
    max_minutes_to_fallback: float | None = Field(default=None, gt=0, le=MAX_MINUTES_TO_FALLBACK)
    """With `onDemandFallback`: the most minutes a pending GPU pod may wait, every spot group out of
    capacity, until the autoscaler asks the fallback (`simulate`'s worst case; `policy` refuses a pool
    that cannot keep it). Default: the cloud's (aws 10, azure 20, gcp 10)."""
    spot: bool = True
    """Default true: spot / low-priority capacity."""
    on_demand_fallback: bool = False
    """Add an on-demand pool (min 0) the autoscaler tries only after the spot ones."""
    per_zone: bool = True
    """Default true: one node group per zone, so spot reclaims and rebalancing stay zonal."""
    disk_size_gib: int = Field(default=DEFAULT_GPU_DISK_GIB, ge=20, le=MAX_DISK_GIB)
    ami_family: AmiFamily = "al2023"
    """AWS only: EKS-optimised AMI family (bottlerocket ships its own device plugin)."""
    gpu_driver_version: GpuDriverVersion = DEFAULT_GPU_DRIVER_VERSION
    """GCP only: the NVIDIA driver GKE installs on the nodes, DEFAULT or LATEST (default DEFAULT)."""
    queued_provisioning: bool = False
    """GCP only: Dynamic Workload Scheduler (flex-start capacity via ProvisioningRequests and Kueue);
    needs spot false and minSize 0 (default false)."""
    max_run_hours: int | None = None
    """GCP only, with queuedProvisioning: hours a node runs before GKE removes it (its maxRunDuration),
    1 to 168; default 168, GKE's most for flex-start. Changing it replaces the node pool."""
    spot_max_price: float | None = Field(default=None, le=MAX_USD_PER_HOUR)
    """Azure only: max USD/hour per spot VM; default DEFAULT_AKS_SPOT_MAX_PRICE (-1, on-demand cap)."""


class AutoscalerConfig(_Model):
    scale_down_unneeded_time: Duration = DEFAULT_SCALE_DOWN_UNNEEDED
    scale_down_delay_after_add: Duration = DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD
    expander: list[Expander] = Field(default=list(DEFAULT_EXPANDER), min_length=1)
    """Expander chain; `priority` first ranks spot pools above on-demand fallbacks."""
    max_node_provision_time: Duration = DEFAULT_MAX_NODE_PROVISION_TIME


class DevicePluginConfig(_Model):
    time_slicing_replicas: int | None = Field(default=None, ge=2, le=MAX_TIME_SLICING_REPLICAS)
    """Share each GPU between this many pods (NVIDIA time-slicing); unset: no sharing."""


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


class KueueConfig(_Model):
    """GCP only, with a queuedProvisioning pool: the namespaces that get a LocalQueue."""

    namespaces: list[str] = Field(default_factory=lambda: ["default"], min_length=1)
    """Default ["default"]; other namespaces are created."""


class StackConfig(_Model):
    cloud: Cloud
    cluster: ClusterConfig
    general_pool: GeneralPoolConfig
    gpu_pools: list[GpuPoolConfig] = Field(min_length=1)
    autoscaler: AutoscalerConfig = AutoscalerConfig()
    provisioner: Provisioner = DEFAULT_PROVISIONER
    """What scales the GPU pools (default cluster-autoscaler); `karpenter` on aws: Karpenter's NodePools per
    pool (no GPU node groups), its controller on the general pool; `auto-provisioning` on gcp: a ComputeClass
    per pool and node pool auto-creation within the cluster's resource limits, no GPU node pools."""
    device_plugin: DevicePluginConfig = DevicePluginConfig()
    tags: dict[str, str] = Field(default_factory=dict)
    """Cost-allocation tags (AWS tags, Azure tags, GCP labels) on every taggable resource."""
    kueue: KueueConfig | None = None
    """GCP only: Kueue's LocalQueue namespaces (default: a LocalQueue in `default`)."""
    prices: dict[str, PriceOverride] = Field(default_factory=dict)
    """Price overrides by item (instance type, VM size, GCE machine or accelerator type); default none:
    the table's prices. Only the cost report, `cost` command and their figures change, no resource."""

    def instance_types(self, pool: GpuPoolConfig) -> list[str]:
        """The pool's instance types: as configured, or every catalog type of its GPU."""
        if pool.instance_types:
            return list(pool.instance_types)
        assert pool.gpu is not None
        return default_instance_types(self.cloud, pool.gpu, pool.gpus_per_node)


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
    return model


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


def parse_stack_config(values: Mapping[str, Any]) -> StackConfig:
    """Parse and validate the project's config values (keys without namespace)."""
    problems = [
        f"{key}: unknown key; {did_you_mean(key, TOP_LEVEL_KEYS)}allowed keys: {', '.join(TOP_LEVEL_KEYS)}"
        for key in values
        if key not in TOP_LEVEL_KEYS
    ]
    try:
        cfg = StackConfig.model_validate({k: v for k, v in values.items() if k in TOP_LEVEL_KEYS})
    except ValidationError as exc:
        raise ConfigError(problems + [_describe(e) for e in exc.errors()]) from None
    problems += validate_stack(cfg)
    if problems:
        raise ConfigError(problems)
    return cfg


def load_stack_config(config: Mapping[str, Any], project: str = PROJECT) -> StackConfig:
    """Parse a stack file's `config:` map (`<project>:<key>` entries; other namespaces, such as
    `aws:region`, belong to providers). A namespace that looks like a typo of ours is an error,
    so a section is never dropped without a word."""
    prefix = f"{project}:"
    problems = namespace_problems(config, project)
    try:
        cfg = parse_stack_config({k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)})
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


def validate_stack(cfg: StackConfig) -> list[str]:
    """Every cross-field problem in `cfg`, one message each (empty when valid)."""
    problems: list[str] = []
    cloud = cfg.cloud

    supported = SUPPORTED_KUBERNETES_VERSIONS.get(cloud, ())
    if cfg.cluster.kubernetes_version not in supported:
        problems.append(
            f"cluster.kubernetesVersion: {cfg.cluster.kubernetes_version!r} is not supported on {cloud}; "
            f"allowed: {', '.join(supported) or 'none yet'}"
        )
    if len(set(cfg.cluster.zones)) != len(cfg.cluster.zones):
        problems.append(f"cluster.zones: zones must be distinct (got {cfg.cluster.zones})")
    problems += _cidr_problems(cfg)
    problems += _ignored_setting_problems(cfg)
    problems += time_slicing_problems(
        "devicePlugin.timeSlicingReplicas", cloud, cfg.device_plugin.time_slicing_replicas
    )
    problems += general_pool_problems("generalPool.", cloud, list(cfg.general_pool.instance_types))
    rules = get_cloud(cloud).rules
    provisioners = getattr(rules, "PROVISIONERS", (DEFAULT_PROVISIONER,))
    if cfg.provisioner not in provisioners:
        problems.append(
            f"provisioner: {cfg.provisioner!r} is not available on {cloud}; "
            f"allowed on {cloud}: {', '.join(provisioners)}"
        )
    elif cfg.provisioner == "karpenter" and cfg.device_plugin.time_slicing_replicas is not None:
        problems.append(
            time_slicing_problem("devicePlugin.timeSlicingReplicas", cfg.device_plugin.time_slicing_replicas)
        )
    splits_per_zone = rules.SPLITS_PER_ZONE
    fallback = next((i for i, p in enumerate(cfg.gpu_pools) if p.on_demand_fallback), None)
    problems += autoscaler_settings_problems(
        lambda key: f"autoscaler.{to_camel(key)}",
        {key: getattr(cfg.autoscaler, key) for key in DURATION_KEYS},
        cfg.autoscaler.expander,
        None if fallback is None else f"gpuPools[{fallback}].onDemandFallback",
        cloud,
        "[priority, least-waste]",
    )

    gp = cfg.general_pool
    problems += size_problems("generalPool.", "minSize", gp.min_size, "maxSize", gp.max_size)
    if gp.min_size < 1:
        problems.append(
            f"generalPool.minSize: must be >= 1 so system pods and the autoscaler have a node (got {gp.min_size})"
        )

    names = [p.name for p in cfg.gpu_pools]
    for i, pool in enumerate(cfg.gpu_pools):
        where = f"gpuPools[{i}]"
        if names.count(pool.name) > 1:
            problems.append(f"{where}.name: {pool.name!r} is used by more than one GPU pool; names must be unique")
        problems += size_problems(f"{where}.", "minSize", pool.min_size, "maxSize", pool.max_size)
        if pool.max_size < 1:
            problems.append(f"{where}.maxSize: a GPU pool needs a max of at least 1 (got {pool.max_size})")
        zones = len(cfg.cluster.zones)
        if pool.per_zone and splits_per_zone and 1 <= pool.max_size < zones:
            problems.append(
                f"{where}.maxSize: with perZone the total max is split across {zones} zones, "
                f"so it must be >= {zones} (got {pool.max_size})"
            )
        if pool.fallback_max_size is not None and not pool.on_demand_fallback:
            problems.append(
                f"{where}.fallbackMaxSize: only a pool with onDemandFallback has a fallback "
                f"(got fallbackMaxSize={pool.fallback_max_size}, onDemandFallback=false)"
            )
        if pool.on_demand_fallback and not pool.spot:
            problems.append(f"{where}.onDemandFallback: only a spot pool can fall back to on-demand (spot is false)")
        problems += cloud_only_problems(
            lambda key, at=where: f"{at}.{to_camel(key)}",
            cloud,
            {key: getattr(pool, key) for key in CLOUD_ONLY_POOL_SETTINGS if key in GpuPoolConfig.model_fields},
            lambda key, p=pool: key in p.model_fields_set,
        )
        if pool.instance_types and len(set(pool.instance_types)) != len(pool.instance_types):
            dups = sorted({t for t in pool.instance_types if pool.instance_types.count(t) > 1})
            problems.append(f"{where}.instanceTypes: each type may appear once (repeated: {', '.join(dups)})")
        if "gpus_per_node" in pool.model_fields_set and pool.instance_types and not rules.gpus_per_node_selects(pool):
            problems.append(
                f"{where}.gpusPerNode: only picks instance types from `gpu`; the configured instanceTypes fix the "
                f"GPU count (got gpusPerNode={pool.gpus_per_node} with {pool.instance_types}); remove one of them"
            )
        problems += _gpu_type_problems(cfg, where, pool)
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
            for i, ns in enumerate(cfg.kueue.namespaces)
            if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", ns)
        ]
        problems += duplicate_problems("kueue.namespaces", list(cfg.kueue.namespaces))
    # The cloud's own rules (regions, zones, machine shapes, tags, API limits): elastic_gpu/<cloud>/rules.py.
    problems += rules.validate(cfg)
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
    runner_clouds = [c.name for c in all_clouds() if c.private_api_needs_runner]
    if "runner_in_vnet" in access.model_fields_set and (cfg.cloud not in runner_clouds or access.public):
        problems.append(
            f"cluster.apiAccess.runnerInVnet: set only on {' or '.join(runner_clouds)} with a private cluster "
            "(public: false); it silences the private-cluster runner warning (got runnerInVnet: "
            f"{access.runner_in_vnet} with cloud {cfg.cloud!r}, public: {access.public})"
        )
    # (A cloud's own rules on its private endpoint, such as GKE's control-plane range: its rules.validate.)
    return problems


#: The autoscaler's durations (AutoscalerConfig and ClusterAutoscalerArgs attributes), checked against the
#: cloud's AUTOSCALER_DURATIONS.
DURATION_KEYS = ("scale_down_unneeded_time", "scale_down_delay_after_add", "max_node_provision_time")


def stack_warnings(cfg: StackConfig) -> list[str]:
    """Printed, not fatal: a Kubernetes minor past its end of standard support (elastic_gpu/versions.py),
    and what deploys only after a quota increase (the cloud's rules.warnings)."""
    warnings = minor_support_warnings("cluster.kubernetesVersion: ", cfg.cloud, cfg.cluster.kubernetes_version)
    return warnings + list(get_cloud(cfg.cloud).rules.warnings(cfg))


def _cidr_problems(cfg: StackConfig) -> list[str]:
    return private_cidr_problems("cluster.networkCidr", cfg.cluster.network_cidr, CIDR_PREFIXES)


#: Settings that do nothing on some clouds: (section, key or None for the whole section, the `Cloud` flag
#: that says it does something there, what to do instead). The key is a model attribute name; set keys only
#: are errors.
IGNORED_SETTINGS: tuple[tuple[str, str | None, str, str], ...] = (
    (
        "autoscaler",
        None,
        "takes_autoscaler_settings",
        "GKE runs its own cluster autoscaler (profile set by GkeCluster, limits per node pool); remove the section",
    ),
    (
        "cluster",
        "network_cidr",
        "creates_network",
        "only the AWS and GCP stacks create a network (a VPC); AKS uses Azure CNI overlay; remove it",
    ),
)


def _ignored_setting_problems(cfg: StackConfig) -> list[str]:
    problems = []
    cloud = get_cloud(cfg.cloud)
    for section, key, flag, instead in IGNORED_SETTINGS:
        if getattr(cloud, flag):
            continue
        attr = to_snake(section)
        if key is None and attr in cfg.model_fields_set:
            problems.append(f"{section}: does nothing on {cfg.cloud}: {instead}")
        elif key is not None and key in getattr(cfg, attr).model_fields_set:
            problems.append(f"{section}.{to_camel(key)}: does nothing on {cfg.cloud}: {instead}")
    return problems


def cluster_setting_problems(cfg: StackConfig) -> list[str]:
    """Each `cluster` key of another cloud (its Cloud.cluster_settings) that the stack sets. (The GPU pools'
    cloud-only keys: validation.CLOUD_ONLY_POOL_SETTINGS.)"""
    problems = []
    for other in all_clouds():
        if other.name == cfg.cloud:
            continue
        for key in other.cluster_settings:
            if key in cfg.cluster.model_fields_set:
                value = getattr(cfg.cluster, key)
                shown = value.model_dump(by_alias=True) if isinstance(value, BaseModel) else value
                problems.append(
                    f"cluster.{to_camel(key)}: {other.owner}-only setting; remove it for cloud {cfg.cloud!r} "
                    f"(got {shown!r})"
                )
    return problems


def stack_items(cfg: StackConfig) -> list[str]:
    """What the stack's pools are priced by: instance types / VM sizes / machine types, GKE accelerators."""
    cloud = get_cloud(cfg.cloud)
    types = list(cfg.general_pool.instance_types)
    # The cluster's own priced items outside its pools (the AKS System pool's VM size).
    types += getattr(cloud.rules, "cluster_items", lambda _: [])(cfg)
    for pool in cfg.gpu_pools:
        if pool.gpu is None and not pool.instance_types:
            continue  # reported by _gpu_type_problems
        for name in cfg.instance_types(pool):
            types.append(name)
            row = gpu_instance_type(cfg.cloud, name)
            if cloud.prices_accelerators and row is not None and row.accelerator:
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


def _gpu_type_problems(cfg: StackConfig, where: str, pool: GpuPoolConfig) -> list[str]:
    if pool.gpu is None and not pool.instance_types:
        return [f"{where}: set `gpu` (one of {', '.join(GPU_MODELS)}) or `instanceTypes`"]
    if pool.gpu in GPU_MODELS and not pool.instance_types:
        offered = sorted({t.gpu for t in gpu_instance_types(cfg.cloud)})
        if pool.gpu not in offered:
            return [
                f"{where}.gpu: {pool.gpu!r} is not offered on {cfg.cloud} in the catalog "
                f"(elastic_gpu/gpu_catalog.py); allowed on {cfg.cloud}: {', '.join(offered)}"
            ]
    problems = declare_instance_types(f"{where}.gpuSpec", cfg.cloud, list(pool.instance_types or []), gpu_spec(pool))
    resolve = getattr(get_cloud(cfg.cloud).rules, "resolve_gpu", None)
    if pool.gpu_spec is None and resolve is not None and resolving():
        for name in pool.instance_types or []:
            if gpu_instance_type(cfg.cloud, name) is None and isinstance(
                spec := resolve(name, cfg.cluster.region), GpuSpec
            ):
                problems += declare_instance_types(f"{where}.instanceTypes", cfg.cloud, [name], spec)
    problems = problems or gpu_instance_type_problems(
        f"{where}.", cfg.cloud, list(pool.instance_types or []), pool.gpu, mixed_models=pool.mixed_gpu_models
    )
    if not problems and not cfg.instance_types(pool):
        problems.append(
            f"{where}.gpusPerNode: no {cfg.cloud} instance type has {pool.gpus_per_node} x {pool.gpu}; "
            "set instanceTypes or another gpusPerNode"
        )
    return problems
