"""The answer of the program's own invoke (list_managed_cluster_admin_credentials) offline: one base64
kubeconfig, as AKS returns it."""

import base64

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: cluster
  cluster: {server: "https://cluster-mock.hcp.example.azmk8s.io:443"}
contexts:
- name: cluster
  context: {cluster: cluster, user: clusterAdmin_cluster}
current-context: cluster
users:
- name: clusterAdmin_cluster
  user: {token: mock-token}
"""

INVOKES = {
    "azure-native:containerservice:listManagedClusterAdminCredentials": lambda args: {
        "kubeconfigs": [{"name": "clusterAdmin", "value": base64.b64encode(KUBECONFIG.encode()).decode()}]
    }
}
