"""Azure: AKS clusters and agent pools; AKS runs its own cluster-autoscaler. Its provider is `AzureProvider`
(provider.py, the `CloudProvider` protocol of elastic_gpu/provider.py)."""

#: Its resource types the cloud-neutral core reads (offline reports, policy rules).
AKS_MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
AKS_AGENT_POOL = "azure-native:containerservice:AgentPool"
#: The handle on a cluster this library did not create (`existing()`, `from_*`; its `cluster` module).
AKS_EXISTING_CLUSTER = "elastic-gpu:index:ExistingAksCluster"
#: AKS's managed autoscaler's default expander (ManagedClusterAutoScalerProfile.expander: "If not
#: specified, the default is 'random'"), not upstream's least-waste.
AKS_DEFAULT_EXPANDER = "random"
