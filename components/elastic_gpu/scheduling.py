"""Taints and labels: the single source for every component, policy and doc.

Pools put these on their nodes; the device plugin derives its tolerations and
node selector from them; the autoscaler's node-template tags repeat them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


@dataclass(frozen=True, order=True)
class Taint:
    """A Kubernetes node taint in Kubernetes' own spelling."""

    key: str
    value: str
    effect: TaintEffect = "NoSchedule"

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}"


#: The extended resource the NVIDIA device plugin advertises.
GPU_RESOURCE = "nvidia.com/gpu"
#: The node's scratch space (emptyDir, logs, image layers): what the pool's disk gives.
EPHEMERAL_STORAGE = "ephemeral-storage"

#: Keeps CPU pods off GPU nodes (eksctl and the NVIDIA manifest tolerate this key).
GPU_TAINT = Taint(key=GPU_RESOURCE, value="true", effect="NoSchedule")

#: Our GPU-node label; the device plugin's node selector (also one of the NVIDIA
#: Helm chart's default affinity labels, so a chart-installed plugin matches too).
GPU_NODE_LABEL = "nvidia.com/gpu.present"
GPU_NODE_LABEL_VALUE = "true"

#: Labels elastic-gpu puts on every node it manages.
LABEL_PREFIX = "elastic-gpu.io"
NODE_CLASS_LABEL = f"{LABEL_PREFIX}/node-class"  # "general" | "gpu"
POOL_LABEL = f"{LABEL_PREFIX}/pool"
CAPACITY_LABEL = f"{LABEL_PREFIX}/capacity"  # "reserved" | "spot" | "on-demand"

NODE_CLASS_GENERAL = "general"
NODE_CLASS_GPU = "gpu"
CAPACITY_SPOT = "spot"
CAPACITY_ON_DEMAND = "on-demand"
#: Nodes of a reservation the team holds (an Azure capacity reservation group, ...): the reserved tier.
CAPACITY_RESERVED = "reserved"

#: AWS: with this label the cluster-autoscaler treats a node as a GPU node and
#: waits for the GPU to be advertised instead of scaling up twice (CA >= 1.15).
AWS_ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"

#: Azure: AKS puts this taint and label on every spot node itself.
AKS_SPOT_TAINT = Taint(key="kubernetes.azure.com/scalesetpriority", value="spot", effect="NoSchedule")
AKS_SPOT_LABEL = "kubernetes.azure.com/scalesetpriority"

#: GCP: GKE taints GPU nodes with nvidia.com/gpu (value "present" by convention).
GKE_GPU_TAINT = Taint(key=GPU_RESOURCE, value="present", effect="NoSchedule")
#: GCP: GKE taints the nodes of a queued-provisioning node pool itself (GoogleCloudPlatform/cluster-toolkit
#: modules/compute/gke-node-pool/main.tf: "GKE automatically applies the taint"; its Job samples tolerate
#: cloud.google.com/gke-queued=true:NoSchedule). The pool does not declare it; its workload tolerates it.
GKE_QUEUED_TAINT = Taint(key="cloud.google.com/gke-queued", value="true", effect="NoSchedule")

#: GCP: a manually created node pool serves a GKE ComputeClass when it carries this
#: label and a NoSchedule taint with the same key and the class name as value.
GKE_COMPUTE_CLASS_KEY = "cloud.google.com/compute-class"


def gke_compute_class_taint(compute_class: str) -> Taint:
    return Taint(key=GKE_COMPUTE_CLASS_KEY, value=compute_class, effect="NoSchedule")


#: EKS and GKE spell taint effects as an API enum (botocore eks service-2.json; GKE
#: NodeTaint.Effect); Azure and Kubernetes use the Kubernetes spelling.
API_TAINT_EFFECT: dict[str, str] = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}
KUBERNETES_TAINT_EFFECT: dict[str, str] = {v: k for k, v in API_TAINT_EFFECT.items()}


def split_total(total: int, parts: int) -> list[int]:
    """Split a pool-wide size over zones: 5 over 3 zones is [2, 2, 1]."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def node_labels(*, pool: str, node_class: str, spot: bool) -> dict[str, str]:
    """The labels elastic-gpu puts on every node of a pool."""
    labels = {
        NODE_CLASS_LABEL: node_class,
        POOL_LABEL: pool,
        CAPACITY_LABEL: CAPACITY_SPOT if spot else CAPACITY_ON_DEMAND,
    }
    if node_class == NODE_CLASS_GPU:
        labels[GPU_NODE_LABEL] = GPU_NODE_LABEL_VALUE
    return labels


def tolerations_for(taints: list[Taint]) -> list[dict[str, str]]:
    """Tolerations that match each distinct taint by key and effect (operator Exists)."""
    seen: dict[tuple[str, str], None] = {}
    for t in sorted(taints):
        seen.setdefault((t.key, t.effect), None)
    return [{"key": k, "operator": "Exists", "effect": e} for k, e in seen]
