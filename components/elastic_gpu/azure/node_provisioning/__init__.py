"""AKS node auto-provisioning (NAP, AKS-managed Karpenter) as the provisioner of GPU pools.

With `elastic-gpu:provisioner: karpenter` on AKS the cluster sets `nodeProvisioningProfile.mode: Auto`
and each SpotGpuPool becomes an `AKSNodeClass` (karpenter.azure.com/v1beta1) and Karpenter `NodePool`s
(karpenter.sh/v1) applied through the cluster's Kubernetes provider, instead of AKS agent pools.

Sources (pinned): Azure/karpenter-provider-azure tag v1.14.2 (d1552b7e, 2026-08-09; it vendors
sigs.k8s.io/karpenter v1.14.0), the AKS docs in MicrosoftDocs/azure-aks-docs (fb060abe, 2026-08-21)
and the azure-native SDK 3.29.0 (`ManagedClusterNodeProvisioningProfileArgs`).
"""

from __future__ import annotations

from typing import Any

#: The value of the stack setting `provisioner` (and of `AksClusterArgs.provisioner`, the AKS handle's
#: `provisioner`) that turns node auto-provisioning on.
PROVISIONER = "karpenter"


def uses_node_provisioning(cluster: Any) -> bool:
    """The cluster handle says its GPU pools are NAP NodePools (the handle's optional `provisioner`)."""
    return getattr(cluster, "provisioner", None) == PROVISIONER
