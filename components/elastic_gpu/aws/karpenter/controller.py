"""Karpenter: the controller that provisions the GPU pools' nodes on EKS (instead of node groups)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field

from elastic_gpu.args_doc import documented, documented_component
from elastic_gpu.autoscaler_workload import general_pool_selector
from elastic_gpu.aws.karpenter.iam import build_controller_role, build_node_role
from elastic_gpu.aws.karpenter.interruption import build_interruption_queue
from elastic_gpu.aws.karpenter.nodes import KarpenterNodes
from elastic_gpu.aws.karpenter.release import (
    CHART,
    CRD_CHART,
    CRD_RELEASE_NAME,
    DISCOVERY_TAG_KEY,
    KARPENTER_VERSION,
    NAMESPACE,
    RELEASE_NAME,
)
from elastic_gpu.aws.karpenter.spot_role import build_spot_role
from elastic_gpu.cluster_handle import EksClusterHandle
from elastic_gpu.general_pool import GeneralPool
from elastic_gpu.settings.aws import KarpenterOptions
from elastic_gpu.settings.base import ArgsModel

TYPE_TOKEN = "elastic-gpu:index:Karpenter"
#: How long a GPU node stays empty before Karpenter removes it, when not given (the autoscaler's default
#: scale-down-unneeded-time, so both provisioners keep an idle GPU node equally long).
DEFAULT_CONSOLIDATE_AFTER = "10m"
#: The controller's requests and limits (getting-started step08-apply-helm-chart.sh: cpu 1, memory 1Gi).
CONTROLLER_RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}


def discovery_terms(cluster_name: pulumi.Input[str]) -> list[dict[str, Any]]:
    """Selector terms for what carries `karpenter.sh/discovery: <cluster>`."""
    return [{"tags": {DISCOVERY_TAG_KEY: cluster_name}}]


@documented
class KarpenterArgs(ArgsModel, KarpenterOptions):
    """Karpenter's settings (elastic_gpu.settings.aws.KarpenterOptions, a stack file's `cluster`) and what only a
    program gives; keyword arguments."""

    model_config = ArgsModel.model_config

    cluster: EksClusterHandle
    """The EKS cluster (handle) Karpenter provisions nodes for."""
    general_pool: GeneralPool
    """The pool the controller runs on (its on-demand nodes; never on nodes Karpenter made)."""
    consolidate_after: str = DEFAULT_CONSOLIDATE_AFTER
    """How long a GPU node is empty before Karpenter removes it (NodePool disruption.consolidateAfter); a stack
    file's `autoscaler.scaleDownUnneededTime`."""
    subnet_selector_terms: list[dict[str, Any]] | None = None
    """EC2NodeClass subnetSelectorTerms; default: subnets tagged `karpenter.sh/discovery: <cluster>` (an
    EksCluster with `karpenter_discovery=True` tags its private subnets; tag an existing cluster's)."""
    security_group_selector_terms: list[dict[str, Any]] | None = None
    """EC2NodeClass securityGroupSelectorTerms; default: security groups tagged `karpenter.sh/discovery:
    <cluster>` (an EksCluster with `karpenter_discovery=True` tags its cluster security group)."""
    version: str = KARPENTER_VERSION
    """The Karpenter chart version."""
    tags: dict[str, str] = Field(default_factory=dict)
    """Tags on the IAM roles, policies, queue and rules."""


@documented_component(KarpenterArgs)
class Karpenter(pulumi.ComponentResource):
    """Karpenter's controller and what it needs in AWS, for GPU pools declared with `provisioner=` it.

    Creates: the node role (EKS worker, CNI, ECR pull, SSM) with an EC2_LINUX access entry; the
    interruption queue (SQS, SSE, 300 s retention) and the EventBridge rules feeding it; the controller's
    IRSA role with upstream's policy scoped to this cluster; the CRDs as upstream's `karpenter-crd` chart
    (`crd_release`), so a version bump upgrades them; and the controller's chart at the same version with
    its own CRDs skipped, pinned to the general pool's on-demand nodes. Each SpotGpuPool then declares its
    EC2NodeClass and NodePools (`nodes`).
    """

    nodes: KarpenterNodes
    """What the pools' EC2NodeClass and NodePools use (node role, selectors, provider, readiness)."""
    crd_release: k8s.helm.v3.Release
    """The Helm release of Karpenter's CRDs (`karpenter-crd`, the controller's version)."""
    release: k8s.helm.v3.Release
    """The Helm release of the controller (CRDs skipped: `crd_release` owns them)."""

    def __init__(self, name: str, args: KarpenterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, {"version": args.version}, opts)
        cluster = args.cluster
        tags = {**cluster.tags, **args.tags}
        self.node_role, node_ready = build_node_role(name, cluster, parent=self)
        #: the Spot service-linked role, when this stack declares it (None: the account's own is used)
        self.spot_role = build_spot_role(name, args.spot_service_linked_role, tags, parent=self)
        self.interruption = build_interruption_queue(name, cluster.cluster_name, tags, parent=self)
        self.controller_role, controller_ready = build_controller_role(
            name, cluster, self.node_role.arn, self.interruption.queue.arn, parent=self
        )
        values = {
            "settings": {"clusterName": cluster.cluster_name, "interruptionQueue": self.interruption.queue.name},
            "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": self.controller_role.arn}},
            # The chart's own selector plus the general pool's on-demand nodes (upstream: run the controller
            # on nodes Karpenter does not manage; its affinity already excludes karpenter.sh/nodepool nodes).
            "nodeSelector": {"kubernetes.io/os": "linux", **general_pool_selector(args.general_pool.pool_name)},
            "controller": {"resources": CONTROLLER_RESOURCES},
        }
        # Helm applies a chart's crds/ on the first install only; the CRD chart is upgraded with the version.
        self.crd_release = k8s.helm.v3.Release(
            f"{name}-crd-release",
            name=CRD_RELEASE_NAME,
            chart=CRD_CHART,
            version=args.version,
            namespace=NAMESPACE,
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider),
        )
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name=RELEASE_NAME,
            chart=CHART,
            version=args.version,
            namespace=NAMESPACE,
            skip_crds=True,
            values=values,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=cluster.provider,
                depends_on=[
                    self.crd_release,
                    *node_ready,
                    *controller_ready,
                    *self.interruption.resources,
                    *args.general_pool.nodes,
                ],
            ),
        )
        self.nodes = KarpenterNodes(
            node_role_name=self.node_role.name,
            subnet_selector_terms=args.subnet_selector_terms or discovery_terms(cluster.cluster_name),
            security_group_selector_terms=args.security_group_selector_terms or discovery_terms(cluster.cluster_name),
            consolidate_after=args.consolidate_after,
            provider=cluster.provider,
            ready=[self.crd_release, self.release, *node_ready, *([self.spot_role] if self.spot_role else [])],
            tags=tags,
        )
        self.register_outputs(
            {
                "node_role_arn": self.node_role.arn,
                "controller_role_arn": self.controller_role.arn,
                "interruption_queue": self.interruption.queue.name,
            }
        )
