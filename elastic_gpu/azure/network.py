"""A VNet subnet of the user's for an AKS cluster and its pools: plain values (no azure-native import)."""

from __future__ import annotations

from typing import Any

#: An ARM VNet subnet id (AgentPool vnetSubnetID; ManagedClusterAPIServerAccessProfile subnetId).
SUBNET_ID_PATTERN = (
    r"(?i)/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+"
)
#: The built-in role a cluster identity needs on a subnet it does not own (AKS use-managed-identity.md, "Add role
#: assignment"; configure-kubenet.md / api-server-vnet-integration.md grant it on the BYO subnets).
NETWORK_CONTRIBUTOR_ROLE = "4d97b98b-1d4f-4787-a291-c67834d212e7"


def vnet_of(subnet_id: str) -> str:
    """The VNet id of a subnet id (ARM ids compare case-insensitively)."""
    return subnet_id.rsplit("/subnets/", 1)[0].lower()


def subscription_of(subnet_id: str) -> str:
    return subnet_id.split("/")[2]


def pool_subnet(args: Any) -> str | None:
    """The pool's own subnet, else the cluster's (AksClusterArgs.subnet_id), else None (AKS's VNet)."""
    if isinstance(args.subnet_ids, str):
        return args.subnet_ids
    return getattr(args.cluster, "vnet_subnet_id", None)  # optional handle attribute
