"""elastic-gpu: Pulumi components for spot GPU pools that scale from zero.

    from components import EksCluster, GeneralPool, SpotGpuPool, NvidiaDevicePlugin, ClusterAutoscaler
    (or AksCluster / GkeCluster in place of EksCluster)

Cloud SDKs are imported lazily, so importing this package does not load them all.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from components.errors import ConfigError
from components.scheduling import GPU_TAINT, Taint

_LAZY = {
    "EksCluster": "components.eks_cluster",
    "EksClusterArgs": "components.eks_cluster",
    "AksCluster": "components.aks_cluster",
    "AksClusterArgs": "components.aks_cluster",
    "GkeCluster": "components.gke_cluster",
    "GkeClusterArgs": "components.gke_cluster",
    "GeneralPool": "components.general_pool",
    "GeneralPoolArgs": "components.general_pool",
    "SpotGpuPool": "components.spot_gpu_pool",
    "SpotGpuPoolArgs": "components.spot_gpu_pool",
    "NvidiaDevicePlugin": "components.nvidia_device_plugin",
    "NvidiaDevicePluginArgs": "components.nvidia_device_plugin",
    "ClusterAutoscaler": "components.cluster_autoscaler",
    "ClusterAutoscalerArgs": "components.cluster_autoscaler",
    "StackConfig": "components.config",
    "load_stack_config": "components.config",
}

__all__ = ["GPU_TAINT", "ConfigError", "Taint", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'components' has no attribute {name!r}")
