"""What node auto-provisioning needs of the AKS cluster, and what it forbids.

azure-native 3.29.0 `containerservice.ManagedCluster` (Azure REST API version 2025-09-01, its docstring)
has `nodeProvisioningProfile` with `mode` (Manual | Auto) and `defaultNodePools` (None | Auto). Its
NodeProvisioningMode.AUTO says "Fixed size Node Pools can still be created, but autoscaling Node Pools
cannot be": under NAP no agent pool autoscales (the System pool gets a fixed count), unless the
subscription registers AllowClusterAutoscalerAndNAP (migrate-from-autoscaler-to-node-auto-provisioning.md).
"""

from __future__ import annotations

from pulumi_azure_native import containerservice as cs

from elastic_gpu.validation import said

#: AKS docs node-auto-provisioning-networking.md: NAP supports Azure CNI Overlay, Azure CNI Overlay
#: powered by Cilium and Azure CNI; not kubenet, Calico network policy or dynamic IP allocation.
#: The same page recommends Cilium ("We recommend using Azure CNI with Cilium"); the cluster keeps the
#: library's Azure CNI Overlay without a network policy engine, which NAP supports.
NAP_NETWORK_PLUGINS = ("azure",)


def node_provisioning_profile() -> cs.ManagedClusterNodeProvisioningProfileArgs:
    """NAP on, and none of AKS's default NodePools: every NodePool is a pool of ours, with its limits,
    so nothing scales without a bound (defaultNodePools Auto adds an unlimited `default` D-series
    NodePool and `system-surge`: node-auto-provisioning-node-pools.md)."""
    return cs.ManagedClusterNodeProvisioningProfileArgs(
        mode=cs.NodeProvisioningMode.AUTO,
        default_node_pools=cs.NodeProvisioningDefaultNodePools.NONE,
    )


def nap_cluster_problems(where: str, network_plugin: str) -> list[str]:
    """The cluster settings NAP refuses."""
    if network_plugin not in NAP_NETWORK_PLUGINS:
        return [
            f"{where}network_plugin: node auto-provisioning (provisioner karpenter) needs Azure CNI; "
            f"allowed: {', '.join(NAP_NETWORK_PLUGINS)} (got {said(network_plugin)})"
        ]
    return []
