"""ClusterAutoscaler: the upstream cluster-autoscaler, ranking spot above on-demand."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
import yaml

from elastic_gpu.clouds import cloud_module
from elastic_gpu.config import (
    DEFAULT_EXPANDER,
    DEFAULT_MAX_NODE_PROVISION_TIME,
    DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD,
    DEFAULT_SCALE_DOWN_UNNEEDED,
)
from elastic_gpu.errors import ConfigError
from elastic_gpu.general_pool import GeneralPool
from elastic_gpu.pool_types import ClusterHandle, NodeGroupRef
from elastic_gpu.spot_gpu_pool import SpotGpuPool
from elastic_gpu.versions import cluster_autoscaler_image

TYPE_TOKEN = "elastic-gpu:index:ClusterAutoscaler"

DEFAULT_NAMESPACE = "kube-system"
#: The priority expander reads exactly this ConfigMap, in the autoscaler's namespace.
PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"
#: Priority-expander ranks: the highest that can fit the pending pods wins.
SPOT_PRIORITY = 50
ON_DEMAND_PRIORITY = 10
CATCH_ALL_PRIORITY = 1  # groups we did not create still get considered, last


@dataclass
class ClusterAutoscalerArgs:
    cluster: ClusterHandle
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
    """Priority-expander ranks: spot groups above on-demand ones, cheaper above dearer within each
    (a group's `rank`), unknown groups last. Groups of one priority are drawn at random ("one group
    ... is selected each time at random", priority expander readme), so only equals share one."""
    ranks: dict[int, list[str]] = {}
    for g in node_groups:
        base = SPOT_PRIORITY if g.capacity == "spot" else ON_DEMAND_PRIORITY
        ranks.setdefault(max(base - g.rank, CATCH_ALL_PRIORITY + 1), []).append(g.name_regex)
    ranks[CATCH_ALL_PRIORITY] = [".*"]
    return dict(sorted(ranks.items(), reverse=True))


def priority_expander_data(node_groups: list[NodeGroupRef]) -> dict[str, str]:
    return {"priorities": yaml.safe_dump(priorities(node_groups), sort_keys=False)}


class ClusterAutoscaler(pulumi.ComponentResource):
    """The cluster autoscaler, set up so spot GPU pools scale 0..max and fall back to on-demand.

    Per cloud (`components.<cloud>.autoscaler`). On EKS it runs the upstream
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

    def __init__(self, name: str, args: ClusterAutoscalerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        cloud = cloud_module(args.cluster.cloud, "autoscaler")
        # A cloud whose autoscaler is managed (GKE) runs no pod of ours and has no priority expander.
        if args.general_pool.args.spot and getattr(cloud, "RUNS_ON_GENERAL_POOL", True):
            raise ConfigError(
                [f"ClusterAutoscaler '{name}': general_pool must be on-demand; the autoscaler never runs on spot nodes"]
            )
        super().__init__(TYPE_TOKEN, name, None, opts)
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=args.provider)
        self.priority_config: k8s.core.v1.ConfigMap | None = None
        if "priority" in args.expander and getattr(cloud, "SUPPORTS_PRIORITY_EXPANDER", True):
            node_groups = [g for p in [args.general_pool, *args.gpu_pools] for g in p.node_groups]
            self.priority_config = k8s.core.v1.ConfigMap(
                f"{name}-priorities",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=PRIORITY_CONFIGMAP, namespace=args.namespace),
                data=priority_expander_data(node_groups),
                opts=k8s_opts,
            )
        built = cloud.build_autoscaler(name, args, self)
        self.image: str | None = built.get("image")
        self.role_arn: pulumi.Output[str] | None = built.get("role_arn")
        self.register_outputs({"image": self.image, "role_arn": self.role_arn})


def common_flags(args: ClusterAutoscalerArgs) -> list[str]:
    """Flags every self-run autoscaler gets from our settings."""
    return [
        "--v=4",
        "--stderrthreshold=info",
        "--skip-nodes-with-local-storage=false",
        f"--expander={','.join(args.expander)}",
        # Per-zone GPU groups must not be balanced against each other (seed 002).
        "--balance-similar-node-groups=false",
        f"--scale-down-unneeded-time={args.scale_down_unneeded_time}",
        f"--scale-down-delay-after-add={args.scale_down_delay_after_add}",
        f"--max-node-provision-time={args.max_node_provision_time}",
    ]


def autoscaler_image(name: str, kubernetes_version: str) -> str:
    try:
        return cluster_autoscaler_image(kubernetes_version)
    except ValueError as exc:
        raise ConfigError([f"ClusterAutoscaler '{name}': {exc}"]) from None
