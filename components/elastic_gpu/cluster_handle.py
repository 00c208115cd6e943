"""The cluster handle: the one interface pools and add-ons use to reach a cluster.

Every cluster a pool can join implements it, whether this library created it
(`EksCluster`, `AksCluster`, `GkeCluster`), wraps one that already exists
(`EksCluster.existing`, `AksCluster.existing`, `GkeCluster.existing`), or reads it from the cluster
resource the program declares (`EksCluster.from_cluster`, `EksCluster.from_pulumi_eks`,
`AksCluster.from_managed_cluster`, `GkeCluster.from_cluster`). A program may also pass its own object with these
attributes. Pools and add-ons read nothing else: no `isinstance` checks on the
cluster classes, no private attributes.

Names and ids may be `Output`s (from another resource or a `StackReference`); they
stay `Output`s all the way into node-group names, tag keys and policies. `zones`
must be plain, because they decide how many node groups there are. So is
`kubernetes_version`, except on an EKS handle read from a pulumi-eks cluster
(`EksCluster.from_pulumi_eks` without `kubernetes_version`): there it is the cluster's
`version` Output, and the autoscaler image, the node groups' version and the EKS
add-ons are chosen from it once it is known.

Common to every cloud (`ClusterHandle`):

- ``cloud``: the cloud's name (elastic_gpu/clouds.py CLOUDS); picks its folder's builders.
- ``cluster_name``: the cloud's name of the cluster (`Output[str]`).
- ``zones``: the zones pools may use (plain `list[str]`).
- ``kubernetes_version``: the Kubernetes minor, e.g. "1.33" (plain `str`; an `Output[str]` only on
  a handle read from the cluster resource, which may carry the patch, e.g. "1.26.3").
- ``provider``: the `pulumi_kubernetes.Provider` for the cluster's API.
- ``tags``: tags/labels for what the add-ons create (may be empty).

EKS (`EksClusterHandle`) adds ``region``, ``node_role_arn`` (the role the node
groups use), ``subnet_ids`` (zone -> private subnet id), ``oidc_provider_arn`` and
``oidc_issuer_url`` (IRSA for the autoscaler), and ``node_dependencies``
(resources a node group must wait for, e.g. the NAT route; empty for an existing cluster); it may
have ``eks_api_reachable`` (True: the nodes reach the EKS API, which the autoscaler calls to scale
from zero; None or absent: unknown, and the autoscaler warns) and ``authentication_mode`` (an Output of API,
API_AND_CONFIG_MAP or CONFIG_MAP: whether the cluster takes access entries, which Karpenter's nodes join by;
None or absent: not known, and the entry is declared).

AKS (`AksClusterHandle`) adds ``resource_group_name``, ``location`` and
``autoscaler_profile``: the managed autoscaler's settings when this library sets
them, None when it cannot know them (an existing cluster); it may have
``kubelet_identity_object_id`` (the identity the nodes act as), which pools export, and
``plain_location`` (the location as a plain string, or None), by which pools rank VM sizes by the
region's prices, and ``provisioner`` ("karpenter": node auto-provisioning, so a GPU pool is an
AKSNodeClass and NodePools, no agent pool, and ``consolidate_after`` is their idle time; None or absent:
agent pools).

GKE (`GkeClusterHandle`) adds ``project`` and ``location`` (the cluster's zone or region),
and may have ``private_nodes`` (True/False: the node pools' own setting; None or absent: the cluster's)
and ``provisioner`` ("auto-provisioning": the cluster auto-creates node pools, so a spot pool is a
ComputeClass and no node pool; "cluster-autoscaler", None or absent: pools declare node pools).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import pulumi
import pulumi_kubernetes as k8s

from elastic_gpu.clouds import CLOUDS, HANDLE_VERSION_INPUT, REGISTRY, all_clouds, get_cloud
from elastic_gpu.errors import ConfigError
from elastic_gpu.validation import said, shown_value
from elastic_gpu.versions import KUBERNETES_MINOR_PATTERN, minor_support_warnings

if TYPE_CHECKING:
    from elastic_gpu.cloud_facts import RegisteredCloud


@runtime_checkable
class ClusterHandle(Protocol):
    """What every pool and add-on needs from a cluster (see the module docstring)."""

    cloud: str
    """The cloud's name (elastic_gpu/clouds.py CLOUDS): picks its folder's builders."""
    cluster_name: pulumi.Output[str]
    """The cloud's name of the cluster."""
    provider: k8s.Provider
    """The `pulumi_kubernetes.Provider` for the cluster's API (never the ambient kubeconfig)."""
    tags: dict[str, str]
    """Tags/labels for what the add-ons create (may be empty)."""

    @property
    def zones(self) -> list[str]:
        """The zones pools may use (plain: they decide how many node groups there are)."""
        ...

    @property
    def kubernetes_version(self) -> pulumi.Input[str]:
        """The Kubernetes minor, e.g. "1.33": plain, except on a handle read from the cluster resource
        (`from_*`), where it is that cluster's version Output (it picks the autoscaler image)."""
        ...


@runtime_checkable
class EksClusterHandle(ClusterHandle, Protocol):
    region: pulumi.Output[str]
    """The AWS region."""
    node_role_arn: pulumi.Output[str]
    """The IAM role the pools' node groups use (a pool's `node_identity` overrides it)."""
    subnet_ids: Mapping[str, pulumi.Input[str]]
    """Zone -> private subnet id of the node groups (a pool's `subnet_ids` overrides it)."""
    oidc_provider_arn: pulumi.Output[str]
    """The cluster's IAM OIDC provider (IRSA for the autoscaler)."""
    oidc_issuer_url: pulumi.Output[str]
    """Its issuer URL."""
    node_dependencies: list[pulumi.Resource]
    """Resources a node group waits for (the node role's policies, the NAT route); empty when existing."""


@runtime_checkable
class EksNodeSecurityGroups(Protocol):
    """Optional on an EKS handle: the security groups the pools' nodes join instead of the EKS cluster
    security group EKS gives a managed node group (a pool's `security_group_ids` overrides them)."""

    node_security_group_ids: list[pulumi.Input[str]]
    """The groups, e.g. pulumi-eks's `nodeSecurityGroup`, where the cluster's own nodes (and CoreDNS) run."""


@dataclass(frozen=True)
class ManagedAutoscalerProfile:
    """The settings of a managed autoscaler this library configured (AKS's autoScalerProfile)."""

    expander: str
    scale_down_unneeded_time: str
    scale_down_delay_after_add: str
    max_node_provision_time: str
    #: name regexes of the node groups the cluster itself declares and this autoscaler scales (AKS: the System
    #: pool): the priority ConfigMap ranks them lowest, so the expander knows every group it may be offered
    cluster_group_regexes: tuple[str, ...] = ()


@runtime_checkable
class ManagedAutoscalerHandle(Protocol):
    """A cluster whose autoscaler the cloud runs, with the settings this library gave it (AKS)."""

    autoscaler_profile: ManagedAutoscalerProfile | None


@runtime_checkable
class AksClusterHandle(ClusterHandle, Protocol):
    resource_group_name: pulumi.Output[str]
    """The cluster's resource group."""
    location: pulumi.Output[str]
    """The Azure region."""
    autoscaler_profile: ManagedAutoscalerProfile | None
    """The managed autoscaler's settings when this library set them; None when it cannot know them."""


@runtime_checkable
class GkeClusterHandle(ClusterHandle, Protocol):
    project: pulumi.Output[str]
    """The GCP project."""
    location: pulumi.Output[str]
    """The cluster's zone or region."""


COMMON_ATTRIBUTES = ("cloud", "cluster_name", "zones", "kubernetes_version", "provider", "tags")


def cloud_provider(cluster: ClusterHandle) -> RegisteredCloud:
    """The provider of the handle's cloud: where a component turns its cluster's `cloud` (a name, so that a
    program's own handle object stays plain) into the provider it hands down to the checks and builders below
    it. A component calls it once, after `handle_problems` found the handle usable. Typed as what the low layers
    ask of a cloud: the pools and the autoscaler narrow it to their own part (pool_args.pool_cloud,
    cluster_autoscaler.autoscaler_cloud)."""
    return get_cloud(cluster.cloud)


def handle_problems(where: str, cluster: object) -> list[str]:
    """Why `cluster` is not a usable handle (empty when it is); never raises AttributeError."""
    cloud = getattr(cluster, "cloud", None)
    if not isinstance(cloud, str) or cloud not in REGISTRY:
        return [
            f"{where}cluster: {type(cluster).__name__} is not a cluster handle (no `cloud` of {', '.join(CLOUDS)}); "
            "pass an EksCluster/AksCluster/GkeCluster, or wrap a cluster you already have with "
            + ", ".join(c.facts.existing_hint for c in all_clouds())
        ]
    facts = get_cloud(cloud).facts
    missing = [a for a in (*COMMON_ATTRIBUTES, *facts.handle_attributes) if not hasattr(cluster, a)]
    if missing:
        return [
            f"{where}cluster: {type(cluster).__name__} lacks {', '.join(missing)} of the {cloud} cluster handle; "
            f"wrap the cluster with {facts.existing_hint}"
        ]
    return []


# --- argument checks shared by the `existing()` constructors --------------------------------------


def is_input_str(value: object) -> bool:
    """A plain string or an Output (whose type we cannot see before deployment)."""
    return isinstance(value, str | pulumi.Output)


def input_str_problems(where: str, **values: Any) -> list[str]:
    """Each named value must be a string or an Output (an Input[str]); None counts as missing."""
    problems = []
    for arg, value in values.items():
        if value is None:
            problems.append(f"{where}{arg}: required (a string or an Output)")
        elif not is_input_str(value):
            problems.append(f"{where}{arg}: must be a string or an Output, got {shown_value(value)}")
        elif isinstance(value, str) and not value:
            problems.append(f"{where}{arg}: must not be empty")
    return problems


def version_problems(where: str, kubernetes_version: object) -> list[str]:
    if not isinstance(kubernetes_version, str) or not re.fullmatch(KUBERNETES_MINOR_PATTERN, kubernetes_version):
        return [
            f'{where}kubernetes_version: must be a plain Kubernetes minor such as "1.33" (it picks the '
            f"autoscaler image before deployment), got {said(kubernetes_version)}"
        ]
    return []


def zones_problems(
    where: str, zones: object, allowed: tuple[str, ...] | None = None, *, may_be_empty: bool = False
) -> list[str]:
    """`zones` is a plain list of zone names (empty only where the cloud places pools in no zone)."""
    if isinstance(zones, str) or not isinstance(zones, list | tuple) or (not zones and not may_be_empty):
        what = "a list of zone names ([]: no zone, regional pools)" if may_be_empty else "a non-empty list of zones"
        return [f"{where}zones: must be {what}, got {said(zones)}"]
    if bad := [z for z in zones if not isinstance(z, str)]:
        return [f"{where}zones: every zone must be a plain string, got {said(bad)}"]
    if allowed is not None and (unknown := [z for z in zones if z not in allowed]):
        return [f"{where}zones: {unknown} are not allowed; allowed: {', '.join(allowed)}"]
    return []


#: The inputs a cluster-handle component records (its own props): the cluster's facts as the handle has
#: them, so that the offline reports (zones of a pool, the Kubernetes minor a diff compares) read them from
#: the captured resources of any program, also where the subnets or the cluster come from elsewhere.
ZONES_INPUT = "zones"
VERSION_INPUT = HANDLE_VERSION_INPUT
#: EKS: zone -> subnet id, as the handle maps them (elastic_gpu/aws/preview.py reads it back).
SUBNET_IDS_INPUT = "subnetIds"


def handle_inputs(
    zones: Sequence[str],
    kubernetes_version: pulumi.Input[str],
    subnet_ids: Mapping[str, pulumi.Input[str]] | None = None,
) -> dict[str, Any]:
    """The props a cluster-handle component registers with (see ZONES_INPUT)."""
    inputs: dict[str, Any] = {ZONES_INPUT: list(zones), VERSION_INPUT: kubernetes_version}
    if subnet_ids is not None:
        inputs[SUBNET_IDS_INPUT] = dict(subnet_ids)
    return inputs


F = TypeVar("F", bound=Callable[..., Any])


def required_keywords(*names: str) -> Callable[[F], F]:
    """Show keyword arguments as required in `help()` and `inspect.signature` while the function keeps a
    None default, so that leaving one out gives its ConfigError (what is wrong and what to pass), not a
    TypeError."""

    def wrap(fn: F) -> F:
        signature = inspect.signature(fn)
        params = [
            p.replace(default=inspect.Parameter.empty, annotation=_required(p.annotation)) if p.name in names else p
            for p in signature.parameters.values()
        ]
        # keyword-only parameters may have no default before ones that have one
        fn.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        return fn

    return wrap


def _required(annotation: Any) -> Any:
    """`X | None` (a string, under `from __future__ import annotations`) -> `X`."""
    return annotation.removesuffix(" | None") if isinstance(annotation, str) else annotation


def raise_if(problems: list[str], source: str) -> None:
    if problems:
        raise ConfigError(problems, source=source)


def k8s_provider_problems(where: str, k8s_provider: object) -> list[str]:
    if k8s_provider is not None and not isinstance(k8s_provider, k8s.Provider):
        return [f"{where}k8s_provider: must be a pulumi_kubernetes.Provider, got {type(k8s_provider).__name__}"]
    return []


class ExistingCluster(pulumi.ComponentResource):
    """What the three `existing()` handles share: plain zones and minor, and a Kubernetes provider.

    Subclasses check their arguments, call `super().__init__`, set their cloud's handle
    attributes, then `_use_provider` with the caller's provider or a kubeconfig to build one from.
    """

    cloud: str
    """The cloud's name (elastic_gpu/clouds.py CLOUDS), set by each subclass."""
    kubeconfig: pulumi.Output[str] | None
    """The kubeconfig (secret) the Kubernetes provider was built from; None when `k8s_provider` was given."""

    def _plain_facts(
        self, zones: Sequence[str], kubernetes_version: pulumi.Input[str], tags: Mapping[str, str] | None
    ) -> None:
        self._zones = list(zones)
        self._kubernetes_version = kubernetes_version
        cloud = get_cloud(self.cloud)

        def warn(version: str) -> None:
            for warning in minor_support_warnings("kubernetes_version: ", cloud, version):
                pulumi.log.warn(warning, resource=self)

        # An Output minor (read from a pulumi-eks cluster) is warned about once known: at preview when the
        # cluster exists or sets its `version`; a warning has nothing to refuse, so late is harmless.
        if isinstance(kubernetes_version, str):
            warn(kubernetes_version)
        else:
            version: pulumi.Output[str] = pulumi.Output.from_input(kubernetes_version)
            version.apply(warn)
        self.tags: dict[str, str] = dict(tags or {})

    def _use_provider(
        self, resource_name: str, k8s_provider: k8s.Provider | None, kubeconfig: Callable[[], pulumi.Input[str]]
    ) -> None:
        """The caller's provider, else one declared from `kubeconfig()` (secret, kept as `self.kubeconfig`).

        `kubeconfig` is called only when there is no provider, so no credentials are read for nothing.
        """
        self.kubeconfig: pulumi.Output[str] | None = None
        if k8s_provider is None:
            self.kubeconfig = pulumi.Output.secret(kubeconfig())
            k8s_provider = k8s.Provider(
                f"{resource_name}-k8s", kubeconfig=self.kubeconfig, opts=pulumi.ResourceOptions(parent=self)
            )
        self.provider: k8s.Provider = k8s_provider

    @property
    def zones(self) -> list[str]:
        return list(self._zones)

    @property
    def kubernetes_version(self) -> pulumi.Input[str]:
        return self._kubernetes_version
