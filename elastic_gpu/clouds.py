"""A cloud is one folder: `elastic_gpu/<cloud>/` (aws, azure, gcp), behind one interface, `Cloud`.

The cloud-neutral core (components, config, validation, simulation, offline reports, policy rules)
never branches on a cloud's name: it asks the stack's `Cloud` (`get_cloud(name)`), or every cloud in
turn (`all_clouds()`, always in `CLOUDS` order, so merged tables keep one order). Each folder's
`__init__` exports its instance as `CLOUD`, holding plain facts only, so that importing it loads no
cloud SDK; the rest of what the cloud means is in modules of its folder, imported on first use
through the instance's attributes:

SDK-free facts (`Cloud` fields): `name` (the stack config's `cloud`, the handle's `cloud`), `service`
(EKS, AKS, GKE), `owner` (for "an AWS-only setting"), `handle_attributes` and `existing_hint` (what its
cluster handle adds to `ClusterHandle`, and how to wrap a cluster one already has),
`example_instance_type`, `instance_type_pattern` (how the cloud names its types), `pool_settings` (the
GPU-pool settings only this cloud has, with the value that leaves them unset),
`cluster_settings` (the stack's `cluster` keys only this cloud has),
`private_api_needs_runner` (a private API server answers only inside its network: its rules warn about
where `pulumi up` runs unless `cluster.apiAccess.runnerInVnet` says so),
`karpenter_node_class_group` (the API group of its Karpenter node class, when it runs Karpenter),
`takes_autoscaler_settings` (the stack's `autoscaler` section reaches its autoscaler; GKE runs its own),
`creates_network` (the stack creates the cluster's network, sized by `cluster.networkCidr`),
`pins_autoscaler_image` (we run a pinned cluster-autoscaler; AKS runs its own),
`one_group_many_types` (one scaling group may mix instance types), `spot_fix` (what makes a pool
spot), `prices_accelerators` (its GPUs are priced per accelerator).

Modules, by attribute (SDK means the module imports the cloud's SDK):

- `cluster` (SDK): the cluster handle classes (`EksCluster`, `AksCluster`, `GkeCluster` and their
  `existing()` wrappers; `elastic_gpu.eks_cluster` etc. re-export them).
- `pools` (SDK): `build_general_pool`, `build_spot_gpu_pool`, `override_problems`,
  `DEFAULT_MAX_MINUTES_TO_FALLBACK`.
- `autoscaler` (SDK): `build_autoscaler`, the provisioner (today only the cluster-autoscaler).
- `stack` (SDK): `build_stack(cfg)`, the composition of a stack config.
- `rules`: the config rules (`validate`, `warnings`, `SPLITS_PER_ZONE`, `PRIORITY_EXPANDER`, ...;
  optional: `PROVISIONERS`, `cluster_items(cfg)`, the priced items of the cluster outside its pools).
- `reader`: `read_node_groups(resource, stack=None)`, the node groups a resource declares as
  `NodeGroupView`s (elastic_gpu/node_group_view.py), placed against the stack when given.
- `node_templates`: `node_templates(preview, views)` (the scale-from-zero templates of its node groups,
  built from their `NodeGroupView`s);
  optional: `group_order(preview, pod)` (the groups a pod's own selector ranks, first to last: GKE's
  ComputeClass priorities), `admission_problem(preview, pod)` (why its queue would not admit the pod to a
  `queued` group: GKE's Kueue; None when it would).
- `timing`: `autoscaler_settings(preview)` (its autoscaler's settings and clocks, or None when the preview has
  none of it); optional: `QUEUED_EVIDENCE` (what a queued group's timing rests on: GKE).
- `mocks`: `RESOURCE_MOCKS`, `INVOKE_MOCKS` (the mock engine's answers for its resource types and invokes);
  optional: `PROVIDER_DEFAULTS` (outputs of every resource of its provider), `REMOTE_COMPONENTS` (pulumi-eks),
  `NEW_ACCOUNT` and `ACCOUNT_INVOKES` (a new account's documented defaults, and the invokes answered from the
  described account: elastic_gpu/tools/offline/account.py).
- `preflight` (optional): `findings(cfg)`, what the account lacks for the stack, read through its SDK's
  invokes (elastic_gpu/preflight.py).
- `replacement`: `POOL_REPLACE_FIELDS`, `OTHER_REPLACE_FIELDS`, `POOL_NAME_FIELD`,
  `INLINE_POOL_REFUSED_FIELDS`, `NODE_ROLLING_FIELDS` (its rows).
- `versions`: `KUBERNETES_SUPPORT` (its Kubernetes minors and their support dates), `VERSION_INPUTS` and
  `NODE_VERSION_INPUTS` (the inputs that carry the control plane's and the nodes' versions).
- `provisioning` (optional): `simulate_pod(...)`, the simulation of a provisioner of its own (EKS:
  Karpenter; AKS: node auto-provisioning, both through `elastic_gpu.tools.simulation.karpenter` with the
  cloud's `KarpenterModel`) for the pods its objects take.
- `policies` (optional): `POLICIES`, the policy pack's rules for its own objects (EKS node groups, launch
  templates, IRSA and Karpenter's interruption handling; GKE's ComputeClass auto-creation) as (the name of
  the cloud-neutral rule each follows, or None for after all of them; the rule) pairs, so the pack keeps
  the rule list's order (policy_rules.assemble); and its parts of the cloud-neutral rules:
  `public_node_ips(resources)` (no-public-node-ips) and `COST_TAGS` (cost-allocation-tags: resource type ->
  reader of its tag keys).

Adding a provisioner or a cloud touches its folder (and the config schema); the core merges the
folders' rows and calls their functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from importlib import import_module
from types import ModuleType
from typing import Any

from elastic_gpu.errors import ConfigError

#: The registry: each name is a folder `elastic_gpu/<name>/` exporting `CLOUD`.
CLOUDS = ("aws", "azure", "gcp")
#: The SDK each extra brings (pyproject's optional-dependencies).
EXTRAS = {"pulumi_aws": "aws", "pulumi_eks": "aws", "pulumi_azure_native": "azure", "pulumi_gcp": "gcp"}
EXTRAS["pulumi_policy"] = "policy"


def missing_extra(exc: ModuleNotFoundError, what: str) -> ModuleNotFoundError | None:
    """For an SDK an extra brings, an error that says which extra to install; None for any other module."""
    root = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(root)
    if extra is None:
        return None
    error = ModuleNotFoundError(
        f"{what} needs the {root} package, which the [{extra}] extra installs: pip install 'elastic-gpu[{extra}]'",
        name=exc.name,
    )
    return error


# --- the row types of the folders' tables (here, so a folder's table imports no module that merges it) ---


#: The input a cluster-handle component records its Kubernetes minor under (elastic_gpu/cluster_handle.py
#: handle_inputs): the version policy judges an existing cluster's handle by it.
HANDLE_VERSION_INPUT = "kubernetesVersion"


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


@dataclass(frozen=True)
class ReplaceRule:
    """The inputs of one resource type whose change replaces it (elastic_gpu/replacement.py)."""

    #: input paths (camelCase, as the engine sees them; "a.b" = nested key) whose change replaces
    fields: tuple[str, ...]
    #: where the list comes from
    source: str


@dataclass(frozen=True)
class InlinePoolRule:
    """Node pools declared inside their cluster resource (a list input, one entry per pool, by name)."""

    #: the list input holding the pools, and the key that names each entry
    list_field: str
    key: str
    #: fields of one pool the cloud refuses to change on an existing pool
    fields: tuple[str, ...]
    source: str
    #: the steps that make such a change by hand: (pool name, cluster inputs, the pool's new inputs) -> text
    way_out: Callable[[str, Mapping[str, Any], Mapping[str, Any]], str]


@dataclass(frozen=True)
class Cloud:
    """What the cloud-neutral core asks of one cloud (see the module docstring)."""

    name: str
    service: str
    owner: str
    handle_attributes: tuple[str, ...]
    existing_hint: str
    example_instance_type: str
    instance_type_pattern: str
    pins_autoscaler_image: bool
    one_group_many_types: bool
    #: what to set so that a pool is billed as spot (the spot-pool-is-spot policy's advice)
    spot_fix: str
    #: its GPUs are priced per accelerator (`gpu` rows of the price table), not per machine
    prices_accelerators: bool
    pool_settings: dict[str, object] = field(default_factory=dict)
    #: the stack config's `cluster` keys (model attribute names) only this cloud has: set on another, refused
    cluster_settings: tuple[str, ...] = ()
    #: a private API server answers only inside the cluster's network: its rules warn about the runner
    private_api_needs_runner: bool = False
    #: the stack's `autoscaler` section reaches its autoscaler (config.IGNORED_SETTINGS)
    takes_autoscaler_settings: bool = True
    #: the stack creates the cluster's network, sized by `cluster.networkCidr` (config.IGNORED_SETTINGS)
    creates_network: bool = False
    #: the API group of its Karpenter node class (`nodeClassRef.group` of a NodePool), when it runs Karpenter
    karpenter_node_class_group: str | None = None

    def part(self, part: str, *, optional: bool = False) -> Any:
        """The folder's module `part`, imported on first use (a missing SDK names its extra); with
        `optional`, None when the folder has no such module."""
        module = f"elastic_gpu.{self.name}.{part}"
        try:
            return import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module and optional:
                return None
            if exc.name != module and (error := missing_extra(exc, f"cloud {self.name!r}")) is not None:
                raise ConfigError([f"cloud: {error}"]) from None
            raise

    cluster = property(lambda self: self.part("cluster"))
    pools = property(lambda self: self.part("pools"))
    autoscaler = property(lambda self: self.part("autoscaler"))
    stack = property(lambda self: self.part("stack"))
    rules = property(lambda self: self.part("config_rules"))
    reader = property(lambda self: self.part("reader"))
    node_templates = property(lambda self: self.part("node_templates"))
    timing = property(lambda self: self.part("timing"))
    mocks = property(lambda self: self.part("mocks"))
    replacement = property(lambda self: self.part("replacement"))
    versions = property(lambda self: self.part("versions"))
    provisioning = property(lambda self: self.part("provisioning", optional=True))
    policies = property(lambda self: self.part("pack", optional=True))
    preflight = property(lambda self: self.part("preflight", optional=True))


def get_cloud(name: str) -> Cloud:
    """The `Cloud` of a name from the registry; an unknown name is a ConfigError."""
    if name not in CLOUDS:
        raise ConfigError([f"cloud: {name!r} is unknown; allowed: {', '.join(CLOUDS)}"])
    module: ModuleType = import_module(f"elastic_gpu.{name}")
    cloud: Cloud = module.CLOUD
    return cloud


def all_clouds() -> list[Cloud]:
    """Every cloud, in `CLOUDS` order."""
    return [get_cloud(name) for name in CLOUDS]
