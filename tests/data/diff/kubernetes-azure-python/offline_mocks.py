"""The answer of the program's own invoke (its admin kubeconfig) offline: AKS's shape, one base64 kubeconfig."""

import base64

_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: aks
  cluster: {server: "https://aks-mock.hcp.westus2.azmk8s.io:443"}
contexts:
- name: aks
  context: {cluster: aks, user: clusterAdmin_aks}
current-context: aks
users:
- name: clusterAdmin_aks
  user: {token: mock-token}
"""

INVOKES = {
    "azure-native:containerservice:listManagedClusterAdminCredentials": lambda args: {
        "kubeconfigs": [{"name": "clusterAdmin", "value": base64.b64encode(_KUBECONFIG.encode()).decode()}]
    }
}
