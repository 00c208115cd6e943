"""ClusterAutoscaler: the upstream cluster-autoscaler, ranking spot above on-demand."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

import pulumi
import pulumi_kubernetes as k8s
import yaml
from pydantic import Field

from elastic_gpu.args_doc import documented, documented_component
from elastic_gpu.cloud_facts import RegisteredCloud, RuledCloud
from elastic_gpu.cluster_handle import ManagedAutoscalerHandle, cloud_provider, handle_problems
from elastic_gpu.errors import ConfigError
from elastic_gpu.general_pool import GeneralPool
from elastic_gpu.pool_types import ClusterHandle, NodeGroupRef
from elastic_gpu.settings import DURATION_KEYS, AutoscalerSettings
from elastic_gpu.settings.base import ArgsModel
from elastic_gpu.spot_gpu_pool import SpotGpuPool
from elastic_gpu.validation import args_type_problems, autoscaler_settings_problems
from elastic_gpu.versions import cluster_autoscaler_image

TYPE_TOKEN = "elastic-gpu:index:ClusterAutoscaler"

DEFAULT_NAMESPACE = "kube-system"
#: The upstream name of the Deployment, ServiceAccount, RBAC objects and leader-election lease.
DEFAULT_WORKLOAD_NAME = "cluster-autoscaler"
#: The priority expander reads exactly this ConfigMap, in the autoscaler's namespace.
PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"
#: Priority-expander ranks: the highest that can fit the pending pods wins. A reserved group (capacity the team
#: already pays for) comes first, then spot, then on-demand.
RESERVED_PRIORITY = 90
SPOT_PRIORITY = 50
ON_DEMAND_PRIORITY = 10
#: Each capacity's base rank (a group's `rank` steps below it).
CAPACITY_PRIORITY = {"reserved": RESERVED_PRIORITY, "spot": SPOT_PRIORITY, "on-demand": ON_DEMAND_PRIORITY}
#: The lowest rank we give. There is no catch-all (`.*`): a group no regex matches is used only when no
#: ranked group can take the pod ("no priorities info found for any of the expansion options. No options
#: filtered", kubernetes/autoscaler cluster-autoscaler/expander/priority/priority.go BestOptions).
LOWEST_PRIORITY = 1


@documented
class ClusterAutoscalerArgs(ArgsModel, AutoscalerSettings):
    """The autoscaler's settings (elastic_gpu.settings.AutoscalerSettings, a stack file's `autoscaler`) and
    what only a program gives; keyword arguments."""

    model_config = ArgsModel.model_config

    cluster: ClusterHandle
    """The cluster handle (EksCluster, EksCluster.existing(...), AksCluster, GkeCluster, ...)."""
    gpu_pools: list[SpotGpuPool]
    """The SpotGpuPools whose groups the priority expander ranks (spot above their fallbacks)."""
    provider: k8s.Provider | None = None
    """The Kubernetes provider its objects are declared with; None: the cluster's `provider`."""
    general_pool: GeneralPool | None = None
    """A GeneralPool whose on-demand nodes run the autoscaler pod; or give `node_selector`."""
    node_selector: dict[str, str] | None = None
    """Where the pod runs without a general_pool, e.g. the labels of the cluster's own on-demand nodes
    ({} means any node). One of the two is needed where the autoscaler runs as a pod (EKS)."""
    tolerations: list[k8s.core.v1.TolerationArgs] = Field(default_factory=list)
    """Tolerations for the taints of those nodes (never the GPU or spot taint)."""
    namespace: str | None = None
    """Where its objects go, passed as `--namespace` (where it reads the priority ConfigMap). None:
    kube-system, or, for an autoscaler with a changed `workload_name` that runs as a pod (EKS), a
    namespace of that name, created here, so its priority ConfigMap is never the cluster's own
    autoscaler's. A namespace given must exist (on AKS it must stay kube-system)."""
    workload_name: str = DEFAULT_WORKLOAD_NAME
    """Name of the Deployment, ServiceAccount, RBAC objects and leader-election lease; change it when the
    cluster already runs an autoscaler under that name (it then gets its own namespace, see `namespace`)."""
    image: str | None = None
    """None: the cluster-autoscaler release matching the cluster's Kubernetes minor."""

    @property
    def k8s_provider(self) -> k8s.Provider:
        return self.provider or self.cluster.provider


# --- what the autoscaler component asks of a cloud (part of `CloudProvider`, elastic_gpu/provider.py) ----------


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


@runtime_checkable
class AutoscalerCloud(RegisteredCloud, Protocol):
    """A cloud as `ClusterAutoscaler` asks for it: its rules and its autoscaler."""

    def autoscaler_builder(self) -> AutoscalerBuilder:
        """Its autoscaler: called by `ClusterAutoscaler`."""
        ...


def autoscaler_cloud(cluster: ClusterHandle) -> AutoscalerCloud:
    """The provider of the handle's cloud (cluster_handle.cloud_provider, the edge) as the autoscaler reads it:
    every registered provider is a `CloudProvider` (the type checker holds each folder's `PROVIDER` to it), hence
    an AutoscalerCloud."""
    cloud = cloud_provider(cluster)
    if not isinstance(cloud, AutoscalerCloud):
        raise TypeError(f"{cloud!r} lacks the members the autoscaler asks of its cloud (AutoscalerCloud)")
    return cloud


def priorities(node_groups: list[NodeGroupRef], lowest: Sequence[str] = ()) -> dict[int, list[str]]:
    """Priority-expander ranks: reserved groups above spot ones above on-demand ones, cheaper above dearer within each
    (a group's `rank`). Groups of one priority are drawn at random ("one group ... is selected each
    time at random", priority expander readme), so only equals share one. Only the given groups are
    ranked: no catch-all puts groups the library did not declare into the order (see LOWEST_PRIORITY).
    `lowest`: regexes of the cluster's own autoscaled groups (AKS's System pool) at LOWEST_PRIORITY, below
    every pool's: a group the ConfigMap leaves out is logged as PriorityConfigMapNotMatchedGroup in every
    loop it is an option (kubernetes/autoscaler cluster-autoscaler/expander/priority/priority.go BestOptions)."""
    ranks: dict[int, list[str]] = {}
    for g in node_groups:
        base = CAPACITY_PRIORITY[g.capacity]
        # plain names: priority_expander_data resolves the Outputs first
        ranks.setdefault(max(base - g.rank, LOWEST_PRIORITY), []).append(cast(str, g.name_regex))
    if lowest:
        ranks.setdefault(LOWEST_PRIORITY, []).extend(lowest)
    return dict(sorted(ranks.items(), reverse=True))


def priority_expander_data(
    node_groups: list[NodeGroupRef], lowest: Sequence[str] = ()
) -> pulumi.Output[dict[str, str]]:
    """The ConfigMap's data; an Output, as group names may follow an Output cluster name."""
    regexes = pulumi.Output.all(*[g.name_regex for g in node_groups])

    def render(names: list[str]) -> dict[str, str]:
        known = [dataclasses.replace(g, name_regex=n) for g, n in zip(node_groups, names, strict=True)]
        return {"priorities": yaml.safe_dump(priorities(known, lowest), sort_keys=False)}

    return regexes.apply(render)


def has_fallback(gpu_pools: list[SpotGpuPool]) -> bool:
    """Some pool has spot groups and on-demand ones: only the priority expander ranks them right."""
    return any({g.capacity for g in p.node_group_refs} == {"spot", "on-demand"} for p in gpu_pools)


def autoscaler_problems(name: str, args: ClusterAutoscalerArgs, cloud: RuledCloud, runs_pod: bool) -> list[str]:
    """Every problem with `args`, each naming the argument; the settings' rules are the stack config's, those of
    `cloud` (the provider of the handle's cloud)."""
    where = f"ClusterAutoscaler '{name}': ClusterAutoscalerArgs."
    if problems := handle_problems(where, args.cluster) + args_type_problems(where, args):
        return problems
    fallback = next((p for p in args.gpu_pools if p.args.on_demand_fallback), None)
    problems = autoscaler_settings_problems(
        lambda key: f"{where}{key}",
        {key: getattr(args, key) for key in DURATION_KEYS},
        args.expander,
        None if fallback is None else f"SpotGpuPool '{fallback.pool_name}' (on_demand_fallback=True)",
        cloud,
        'expander=["priority", "least-waste"]',
    )
    if runs_pod and args.general_pool is None and args.node_selector is None:
        problems.append(
            f"{where}general_pool / node_selector: the autoscaler pod needs a place to run; give a GeneralPool "
            "or the node_selector (and tolerations) of on-demand nodes the cluster already has"
        )
    if runs_pod and args.general_pool is not None and args.general_pool.args.spot:
        problems.append(f"{where}general_pool must be on-demand; the autoscaler never runs on spot nodes")
    if args.general_pool is not None and args.node_selector is not None:
        problems.append(f"{where}node_selector: give either general_pool or node_selector, not both")
    if not args.workload_name or not re.fullmatch(DNS_LABEL, args.workload_name):
        problems.append(f"{where}workload_name: {args.workload_name!r} is not a Kubernetes name ({DNS_LABEL})")
    elif (
        runs_pod
        and args.workload_name != DEFAULT_WORKLOAD_NAME
        and args.namespace == DEFAULT_NAMESPACE
        and "priority" in args.expander
    ):
        problems.append(
            f"{where}namespace: {args.namespace!r} with workload_name={args.workload_name!r}: the priority "
            f"expander reads the ConfigMap '{PRIORITY_CONFIGMAP}' by that fixed name from its --namespace, "
            "where the cluster's own autoscaler reads it too; leave namespace unset (the autoscaler gets its "
            f"own namespace '{args.workload_name}') or give another namespace"
        )
    if args.namespace is not None and not re.fullmatch(DNS_LABEL, args.namespace):
        problems.append(f"{where}namespace: {args.namespace!r} is not a Kubernetes namespace name ({DNS_LABEL})")
    return problems


def own_namespace(args: ClusterAutoscalerArgs, runs_pod: bool) -> str | None:
    """The namespace this component creates: a renamed autoscaler's own (None: it uses an existing one).

    cluster-autoscaler reads the priority ConfigMap by its fixed name from its `--namespace`
    (kubernetes/autoscaler cluster-autoscaler/expander/priority/priority.go:37), so a second autoscaler in
    kube-system would share the cluster's own autoscaler's list (or fail to create it)."""
    if args.namespace is None and runs_pod and args.workload_name != DEFAULT_WORKLOAD_NAME:
        return args.workload_name
    return None


def with_namespace(args: ClusterAutoscalerArgs, runs_pod: bool) -> ClusterAutoscalerArgs:
    """`args` with `namespace` resolved (see ClusterAutoscalerArgs.namespace)."""
    if args.namespace is not None:
        return args
    return args.model_copy(update={"namespace": own_namespace(args, runs_pod) or DEFAULT_NAMESPACE})


#: RFC 1123 label: what Kubernetes accepts for the names we set.
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"


@documented_component(ClusterAutoscalerArgs)
class ClusterAutoscaler(pulumi.ComponentResource):
    """The cluster autoscaler, set up so spot GPU pools scale 0..max and fall back to on-demand.

    Per cloud (`elastic_gpu.<cloud>.autoscaler`). On EKS it runs the upstream
    autoscaler: an IRSA role with the actions its AWS README lists (the two
    mutating ones only on this cluster's groups), ServiceAccount and RBAC as in
    the official auto-discovery example, a Deployment pinned to the release
    matching the cluster's minor and hardened like the example, on the general
    pool's on-demand nodes only, and a PodDisruptionBudget. Wherever the
    priority expander is used, the `cluster-autoscaler-priority-expander`
    ConfigMap ranks spot groups above on-demand fallbacks.
    On AKS the managed autoscaler is used: its settings are the AksCluster's
    autoScalerProfile plus each agent pool's min/max, and it honours that ConfigMap.
    """

    image: str | None
    """The autoscaler image this library runs (EKS); None where the cloud runs the autoscaler."""
    role: pulumi.Resource | None
    """EKS: the `aws.iam.Role` the autoscaler acts as (IRSA); None where the cloud runs it."""
    role_arn: pulumi.Output[str] | None
    """That role's ARN."""
    service_account_name: str | None
    """The ServiceAccount the autoscaler runs as; None where the cloud runs it."""
    deployment: k8s.apps.v1.Deployment | None
    """EKS: the autoscaler's Deployment; None where the cloud runs it."""
    priority_config: k8s.core.v1.ConfigMap | None
    """The priority expander's ConfigMap (spot above on-demand); None without the priority expander."""
    created_namespace: k8s.core.v1.Namespace | None
    """The renamed autoscaler's own namespace, when this component creates it (see `namespace`)."""

    def __init__(self, name: str, args: ClusterAutoscalerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        if problems := handle_problems(f"ClusterAutoscaler '{name}': ClusterAutoscalerArgs.", args.cluster):
            raise ConfigError(problems, source=f"ClusterAutoscaler '{name}'")
        # The handle's cloud, chosen once: its rules and its builder below are that provider's.
        provider = autoscaler_cloud(args.cluster)
        cloud = provider.autoscaler_builder()
        # A cloud whose autoscaler is managed (GKE, AKS) runs no pod of ours.
        runs_pod = cloud.runs_pod
        if problems := autoscaler_problems(name, args, provider, runs_pod):
            raise ConfigError(problems, source=f"ClusterAutoscaler '{name}'")
        created = own_namespace(args, runs_pod)
        args = with_namespace(args, runs_pod)
        super().__init__(TYPE_TOKEN, name, None, opts)
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=args.k8s_provider)
        self.created_namespace: k8s.core.v1.Namespace | None = None
        if created is not None:
            self.created_namespace = k8s.core.v1.Namespace(
                f"{name}-namespace", metadata=k8s.meta.v1.ObjectMetaArgs(name=created), opts=k8s_opts
            )
            # Every object of the autoscaler lives in it: create it first.
            k8s_opts = pulumi.ResourceOptions.merge(
                k8s_opts, pulumi.ResourceOptions(depends_on=[self.created_namespace])
            )
        self.priority_config: k8s.core.v1.ConfigMap | None = None
        if "priority" in args.expander and cloud.supports_priority_expander:
            pools = [*([args.general_pool] if args.general_pool else []), *args.gpu_pools]
            node_groups = [g for p in pools for g in p.node_group_refs]
            managed = args.cluster.autoscaler_profile if isinstance(args.cluster, ManagedAutoscalerHandle) else None
            self.priority_config = k8s.core.v1.ConfigMap(
                f"{name}-priorities",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=PRIORITY_CONFIGMAP, namespace=args.namespace),
                data=priority_expander_data(node_groups, managed.cluster_group_regexes if managed else ()),
                # After the node groups it ranks: a renamed (replaced) pool is ranked once it exists.
                opts=pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=nodes_first(args))),
            )
        built = cloud.build_autoscaler(name, args, self)
        self.image = built.get("image")
        self.role = built.get("role")
        self.role_arn = built.get("role_arn")
        self.service_account_name = built.get("service_account_name")
        self.deployment = built.get("deployment")
        self.register_outputs(
            {"image": self.image, "role_arn": self.role_arn, "service_account_name": self.service_account_name}
        )


def nodes_first(args: ClusterAutoscalerArgs) -> list[pulumi.Resource]:
    """The node groups the autoscaler's pod waits for: the general pool's (where it runs) and the GPU
    pools' (so a Kubernetes upgrade moves every node group before the autoscaler image)."""
    pools = [args.general_pool, *args.gpu_pools] if args.general_pool is not None else list(args.gpu_pools)
    return [r for p in pools for r in getattr(p, "nodes", [])]


def common_flags(args: ClusterAutoscalerArgs) -> list[str]:
    """Flags every self-run autoscaler gets from our settings."""
    renamed = []
    if args.namespace != DEFAULT_NAMESPACE:
        # Where it reads the priority ConfigMap and writes its status (flag default kube-system:
        # cluster-autoscaler config/flags/flags.go `namespace`, main.go before 1.32).
        renamed.append(f"--namespace={args.namespace}")
    if args.workload_name != DEFAULT_WORKLOAD_NAME:
        # The lease and status ConfigMap follow the name, so a second autoscaler never shares them
        # (component-base leader-election flags bound in cluster-autoscaler's main.go; FAQ for the status map).
        renamed += [
            f"--leader-elect-resource-name={args.workload_name}",
            f"--status-config-map-name={args.workload_name}-status",
        ]
    return [
        "--v=4",
        "--stderrthreshold=info",
        "--skip-nodes-with-local-storage=false",
        f"--expander={','.join(args.expander)}",
        # Per-zone GPU groups are not balanced against each other: a scale-up goes to the group the expander
        # picks (the cheapest spot one first), not spread over the zones to keep their sizes even.
        "--balance-similar-node-groups=false",
        f"--scale-down-unneeded-time={args.scale_down_unneeded_time}",
        f"--scale-down-delay-after-add={args.scale_down_delay_after_add}",
        f"--max-node-provision-time={args.max_node_provision_time}",
        *renamed,
    ]


def autoscaler_image(name: str, kubernetes_version: pulumi.Input[str]) -> pulumi.Input[str]:
    """The pinned image of the cluster's minor (elastic_gpu/versions.py), or a ConfigError naming the minor."""
    if isinstance(kubernetes_version, pulumi.Output):
        # The minor read from a pulumi-eks cluster (EksCluster.from_pulumi_eks): it is known at preview when
        # the cluster exists or sets `version`, so an unpinned minor fails the preview (exit 2 offline); a new
        # cluster without `version` gets EKS's default minor only when it is created, and no earlier point
        # knows it (the handle warns at preview).
        return kubernetes_version.apply(lambda version: autoscaler_image(name, version))
    try:
        return cluster_autoscaler_image(cast(str, kubernetes_version))  # a handle's minor: plain or an Output
    except ValueError as exc:
        raise ConfigError([f"ClusterAutoscaler '{name}': {exc}"], source=f"ClusterAutoscaler '{name}'") from None
