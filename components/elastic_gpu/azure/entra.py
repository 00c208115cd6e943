"""Microsoft Entra ID on an AKS cluster the pools join: a kubeconfig `pulumi up` can use without a person at it.

On a cluster with Entra ID (`aadProfile`), AKS's cluster-user credentials (`listManagedClusterUserCredentials`,
what `az aks get-credentials` fetches) are a kubeconfig whose user runs `kubelogin get-token --login devicecode`
(AKS kubelogin-authentication.md: clusters on 1.24 or later get the exec format; device code is its default
method): the Kubernetes provider then waits for someone to enter a code in a browser, and `pulumi up` hangs at
the first Kubernetes object. The admin credentials skip Entra, but AKS refuses them on a cluster with
`disableLocalAccounts` (local-accounts.md). So a handle on such a cluster converts the user kubeconfig to a
non-interactive login mode the program names, as `kubelogin convert-kubeconfig -l <mode>` does (Azure/kubelogin
v0.2.19 pkg/internal/converter/convert.go), and the preview says what the runner needs for it.
"""

from __future__ import annotations

from typing import Any

import yaml

#: kubelogin's login modes that need no person (Azure/kubelogin pkg/internal/token/options.go: azurecli, azd,
#: spn, msi, workloadidentity), with what each reads on the runner (kubelogin-authentication.md).
LOGIN_MODES: dict[str, str] = {
    "azurecli": "the Azure CLI's signed-in account (`az login`, e.g. the azure/login action)",
    "workloadidentity": "a federated credential (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE)",
    "spn": "a service principal (AZURE_CLIENT_ID and AZURE_CLIENT_SECRET, or AZURE_CLIENT_CERTIFICATE_PATH)",
    "msi": "the managed identity of the VM the runner is on",
    "azd": "the Azure Developer CLI's signed-in account (`azd auth login`)",
}
#: The interactive ones: a runner without a person hangs on them.
INTERACTIVE_LOGINS = ("devicecode", "interactive")
#: kubelogin's default login (options.go NewOptions: LoginMethod DeviceCodeLogin), when `--login` is absent.
DEFAULT_LOGIN = "devicecode"
#: The Azure RBAC role that lets an identity write anything into the cluster, kube-system and cluster-scoped
#: objects included (AKS entra-id-authorization.md; built-in role id b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b). The
#: namespace-scoped "Azure Kubernetes Service RBAC Admin" cannot write namespaces or resource quotas.
RBAC_CLUSTER_ADMIN = "Azure Kubernetes Service RBAC Cluster Admin"
#: What AKS answers for the admin credentials of a cluster without local accounts (local-accounts.md).
STATIC_CREDENTIAL_REFUSED = (
    "Operation failed with status: 'Bad Request'. Details: Getting static credential isn't allowed because this "
    "cluster is set to disable local accounts."
)


def entra_login_problems(where: str, login: object) -> list[str]:
    if login is not None and login not in LOGIN_MODES:
        return [
            f"{where}entra_login: {login!r} is not a kubelogin login mode a runner can use without a person; "
            f"allowed: {', '.join(LOGIN_MODES)} (devicecode and interactive wait for a sign-in in a browser)"
        ]
    return []


def _kubelogin_user(config: dict[str, Any]) -> dict[str, Any] | None:
    """The exec block of the kubeconfig's first user when it runs kubelogin (convert.go isExecUsingkubelogin)."""
    for user in config.get("users") or []:
        exec_ = (user.get("user") or {}).get("exec")
        if isinstance(exec_, dict) and "kubelogin" in str(exec_.get("command", "")).lower():
            return exec_
    return None


def _arg(args: list[str], flag: str) -> str | None:
    """The value after `flag` in kubelogin's arguments (convert.go getExecArg)."""
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else None


def login_of(kubeconfig: str) -> str | None:
    """The kubelogin login mode of the kubeconfig's user (its default when not given), or None when the user
    does not log in through kubelogin (a certificate or a token: a cluster without Entra ID)."""
    exec_ = _kubelogin_user(yaml.safe_load(kubeconfig) or {})
    if exec_ is None:
        return None
    return _arg([str(a) for a in exec_.get("args") or []], "--login") or DEFAULT_LOGIN


def non_interactive(kubeconfig: str, login: str) -> str:
    """The kubeconfig with its kubelogin user logging in by `login`, argument for argument as
    `kubelogin convert-kubeconfig -l <login>` writes it (convert.go: `get-token --login <mode> --server-id <id>`,
    then per mode: spn takes the client id, tenant id and environment from the kubeconfig; azurecli, azd, msi and
    workloadidentity take nothing more, reading their identity on the runner). A kubeconfig without a kubelogin
    user is returned unchanged."""
    config = yaml.safe_load(kubeconfig) or {}
    exec_ = _kubelogin_user(config)
    if exec_ is None:
        return kubeconfig
    old = [str(a) for a in exec_.get("args") or []]
    args = ["get-token", "--login", login, "--server-id", _arg(old, "--server-id") or ""]
    if login == "spn":
        for flag in ("--client-id", "--tenant-id", "--environment"):
            if (value := _arg(old, flag)) is not None:
                args += [flag, value]
    exec_["args"] = args
    return yaml.safe_dump(config, sort_keys=False)


def device_code_finding(login: str) -> str:
    """What a first `pulumi up` meets with the cluster-user kubeconfig AKS returns for an Entra ID cluster."""
    return (
        f"the cluster uses Microsoft Entra ID: its cluster-user kubeconfig logs in with `kubelogin --login {login}`, "
        "which waits for a person to sign in in a browser, so `pulumi up` hangs at the first Kubernetes object "
        "(the NVIDIA device plugin, the autoscaler's ConfigMap). Pass entra_login= one of "
        f'{", ".join(LOGIN_MODES)} (e.g. entra_login="azurecli" on a runner signed in with `az login`), or a '
        "k8s_provider of your own: one from the admin credentials (listManagedClusterAdminCredentials) bypasses "
        "Entra ID only while local accounts are enabled, and AKS refuses them on a cluster with "
        f"disableLocalAccounts ({STATIC_CREDENTIAL_REFUSED!r})"
    )


def runner_note(login: str) -> str:
    """What the runner needs for a non-interactive Entra login: kubelogin, and a role that may write kube-system."""
    return (
        f"the Kubernetes provider logs in to Entra ID with `kubelogin get-token --login {login}`: the runner of "
        f"`pulumi up` needs `kubelogin` on its PATH (`az aks install-cli`) and {LOGIN_MODES[login]}. That identity "
        "writes into kube-system and cluster-wide: on a cluster with Azure RBAC (aadProfile.enableAzureRBAC) it "
        f"needs the role '{RBAC_CLUSTER_ADMIN}' on the cluster (`az role assignment create --role "
        f'"{RBAC_CLUSTER_ADMIN}" --assignee <its object id> --scope <cluster id>`); with Kubernetes RBAC, '
        "membership of a group in aadProfile.adminGroupObjectIDs (or a ClusterRoleBinding to cluster-admin)"
    )
