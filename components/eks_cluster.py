"""`elastic_gpu.eks_cluster`: the EKS cluster handles, which live in `elastic_gpu.aws.cluster` (a cloud is one folder,
components/clouds.py); this module keeps the documented import path."""

from elastic_gpu.aws.cluster import (
    DEFAULT_LOG_TYPES,
    EXISTING_TYPE_TOKEN,
    SHARED_NODE_ROLE_WARNING,
    TYPE_TOKEN,
    EksCluster,
    EksClusterArgs,
    ExistingEksCluster,
    eks_cluster_problems,
    known_region,
    subnet_ids_problems,
)

__all__ = [
    "DEFAULT_LOG_TYPES",
    "EXISTING_TYPE_TOKEN",
    "SHARED_NODE_ROLE_WARNING",
    "TYPE_TOKEN",
    "EksCluster",
    "EksClusterArgs",
    "ExistingEksCluster",
    "eks_cluster_problems",
    "known_region",
    "subnet_ids_problems",
]
