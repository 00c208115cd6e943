"""GKE in the offline preview: the mock engine's answers for its resources and invokes (merged by
elastic_gpu/tools/offline/mocks.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pulumi

from elastic_gpu.gcp.quotas import GPU_QUOTAS
from elastic_gpu.tools.offline.cloud_mocks import Mocks
from elastic_gpu.tools.offline.mocks import MOCK_CA


def _gke_cluster(name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    # 203.0.113.0/24 is TEST-NET-3 (RFC 5737): an endpoint shaped like GKE's public IP.
    outputs: dict[str, Any] = {"endpoint": "203.0.113.10", "masterAuth": {"clusterCaCertificate": MOCK_CA}}
    # Without `location` the provider creates the cluster in its own `gcp:zone` (never its region:
    # terraform-provider-google tpgresource.GetLocation), and without `project` in `gcp:project`.
    provider = pulumi.Config("gcp")
    if not inputs.get("location") and (zone := provider.get("zone")):
        outputs["location"] = zone
    if not inputs.get("project") and (project := provider.get("project")):
        outputs["project"] = project
    # What a GKE Standard cluster has when the program does not ask: no Workload Identity pool, public nodes. A
    # real preview shows these computed blocks unknown until the cluster exists, then they read back without a
    # pool and without private nodes; an empty block says the same here (the engine takes a null for unknown).
    for block in ("workloadIdentityConfig", "privateClusterConfig"):
        outputs[block] = inputs.get(block) or {}
    return outputs


def _gke_get_cluster(args: dict[str, Any]) -> dict[str, Any]:
    """A cluster the mock knows only by name: a GKE Standard cluster as `gcloud container clusters create` makes
    it by default, so without Workload Identity (Standard clusters enable it only when asked: `--workload-pool`)
    and with public nodes (`--enable-private-nodes` off). The data source lists each block (terraform-provider-
    google's getCluster flattens a block as a list of one, an absent one as an empty list)."""
    described = _gke_cluster(args.get("name", "cluster"), args)
    return {
        "name": args.get("name"),
        "location": args.get("location"),
        "project": args.get("project"),
        "endpoint": described["endpoint"],
        "masterAuths": [described["masterAuth"]],
        "workloadIdentityConfigs": [],
        "privateClusterConfigs": [],
    }


def _service_account(name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    # IAM names a project's service account <accountId>@<project>.iam.gserviceaccount.com; without `project` the
    # account is made in the provider's `gcp:project`.
    project = inputs.get("project") or pulumi.Config("gcp").get("project")
    return {"email": f"{inputs.get('accountId')}@{project}.iam.gserviceaccount.com", "project": project}


RESOURCE_MOCKS: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = {
    "gcp:container/cluster:Cluster": _gke_cluster,
    "gcp:serviceaccount/account:Account": _service_account,
}

#: Invoke token -> the answer GKE would give (derived only from the arguments).
INVOKE_MOCKS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "gcp:container/getCluster:getCluster": _gke_get_cluster,
}


# --- the account the preflight reads (elastic_gpu/gcp/preflight.py, elastic_gpu/tools/offline/account.py) ---------

#: A new GCP project: no API enabled beyond the defaults (Compute Engine and GKE are not among them), every GPU
#: quota at 0 (a new project's first GPU VM fails with "Quota 'GPUS_ALL_REGIONS' exceeded. Limit: 0.0
#: globally"), and every machine type in every zone (`machineTypes` lists the zones of the types a region offers
#: in some zones only). A new project's vCPU quotas (CPUS-per-project-region, CPUS-ALL-REGIONS-per-project) are
#: not documented ("Not all projects have the same quotas", Compute Engine "Allocation quotas"), so they are not
#: described here: the preview reports them unread until an account file gives them under `gcp.quotas`.
#: Its IAM policy binds no role to a user-given node service account (`iamBindings`: role -> members), so a
#: stack given `cluster.nodeServiceAccount` hears that the account lacks the node role.
NEW_ACCOUNT: dict[str, Any] = {
    "services": [],
    "quotas": {
        "GPUS-ALL-REGIONS-per-project": 0,
        **{qid: 0 for q in GPU_QUOTAS for qid in (q.standard, q.preemptible)},
    },
    "machineTypes": {},
    "iamBindings": {},
    "reservations": {},
}


def _project_service(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """An API that is not enabled reads back with an empty id (as terraform-provider-google's data source);
    `services: null` describes credentials without serviceusage.services.get, which Service Usage answers with a
    403 (the provider's read wraps it: resource_google_project_service.go, "Error when reading or editing")."""
    service, project = args.get("service"), args.get("project")
    if account["services"] is None:
        raise PermissionError(
            f"Error when reading or editing Project Service {project}/{service}: googleapi: Error 403: Permission "
            f"denied to get service [{service}]"
        )
    enabled = service in account["services"]
    return {"id": f"{project}/{service}" if enabled else "", "service": service, "project": project}


def _quota_info(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """One value for every location (the described account's quotas are the same in every region)."""
    qid = args.get("quotaId")
    if qid not in account["quotas"]:
        raise KeyError(f"the described account has no quota {qid!r}; give it under gcp.quotas")
    if account["quotas"][qid] is None:  # described as unreadable: the API not enabled or no right to read it
        raise PermissionError(f"Cloud Quotas API has not been used in project {args.get('parent')} or it is disabled")
    value = str(account["quotas"][qid])
    return {
        "quotaId": qid,
        "service": args.get("service"),
        "parent": args.get("parent"),
        "dimensionsInfos": [{"dimensions": {}, "details": [{"value": value}], "applicableLocations": ["global"]}],
    }


def _machine_types(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """The machine types the filter names (`(name = "a") OR (name = "b")`) that the zone offers, each as
    Compute Engine describes it: a catalog type's GPUs, vCPUs and memory; only the name of another (the mock
    knows nothing of its GPU, so it resolves to none)."""
    from elastic_gpu.gcp.gpu_types import described_machine_type

    zone = args.get("zone")
    names = re.findall(r'name = "([^"]+)"', args.get("filter") or "")
    offered = [n for n in names if zone in account["machineTypes"].get(n, [zone])]
    described = [described_machine_type(n) for n in offered]
    return {"zone": zone, "project": args.get("project"), "machineTypes": described}


def _iam_policy(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """The project's IAM policy: `iamBindings` (role -> members) as getIamPolicy's JSON `policyData`."""
    bindings = [{"role": role, "members": list(members)} for role, members in account["iamBindings"].items()]
    project = args.get("project")
    return {"id": project, "project": project, "etag": "BwY=", "policyData": json.dumps({"bindings": bindings})}


def _reservation(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """compute.getReservation from the described account's `reservations` (name -> zone, project (default: any),
    machineType, accelerators [{type, count}], count, inUseCount, status (default READY),
    specificReservationRequired (default true)), with the result's field names (pulumi_gcp GetReservationResult).
    One the account does not have in that zone and project reads back empty, without an error: the data source's
    read clears a 404 (terraform-provider-google google/services/compute/data_source_google_compute_reservation.go
    -> resourceComputeReservationRead, transport_tpg.HandleNotFoundError) and then sets the id all the same."""
    name, zone, project = args.get("name"), args.get("zone"), args.get("project")
    ident = {
        "id": f"projects/{project}/zones/{zone}/reservations/{name}",
        "name": name,
        "zone": zone,
        "project": project,
    }
    held = (account.get("reservations") or {}).get(name)
    if held is None or held.get("zone") != zone or held.get("project", project) != project:
        return ident
    accelerators = [
        {"acceleratorType": a["type"], "acceleratorCount": int(a.get("count", 1))}
        for a in held.get("accelerators") or []
    ]
    return {
        **ident,
        "status": held.get("status", "READY"),
        "specificReservationRequired": held.get("specificReservationRequired", True),
        "specificReservations": [
            {
                "count": int(held["count"]),
                "inUseCount": int(held.get("inUseCount", 0)),
                "assuredCount": int(held["count"]),
                "instanceProperties": [{"machineType": held["machineType"], "guestAccelerators": accelerators}],
            }
        ],
    }


#: Invoke token -> its answer from the described account's `gcp` section.
ACCOUNT_INVOKES: dict[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "gcp:projects/getProjectService:getProjectService": _project_service,
    "gcp:cloudquota/getSQuotaInfo:getSQuotaInfo": _quota_info,
    "gcp:compute/getMachineTypes:getMachineTypes": _machine_types,
    "gcp:projects/getIamPolicy:getIamPolicy": _iam_policy,
    "gcp:compute/getReservation:getReservation": _reservation,
}


def account_reservations(account: dict[str, Any]) -> list[dict[str, Any]]:
    """The described project's reservations as the reservation rules read them: name, machine type, zone, count."""
    return [
        {"id": name, "instanceType": r["machineType"], "zone": r.get("zone", ""), "count": int(r.get("count", 0))}
        for name, r in (account.get("reservations") or {}).items()
    ]


#: This cloud's part of the mock engine (tools/offline/cloud_mocks.py `Mocks`).
MOCKS = Mocks(
    resources=RESOURCE_MOCKS,
    invokes=INVOKE_MOCKS,
    new_account=NEW_ACCOUNT,
    account_invokes=ACCOUNT_INVOKES,
    account_reservations=account_reservations,
)
