"""The account preflight's GKE part (elastic_gpu/preflight.py): the project's enabled services, its GPU quotas
(per region and model, spot and on-demand, and all regions), its vCPU quotas (the region's and all regions')
against what the pools need at their max, and the zones that offer each machine type, read through pulumi-gcp's
invokes."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pulumi_gcp as gcp

from elastic_gpu.gcp.autoprovisioning.cluster import machine_shape
from elastic_gpu.gcp.config_rules import NODE_SERVICE_ACCOUNT_ROLE
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.preflight import Finding, QuotaNeed, add_need, attempt, quota_findings, unread

if TYPE_CHECKING:
    from elastic_gpu.config import GpuPoolConfig, StackConfig

#: The services a GKE stack's `pulumi up` calls (the cluster, its nodes and disks).
SERVICES = ("compute.googleapis.com", "container.googleapis.com")
COMPUTE = "compute.googleapis.com"
#: Cloud Quotas ids of the GPU quotas per GPU model: on-demand `NVIDIA-<M>-GPUS-per-project-region`, spot
#: (spot VMs draw on the preemptible quota) `PREEMPTIBLE-NVIDIA-<M>-GPUS-per-project-region`; a model without a
#: row (H100: `GPUS-PER-GPU-FAMILY-per-project-region`) is not checked here.
GPU_QUOTA_MODELS = {"t4": "T4", "l4": "L4", "v100": "V100", "a100": "A100", "a100-80gb": "A100-80GB"}
ALL_REGIONS = "GPUS-ALL-REGIONS-per-project"
#: Cloud Quotas ids of the vCPU quotas: `CPUS-per-project-region` (the `CPUS` metric of `gcloud compute regions
#: describe`) counts the E2 and N1 series (other series, such as G2 and A2, draw on a quota of their own, not
#: checked here); spot VMs draw on it too while the project has no PREEMPTIBLE_CPUS quota, as a new one has none.
#: `CPUS-ALL-REGIONS-per-project` counts every VM's vCPUs in every region.
CPUS, CPUS_ALL_REGIONS = "CPUS-per-project-region", "CPUS-ALL-REGIONS-per-project"
CPUS_SERIES = ("e2", "n1")


def quota_id(gpu: str, spot: bool) -> str | None:
    model = GPU_QUOTA_MODELS.get(gpu)
    if model is None:
        return None
    return f"{'PREEMPTIBLE-' if spot else ''}NVIDIA-{model}-GPUS-per-project-region"


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


def request(project: str, qid: str, value: int, region: str | None) -> str:
    dims = f" --dimensions=region={region}" if region else ""
    return (
        f"gcloud beta quotas preferences create --service={COMPUTE} --quota-id={qid} --preferred-value={value}"
        f"{dims} --project={project} --justification='Kubernetes node pools'"
    )


def gpus_per_node(cfg: StackConfig, pool: GpuPoolConfig) -> tuple[str | None, int]:
    """The pool's GPU model key and GPUs per node (N1 takes `gpusPerNode`; G2, A2 and A3 fix theirs)."""
    from elastic_gpu.config import gpu_spec

    spec = gpu_spec(pool)
    rows = [r for t in cfg.instance_types(pool) if (r := gpu_instance_type("gcp", t, spec)) is not None]
    if not rows:
        return None, 0
    return rows[0].gpu, max(pool.gpus_per_node if r.gpu_counts else r.gpus for r in rows)


def service_findings(cfg: StackConfig, project: str) -> list[Finding]:
    found = []
    for service in SERVICES:
        # An API that is not enabled reads back without an id (terraform-provider-google
        # resource_google_project_service.go resourceGoogleProjectServiceRead sets it to "").
        if not gcp.projects.get_project_service(project=project, service=service).id:
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


def gpu_quota_findings(cfg: StackConfig, project: str) -> list[Finding]:
    region = cfg.cluster.region
    regional: dict[tuple[str, bool], dict[str, int]] = {}
    total: dict[str, dict[str, int]] = {}
    for p in cfg.gpu_pools:
        gpu, per_node = gpus_per_node(cfg, p)
        if gpu is None:
            continue
        sizes = [(p.spot, p.max_size)]
        if p.on_demand_fallback:
            sizes.append((False, p.max_size if p.fallback_max_size is None else p.fallback_max_size))
        for spot, nodes in sizes:
            if (qid := quota_id(gpu, spot)) is not None:
                add_need(regional, (qid, spot), p.name, nodes * per_node)
            add_need(total, ALL_REGIONS, p.name, nodes * per_node)
    asked: list[tuple[tuple[str, str | None], str, dict[str, int]]]
    asked = [((qid, region), "spot-quota" if spot else "on-demand-quota", by) for (qid, spot), by in regional.items()]
    asked += [((qid, None), "gpu-quota", by) for qid, by in total.items()]
    found = []
    for (qid, where), check, by_pool in asked:
        have = quota(project, qid, where)
        if isinstance(have, str):
            found.append(quota_unread(by_pool, qid, where, project, have))
            continue
        need = QuotaNeed(f"{qid} in {where}" if where else qid, by_pool, have, "GPUs")
        found += quota_findings([need], check, lambda n, qid=qid, where=where: request(project, qid, n.need, where))
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
        fallback = (p.max_size if p.fallback_max_size is None else p.fallback_max_size) if p.on_demand_fallback else 0
        sizes.append((p.name, p.max_size + fallback, cfg.instance_types(p)))
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
    return [
        Finding(
            "cluster",
            "node-service-account",
            "warning",
            f"the node service account {email} (cluster.nodeServiceAccount) lacks {NODE_SERVICE_ACCOUNT_ROLE} on "
            f"the project {project}: the nodes cannot write their logs and metrics",
            grant,
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
    )
