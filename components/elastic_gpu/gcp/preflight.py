"""The account preflight's GKE part (elastic_gpu/preflight.py): the project's enabled services, its GPU quotas
(per region and model, spot and on-demand, and all regions), its vCPU quotas (the region's and all regions')
against what the pools need at their max, and the zones that offer each machine type, read through pulumi-gcp's
invokes."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import pulumi_gcp as gcp

from elastic_gpu.gcp.autoprovisioning.cluster import machine_shape
from elastic_gpu.gcp.config_rules import NODE_SERVICE_ACCOUNT_ROLE
from elastic_gpu.gcp.quotas import ALL_REGIONS, gpu_quota
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.preflight import Finding, QuotaNeed, add_need, attempt, quota_findings, unread

if TYPE_CHECKING:
    from elastic_gpu.config import GpuPoolConfig, StackConfig

#: The services a GKE stack's `pulumi up` calls (the cluster, its nodes and disks).
SERVICES = ("compute.googleapis.com", "container.googleapis.com")
COMPUTE = "compute.googleapis.com"
#: Cloud Quotas ids of the vCPU quotas: `CPUS-per-project-region` (the `CPUS` metric of `gcloud compute regions
#: describe`) counts the E2 and N1 series (other series, such as G2 and A2, draw on a quota of their own, not
#: checked here); spot VMs draw on it too while the project has no PREEMPTIBLE_CPUS quota, as a new one has none.
#: `CPUS-ALL-REGIONS-per-project` counts every VM's vCPUs in every region.
CPUS, CPUS_ALL_REGIONS = "CPUS-per-project-region", "CPUS-ALL-REGIONS-per-project"
CPUS_SERIES = ("e2", "n1")


def regional_value(info: Any, region: str | None) -> float:
    """The value a QuotaInfo enforces in `region` (None: a global quota): the dimensions info naming the region,
    else the one that names none (the default for every other location)."""
    infos = list(info.dimensions_infos or [])
    named = [i for i in infos if region is not None and (i.dimensions or {}).get("region") == region]
    default = [i for i in infos if "region" not in (i.dimensions or {})]
    chosen = (named or default or [None])[0]
    if chosen is None or not chosen.details:
        return 0.0
    return float(chosen.details[0].value)


def quota(project: str, qid: str, region: str | None) -> float | str:
    """The quota's value in `region`, or why it could not be read (the Cloud Quotas API not enabled, no right
    to read it)."""
    return attempt(
        lambda: regional_value(
            gcp.cloudquota.get_s_quota_info(parent=f"projects/{project}", quota_id=qid, service=COMPUTE), region
        )
    )


def quota_unread(
    pools: dict[str, int], qid: str, region: str | None, project: str, error: str, unit: str = "GPUs"
) -> Finding:
    where = f" in {region}" if region else ""
    return unread(
        pools,
        f"{qid}{where} (the pools need {sum(pools.values())} {unit})",
        error,
        f"gcloud services enable cloudquotas.googleapis.com --project={project}, or read it with `gcloud compute "
        f"{'regions describe ' + region if region else 'project-info describe'} --project={project}`",
    )


#: Cloud Quotas asks for a contact address with every increase ("When requesting a quota increase, the email
#: address is required": QuotaPreference.contact_email, Cloud Quotas API v1beta; `gcloud beta quotas preferences
#: create --email=EMAIL`). The command takes the address gcloud itself is logged in with, so it runs as printed.
EMAIL = '--email="$(gcloud config get-value account)"'


def request(project: str, qid: str, value: int, region: str | None) -> str:
    dims = f" --dimensions=region={region}" if region else ""
    return (
        f"gcloud beta quotas preferences create --service={COMPUTE} --quota-id={qid} --preferred-value={value}"
        f"{dims} --project={project} {EMAIL} --justification='Kubernetes node pools'"
    )


def gpus_per_node(cfg: StackConfig, pool: GpuPoolConfig) -> tuple[str | None, int]:
    """The pool's GPU model key and GPUs per node (N1 takes `gpusPerNode`; G2, A2 and A3 fix theirs)."""
    from elastic_gpu.config import gpu_spec

    spec = gpu_spec(pool)
    rows = [r for t in cfg.instance_types(pool) if (r := gpu_instance_type("gcp", t, spec)) is not None]
    if not rows:
        return None, 0
    return rows[0].gpu, max(pool.gpus_per_node if r.gpu_counts else r.gpus for r in rows)


def enabled(project: str, service: str) -> bool:
    return bool(gcp.projects.get_project_service(project=project, service=service).id)


def service_findings(cfg: StackConfig, project: str) -> list[Finding]:
    found = []
    for service in SERVICES:
        # An API that is not enabled reads back without an id (terraform-provider-google
        # resource_google_project_service.go resourceGoogleProjectServiceRead sets it to ""); credentials without
        # serviceusage.services.get get a 403, which is a finding too, never a failed preview.
        read = attempt(partial(enabled, project, service))
        if isinstance(read, str):
            found.append(
                unread(
                    ["cluster"],
                    f"whether the project {project} has enabled {service}",
                    read,
                    f"allow serviceusage.services.get (roles/serviceusage.serviceUsageViewer), or read it: gcloud "
                    f"services list --enabled --project={project} --filter=config.name={service}",
                )
            )
        elif not read:
            found.append(
                Finding(
                    "cluster",
                    "service",
                    "warning",
                    f"the project {project} has not enabled {service}: `pulumi up` fails on the first resource that "
                    "needs it",
                    f"gcloud services enable {service} --project={project}",
                )
            )
    return found


#: The finding's check per capacity type drawing on a quota: spot, flex-start (queued provisioning), on-demand.
_CHECKS = {"spot": "spot-quota", "flex-start": "flex-start-quota", "on-demand": "on-demand-quota"}


def gpu_quota_findings(cfg: StackConfig, project: str) -> list[Finding]:
    """GPUs at every pool's max against the quota its VMs draw on: on-demand ones (and the fallback) the standard
    quota; spot and flex-start ones the preemptible quota where the region has one, else the standard quota
    (elastic_gpu/gcp/quotas.py); every GPU also GPUS-ALL-REGIONS."""
    region = cfg.cluster.region
    regional: dict[str, dict[str, int]] = {}
    kinds: dict[str, set[str]] = {}
    notes: dict[str, str] = {}
    total: dict[str, dict[str, int]] = {}
    found: list[Finding] = []
    preemptible: dict[str, float | str] = {}
    for p in cfg.gpu_pools:
        gpu, per_node = gpus_per_node(cfg, p)
        if gpu is None:
            continue
        kind = "flex-start" if p.queued_provisioning else "spot" if p.spot else "on-demand"
        sizes = [(kind, p.max_size)]
        if p.on_demand_fallback:
            sizes.append(("on-demand", p.fallback_total))
        row = gpu_quota(gpu)
        for k, nodes in sizes:
            add_need(total, ALL_REGIONS, p.name, nodes * per_node)
            if row is None or not nodes:
                continue
            qid = row.standard
            if k != "on-demand":
                if row.preemptible not in preemptible:
                    preemptible[row.preemptible] = quota(project, row.preemptible, region)
                have = preemptible[row.preemptible]
                if isinstance(have, str):
                    found.append(quota_unread({p.name: nodes * per_node}, row.preemptible, region, project, have))
                    continue
                if have > 0:
                    qid = row.preemptible
                else:
                    notes[qid] = (
                        f"; {k} VMs draw on it while the project has no {row.preemptible} in {region} (0), as "
                        f"Compute Engine does: a preemptible quota, once granted, is what they draw on instead"
                    )
            add_need(regional, qid, p.name, nodes * per_node)
            kinds.setdefault(qid, set()).add(k)
    asked: list[tuple[str, str | None, str, dict[str, int]]] = []
    for qid, by_pool in regional.items():
        check = _CHECKS[next(iter(kinds[qid]))] if len(kinds[qid]) == 1 else "gpu-quota"
        asked.append((qid, region, check, by_pool))
    asked += [(qid, None, "gpu-quota", by_pool) for qid, by_pool in total.items()]
    for qid, where, check, by_pool in asked:
        have = quota(project, qid, where)
        if isinstance(have, str):
            found.append(quota_unread(by_pool, qid, where, project, have))
            continue
        need = QuotaNeed(f"{qid} in {where}" if where else qid, by_pool, have, "GPUs")
        for f in quota_findings([need], check, lambda n, qid=qid, where=where: request(project, qid, n.need, where)):
            found.append(replace(f, message=f.message + notes.get(qid, "")))
    return found


def vcpus(machine_type: str) -> int:
    """A machine type's vCPUs (the GPU catalog's row, else a predefined type's name; 0 for a custom type)."""
    shape = machine_shape(machine_type)
    return shape[0] if shape else 0


def cpu_quota_findings(cfg: StackConfig, project: str) -> list[Finding]:
    """vCPUs at every pool's max (largest type x nodes; the GPU pools' fallback too): of the region's CPUS quota
    those of E2 and N1 types, of CPUS-ALL-REGIONS all of them."""
    region = cfg.cluster.region
    sizes: list[tuple[str, int, list[str]]] = [
        ("general", cfg.general_pool.max_size, list(cfg.general_pool.instance_types))
    ]
    for p in cfg.gpu_pools:
        sizes.append((p.name, p.max_size + p.fallback_total, cfg.instance_types(p)))
    needs: dict[str, dict[str, int]] = {}
    for pool, nodes, types in sizes:
        add_need(needs, CPUS_ALL_REGIONS, pool, nodes * max((vcpus(t) for t in types), default=0))
        regional = [vcpus(t) for t in types if t.split("-")[0] in CPUS_SERIES]
        add_need(needs, CPUS, pool, nodes * max(regional, default=0))
    found = []
    for qid, by_pool in needs.items():
        where = region if qid == CPUS else None
        have = quota(project, qid, where)
        if isinstance(have, str):
            found.append(quota_unread(by_pool, qid, where, project, have, "vCPUs"))
            continue
        need = QuotaNeed(f"{qid} in {where}" if where else qid, by_pool, have, "vCPUs")
        found += quota_findings(
            [need], "cpu-quota", lambda n, qid=qid, where=where: request(project, qid, n.need, where)
        )
    return found


#: Project roles that give a node service account what GKE's nodes need: the least-privilege role (GKE "Configure
#: node service accounts": nodes need at least roles/container.defaultNodeServiceAccount on the project), the basic
#: roles that include its permissions, or every role the GKE hardening guide listed before that role existed.
NODE_ROLES_ALONE = (NODE_SERVICE_ACCOUNT_ROLE, "roles/editor", "roles/owner")
NODE_ROLES_TOGETHER = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/autoscaling.metricsWriter",
)


def member_roles(policy_data: str, member: str) -> set[str]:
    """The project roles a member holds in an IAM policy's JSON (`getIamPolicy`'s `policyData`)."""
    bindings = (json.loads(policy_data or "{}") or {}).get("bindings") or []
    return {b.get("role", "") for b in bindings if member in (b.get("members") or [])}


def role_members(policy_data: str, role: str) -> list[str]:
    """The members a project role is bound to in an IAM policy's JSON."""
    bindings = (json.loads(policy_data or "{}") or {}).get("bindings") or []
    return [m for b in bindings if b.get("role") == role for m in (b.get("members") or [])]


def node_account_findings(cfg: StackConfig, project: str) -> list[Finding]:
    """A user-given node service account (`cluster.nodeServiceAccount`; the stack then creates none) without
    the node role on the project: GKE's nodes then fail to write logs and metrics."""
    email = cfg.cluster.node_service_account
    if email is None:
        return []
    member = f"serviceAccount:{email}"
    grant = f"gcloud projects add-iam-policy-binding {project} --member={member} --role={NODE_SERVICE_ACCOUNT_ROLE}"
    policy = attempt(lambda: gcp.projects.get_iam_policy(project=project))
    if isinstance(policy, str):
        fix = (
            "allow resourcemanager.projects.getIamPolicy, or read them: gcloud projects get-iam-policy "
            f"{project} --flatten=bindings --filter=bindings.members:{member} --format='value(bindings.role)'"
        )
        return [unread(["cluster"], f"the project roles of the node service account {email}", policy, fix)]
    roles = member_roles(policy.policy_data, member)
    if roles & set(NODE_ROLES_ALONE) or set(NODE_ROLES_TOGETHER) <= roles:
        return []
    # The project's policy holds its own bindings only: a role granted to a group the account is in, or on a
    # folder or the organization above the project, reaches the account without appearing here (IAM "Policy
    # inheritance"; group members are not listed in a policy), so the finding names what was not seen and the
    # command that evaluates every path (Policy Troubleshooter).
    troubleshoot = (
        f"gcloud policy-intelligence troubleshoot-policy iam //cloudresourcemanager.googleapis.com/projects/"
        f"{project} --principal-email={email} --permission=logging.logEntries.create"
    )
    groups = sorted(
        m
        for role in (*NODE_ROLES_ALONE, *NODE_ROLES_TOGETHER)
        for m in role_members(policy.policy_data, role)
        if m.startswith(("group:", "domain:"))
    )
    if groups:
        return [
            unread(
                ["cluster"],
                f"whether the node service account {email} (cluster.nodeServiceAccount) holds the node role through "
                f"{', '.join(dict.fromkeys(groups))}, which the project's policy grants it to",
                "the policy lists groups, not their members",
                f"{troubleshoot}; if it is denied: {grant}",
            )
        ]
    return [
        Finding(
            "cluster",
            "node-service-account",
            "warning",
            f"the node service account {email} (cluster.nodeServiceAccount) lacks {NODE_SERVICE_ACCOUNT_ROLE} in "
            f"the project {project}'s own bindings: without it the nodes cannot write their logs and metrics (a "
            "role granted on a folder or the organization, or to a group, is not visible here)",
            f"{grant} (or check every path first: {troubleshoot})",
        )
    ]


def machine_type_findings(cfg: StackConfig, project: str) -> list[Finding]:
    """Each pool's machine types in each of its zones: a zone that offers none of them is an error (GKE refuses
    a node pool whose locations do not all offer its machine type)."""
    zones = list(cfg.cluster.zones)
    pools = [("general", list(cfg.general_pool.instance_types))]
    pools += [(p.name, cfg.instance_types(p)) for p in cfg.gpu_pools]
    types = sorted({t for _, ts in pools for t in ts})
    name_filter = " OR ".join(f'(name = "{t}")' for t in types)
    offered = attempt(
        lambda: {
            (m.name, z)
            for z in zones
            for m in gcp.compute.get_machine_types(zone=z, project=project, filter=name_filter).machine_types or []
        }
    )
    if isinstance(offered, str):  # the Compute Engine API not enabled yet
        fix = (
            f"enable {COMPUTE}, then `gcloud compute machine-types list --zones={','.join(zones)} "
            f"--filter='name:({' '.join(types)})' --project={project}`"
        )
        return [unread([p for p, _ in pools], "the zones' machine types", offered, fix)]
    found = []
    for pool, ts in pools:
        missing = [z for z in zones if not any((t, z) in offered for t in ts)]
        if missing:
            found.append(
                Finding(
                    pool,
                    "zone-offering",
                    "error",
                    f"{', '.join(missing)} offer{'s' if len(missing) == 1 else ''} none of {', '.join(ts)}: GKE "
                    "refuses the node pool",
                    f"take {', '.join(missing)} out of cluster.zones or give the pool a machine type offered there "
                    f"(gcloud compute machine-types list --zones={','.join(missing)} --filter='name:({' '.join(ts)})')",
                )
            )
    return found


#: A reservation ready to be consumed (compute/v1 Reservation.status: CREATING, READY, DELETING, INVALID, UPDATING).
RESERVATION_READY = "READY"


def _describe(name: str, zone: str, project: str) -> str:
    return f"gcloud compute reservations describe {name} --zone={zone} --project={project}"


def _future(name: str, zone: str, project: str) -> str:
    """A future reservation in calendar mode becomes a reservation only at its start time, and pulumi-gcp has no
    invoke that reads one (10.2.0: compute.FutureReservation is a resource only, no getFutureReservation)."""
    return (
        f"if it is a future reservation (calendar mode), it is a reservation only from its start time and cannot "
        f"be read here: gcloud compute future-reservations describe {name} --zone={zone} --project={project}"
    )


def reservation_findings(cfg: StackConfig, project: str) -> list[Finding]:
    """Each GPU pool's reservations read through compute.getReservation (by name, zone and project): one the
    project does not have in that zone, one not READY, one for another machine type or GPU, and reservations
    holding fewer VMs than the pool's reserved tier (`reservations.nodes`)."""
    from elastic_gpu.gcp.reservations import reservations_of

    found: list[Finding] = []
    for pool in cfg.gpu_pools:
        if pool.reservations is None or pool.queued_provisioning:
            continue
        reservations, _ = reservations_of(pool.reservations, list(cfg.cluster.zones))
        machine = cfg.instance_types(pool)[0] if cfg.instance_types(pool) else None
        _, gpus = gpus_per_node(cfg, pool)
        row = gpu_instance_type("gcp", machine) if machine else None
        accelerator = row.accelerator if row is not None else None
        # Counted only when every reservation was read (an unread or missing one has its own finding).
        held = free = 0
        complete = True
        for r in reservations:
            owner, zone = r.project or project, r.zone or cfg.cluster.zones[0]
            got = attempt(partial(gcp.compute.get_reservation, name=r.name, zone=zone, project=owner))
            if isinstance(got, str):
                found.append(
                    unread([pool.name], f"reservation {r.name} in {zone}", got, _describe(r.name, zone, owner))
                )
                complete = False
                continue
            # A reservation the project does not have in the zone reads back empty, not as an error: the data
            # source's read clears a 404 (terraform-provider-google google/services/compute/
            # data_source_google_compute_reservation.go -> resourceComputeReservationRead, HandleNotFoundError).
            specific = list(got.specific_reservations or [])
            if not got.status and not specific:
                found.append(
                    Finding(
                        pool.name,
                        "reservation",
                        # A warning: the pool deploys (its reserved node pool starts at 0) and its ComputeClass
                        # goes on to spot; a future reservation is missing until its start time.
                        "warning",
                        f"reservation {r.name} not found in {zone} of project {owner} (a reservation is zonal): "
                        "the reserved tier gets no nodes and pods go on to the next tier",
                        f"gcloud compute reservations list --filter='name={r.name}' --project={owner}; "
                        + _future(r.name, zone, owner),
                    )
                )
                complete = False
                continue
            if got.status != RESERVATION_READY:
                found.append(
                    Finding(
                        pool.name,
                        "reservation",
                        "warning",
                        f"reservation {r.name} in {zone} is {got.status}, not {RESERVATION_READY}",
                        _describe(r.name, zone, owner),
                    )
                )
            for sr in specific:
                props = list(sr.instance_properties or [])[:1]
                kind = props[0].machine_type if props else None
                if machine and kind and kind != machine:
                    found.append(
                        Finding(
                            pool.name,
                            "reservation",
                            "error",
                            f"reservation {r.name} holds {kind} VMs, the pool asks for {machine}: its nodes do not "
                            "match it and GKE creates none",
                            f"give the pool instanceTypes [{kind}] or name a reservation of {machine}",
                        )
                    )
                accs = (
                    [(a.accelerator_type, a.accelerator_count) for a in (props[0].guest_accelerators or [])]
                    if props
                    else []
                )
                # Machine types with built-in GPUs (G2, A2, A3) list none; an N1 reservation lists what it attaches.
                if accs and accelerator and (accelerator, gpus) not in accs:
                    found.append(
                        Finding(
                            pool.name,
                            "reservation",
                            "error",
                            f"reservation {r.name} holds VMs with {', '.join(f'{n} x {t}' for t, n in accs)}, the "
                            f"pool's nodes carry {gpus} x {accelerator}",
                            f"attach {', '.join(f'{n} x {t}' for t, n in accs)} (gpusPerNode) or name a "
                            "reservation of the pool's GPU",
                        )
                    )
                held += int(sr.count or 0)
                free += int(sr.count or 0) - int(sr.in_use_count or 0)
        nodes = pool.reservations.nodes
        if complete and held < nodes:
            found.append(
                Finding(
                    pool.name,
                    "reservation",
                    "error",
                    f"its reservations hold {held} VM(s), the reserved tier asks for {nodes} (reservations.nodes)",
                    f"set reservations.nodes to {held}, or grow the reservation: gcloud compute reservations "
                    f"update {reservations[0].name} --vm-count={nodes} --zone={reservations[0].zone} "
                    f"--project={reservations[0].project or project}",
                )
            )
        elif complete and free < nodes:
            found.append(
                Finding(
                    pool.name,
                    "reservation",
                    "warning",
                    f"its reservations hold {held} VM(s) but {held - free} are in use by other VMs: {free} free "
                    f"for the reserved tier's {nodes}",
                    "see specificReservation.inUseCount: "
                    + _describe(reservations[0].name, reservations[0].zone or "", reservations[0].project or project),
                )
            )
    return found


def findings(cfg: StackConfig) -> list[Finding]:
    project = cfg.cluster.project
    if project is None:  # refused by the config rules before the preflight runs
        return []
    return (
        service_findings(cfg, project)
        + machine_type_findings(cfg, project)
        + gpu_quota_findings(cfg, project)
        + cpu_quota_findings(cfg, project)
        + node_account_findings(cfg, project)
        + reservation_findings(cfg, project)
    )
