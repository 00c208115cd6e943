"""elastic-gpu: Pulumi components for spot GPU pools that scale from zero.

    from elastic_gpu import EksCluster, GeneralPool, SpotGpuPool, NvidiaDevicePlugin, ClusterAutoscaler
    (or AksCluster / GkeCluster in place of EksCluster)

Cloud SDKs are imported lazily, so importing this package does not load them all, at run time or in a
type checker: the cloud-neutral names are typed here, while a cluster class is typed where it is defined
(`from elastic_gpu.eks_cluster import EksCluster, EksClusterArgs`; `aks_cluster`, `gke_cluster`,
`eks_addons`: re-exports of the cloud folders' `elastic_gpu.aws.cluster`, `elastic_gpu.azure.cluster`,
`elastic_gpu.gcp.cluster`, `elastic_gpu.aws.addons`). Imported from here, a cluster class works the same
but is `Any` to mypy and pyright, because typing it here would make them read every cloud's SDK
(pulumi_aws, pulumi_azure_native, pulumi_gcp) for any program, whichever cloud it uses: a cold mypy of
2 minutes and 7 GB with every extra installed.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from elastic_gpu._version import __version__
from elastic_gpu.errors import ConfigError
from elastic_gpu.scheduling import GPU_TAINT, Taint

if TYPE_CHECKING:  # real types for mypy/pyright; at run time the modules load on first use
    # Cloud-neutral modules only: none of them imports a cloud SDK (tests/test_packaging.py checks it).
    from elastic_gpu.cluster_autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
    from elastic_gpu.cluster_handle import AksClusterHandle, ClusterHandle, EksClusterHandle, GkeClusterHandle
    from elastic_gpu.config import StackConfig, load_stack_config
    from elastic_gpu.general_pool import GeneralPool, GeneralPoolArgs
    from elastic_gpu.gpu_catalog import GpuSpec
    from elastic_gpu.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
    from elastic_gpu.spot_gpu_pool import SpotGpuPool, SpotGpuPoolArgs

_LAZY = {
    "ClusterHandle": "elastic_gpu.cluster_handle",
    "EksClusterHandle": "elastic_gpu.cluster_handle",
    "AksClusterHandle": "elastic_gpu.cluster_handle",
    "GkeClusterHandle": "elastic_gpu.cluster_handle",
    "ExistingEksCluster": "elastic_gpu.aws.cluster",
    "ExistingAksCluster": "elastic_gpu.azure.cluster",
    "ExistingGkeCluster": "elastic_gpu.gcp.cluster",
    "EksCluster": "elastic_gpu.aws.cluster",
    "EksAddons": "elastic_gpu.aws.addons",
    "EksAddonsArgs": "elastic_gpu.aws.addons",
    "EksClusterArgs": "elastic_gpu.aws.cluster",
    "AksCluster": "elastic_gpu.azure.cluster",
    "AksClusterArgs": "elastic_gpu.azure.cluster",
    "GkeCluster": "elastic_gpu.gcp.cluster",
    "GkeClusterArgs": "elastic_gpu.gcp.cluster",
    "GeneralPool": "elastic_gpu.general_pool",
    "GeneralPoolArgs": "elastic_gpu.general_pool",
    "GpuSpec": "elastic_gpu.gpu_catalog",
    "SpotGpuPool": "elastic_gpu.spot_gpu_pool",
    "SpotGpuPoolArgs": "elastic_gpu.spot_gpu_pool",
    "NvidiaDevicePlugin": "elastic_gpu.nvidia_device_plugin",
    "NvidiaDevicePluginArgs": "elastic_gpu.nvidia_device_plugin",
    "ClusterAutoscaler": "elastic_gpu.cluster_autoscaler",
    "ClusterAutoscalerArgs": "elastic_gpu.cluster_autoscaler",
    "StackConfig": "elastic_gpu.config",
    "load_stack_config": "elastic_gpu.config",
}

__all__ = [
    "GPU_TAINT",
    "AksCluster",
    "AksClusterArgs",
    "AksClusterHandle",
    "ClusterAutoscaler",
    "ClusterAutoscalerArgs",
    "ClusterHandle",
    "ConfigError",
    "EksAddons",
    "EksAddonsArgs",
    "EksCluster",
    "EksClusterArgs",
    "EksClusterHandle",
    "ExistingAksCluster",
    "ExistingEksCluster",
    "ExistingGkeCluster",
    "GeneralPool",
    "GeneralPoolArgs",
    "GkeCluster",
    "GkeClusterArgs",
    "GkeClusterHandle",
    "GpuSpec",
    "NvidiaDevicePlugin",
    "NvidiaDevicePluginArgs",
    "SpotGpuPool",
    "SpotGpuPoolArgs",
    "StackConfig",
    "Taint",
    "__version__",
    "load_stack_config",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        try:
            module = import_module(_LAZY[name])
        except ModuleNotFoundError as exc:
            from elastic_gpu.clouds import missing_extra

            if (error := missing_extra(exc, f"elastic_gpu.{name}")) is not None:
                raise error from None
            raise
        return getattr(module, name)
    raise AttributeError(f"module 'elastic_gpu' has no attribute {name!r}")
