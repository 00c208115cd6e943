"""Kubeconfigs that fetch short-lived tokens through an exec plugin (no stored credentials)."""

from __future__ import annotations

import json
from typing import Any


def exec_kubeconfig(cluster_name: str, server: str, ca_data: str, exec_plugin: dict[str, Any]) -> str:
    """One cluster, one context, one user whose token comes from `exec_plugin` (client.authentication.k8s.io)."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": cluster_name, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
            "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
            "current-context": cluster_name,
            "users": [
                {
                    "name": cluster_name,
                    "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", **exec_plugin}},
                }
            ],
        },
        indent=2,
    )
