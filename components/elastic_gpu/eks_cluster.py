"""`elastic_gpu.eks_cluster`: the EKS cluster handles, which live in `elastic_gpu.aws.cluster` (a cloud is one folder,
elastic_gpu/clouds.py); this module keeps the documented import path."""

from elastic_gpu.aws.cluster import (
    DEFAULT_LOG_TYPES,
    EXISTING_TYPE_TOKEN,
    NODE_ROLE_HINT,
    SHARED_NODE_ROLE_RISK,
    TYPE_TOKEN,
    UNKNOWN_VERSION_WARNING,
    EksCluster,
    EksClusterArgs,
    ExistingEksCluster,
    eks_cluster_problems,
    known_region,
    subnet_ids_problems,
    warn_if_shared_role,
    when_unknown,
)

__all__ = [
    "DEFAULT_LOG_TYPES",
    "EXISTING_TYPE_TOKEN",
    "NODE_ROLE_HINT",
    "SHARED_NODE_ROLE_RISK",
    "TYPE_TOKEN",
    "UNKNOWN_VERSION_WARNING",
    "EksCluster",
    "EksClusterArgs",
    "ExistingEksCluster",
    "eks_cluster_problems",
    "known_region",
    "subnet_ids_problems",
    "warn_if_shared_role",
    "when_unknown",
]
