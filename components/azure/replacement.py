"""AKS: the inputs whose change replaces its resources (components/replacement.py merges every cloud's)."""

from __future__ import annotations

from elastic_gpu.azure import AKS_AGENT_POOL
from elastic_gpu.clouds import ReplaceRule

#: Node-pool resources: the fields that force replacement (shown in the README).
POOL_REPLACE_FIELDS = {
    AKS_AGENT_POOL: ReplaceRule(
        fields=(
            "agentPoolName",
            "resourceName",
            "resourceGroupName",
            "vmSize",
            "availabilityZones",
            "osDiskSizeGB",
            "osType",
            "scaleSetPriority",
            "scaleSetEvictionPolicy",
            "spotMaxPrice",
            "gpuInstanceProfile",
            "vnetSubnetID",
            "kubeletConfig",
        ),
        source="azure-native containerservice.AgentPool replaces on its URL parameters (agentPoolName, "
        "resourceName, resourceGroupName); AKS refuses in-place changes of the rest: terraform-provider-azurerm "
        "kubernetes_cluster_node_pool marks priority, eviction_policy, spot_max_price, os_type, gpu_instance "
        "ForceNew and rotates the pool (temporary_name_for_rotation) for vm_size, zones, os_disk_size_gb, "
        "vnet_subnet_id, kubelet_config",
    ),
}

OTHER_REPLACE_FIELDS: dict[str, ReplaceRule] = {}

#: The input that is a pool's cloud name.
POOL_NAME_FIELD = {AKS_AGENT_POOL: "agentPoolName"}
