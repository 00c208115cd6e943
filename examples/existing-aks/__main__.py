"""Elastic spot GPU pools (with an on-demand fallback) on an AKS cluster that already exists.

AKS runs the cluster autoscaler itself: ClusterAutoscaler only declares the priority ConfigMap
that ranks the spot pools above the fallback. The cluster's autoscaler profile must use the
`priority` expander; as this program does not own the cluster, the preview warns with the
`az aks update` command that sets it.
"""

import pulumi

from elastic_gpu import (
    AksCluster,
    ClusterAutoscaler,
    ClusterAutoscalerArgs,
    NvidiaDevicePlugin,
    NvidiaDevicePluginArgs,
    SpotGpuPool,
    SpotGpuPoolArgs,
)

config = pulumi.Config()
TAGS = {"project": "ml-platform", "cost-center": "research"}

cluster = AksCluster.existing(
    "prod",
    cluster_name=config.require("clusterName"),
    resource_group_name=config.require("resourceGroupName"),
    location=config.require("location"),  # the cluster's region
    zones=["1", "2"],
    kubernetes_version="1.35",
    tags=TAGS,
)
t4 = SpotGpuPool(
    "t4",
    SpotGpuPoolArgs(
        cluster=cluster, instance_types=["Standard_NC4as_T4_v3"], max_size=4, on_demand_fallback=True, tags=TAGS
    ),
)
NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=cluster.provider, gpu_pools=[t4]))
ClusterAutoscaler("autoscaler", ClusterAutoscalerArgs(cluster=cluster, gpu_pools=[t4]))

pulumi.export("gpuAgentPools", t4.node_group_names)
