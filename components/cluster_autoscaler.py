"""ClusterAutoscaler: the upstream cluster-autoscaler, ranking spot above on-demand."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.config import DEFAULT_EXPANDER, DEFAULT_MAX_NODE_PROVISION_TIME, DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD
from components.config import DEFAULT_SCALE_DOWN_UNNEEDED
from components.errors import ConfigError
from components.general_pool import GeneralPool
from components.pool_types import NodeGroupRef
from components.scheduling import CAPACITY_LABEL, CAPACITY_ON_DEMAND, NODE_CLASS_GENERAL, NODE_CLASS_LABEL, POOL_LABEL
from components.spot_gpu_pool import SpotGpuPool
from components.versions import cluster_autoscaler_image

TYPE_TOKEN = "elastic-gpu:index:ClusterAutoscaler"

NAME = "cluster-autoscaler"
DEFAULT_NAMESPACE = "kube-system"
#: The priority expander reads exactly this ConfigMap, in the autoscaler's namespace.
PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"
#: Priority-expander ranks: the highest that can fit the pending pods wins.
SPOT_PRIORITY = 50
ON_DEMAND_PRIORITY = 10
CATCH_ALL_PRIORITY = 1  # groups we did not create still get considered, last
#: Labels and pod settings of the official AWS auto-discovery example
#: (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/examples/cluster-autoscaler-autodiscover.yaml).
SA_LABELS = {"k8s-addon": "cluster-autoscaler.addons.k8s.io", "k8s-app": NAME}
APP_LABELS = {"app": NAME}
RUN_AS_USER = 65534  # nobody
RESOURCES = {"cpu": "100m", "memory": "600Mi"}
METRICS_PORT = 8085


@dataclass
class ClusterAutoscalerArgs:
    cluster: object
    """The cluster component (EksCluster, ...)."""
    provider: k8s.Provider
    general_pool: GeneralPool
    """The autoscaler's pod runs here, on its on-demand nodes only."""
    gpu_pools: list[SpotGpuPool]
    scale_down_unneeded_time: str = DEFAULT_SCALE_DOWN_UNNEEDED
    scale_down_delay_after_add: str = DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD
    expander: list[str] = field(default_factory=lambda: list(DEFAULT_EXPANDER))
    """Default priority,least-waste: spot groups first, then the cheapest fit."""
    max_node_provision_time: str = DEFAULT_MAX_NODE_PROVISION_TIME
    """Default 5m: a spot group that cannot get capacity is given up on this fast."""
    namespace: str = DEFAULT_NAMESPACE
    image: str | None = None
    """Default: the release whose minor matches the cluster's Kubernetes version."""


def priorities(node_groups: list[NodeGroupRef]) -> dict[int, list[str]]:
    """Priority-expander ranks: spot groups above on-demand ones, unknown groups last."""
    ranks: dict[int, list[str]] = {}
    for g in node_groups:
        ranks.setdefault(SPOT_PRIORITY if g.capacity == "spot" else ON_DEMAND_PRIORITY, []).append(g.name_regex)
    ranks[CATCH_ALL_PRIORITY] = [".*"]
    return dict(sorted(ranks.items(), reverse=True))


def priority_expander_data(node_groups: list[NodeGroupRef]) -> dict[str, str]:
    return {"priorities": yaml.safe_dump(priorities(node_groups), sort_keys=False)}


class ClusterAutoscaler(pulumi.ComponentResource):
    """The Kubernetes cluster-autoscaler, set up so spot GPU pools scale 0..max.

    On EKS: an IRSA role with the actions the autoscaler's AWS README lists (the
    two mutating ones only on this cluster's groups), ServiceAccount and RBAC as
    in the official auto-discovery example, the `cluster-autoscaler-priority-
    expander` ConfigMap that ranks spot groups above the on-demand fallback, a
    Deployment pinned to the image matching the cluster's minor and hardened
    like the example, on the general pool's on-demand nodes only, and a
    PodDisruptionBudget.
    """

    def __init__(self, name: str, args: ClusterAutoscalerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        cloud = getattr(args.cluster, "cloud", None)
        if cloud != "aws":
            raise ConfigError([f"ClusterAutoscaler '{name}': cloud {cloud!r} is not supported yet; allowed: aws"])
        if args.general_pool.args.spot:
            raise ConfigError(
                [f"ClusterAutoscaler '{name}': general_pool must be on-demand; the autoscaler never runs on spot nodes"]
            )
        image = args.image or _image(name, args.cluster.kubernetes_version)  # type: ignore[attr-defined]
        super().__init__(TYPE_TOKEN, name, None, opts)
        from components.aws.autoscaler_iam import aws_flags, build_autoscaler_role  # noqa: PLC0415

        role = build_autoscaler_role(
            name, cluster=args.cluster, namespace=args.namespace, service_account=NAME, parent=self  # type: ignore[arg-type]
        )
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=args.provider)
        meta = lambda **kw: k8s.meta.v1.ObjectMetaArgs(namespace=args.namespace, **kw)  # noqa: E731
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-sa",
            metadata=meta(name=NAME, labels=SA_LABELS, annotations={"eks.amazonaws.com/role-arn": role.arn}),
            opts=k8s_opts,
        )
        _rbac(name, args.namespace, k8s_opts)
        node_groups = [g for p in [args.general_pool, *args.gpu_pools] for g in p.node_groups]
        self.priority_config = k8s.core.v1.ConfigMap(
            f"{name}-priorities",
            metadata=meta(name=PRIORITY_CONFIGMAP),
            data=priority_expander_data(node_groups),
            opts=k8s_opts,
        )
        flags = [
            "--v=4",
            "--stderrthreshold=info",
            *aws_flags(args.cluster),  # type: ignore[arg-type]
            "--skip-nodes-with-local-storage=false",
            f"--expander={','.join(args.expander)}",
            # Per-zone GPU groups must not be balanced against each other (seed 002).
            "--balance-similar-node-groups=false",
            f"--scale-down-unneeded-time={args.scale_down_unneeded_time}",
            f"--scale-down-delay-after-add={args.scale_down_delay_after_add}",
            f"--max-node-provision-time={args.max_node_provision_time}",
        ]
        region = args.cluster.args.region  # type: ignore[attr-defined]
        self.deployment = _deployment(name, args, image, flags, region, meta, k8s_opts, self.priority_config)
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb",
            metadata=meta(name=NAME, labels=APP_LABELS),
            spec=k8s.policy.v1.PodDisruptionBudgetSpecArgs(
                max_unavailable=1, selector=k8s.meta.v1.LabelSelectorArgs(match_labels=APP_LABELS)
            ),
            opts=k8s_opts,
        )
        self.image = image
        self.role_arn = role.arn
        self.register_outputs({"image": image, "role_arn": role.arn})


def _image(name: str, kubernetes_version: str) -> str:
    try:
        return cluster_autoscaler_image(kubernetes_version)
    except ValueError as exc:
        raise ConfigError([f"ClusterAutoscaler '{name}': {exc}"]) from None


def _rbac(name: str, namespace: str, opts: pulumi.ResourceOptions) -> None:
    """ClusterRole, Role and bindings exactly as in the official auto-discovery example."""
    rule = k8s.rbac.v1.PolicyRuleArgs
    read = ["watch", "list", "get"]
    k8s.rbac.v1.ClusterRole(
        f"{name}-clusterrole",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=NAME, labels=SA_LABELS),
        rules=[
            rule(api_groups=[""], resources=["events", "endpoints"], verbs=["create", "patch"]),
            rule(api_groups=[""], resources=["pods/eviction"], verbs=["create"]),
            rule(api_groups=[""], resources=["pods/status"], verbs=["update"]),
            rule(api_groups=[""], resources=["endpoints"], resource_names=[NAME], verbs=["get", "update"]),
            rule(api_groups=[""], resources=["nodes"], verbs=["watch", "list", "get", "update"]),
            rule(
                api_groups=[""],
                resources=[
                    "namespaces",
                    "pods",
                    "services",
                    "replicationcontrollers",
                    "persistentvolumeclaims",
                    "persistentvolumes",
                ],
                verbs=read,
            ),
            rule(api_groups=["extensions"], resources=["replicasets", "daemonsets"], verbs=read),
            rule(api_groups=["policy"], resources=["poddisruptionbudgets"], verbs=["watch", "list"]),
            rule(api_groups=["apps"], resources=["statefulsets", "replicasets", "daemonsets"], verbs=read),
            rule(api_groups=["resource.k8s.io"], resources=["deviceclasses", "resourceslices", "resourceclaims"], verbs=read),
            rule(
                api_groups=["storage.k8s.io"],
                resources=["storageclasses", "csinodes", "csidrivers", "csistoragecapacities", "volumeattachments"],
                verbs=read,
            ),
            rule(api_groups=["batch", "extensions"], resources=["jobs"], verbs=["get", "list", "watch", "patch"]),
            rule(api_groups=["coordination.k8s.io"], resources=["leases"], verbs=["create"]),
            rule(api_groups=["coordination.k8s.io"], resources=["leases"], resource_names=[NAME], verbs=["get", "update"]),
        ],
        opts=opts,
    )
    k8s.rbac.v1.Role(
        f"{name}-role",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=NAME, namespace=namespace, labels=SA_LABELS),
        rules=[
            rule(api_groups=[""], resources=["configmaps"], verbs=["create", "list", "watch"]),
            rule(
                api_groups=[""],
                resources=["configmaps"],
                resource_names=["cluster-autoscaler-status", PRIORITY_CONFIGMAP],
                verbs=["delete", "get", "update", "watch"],
            ),
        ],
        opts=opts,
    )
    subject = k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=NAME, namespace=namespace)
    k8s.rbac.v1.ClusterRoleBinding(
        f"{name}-clusterrolebinding",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=NAME, labels=SA_LABELS),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=NAME),
        subjects=[subject],
        opts=opts,
    )
    k8s.rbac.v1.RoleBinding(
        f"{name}-rolebinding",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=NAME, namespace=namespace, labels=SA_LABELS),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="Role", name=NAME),
        subjects=[subject],
        opts=opts,
    )


def _deployment(name, args, image, flags, region, meta, opts, priority_config) -> k8s.apps.v1.Deployment:  # noqa: ANN001, PLR0913
    general = args.general_pool
    # Only the general pool's on-demand nodes: never spot (evictions) and never GPU
    # nodes (no GPU toleration is given, and the GPU taint keeps it off them).
    node_selector = {
        NODE_CLASS_LABEL: NODE_CLASS_GENERAL,
        POOL_LABEL: general.pool_name,
        CAPACITY_LABEL: CAPACITY_ON_DEMAND,
    }
    return k8s.apps.v1.Deployment(
        f"{name}-deployment",
        metadata=meta(name=NAME, labels=APP_LABELS),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            replicas=1,
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=APP_LABELS),
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    labels=APP_LABELS,
                    annotations={
                        "prometheus.io/scrape": "true",
                        "prometheus.io/port": str(METRICS_PORT),
                        # Never evict the autoscaler itself while scaling its node down.
                        "cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
                    },
                ),
                spec=k8s.core.v1.PodSpecArgs(
                    service_account_name=NAME,
                    priority_class_name="system-cluster-critical",
                    node_selector=node_selector,
                    security_context=k8s.core.v1.PodSecurityContextArgs(
                        run_as_non_root=True,
                        run_as_user=RUN_AS_USER,
                        fs_group=RUN_AS_USER,
                        seccomp_profile=k8s.core.v1.SeccompProfileArgs(type="RuntimeDefault"),
                    ),
                    containers=[
                        k8s.core.v1.ContainerArgs(
                            name=NAME,
                            image=image,
                            image_pull_policy="IfNotPresent",
                            command=["./cluster-autoscaler", *flags],
                            env=[k8s.core.v1.EnvVarArgs(name="AWS_REGION", value=region)],
                            ports=[k8s.core.v1.ContainerPortArgs(name="metrics", container_port=METRICS_PORT)],
                            resources=k8s.core.v1.ResourceRequirementsArgs(limits=RESOURCES, requests=RESOURCES),
                            security_context=k8s.core.v1.SecurityContextArgs(
                                allow_privilege_escalation=False,
                                capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"]),
                                read_only_root_filesystem=True,
                            ),
                            volume_mounts=[
                                k8s.core.v1.VolumeMountArgs(
                                    name="ssl-certs", mount_path="/etc/ssl/certs/ca-certificates.crt", read_only=True
                                )
                            ],
                        )
                    ],
                    volumes=[
                        k8s.core.v1.VolumeArgs(
                            name="ssl-certs",
                            host_path=k8s.core.v1.HostPathVolumeSourceArgs(path="/etc/ssl/certs/ca-bundle.crt"),
                        )
                    ],
                ),
            ),
        ),
        # The priority ConfigMap must exist before the autoscaler starts.
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[priority_config])),
    )
