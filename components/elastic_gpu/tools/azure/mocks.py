"""AKS in the offline preview: the mock engine's answers for its resources and invokes (merged by
elastic_gpu/tools/offline/mocks.py)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from typing import Any

import yaml

from elastic_gpu.tools.offline.cloud_mocks import Mocks
from elastic_gpu.tools.offline.mocks import MOCK_CA


def _aks_kubelet_identity(cluster: str) -> dict[str, Any]:
    """identityProfile.kubeletidentity as AKS reports it (ids derived from the name)."""
    digest = hashlib.sha256(cluster.encode()).hexdigest()
    object_id = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
    return {
        "kubeletidentity": {"objectId": object_id, "clientId": object_id, "resourceId": f"mock/{cluster}-agentpool"}
    }


def _uuid(text: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def user_assigned_identities(identity: Any) -> dict[str, Any]:
    """`identity` as ARM returns it: the input lists the user-assigned identities' resource ids, the response maps
    each id to its principalId and clientId (ManagedClusterIdentityResponse.userAssignedIdentities), so an echoed
    list would not match the output type the SDK expects."""
    if not isinstance(identity, dict) or not isinstance(identity.get("userAssignedIdentities"), list):
        return {}
    ids = [str(i) for i in identity["userAssignedIdentities"]]
    return {
        "identity": {
            **identity,
            "userAssignedIdentities": {i: {"principalId": _uuid(i), "clientId": _uuid(i + "/client")} for i in ids},
        }
    }


#: (resource group, cluster name) -> what the program declared of its ManagedCluster that AKS's credential
#: invokes answer by (Entra ID, local accounts): an invoke's mock sees only its own arguments.
_DECLARED: dict[tuple[str, str], dict[str, Any]] = {}
#: The tenant an Entra ID cluster's kubeconfig names when aadProfile gives none (AKS fills in the subscription's).
MOCK_TENANT = "00000000-0000-0000-0000-0000000000aa"
#: AKS's Entra ID applications in a cluster-user kubeconfig: the server application (kubelogin's --server-id,
#: kubelogin-authentication.md) and the Azure CLI's client application AKS names as --client-id.
AKS_ENTRA_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
AKS_ENTRA_CLIENT_ID = "80faf920-1908-4b52-b5ef-a8e7bedfc67a"


def _key(resource_group: Any, cluster: Any) -> tuple[str, str]:
    return (str(resource_group).lower(), str(cluster).lower())


def _aks_cluster(name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    cluster = inputs.get("resourceName", name)
    _DECLARED[_key(inputs.get("resourceGroupName"), cluster)] = {
        "aadProfile": inputs.get("aadProfile"),
        "disableLocalAccounts": inputs.get("disableLocalAccounts"),
    }
    state = {
        "name": cluster,
        "fqdn": f"{cluster}-mock.hcp.example.azmk8s.io",
        "identityProfile": _aks_kubelet_identity(cluster),
        **user_assigned_identities(inputs.get("identity")),
    }
    identity = inputs.get("identity")
    if isinstance(identity, dict) and isinstance(identity.get("userAssignedIdentities"), list):
        # The input lists the identities' ids; the output maps each id to its client and principal ids.
        ids = {str(i): _aks_kubelet_identity(str(i))["kubeletidentity"] for i in identity["userAssignedIdentities"]}
        state["identity"] = identity | {
            "userAssignedIdentities": {
                i: {"clientId": v["clientId"], "principalId": v["objectId"]} for i, v in ids.items()
            }
        }
    return state


def _kubeconfig(cluster: str, user: str, credentials: dict[str, Any]) -> str:
    """A kubeconfig as AKS returns it, base64-encoded: cluster and context named after the cluster, one user."""
    kubeconfig = {
        "apiVersion": "v1",
        "clusters": [
            {
                "cluster": {
                    "certificate-authority-data": MOCK_CA,
                    "server": f"https://{cluster}-mock.hcp.example.azmk8s.io:443",
                },
                "name": cluster,
            }
        ],
        "contexts": [{"context": {"cluster": cluster, "user": user}, "name": cluster}],
        "current-context": cluster,
        "kind": "Config",
        "preferences": {},
        "users": [{"name": user, "user": credentials}],
    }
    return base64.b64encode(yaml.safe_dump(kubeconfig, sort_keys=False).encode()).decode()


def _certificate_user(name: str) -> dict[str, Any]:
    """A local account's credentials: a client certificate, its key and a token."""
    data = base64.b64encode(f"mock {name}".encode()).decode()
    return {
        "client-certificate-data": data,
        "client-key-data": data,
        "token": hashlib.sha256(name.encode()).hexdigest(),
    }


def _aks_user_credentials(args: dict[str, Any]) -> dict[str, Any]:
    """listManagedClusterUserCredentials: one base64 kubeconfig, as AKS returns it. On a cluster with Entra ID
    (aadProfile) its user runs kubelogin with the device-code login (AKS returns the exec format on 1.24 and
    later: kubelogin-authentication.md; the arguments and install hint as `az aks get-credentials` writes them),
    else it holds the local user account's certificate and token."""
    group, cluster = args.get("resourceGroupName", "group"), args.get("resourceName", "cluster")
    user = f"clusterUser_{group}_{cluster}"
    aad = _DECLARED.get(_key(group, cluster), {}).get("aadProfile")
    if not aad:
        return {"kubeconfigs": [{"name": "clusterUser", "value": _kubeconfig(cluster, user, _certificate_user(user))}]}
    exec_ = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "args": [
            "get-token",
            "--environment",
            "AzurePublicCloud",
            "--server-id",
            AKS_ENTRA_SERVER_ID,
            "--client-id",
            AKS_ENTRA_CLIENT_ID,
            "--tenant-id",
            aad.get("tenantID") or MOCK_TENANT,
            "--login",
            "devicecode",
        ],
        "command": "kubelogin",
        "env": None,
        "installHint": "\nkubelogin is not installed which is required to connect to AAD enabled cluster.\n\n"
        "To learn more, please go to https://aka.ms/aks/kubelogin\n",
        "provideClusterInfo": False,
    }
    return {"kubeconfigs": [{"name": "clusterUser", "value": _kubeconfig(cluster, user, {"exec": exec_})}]}


def _aks_admin_credentials(args: dict[str, Any]) -> dict[str, Any]:
    """listManagedClusterAdminCredentials: the local admin account's kubeconfig, refused with AKS's own words on
    a cluster that disables local accounts (local-accounts.md)."""
    from elastic_gpu.azure.entra import STATIC_CREDENTIAL_REFUSED

    group, cluster = args.get("resourceGroupName", "group"), args.get("resourceName", "cluster")
    if _DECLARED.get(_key(group, cluster), {}).get("disableLocalAccounts"):
        raise RuntimeError(STATIC_CREDENTIAL_REFUSED)
    user = f"clusterAdmin_{group}_{cluster}"
    return {"kubeconfigs": [{"name": "clusterAdmin", "value": _kubeconfig(cluster, user, _certificate_user(user))}]}


def _aks_get_cluster(args: dict[str, Any]) -> dict[str, Any]:
    """getManagedCluster: a cluster the program declares as it declared it; one it does not, as `az aks create`
    makes it by default (no Entra ID, local accounts on)."""
    group, cluster = args.get("resourceGroupName", "group"), args.get("resourceName", "cluster")
    declared = _DECLARED.get(_key(group, cluster), {})
    return {
        "name": cluster,
        "identityProfile": _aks_kubelet_identity(cluster),
        "aadProfile": declared.get("aadProfile"),
        "disableLocalAccounts": declared.get("disableLocalAccounts"),
    }


def _subnet(args: dict[str, Any]) -> dict[str, Any]:
    """getSubnet for a subnet the mock knows only by its names: the range `az network vnet create` gives one by
    default (network.AZ_DEFAULT_SUBNET_PREFIX), the most common and the one AKS's default service range overlaps;
    describe another in the program's offline_mocks.py."""
    from elastic_gpu.azure.network import AZ_DEFAULT_SUBNET_PREFIX

    return {"name": args.get("subnetName"), "addressPrefix": AZ_DEFAULT_SUBNET_PREFIX}


RESOURCE_MOCKS: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = {
    "azure-native:containerservice:ManagedCluster": _aks_cluster,
    "azure-native:containerservice:AgentPool": lambda name, inputs: {"name": inputs.get("agentPoolName", name)},
    "azure-native:resources:ResourceGroup": lambda name, inputs: {"name": inputs.get("resourceGroupName", name)},
}

#: Invoke token -> the answer AKS would give (derived only from the arguments).
INVOKE_MOCKS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "azure-native:containerservice:listManagedClusterUserCredentials": _aks_user_credentials,
    "azure-native:containerservice:listManagedClusterAdminCredentials": _aks_admin_credentials,
    "azure-native:containerservice:getManagedCluster": _aks_get_cluster,
    "azure-native:network:getSubnet": _subnet,
}


# --- the account the preflight reads (elastic_gpu/azure/preflight.py, elastic_gpu/tools/offline/account.py) --------

#: A new subscription: its Compute quotas are not documented (they differ by subscription type and region: Azure
#: "vCPU quotas"), so its usage list is not described here and the preview reports each quota unread until an
#: account file gives them under `azure.usages` (quota resource name -> [current usage, limit], as
#: `az vm list-usage` shows them).
#: A new subscription holds no capacity reservation group; an account file describes its groups under
#: `azure.capacityReservationGroups` (group id -> {reservations: {name: {sku, capacity, zone, state, allocated}}},
#: as `az capacity reservation list` shows them).
NEW_ACCOUNT: dict[str, Any] = {
    "subscriptionId": "00000000-0000-0000-0000-000000000000",
    "usages": {},
    "capacityReservationGroups": {},
}


def _client_config(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """authorization.getClientConfig: the credentials' subscription and tenant."""
    return {
        "clientId": "mock-client",
        "objectId": "mock-object",
        "subscriptionId": account["subscriptionId"],
        "tenantId": "00000000-0000-0000-0000-000000000001",
    }


def _usages(url: str, account: dict[str, Any]) -> dict[str, Any]:
    """ARM's Compute Usage_List answer (computeRPCommon.json: `value[]` of name.value/localizedValue,
    currentValue, limit, unit) from `usages`; none described: the read fails as it does without the right to."""
    if not account["usages"]:
        raise PermissionError(
            "HTTP 403: AuthorizationFailed: the client does not have authorization to perform action "
            "'Microsoft.Compute/locations/usages/read' (the described account gives no azure.usages)"
        )
    return {
        "value": [
            {"name": {"value": name, "localizedValue": name}, "currentValue": current, "limit": limit, "unit": "Count"}
            for name, (current, limit) in account["usages"].items()
        ]
    }


#: azure-native's invokes GET the resource through the Azure SDK for Go's azcore; a missing one fails with ARM's
#: 404 ResourceNotFound in azcore's ResponseError text (pulumi/pulumi-azure-native#3796 shows the "request failed
#: <id>: GET <url>" lead; kubernetes-sigs/cloud-provider-azure#8997 azcore's RESPONSE/ERROR CODE block; ARM's
#: message as Azure/azure-sdk-for-js#10457 quotes it).
_RULE = "-" * 80
COMPUTE_API_VERSION = "2024-11-01"


class ArmError(PermissionError):
    """An ARM error answer: a PermissionError, the class the offline engine turns into the invoke's provider
    error (elastic_gpu/tools/offline/mocks.py)."""


def _not_found(path: str, kind: str, name: str, group: str) -> ArmError:
    message = (
        f"The Resource '{kind}/{name}' under resource group '{group}' was not found. For more details please go to "
        "https://aka.ms/ARMResourceNotFoundFix"
    )
    body = f'{{\n  "error": {{\n    "code": "ResourceNotFound",\n    "message": "{message}"\n  }}\n}}'
    return ArmError(
        f"request failed {path}: GET https://management.azure.com{path}?api-version={COMPUTE_API_VERSION}\n{_RULE}\n"
        f"RESPONSE 404: 404 Not Found\nERROR CODE: ResourceNotFound\n{_RULE}\n{body}\n{_RULE}\n"
    )


def _described_group(args: dict[str, Any], account: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(the group's ARM id, its description), or ARM's 404 for a group the account does not hold."""
    group, name = str(args.get("resourceGroupName")), str(args.get("capacityReservationGroupName"))
    path = (
        f"/subscriptions/{account['subscriptionId']}/resourceGroups/{group}/providers/Microsoft.Compute/"
        f"capacityReservationGroups/{name}"
    )
    described = {k.lower(): v for k, v in account["capacityReservationGroups"].items()}
    if path.lower() not in described:
        raise _not_found(path, "Microsoft.Compute/capacityReservationGroups", name, group)
    return path, described[path.lower()] or {}


def _capacity_reservation_group(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """compute.getCapacityReservationGroup: the group with its members' ids (capacityReservations[].id)."""
    path, group = _described_group(args, account)
    members = group.get("reservations") or {}
    zones = sorted({str(r["zone"]) for r in members.values() if r.get("zone")})
    return {
        "id": path,
        "name": args.get("capacityReservationGroupName"),
        "type": "Microsoft.Compute/capacityReservationGroups",
        "zones": zones,
        "capacityReservations": [{"id": f"{path}/capacityReservations/{n}"} for n in members],
        "azureApiVersion": COMPUTE_API_VERSION,
    }


def _capacity_reservation(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """compute.getCapacityReservation: sku (name, capacity), zones, provisioningState and, with expand
    instanceView, instanceView.utilizationInfo (currentCapacity, virtualMachinesAllocated)."""
    path, group = _described_group(args, account)
    name = str(args.get("capacityReservationName"))
    member = (group.get("reservations") or {}).get(name)
    if member is None:
        raise _not_found(
            f"{path}/capacityReservations/{name}",
            "Microsoft.Compute/capacityReservationGroups/capacityReservations",
            f"{args.get('capacityReservationGroupName')}/{name}",
            str(args.get("resourceGroupName")),
        )
    capacity = int(member.get("capacity", 0))
    answer: dict[str, Any] = {
        "id": f"{path}/capacityReservations/{name}",
        "name": name,
        "sku": {"name": member["sku"], "capacity": capacity},
        "zones": [str(member["zone"])] if member.get("zone") else [],
        "provisioningState": member.get("state", "Succeeded"),
        "azureApiVersion": COMPUTE_API_VERSION,
    }
    if args.get("expand") == "instanceView":
        vms = [{"id": f"{path}/vm{i}"} for i in range(int(member.get("allocated", 0)))]
        answer["instanceView"] = {"utilizationInfo": {"currentCapacity": capacity, "virtualMachinesAllocated": vms}}
    return answer


#: Invoke token -> its answer from the described account's `azure` section.
ACCOUNT_INVOKES: dict[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "azure-native:authorization:getClientConfig": _client_config,
    "azure-native:authorization:getClientToken": lambda args, account: {"token": "offline-token"},
    "azure-native:compute:getCapacityReservationGroup": _capacity_reservation_group,
    "azure-native:compute:getCapacityReservation": _capacity_reservation,
}
#: Reader name (elastic_gpu/http_reads.py) -> its answer from the described account's `azure` section.
ACCOUNT_READERS: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = {"azure-compute-usages": _usages}


def account_reservations(account: dict[str, Any]) -> list[dict[str, Any]]:
    """The described account's capacity reservations as the reservation rules read them: each reservation of a
    group, named by its group's id (what a pool's `reservations.ids` names), its VM size, zone and capacity."""
    return [
        {"id": gid, "instanceType": r["sku"], "zone": str(r.get("zone", "")), "count": int(r.get("capacity", 0))}
        for gid, group in (account.get("capacityReservationGroups") or {}).items()
        for r in (group.get("reservations") or {}).values()
    ]


#: This cloud's part of the mock engine (tools/offline/cloud_mocks.py `Mocks`).
MOCKS = Mocks(
    resources=RESOURCE_MOCKS,
    invokes=INVOKE_MOCKS,
    new_account=NEW_ACCOUNT,
    account_invokes=ACCOUNT_INVOKES,
    account_reservations=account_reservations,
    account_readers=ACCOUNT_READERS,
)
