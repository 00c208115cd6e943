"""GCP: GKE clusters and node pools, GKE's managed autoscaler, Kueue. Its provider is `GcpProvider`
(provider.py, the `CloudProvider` protocol of elastic_gpu/provider.py)."""

#: Its resource types the cloud-neutral core reads (offline reports, policy rules).
GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
#: The handle on a cluster this library did not create (`existing()`, `from_*`; its `cluster` module).
GKE_EXISTING_CLUSTER = "elastic-gpu:index:ExistingGkeCluster"
GKE_COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
