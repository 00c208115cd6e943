"""What every GKE node the library asks for runs with, whether in a node pool it declares (pools.py) or in
one GKE creates for a ComputeClass or under auto-provisioning (autoprovisioning/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

if TYPE_CHECKING:
    from elastic_gpu.general_pool import GeneralPoolArgs
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

#: Nodes call Google APIs with their service account; IAM (not scopes) limits what they may do.
OAUTH_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]

#: The pool settings a GKE node (a node pool's or an auto-created one's) has no place for, and why.
NO_PLACE_ON_GKE = {
    "subnet_ids": "GKE node pools use the cluster's subnetwork",
    "security_group_ids": "GKE filters traffic with VPC firewall rules on network tags",
    "user_data": "GKE node pools take no user data",
}


#: What a node-pool name's digest holds for a service account known only as an Output (the cluster's own, read
#: by `GkeCluster.from_cluster`, or the program's Account): the email itself is unknown before deployment.
ACCOUNT_OF_THE_CLUSTER = "<the cluster's node service account>"


def node_service_account(args: GeneralPoolArgs | SpotGpuPoolArgs) -> pulumi.Input[str | None] | None:
    """The account the pool's nodes run as: the pool's own `node_identity`, else the cluster's node service
    account (the handle's optional `node_service_account`, an email or an Output of one; GkeCluster creates
    one), else None (GKE's default: the Compute Engine default account)."""
    if isinstance(args.node_identity, str):
        return args.node_identity
    account = getattr(args.cluster, "node_service_account", None)  # optional handle attribute
    return account if isinstance(account, str | pulumi.Output) else None
