"""Kueue with the Dynamic Workload Scheduler objects: GPU Jobs queue for flex-start capacity.

Objects as in GoogleCloudPlatform/ai-on-gke dws-examples/dws-queues.yaml (commit
b9c1472a; ../shared/reference/facts.json gke.kueue_dws), all kueue.x-k8s.io/v1beta1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from elastic_gpu.scheduling import GPU_RESOURCE
from elastic_gpu.versions import KUEUE_CHART, KUEUE_VERSION

TYPE_TOKEN = "elastic-gpu:index:KueueDws"

KUEUE_API = "kueue.x-k8s.io/v1beta1"
DEFAULT_NAMESPACE = "kueue-system"
#: GKE's ProvisioningRequest class for queued provisioning.
PROVISIONING_CLASS = "queued-provisioning.gke.io"
#: Kueue's built-in admission-check controller for ProvisioningRequests.
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
#: Resources the ClusterQueue covers; quotas are "infinite" because DWS is the real limit.
COVERED_RESOURCES = ("cpu", "memory", GPU_RESOURCE, "ephemeral-storage")
UNLIMITED_QUOTA = 1_000_000_000  # as in the ai-on-gke example

# Object names (public: Jobs name the LocalQueue in the label kueue.x-k8s.io/queue-name).
FLAVOR = "default-flavor"
PROVISIONING_CONFIG = "dws-config"
ADMISSION_CHECK = "dws-prov"
CLUSTER_QUEUE = "dws-cluster-queue"
LOCAL_QUEUE = "dws-local-queue"
#: The Job label that names its LocalQueue (Kueue docs, "Run a Kubernetes Job").
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"


@dataclass
class KueueDwsArgs:
    provider: k8s.Provider
    """The cluster's Kubernetes provider."""
    namespace: str = DEFAULT_NAMESPACE
    """Default kueue-system: where the Kueue controller runs."""
    queue_namespaces: list[str] = field(default_factory=lambda: ["default"])
    """Default ["default"]: namespaces that get a LocalQueue named dws-local-queue."""
    chart_version: str = KUEUE_VERSION
    """Default: the pinned Kueue release in components/versions.py."""
    nodes: list[pulumi.Resource] = field(default_factory=list)
    """Node groups the Kueue controller runs on (the general pool's): the release waits for them."""


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
        self.release = k8s.helm.v3.Release(
            f"{name}-kueue",
            name="kueue",
            chart=KUEUE_CHART,
            version=args.chart_version,
            namespace=args.namespace,
            create_namespace=True,
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=args.nodes),
        )
        after = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=[self.release])

        def cr(suffix: str, kind: str, obj_name: str, spec: dict[str, object], namespace: str | None = None):
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
                                "resources": [{"name": r, "nominalQuota": UNLIMITED_QUOTA} for r in COVERED_RESOURCES],
                            }
                        ],
                    }
                ],
                "admissionChecks": [ADMISSION_CHECK],
            },
        )
        for ns in args.queue_namespaces:
            cr(f"local-queue-{ns}", "LocalQueue", LOCAL_QUEUE, {"clusterQueue": CLUSTER_QUEUE}, namespace=ns)
        self.local_queue = LOCAL_QUEUE
        self.register_outputs({"local_queue": LOCAL_QUEUE, "chart_version": args.chart_version})
