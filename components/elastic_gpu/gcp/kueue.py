"""Kueue with the Dynamic Workload Scheduler objects: GPU Jobs queue for flex-start capacity.

Objects as in GoogleCloudPlatform/ai-on-gke dws-examples/dws-queues.yaml (commit
b9c1472a; ../shared/reference/facts.json gke.kueue_dws), in Kueue's v1beta2 API (kubernetes-sigs/kueue
apis/kueue/v1beta2: a ClusterQueue names its checks in admissionChecksStrategy.admissionChecks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
from pydantic import Field, InstanceOf

from elastic_gpu.args_doc import documented
from elastic_gpu.gcp.kueue_api import KUEUE_API, PROVISIONING_CLASS, PROVISIONING_CONTROLLER
from elastic_gpu.gcp.versions import KUEUE_CHART, KUEUE_VERSION, KUEUE_VISIBILITY_PORT, KUEUE_WEBHOOK_PORT
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.scheduling import EPHEMERAL_STORAGE, GPU_RESOURCE
from elastic_gpu.settings import KueueSettings
from elastic_gpu.settings.base import ArgsModel

if TYPE_CHECKING:
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

TYPE_TOKEN = "elastic-gpu:index:KueueDws"

#: Namespaces that exist in every cluster (never created by us).
BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
DEFAULT_NAMESPACE = "kueue-system"
#: Resources the ClusterQueue covers (as in the ai-on-gke example); a Job requesting another one is
#: never admitted ("resource ... unavailable in ClusterQueue", kueue pkg/scheduler/flavorassigner).
COVERED_RESOURCES = ("cpu", "memory", GPU_RESOURCE, EPHEMERAL_STORAGE)

# Object names (public: Jobs name the LocalQueue in the label kueue.x-k8s.io/queue-name).
FLAVOR = "default-flavor"
PROVISIONING_CONFIG = "dws-config"
ADMISSION_CHECK = "dws-prov"
CLUSTER_QUEUE = "dws-cluster-queue"
LOCAL_QUEUE = "dws-local-queue"


def cluster_queue_quota(pools: Sequence[SpotGpuPoolArgs]) -> dict[str, str]:
    """The ClusterQueue's nominal quota per covered resource, as Kubernetes quantities: every node the
    queued-provisioning pools can have at their max size (machine vCPUs and memory from the GPU
    catalog, GPUs as the device plugin advertises them, the boot disk). DWS and the pools' max size
    are the real limit; the quota only has to admit what they can hold, so every Job a node can run
    fits. (A bare number is a count of bytes for memory: ai-on-gke's 1000000000 is under 1 GiB.)"""
    cpu = memory_gib = gpus = disk_gib = 0
    for p in pools:
        row = gpu_instance_type("gcp", p.instance_types[0], p.gpu_spec)
        assert row is not None, "validated before use"
        cpu += p.max_size * row.vcpus
        memory_gib += p.max_size * row.memory_gib
        gpus += p.max_size * p.advertised_gpus_per_node
        disk_gib += p.max_size * p.disk_size_gib
    return {"cpu": str(cpu), "memory": f"{memory_gib}Gi", GPU_RESOURCE: str(gpus), EPHEMERAL_STORAGE: f"{disk_gib}Gi"}


@dataclass
class WebhookFirewall:
    """A private GKE cluster's control plane may reach nodes on 443 and 10250 only (GKE's own firewall
    rules); the kube-apiserver calls Kueue's webhook (9443) and, through the APIService the chart
    registers, its visibility server (8082), so both would time out without this rule."""

    project: pulumi.Input[str]
    network: pulumi.Input[str]
    control_plane_cidr: pulumi.Input[str]
    target_tags: list[pulumi.Input[str]]
    """The network tags of the cluster's nodes (gcp.pools.node_network_tag): the rule opens these
    ports on them only, not on every VM in the network."""


@documented
class KueueDwsArgs(ArgsModel, KueueSettings):
    """Kueue's settings (elastic_gpu.settings.KueueSettings, a stack file's `kueue`) and what only a program gives;
    keyword arguments."""

    model_config = ArgsModel.model_config

    provider: k8s.Provider
    """The cluster's Kubernetes provider."""
    quota: dict[str, str]
    """The ClusterQueue's nominal quota per covered resource (Kubernetes quantities): see
    `cluster_queue_quota`, which sizes it from the queued-provisioning pools."""
    namespace: str = DEFAULT_NAMESPACE
    """Default kueue-system: where the Kueue controller runs."""
    # InstanceOf: a plain dataclass of Pulumi inputs, checked by its type alone (pydantic cannot build a schema of
    # pulumi.Input's forward references).
    webhook_firewall: InstanceOf[WebhookFirewall] | None = None
    """For a private GKE cluster: let the control plane reach Kueue's webhook (default None: public nodes)."""
    chart_version: str = KUEUE_VERSION
    """Default: the pinned Kueue release in elastic_gpu/versions.py."""
    nodes: list[pulumi.Resource] = Field(default_factory=list)
    """Node groups the Kueue controller runs on (the general pool's): the release waits for them."""
    node_selector: dict[str, str] = Field(default_factory=dict)
    """The labels of the nodes the Kueue controller runs on (the chart's controllerManager.nodeSelector;
    the stack gives the general pool's). Default {}: anywhere. Under node auto-provisioning a Kueue pod
    that fits no node would otherwise make GKE create a node pool for it."""


class KueueDws(pulumi.ComponentResource):
    """Kueue (Helm chart, pinned) and the queue that sends GPU Jobs through DWS.

    Creates the Kueue release, then a ProvisioningRequestConfig (class
    queued-provisioning.gke.io, managing nvidia.com/gpu), an AdmissionCheck using
    it, a ResourceFlavor, a ClusterQueue gated by that check, and a LocalQueue per
    namespace. A Job labelled `kueue.x-k8s.io/queue-name: dws-local-queue` with a
    node selector on a queued-provisioning pool waits until GKE provisions it.
    """

    def __init__(self, name: str, args: KueueDwsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        before_release: list[pulumi.Resource] = list(args.nodes)
        if args.webhook_firewall is not None:
            fw = args.webhook_firewall
            before_release.append(
                gcp.compute.Firewall(
                    f"{name}-webhook",
                    project=fw.project,
                    network=fw.network,
                    description="GKE control plane to Kueue's webhook and visibility API (private cluster)",
                    direction="INGRESS",
                    # Only the control plane's range may call in, and only the cluster's nodes (wherever
                    # Kueue's pod lands), as GKE's own control-plane rules do.
                    source_ranges=[fw.control_plane_cidr],
                    target_tags=fw.target_tags,
                    allows=[
                        gcp.compute.FirewallAllowArgs(
                            protocol="tcp", ports=[str(KUEUE_WEBHOOK_PORT), str(KUEUE_VISIBILITY_PORT)]
                        )
                    ],
                    opts=pulumi.ResourceOptions(parent=self),
                )
            )
        self.release = k8s.helm.v3.Release(
            f"{name}-kueue",
            name="kueue",
            chart=KUEUE_CHART,
            version=args.chart_version,
            namespace=args.namespace,
            create_namespace=True,
            values={"controllerManager": {"nodeSelector": dict(args.node_selector)}} if args.node_selector else None,
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=before_release),
        )
        after = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=[self.release])

        def cr(
            suffix: str, kind: str, obj_name: str, spec: dict[str, object], namespace: str | None = None
        ) -> k8s.apiextensions.CustomResource:
            return k8s.apiextensions.CustomResource(
                f"{name}-{suffix}",
                api_version=KUEUE_API,
                kind=kind,
                metadata=k8s.meta.v1.ObjectMetaArgs(name=obj_name, namespace=namespace),
                spec=spec,
                opts=after,
            )

        cr("flavor", "ResourceFlavor", FLAVOR, {})
        cr(
            "prov-config",
            "ProvisioningRequestConfig",
            PROVISIONING_CONFIG,
            {"provisioningClassName": PROVISIONING_CLASS, "managedResources": [GPU_RESOURCE]},
        )
        cr(
            "admission-check",
            "AdmissionCheck",
            ADMISSION_CHECK,
            {
                "controllerName": PROVISIONING_CONTROLLER,
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "ProvisioningRequestConfig",
                    "name": PROVISIONING_CONFIG,
                },
            },
        )
        cr(
            "cluster-queue",
            "ClusterQueue",
            CLUSTER_QUEUE,
            {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": list(COVERED_RESOURCES),
                        "flavors": [
                            {
                                "name": FLAVOR,
                                "resources": [{"name": r, "nominalQuota": args.quota[r]} for r in COVERED_RESOURCES],
                            }
                        ],
                    }
                ],
                "admissionChecksStrategy": {"admissionChecks": [{"name": ADMISSION_CHECK}]},
            },
        )
        for ns in args.queue_namespaces:
            after_ns = after
            if ns not in BUILTIN_NAMESPACES:
                namespace = k8s.core.v1.Namespace(
                    f"{name}-ns-{ns}",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=ns),
                    opts=pulumi.ResourceOptions(parent=self, provider=args.provider),
                )
                after_ns = pulumi.ResourceOptions.merge(after, pulumi.ResourceOptions(depends_on=[namespace]))
            k8s.apiextensions.CustomResource(
                f"{name}-local-queue-{ns}",
                api_version=KUEUE_API,
                kind="LocalQueue",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=LOCAL_QUEUE, namespace=ns),
                spec={"clusterQueue": CLUSTER_QUEUE},
                opts=after_ns,
            )
        self.local_queue = LOCAL_QUEUE
        self.register_outputs({"local_queue": LOCAL_QUEUE, "chart_version": args.chart_version})
