"""The upstream cluster-autoscaler workload: ServiceAccount, RBAC, Deployment, PDB.

As in the official AWS auto-discovery example (kubernetes/autoscaler
cluster-autoscaler/cloudprovider/aws/examples/cluster-autoscaler-autodiscover.yaml);
the cloud module supplies the cloud flags, env and ServiceAccount annotations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from elastic_gpu.cluster_autoscaler import PRIORITY_CONFIGMAP
from elastic_gpu.scheduling import CAPACITY_LABEL, CAPACITY_ON_DEMAND, NODE_CLASS_GENERAL, NODE_CLASS_LABEL, POOL_LABEL

NAME = "cluster-autoscaler"
RUN_AS_USER = 65534  # nobody
RESOURCES = {"cpu": "100m", "memory": "600Mi"}
METRICS_PORT = 8085


@dataclass
class Workload:
    namespace: str
    image: pulumi.Input[str]
    flags: list[pulumi.Input[str]]
    #: where the pod runs: a node selector (the general pool's on-demand nodes, or the user's)
    node_selector: dict[str, str]
    tolerations: list[k8s.core.v1.TolerationArgs] = field(default_factory=list)
    env: dict[str, pulumi.Input[str]] = field(default_factory=dict)
    service_account_annotations: dict[str, pulumi.Input[str]] = field(default_factory=dict)
    #: host CA bundle mounted as in the example (path on the node image)
    host_ca_bundle: str | None = None
    #: the Deployment, ServiceAccount, RBAC objects and lease (the upstream name unless renamed)
    name: str = NAME

    @property
    def sa_labels(self) -> dict[str, str]:
        return {"k8s-addon": "cluster-autoscaler.addons.k8s.io", "k8s-app": self.name}

    @property
    def app_labels(self) -> dict[str, str]:
        return {"app": self.name}

    @property
    def status_config_map(self) -> str:
        return "cluster-autoscaler-status" if self.name == NAME else f"{self.name}-status"


def general_pool_selector(pool_name: str) -> dict[str, str]:
    """The general pool's on-demand nodes: never spot (evictions) and never GPU nodes (the GPU
    taint keeps it off them, as no GPU toleration is given)."""
    return {NODE_CLASS_LABEL: NODE_CLASS_GENERAL, POOL_LABEL: pool_name, CAPACITY_LABEL: CAPACITY_ON_DEMAND}


def build_workload(
    name: str, w: Workload, opts: pulumi.ResourceOptions, after: list[pulumi.Resource]
) -> k8s.apps.v1.Deployment:
    """Declare the workload; the Deployment waits for `after` (the priority ConfigMap)."""
    k8s.core.v1.ServiceAccount(
        f"{name}-sa",
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=w.name, namespace=w.namespace, labels=w.sa_labels, annotations=w.service_account_annotations or None
        ),
        opts=opts,
    )
    _rbac(name, w, opts)
    deployment = _deployment(name, w, pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=after)))
    k8s.policy.v1.PodDisruptionBudget(
        f"{name}-pdb",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=w.name, namespace=w.namespace, labels=w.app_labels),
        spec=k8s.policy.v1.PodDisruptionBudgetSpecArgs(
            max_unavailable=1, selector=k8s.meta.v1.LabelSelectorArgs(match_labels=w.app_labels)
        ),
        opts=opts,
    )
    return deployment


def _rbac(name: str, w: Workload, opts: pulumi.ResourceOptions) -> None:
    """ClusterRole, Role and bindings exactly as in the official auto-discovery example."""
    namespace = w.namespace
    rule = k8s.rbac.v1.PolicyRuleArgs
    read = ["watch", "list", "get"]
    k8s.rbac.v1.ClusterRole(
        f"{name}-clusterrole",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=w.name, labels=w.sa_labels),
        rules=[
            rule(api_groups=[""], resources=["events", "endpoints"], verbs=["create", "patch"]),
            rule(api_groups=[""], resources=["pods/eviction"], verbs=["create"]),
            rule(api_groups=[""], resources=["pods/status"], verbs=["update"]),
            rule(api_groups=[""], resources=["endpoints"], resource_names=[w.name], verbs=["get", "update"]),
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
            rule(
                api_groups=["resource.k8s.io"],
                resources=["deviceclasses", "resourceslices", "resourceclaims"],
                verbs=read,
            ),
            rule(
                api_groups=["storage.k8s.io"],
                resources=["storageclasses", "csinodes", "csidrivers", "csistoragecapacities", "volumeattachments"],
                verbs=read,
            ),
            rule(api_groups=["batch", "extensions"], resources=["jobs"], verbs=["get", "list", "watch", "patch"]),
            rule(api_groups=["coordination.k8s.io"], resources=["leases"], verbs=["create"]),
            rule(
                api_groups=["coordination.k8s.io"],
                resources=["leases"],
                resource_names=[w.name],
                verbs=["get", "update"],
            ),
        ],
        opts=opts,
    )
    k8s.rbac.v1.Role(
        f"{name}-role",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=w.name, namespace=namespace, labels=w.sa_labels),
        rules=[
            rule(api_groups=[""], resources=["configmaps"], verbs=["create", "list", "watch"]),
            rule(
                api_groups=[""],
                resources=["configmaps"],
                resource_names=[w.status_config_map, PRIORITY_CONFIGMAP],
                verbs=["delete", "get", "update", "watch"],
            ),
        ],
        opts=opts,
    )
    subject = k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=w.name, namespace=namespace)
    k8s.rbac.v1.ClusterRoleBinding(
        f"{name}-clusterrolebinding",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=w.name, labels=w.sa_labels),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=w.name),
        subjects=[subject],
        opts=opts,
    )
    k8s.rbac.v1.RoleBinding(
        f"{name}-rolebinding",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=w.name, namespace=namespace, labels=w.sa_labels),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="Role", name=w.name),
        subjects=[subject],
        opts=opts,
    )


def _deployment(name: str, w: Workload, opts: pulumi.ResourceOptions) -> k8s.apps.v1.Deployment:
    mounts, volumes = [], []
    if w.host_ca_bundle:
        mounts = [
            k8s.core.v1.VolumeMountArgs(
                name="ssl-certs", mount_path="/etc/ssl/certs/ca-certificates.crt", read_only=True
            )
        ]
        volumes = [
            k8s.core.v1.VolumeArgs(
                name="ssl-certs", host_path=k8s.core.v1.HostPathVolumeSourceArgs(path=w.host_ca_bundle)
            )
        ]
    return k8s.apps.v1.Deployment(
        f"{name}-deployment",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=w.name, namespace=w.namespace, labels=w.app_labels),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            replicas=1,
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=w.app_labels),
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    labels=w.app_labels,
                    annotations={
                        "prometheus.io/scrape": "true",
                        "prometheus.io/port": str(METRICS_PORT),
                        # Never evict the autoscaler itself while scaling its node down.
                        "cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
                    },
                ),
                spec=k8s.core.v1.PodSpecArgs(
                    service_account_name=w.name,
                    priority_class_name="system-cluster-critical",
                    node_selector=w.node_selector or None,
                    tolerations=w.tolerations or None,
                    security_context=k8s.core.v1.PodSecurityContextArgs(
                        run_as_non_root=True,
                        run_as_user=RUN_AS_USER,
                        fs_group=RUN_AS_USER,
                        seccomp_profile=k8s.core.v1.SeccompProfileArgs(type="RuntimeDefault"),
                    ),
                    containers=[
                        k8s.core.v1.ContainerArgs(
                            name=w.name,
                            image=w.image,
                            image_pull_policy="IfNotPresent",
                            command=["./cluster-autoscaler", *w.flags],
                            env=[k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in sorted(w.env.items())] or None,
                            ports=[k8s.core.v1.ContainerPortArgs(name="metrics", container_port=METRICS_PORT)],
                            resources=k8s.core.v1.ResourceRequirementsArgs(limits=RESOURCES, requests=RESOURCES),
                            security_context=k8s.core.v1.SecurityContextArgs(
                                allow_privilege_escalation=False,
                                capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"]),
                                read_only_root_filesystem=True,
                            ),
                            volume_mounts=mounts or None,
                        )
                    ],
                    volumes=volumes or None,
                ),
            ),
        ),
        opts=opts,
    )
