"""AKS in the offline preview: the mock engine's answers for its resources and invokes (merged by
elastic_gpu/tools/offline/mocks.py)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from typing import Any

import yaml

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


def _aks_cluster(name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    cluster = inputs.get("resourceName", name)
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


def _aks_user_credentials(args: dict[str, Any]) -> dict[str, Any]:
    """listManagedClusterUserCredentials: one base64 kubeconfig, as AKS returns it."""
    cluster = args.get("resourceName", "cluster")
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster,
                "cluster": {
                    "server": f"https://{cluster}-mock.hcp.example.azmk8s.io:443",
                    "certificate-authority-data": MOCK_CA,
                },
            }
        ],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": f"clusterUser_{cluster}"}}],
        "current-context": cluster,
        "users": [{"name": f"clusterUser_{cluster}", "user": {"token": "mock-token"}}],
    }
    value = base64.b64encode(yaml.safe_dump(kubeconfig, sort_keys=False).encode()).decode()
    return {"kubeconfigs": [{"name": "clusterUser", "value": value}]}


RESOURCE_MOCKS: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = {
    "azure-native:containerservice:ManagedCluster": _aks_cluster,
    "azure-native:containerservice:AgentPool": lambda name, inputs: {"name": inputs.get("agentPoolName", name)},
    "azure-native:resources:ResourceGroup": lambda name, inputs: {"name": inputs.get("resourceGroupName", name)},
}

#: Invoke token -> the answer AKS would give (derived only from the arguments).
INVOKE_MOCKS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "azure-native:containerservice:listManagedClusterUserCredentials": _aks_user_credentials,
    "azure-native:containerservice:getManagedCluster": lambda args: {
        "name": args.get("resourceName"),
        "identityProfile": _aks_kubelet_identity(args.get("resourceName", "cluster")),
    },
}


# --- the account the preflight reads (elastic_gpu/azure/preflight.py, elastic_gpu/tools/offline/account.py) --------

#: A new subscription: its Compute quotas are not documented (they differ by subscription type and region: Azure
#: "vCPU quotas"), so its usage list is not described here and the preview reports each quota unread until an
#: account file gives them under `azure.usages` (quota resource name -> [current usage, limit], as
#: `az vm list-usage` shows them).
NEW_ACCOUNT: dict[str, Any] = {"subscriptionId": "00000000-0000-0000-0000-000000000000", "usages": {}}


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


#: Invoke token -> its answer from the described account's `azure` section.
ACCOUNT_INVOKES: dict[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "azure-native:authorization:getClientConfig": _client_config,
    "azure-native:authorization:getClientToken": lambda args, account: {"token": "offline-token"},
}
#: Reader name (elastic_gpu/http_reads.py) -> its answer from the described account's `azure` section.
ACCOUNT_READERS: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = {"azure-compute-usages": _usages}
