"""GKE in the offline preview: the mock engine's answers for its resources and invokes (merged by
components/offline/mocks.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from elastic_gpu.offline.mocks import MOCK_CA


def _gke_cluster(name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    # 203.0.113.0/24 is TEST-NET-3 (RFC 5737): an endpoint shaped like GKE's public IP.
    return {"endpoint": "203.0.113.10", "masterAuth": {"clusterCaCertificate": MOCK_CA}}


def _gke_get_cluster(args: dict[str, Any]) -> dict[str, Any]:
    described = _gke_cluster(args.get("name", "cluster"), args)
    return {
        "name": args.get("name"),
        "location": args.get("location"),
        "project": args.get("project"),
        "endpoint": described["endpoint"],
        "masterAuths": [described["masterAuth"]],
    }


def _service_account(name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    # IAM names a project's service account <accountId>@<project>.iam.gserviceaccount.com.
    return {"email": f"{inputs.get('accountId')}@{inputs.get('project')}.iam.gserviceaccount.com"}


RESOURCE_MOCKS: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = {
    "gcp:container/cluster:Cluster": _gke_cluster,
    "gcp:serviceaccount/account:Account": _service_account,
}

#: Invoke token -> the answer GKE would give (derived only from the arguments).
INVOKE_MOCKS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "gcp:container/getCluster:getCluster": _gke_get_cluster,
}
