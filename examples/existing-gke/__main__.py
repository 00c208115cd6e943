"""Elastic spot GPU pools (with an on-demand fallback) on a GKE Standard cluster that already exists.

GKE runs the autoscaler and the NVIDIA device plugin itself: the pools are node pools with
autoscaling limits, and a ComputeClass ranks the spot pool above the on-demand fallback.
"""

import pulumi

from elastic_gpu import GkeCluster, SpotGpuPool, SpotGpuPoolArgs

config = pulumi.Config()
TAGS = {"project": "ml-platform", "cost-center": "research"}

cluster = GkeCluster.existing(
    "ml",
    cluster_name=config.require("clusterName"),
    project=pulumi.Config("gcp").require("project"),
    location=config.require("location"),
    zones=["us-central1-a", "us-central1-b"],
    kubernetes_version="1.35",
    tags=TAGS,
    private_nodes=True,  # GPU nodes need no public IP:
    cloud_nat=True,  # the VPC has a Cloud NAT for the nodes' subnetwork (nvcr.io, Docker Hub, ... are reachable)
)
l4 = SpotGpuPool(
    "l4",
    SpotGpuPoolArgs(cluster=cluster, instance_types=["g2-standard-4"], max_size=4, on_demand_fallback=True, tags=TAGS),
)

pulumi.export("gpuNodePools", l4.node_group_names)
