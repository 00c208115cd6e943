"""AKS's reserved tier: a GPU pool's capacity reservation groups (settings.Reservations on azure).

Under the cluster-autoscaler a pool with `reservations` gets, per group and VM size, a Regular (on-demand) agent
pool in the group (AgentPool `capacityReservationGroupID`), min 0 and max its share of `reservations.nodes`,
ranked first in the priority expander's ConfigMap (cluster_autoscaler.RESERVED_PRIORITY), then the pool's spot
agent pools, then its on-demand fallback. A capacity reservation serves Regular VMs only: a spot VM never draws
on it (Azure capacity-reservation-overview.md, "Limitations and restrictions": Spot VMs are not supported).

AKS associates a pool with a group only when the cluster's control-plane identity is user-assigned and may use
the group: "a user-assigned managed identity with the Contributor role for the resource group that contains the
capacity reservation group ... System-assigned managed identities don't work with this feature" (AKS
use-capacity-reservation-groups.md, prerequisites). An AksCluster this library creates is given one, and the
role, for the groups it is told of (AksClusterArgs.capacity_reservation_group_ids; a stack file's pools' groups);
on a cluster made elsewhere the pool warns with the commands that check and grant it.

Node auto-provisioning cannot use a group: karpenter-provider-azure v1.14.2's AKSNodeClass has no field for one
(tests/data/crds/karpenter.azure.com_aksnodeclasses.yaml; support is the open proposal
Azure/karpenter-provider-azure#1834/#1839, and Azure/AKS#5397 is open), and under NAP no agent pool autoscales,
so a reserved agent pool beside it would run all its nodes all the time: `reservations` is refused there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from elastic_gpu.validation import said

if TYPE_CHECKING:
    from elastic_gpu.settings import GpuPoolCore, Spelling

#: A capacity reservation group's ARM id (Microsoft.Compute/capacityReservationGroups; resource names as ARM
#: gives them: the provider namespace and type case-insensitive).
GROUP_ID_PATTERN = re.compile(
    r"(?i)^/subscriptions/(?P<subscription>[0-9a-f-]{36})/resourceGroups/(?P<group>[-\w.()]{1,90})"
    r"/providers/Microsoft\.Compute/capacityReservationGroups/(?P<name>[^/]{1,80})$"
)
GROUP_ID_SHAPE = (
    "/subscriptions/<subscription id>/resourceGroups/<group>/providers/Microsoft.Compute/"
    "capacityReservationGroups/<name>"
)
#: The built-in Contributor role (Azure built-in roles, "Contributor": b24988ac-6180-42a0-ab88-20f7382dd24c): what
#: AKS use-capacity-reservation-groups.md grants the cluster identity on the group's resource group.
CONTRIBUTOR_ROLE = "b24988ac-6180-42a0-ab88-20f7382dd24c"
#: Why node auto-provisioning refuses a reserved tier (the module's docstring has the sources).
NAP_REFUSAL = (
    "node auto-provisioning cannot use capacity reservation groups: karpenter-provider-azure v1.14.2's AKSNodeClass "
    "has no field for one (its support is the open proposal Azure/karpenter-provider-azure#1839; Azure/AKS#5397), "
    "and no agent pool autoscales beside it; use provisioner cluster-autoscaler for a pool with a reserved tier"
)


@dataclass(frozen=True)
class GroupId:
    """A capacity reservation group's id, read."""

    id: str
    subscription: str
    resource_group: str
    name: str

    @property
    def resource_group_id(self) -> str:
        """The scope AKS wants the cluster identity's role on."""
        return f"/subscriptions/{self.subscription}/resourceGroups/{self.resource_group}"


def parse_group_id(text: str) -> GroupId | None:
    found = GROUP_ID_PATTERN.match(text)
    if found is None:
        return None
    return GroupId(text, found["subscription"], found["group"], found["name"])


def reservation_problems(spell: Spelling, pool: GpuPoolCore, *, nap: bool, sizes: int) -> list[str]:
    """A pool's `reservations` on AKS: group ids, no tags, enough nodes for its reserved agent pools (one per group
    and VM size, `sizes` of them), `only` without a spot or fallback tier, and none under node auto-provisioning.
    One rule for a stack file and a program (`spell` names the fields their way)."""
    r = pool.reservations
    if r is None:
        return []
    where = spell.path("reservations")
    if nap:
        return [f"{where}: {NAP_REFUSAL} (got {len(r.ids)} group id(s))"]
    problems = []
    if not r.ids:
        problems.append(f"{where}.ids: name at least one capacity reservation group by its id ({GROUP_ID_SHAPE})")
    for j, group in enumerate(r.ids):
        if parse_group_id(group) is None:
            problems.append(
                f"{where}.ids[{j}]: {said(group)} is not a capacity reservation group id; allowed: {GROUP_ID_SHAPE}"
            )
    if len({g.lower() for g in r.ids}) < len(r.ids):
        problems.append(f"{where}.ids: a group is named twice (ARM ids are case-insensitive): {r.ids}")
    if r.ids and r.nodes < len(r.ids) * sizes:
        problems.append(
            f"{where}.nodes: the reserved tier is one agent pool per group and VM size ({len(r.ids)} x {sizes}), "
            f"each with a max of at least 1, so it must be >= {len(r.ids) * sizes} (got {r.nodes})"
        )
    if r.tags:
        problems.append(
            f"{where}.tags: AWS only (Karpenter's capacityReservationSelectorTerms); on AKS an agent pool names "
            f"one capacity reservation group by its id: list them in {where}.ids (got {r.tags})"
        )
    return problems


def cluster_grant_problems(where: str, pool_ids: list[str], granted: list[str]) -> list[str]:
    """An AksCluster this library creates must know the pool's groups, so that its identity may use them."""
    known = {g.lower() for g in granted}
    missing = [g for g in pool_ids if g.lower() not in known]
    if not missing:
        return []
    return [
        f"{where}reservations.ids: the cluster's control-plane identity is not granted {missing}: AKS associates a "
        "pool with a capacity reservation group only through a user-assigned identity with Contributor on the "
        "group's resource group (use-capacity-reservation-groups.md); add them to the cluster's "
        "AksClusterArgs.capacity_reservation_group_ids"
    ]


def existing_cluster_warning(pool_ids: list[str]) -> str:
    """On a cluster made elsewhere the library cannot see or grant the identity: what to check and run."""
    scopes = sorted({g.resource_group_id for i in pool_ids if (g := parse_group_id(i))})
    grants = "; ".join(
        f"az role assignment create --assignee-object-id <principalId> --assignee-principal-type ServicePrincipal "
        f"--role Contributor --scope {scope}"
        for scope in scopes
    )
    return (
        "reservations.ids: AKS associates an agent pool with a capacity reservation group only when the cluster's "
        "control-plane identity is user-assigned and has Contributor on the group's resource group (a "
        "system-assigned one does not work: use-capacity-reservation-groups.md); otherwise the pool is created "
        "with a warning and no group. Check: az aks show -g <group> -n <cluster> --query "
        "'{type: identity.type, ids: identity.userAssignedIdentities}'; grant: " + grants
    )
