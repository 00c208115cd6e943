"""GCP: GKE clusters and node pools, GKE's managed autoscaler, Kueue (elastic_gpu/clouds.py, `Cloud`)."""

from elastic_gpu.clouds import Cloud

#: Its resource types the cloud-neutral core reads (offline reports, policy rules).
GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
#: The handle on a cluster this library did not create (`existing()`, `from_*`; its `cluster` module).
GKE_EXISTING_CLUSTER = "elastic-gpu:index:ExistingGkeCluster"
GKE_COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"

CLOUD = Cloud(
    name="gcp",
    service="GKE",
    owner="a GCP",
    handle_attributes=("project", "location"),
    existing_hint="GkeCluster.existing(...) or GkeCluster.from_cluster(...)",
    example_instance_type="e2-standard-4",
    instance_type_pattern=r"[a-z][a-z0-9]*-[a-z0-9-]+",
    # GKE's managed autoscaler scales the node pools; the Deployment we run drives it (gcp/autoscaler.py).
    pins_autoscaler_image=True,
    one_group_many_types=False,
    spot_fix="set nodeConfig.spot: true (preemptible is the legacy 24-hour kind)",
    prices_accelerators=True,
    # GKE runs its own cluster autoscaler (profile set by GkeCluster, limits per node pool).
    takes_autoscaler_settings=False,
    # The stack creates the cluster's VPC network and subnetwork unless `cluster.network` brings one.
    creates_network=True,
)
