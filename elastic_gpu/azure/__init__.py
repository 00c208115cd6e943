"""Azure: AKS clusters and agent pools; AKS runs its own cluster-autoscaler (elastic_gpu/clouds.py, `Cloud`)."""

from elastic_gpu.clouds import Cloud

#: Its resource types the cloud-neutral core reads (offline reports, policy rules).
AKS_MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
AKS_AGENT_POOL = "azure-native:containerservice:AgentPool"
#: The handle on a cluster this library did not create (`existing()`, `from_*`; its `cluster` module).
AKS_EXISTING_CLUSTER = "elastic-gpu:index:ExistingAksCluster"

CLOUD = Cloud(
    name="azure",
    service="AKS",
    owner="an Azure",
    handle_attributes=("resource_group_name", "location", "autoscaler_profile"),
    existing_hint="AksCluster.existing(...) or AksCluster.from_managed_cluster(...)",
    example_instance_type="Standard_D4s_v5",
    instance_type_pattern=r"Standard_[A-Za-z0-9_]+",
    pins_autoscaler_image=False,
    one_group_many_types=False,
    spot_fix="set scaleSetPriority: Spot",
    prices_accelerators=False,
    # node auto-provisioning's AKSNodeClass (provisioner karpenter, elastic_gpu/azure/node_provisioning)
    karpenter_node_class_group="karpenter.azure.com",
    private_api_needs_runner=True,
)
