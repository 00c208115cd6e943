"""AKS: the inputs whose change replaces its resources (elastic_gpu/tools/replacement.py merges every cloud's)."""

from __future__ import annotations

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_MANAGED_CLUSTER
from elastic_gpu.azure.node_spec import URL_PARAMETERS, AksNodeSpec, refused_in_place_inputs
from elastic_gpu.azure.system_pool import system_pool_rotation_steps
from elastic_gpu.clouds import InlinePoolRule, ReplacementRows, ReplaceRule
from elastic_gpu.node_marks import marked_inputs

#: Node-pool resources: the fields that force replacement (the replace table of docs/day-two.md).
POOL_REPLACE_FIELDS = {
    AKS_AGENT_POOL: ReplaceRule(
        # The URL parameters and the inputs the node spec marks `replaces` (azure/node_spec.py AksNodeSpec).
        fields=(*URL_PARAMETERS, *marked_inputs(AksNodeSpec, "replaces")),
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

#: Inline pools whose change is refused, not replaced: the cluster resource updates in place (the provider
#: marks none of these ForceNew), the cloud refuses the change, and renaming the inline pool is no way out
#: either. `diff` refuses such a change (exit 2) with the steps that do it (inline_pool_refusals). An inline pool
#: (the System pool of azure/cluster.py, or a program's own) takes an AgentPool's inputs, so AKS refuses the same.
INLINE_POOL_REFUSED_FIELDS = {
    AKS_MANAGED_CLUSTER: InlinePoolRule(
        list_field="agentPoolProfiles",
        key="name",
        # What AKS refuses to change in place on any agent pool: the node spec's `refused_in_place` marks and the
        # inputs no spec field sets (azure/node_spec.py refused_in_place_inputs).
        fields=refused_in_place_inputs(),
        source="AKS refuses these on an existing agent pool (ARM PropertyChangeNotAllowed, e.g. "
        "'Changing property agentPoolProfile.vmSize is not allowed', Azure/bicep-registry-modules#7130; "
        "manage-node-pools.md: 'You can't change the VM size of a node pool after you create it'); "
        "terraform-provider-azurerm kubernetes_cluster_resource.go rotates the default node pool "
        "(temporary_name_for_rotation) for exactly these (vm_size, zones, os_disk_size_gb, ...); azure-native "
        "updates agentPoolProfiles in place (pulumi-azure-native#2774), and a ManagedCluster PUT cannot add "
        "or rename an inline pool ('A new agent pool was introduced', pulumi-azure-native#579)",
        way_out=system_pool_rotation_steps,
    ),
}

#: Node-pool inputs whose in-place update replaces every node of the pool: a new orchestratorVersion is an
#: agent pool upgrade, which surges a node, then cordons and drains each old one (AKS upgrade-cluster.md,
#: "How the upgrade works"). `diff` marks them.
NODE_ROLLING_FIELDS = {
    AKS_AGENT_POOL: ReplaceRule(("orchestratorVersion",), "AKS upgrade-aks-cluster.md"),
}


#: The rows above as one record (elastic_gpu/clouds.py ReplacementRows), for `diff` and the merged tables.
ROWS = ReplacementRows(
    pool_replace_fields=POOL_REPLACE_FIELDS,
    other_replace_fields=OTHER_REPLACE_FIELDS,
    pool_name_field=POOL_NAME_FIELD,
    inline_pool_refused_fields=INLINE_POOL_REFUSED_FIELDS,
    node_rolling_fields=NODE_ROLLING_FIELDS,
    kept_when_dropped={},
)
