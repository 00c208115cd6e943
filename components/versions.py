"""Pinned images and the Kubernetes versions each cloud accepts: one table each."""

from __future__ import annotations

#: A Kubernetes minor as every cloud and the autoscaler table take it, e.g. "1.33".
KUBERNETES_MINOR_PATTERN = r"^1\.[0-9]+$"

#: The cluster-autoscaler's minor must match the cluster's Kubernetes minor; use the
#: latest patch of that minor. Tags from the kubernetes/autoscaler git tags
#: `cluster-autoscaler-<ver>` (see ../shared/reference/facts.md §3, read 2026-07).
CLUSTER_AUTOSCALER_IMAGE_REPO = "registry.k8s.io/autoscaling/cluster-autoscaler"
CLUSTER_AUTOSCALER_TAGS: dict[str, str] = {
    "1.30": "v1.30.7",
    "1.31": "v1.31.5",
    "1.32": "v1.32.7",
    "1.33": "v1.33.6",
    "1.34": "v1.34.5",
    "1.35": "v1.35.2",
}

#: NVIDIA's device plugin, as in its static manifest
#: (NVIDIA/k8s-device-plugin deployments/static/nvidia-device-plugin.yml, v0.20.0).
DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"

#: Kubernetes minors each managed service accepts for new clusters (standard or
#: extended support) that we also have an autoscaler tag for.
SUPPORTED_KUBERNETES_VERSIONS: dict[str, tuple[str, ...]] = {
    "aws": ("1.32", "1.33", "1.34", "1.35"),
    # GKE minors in the release channels (GKE release notes; min_master_version takes a minor).
    "gcp": ("1.32", "1.33", "1.34", "1.35"),
    # AKS: standard-support minors (learn.microsoft.com/azure/aks/supported-kubernetes-versions);
    # not re-checked online for late 2026, so the conservative 1.32-1.34.
    "azure": ("1.32", "1.33", "1.34"),
}

#: Kueue, which routes GPU Jobs to GKE queued provisioning (Dynamic Workload Scheduler): its Helm chart,
#: pinned to the newest release verified (checked 2026-11-23): charts/kueue 0.19.4 promoted to registry.k8s.io
#: on 2026-09-10 (kubernetes/k8s.io PR 9917). Its objects use kueue.x-k8s.io/v1beta2 (storage version since
#: 0.16; v1beta1 dropped in 0.17). From 0.13.x go through 0.15 and 0.16 (each release's upgrade notes).
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_VERSION = "0.19.4"
#: The port Kueue's webhook server listens on (its chart's webhook Service targets it).
KUEUE_WEBHOOK_PORT = 9443
#: The port Kueue's visibility API server listens on (apis/config/v1beta2/defaults.go DefaultVisibilityBindPort,
#: v0.19.2): on by default (feature VisibilityOnDemand, beta and default true since 0.9), and the chart
#: registers its APIService with the kube-apiserver, which must reach it like the webhook.
KUEUE_VISIBILITY_PORT = 8082


def cluster_autoscaler_image(kubernetes_version: str) -> str:
    """The autoscaler image whose minor matches ``kubernetes_version`` ("1.33" or "1.33.2")."""
    minor = ".".join(kubernetes_version.split(".")[:2])
    try:
        return f"{CLUSTER_AUTOSCALER_IMAGE_REPO}:{CLUSTER_AUTOSCALER_TAGS[minor]}"
    except KeyError:
        allowed = ", ".join(CLUSTER_AUTOSCALER_TAGS)
        raise ValueError(f"no cluster-autoscaler release pinned for Kubernetes {minor}; pinned: {allowed}") from None


#: EKS managed add-ons per Kubernetes minor: the latest version of the EKS add-on type for each minor, as
#: the EKS user guide's tables list them (managing-vpc-cni, managing-coredns, managing-kube-proxy; the
#: docs.amazonaws.cn copy that lists 1.35, read 2026-11-23). eks-pod-identity-agent has no per-minor table
#: (one agent serves every supported minor); its version is the newest seen in published EKS configs.
#: Check against `aws eks describe-addon-versions --addon-name <name> --kubernetes-version <minor>`.
EKS_ADDON_VERSIONS: dict[str, dict[str, str]] = {
    "1.32": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.32.13-eksbuild.5",
        "coredns": "v1.11.4-eksbuild.33",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.33": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.33.10-eksbuild.2",
        "coredns": "v1.13.2-eksbuild.4",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.34": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.34.6-eksbuild.2",
        "coredns": "v1.13.2-eksbuild.4",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.35": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.35.3-eksbuild.2",
        "coredns": "v1.13.2-eksbuild.4",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
}


def eks_addon_versions(kubernetes_version: str) -> dict[str, str]:
    """The EKS managed add-ons and their versions for ``kubernetes_version`` ("1.33" or "1.33.2")."""
    minor = ".".join(kubernetes_version.split(".")[:2])
    try:
        return dict(EKS_ADDON_VERSIONS[minor])
    except KeyError:
        allowed = ", ".join(EKS_ADDON_VERSIONS)
        raise ValueError(f"no EKS add-on versions pinned for Kubernetes {minor}; pinned: {allowed}") from None
