"""`elastic_gpu.gke_cluster`: the GKE cluster handles, which live in `elastic_gpu.gcp.cluster` (a cloud is one folder,
elastic_gpu/clouds.py); this module keeps the documented import path."""

from elastic_gpu.gcp.cluster import (
    AUTOSCALING_PROFILE,
    DEFAULT_NETWORK,
    DEFAULT_RELEASE_CHANNEL,
    EXISTING_TYPE_TOKEN,
    TYPE_TOKEN,
    ExistingGkeCluster,
    GkeCluster,
    GkeClusterArgs,
    gke_cluster_problems,
)

__all__ = [
    "AUTOSCALING_PROFILE",
    "DEFAULT_NETWORK",
    "DEFAULT_RELEASE_CHANNEL",
    "EXISTING_TYPE_TOKEN",
    "TYPE_TOKEN",
    "ExistingGkeCluster",
    "GkeCluster",
    "GkeClusterArgs",
    "gke_cluster_problems",
]
