"""GCP-only config rules (called by elastic_gpu.config.validate_stack)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from pydantic.alias_generators import to_camel

from elastic_gpu.config import ConfigRules
from elastic_gpu.errors import Problem, about
from elastic_gpu.facts import ReviewedRow
from elastic_gpu.gcp.autoprovisioning import PROVISIONER as AUTO_PROVISIONING
from elastic_gpu.gcp.reservations import reservation_problems
from elastic_gpu.gpu_catalog import GPU_MODELS, gpu_instance_type, gpu_instance_types
from elastic_gpu.validation import Bounds, TagRules, bounds_problems, cidr_problems, tag_problems

if TYPE_CHECKING:
    from elastic_gpu.config import GpuPoolConfig, StackConfig

#: One GKE node pool spans the zones; its autoscaling limits are totals (elastic_gpu/gcp/pools.py).
SPLITS_PER_ZONE = False
#: GKE: one node pool spans the zones (location policy ANY), whatever perZone says.
DEFAULT_PER_ZONE = False
#: GKE's managed autoscaler has no priority expander (a ComputeClass ranks spot above on-demand).
PRIORITY_EXPANDER = False
#: The stack setting `provisioner` on gcp: node pools of ours, or GKE's node pool auto-creation
#: (elastic_gpu/gcp/autoprovisioning).
PROVISIONERS = ("cluster-autoscaler", AUTO_PROVISIONING)


def provisioner_problems(where: str, provisioner: str | None) -> list[str]:
    """A program's GKE `provisioner` (GkeClusterArgs, GkeCluster.existing): None or one of PROVISIONERS."""
    if provisioner in (None, *PROVISIONERS):
        return []
    return [f"{where}provisioner: {provisioner!r} is not available on gcp; allowed: None, {', '.join(PROVISIONERS)}"]


#: Compute Engine regions (cloud.google.com/compute/docs/regions-zones, 2025). A new region needs a row.
REGIONS = (
    "us-central1", "us-east1", "us-east4", "us-east5", "us-south1", "us-west1", "us-west2", "us-west3",
    "us-west4", "northamerica-northeast1", "northamerica-northeast2", "northamerica-south1",
    "southamerica-east1", "southamerica-west1", "europe-central2", "europe-north1", "europe-north2",
    "europe-southwest1", "europe-west1", "europe-west2", "europe-west3", "europe-west4", "europe-west6",
    "europe-west8", "europe-west9", "europe-west10", "europe-west12", "me-central1", "me-central2",
    "me-west1", "africa-south1", "asia-east1", "asia-east2", "asia-northeast1", "asia-northeast2",
    "asia-northeast3", "asia-south1", "asia-south2", "asia-southeast1", "asia-southeast2",
    "australia-southeast1", "australia-southeast2",
)  # fmt: skip

#: GCP label requirements (cloud.google.com/resource-manager/docs/labels-overview): at most 64 labels,
#: keys 1..63 and values 0..63 characters of lowercase letters, digits, `_` and `-`; keys start with a
#: lowercase letter. (International characters are allowed too; we keep to ASCII.)
TAG_RULES = TagRules(
    what="label",
    max_count=64,
    key_max=63,
    value_max=63,
    key_pattern=r"[a-z][a-z0-9_-]*",
    value_pattern=r"[a-z0-9_-]*",
    pattern_help="lowercase letters, digits, '_' and '-'; keys start with a lowercase letter",
)
#: Project ids: 6 to 30 lowercase letters, digits or hyphens, starting with a letter, no trailing
#: hyphen (Resource Manager API, projects resource: projectId).
PROJECT_ID_PATTERN = r"[a-z][a-z0-9-]{4,28}[a-z0-9]"
#: "Nodes per node pool zone: 1,000" (cloud.google.com/kubernetes-engine/quotas, a limit, not a quota).
NODES_PER_POOL_ZONE = 1000
#: Boot disk: GKE takes at least 10 GB; a pd-balanced disk is at most 65,536 GB (Compute Engine disks).
DISK_GIB = Bounds(10, 65536, "GKE node boot disk")


@dataclass(frozen=True)
class BootDiskType(ReviewedRow):
    """The boot disk type the machine types of one series take (node pools, ComputeClass priorities and node
    auto-provisioning's defaults all read it through `boot_disk_type`)."""

    #: the series' machine types start with it (`a3-ultragpu-` of `a3-ultragpu-8g`)
    prefix: str
    disk_type: str
    source: str
    read_on: date


#: Every series the catalog has that does not take the default: A3 Ultra (H200) and A4 (B200) attach Hyperdisk
#: only, no Persistent Disk, so their boot disk is Hyperdisk Balanced (Compute Engine "Accelerator-optimized machine
#: family", supported disk types of A4 and A3 Ultra; Vertex AI DiskSpec.bootDiskType: "for A3U machines, the
#: default value is hyperdisk-balanced"). Every other series (E2, N1, G2, A2, A3 High and Mega) takes pd-balanced.
DEFAULT_BOOT_DISK_TYPE = "pd-balanced"
_DISK_SOURCE = "cloud.google.com/compute/docs/accelerator-optimized-machines (supported disk types)"
BOOT_DISK_TYPES = (
    BootDiskType("a3-ultragpu-", "hyperdisk-balanced", _DISK_SOURCE, date(2026, 12, 1)),
    BootDiskType("a4-highgpu-", "hyperdisk-balanced", _DISK_SOURCE, date(2026, 12, 1)),
)


def boot_disk_type(machine_type: str) -> str:
    """The boot disk type a node of `machine_type` takes."""
    row = next((r for r in BOOT_DISK_TYPES if machine_type.startswith(r.prefix)), None)
    return row.disk_type if row is not None else DEFAULT_BOOT_DISK_TYPE


#: The cluster's own network (when the stack does not bring one): a custom-mode VPC and one subnetwork whose
#: primary range (the nodes') is `cluster.networkCidr`, with two secondary ranges GKE takes for Pods and
#: Services (VPC-native). The two are GKE's own defaults in size (a /14 for Pods, a /20 for Services,
#: cloud.google.com/kubernetes-engine/docs/concepts/alias-ips), placed outside 10.0.0.0/16, the default
#: networkCidr; none may overlap another or the control plane's /28.
PODS_CIDR = "10.4.0.0/14"
SERVICES_CIDR = "10.8.0.0/20"
#: The IAM role a GKE node's service account needs and nothing more (logging, monitoring, image pulls from
#: the project; GKE "Configure GKE node service accounts": "Grant the minimum required role for GKE").
NODE_SERVICE_ACCOUNT_ROLE = "roles/container.defaultNodeServiceAccount"
#: A Google service account email: `<name>@<project>.iam.gserviceaccount.com`, or the Compute Engine default
#: `<number>-compute@developer.gserviceaccount.com`.
SERVICE_ACCOUNT_PATTERN = r"[a-z0-9][a-z0-9-]{0,62}@[a-z0-9][a-z0-9.-]*\.gserviceaccount\.com"
#: A service account id: 6 to 30 lowercase letters, digits and hyphens, starting with a letter (IAM
#: projects.serviceAccounts.create: accountId). The cluster's own node account is `<cluster>-nodes`.
SERVICE_ACCOUNT_ID_PATTERN = r"[a-z][a-z0-9-]{4,28}[a-z0-9]"
#: The APIs a GKE stack calls, which a new project has off (cluster.enableServices turns them on).
REQUIRED_SERVICES = ("compute.googleapis.com", "container.googleapis.com")
#: With the cluster's own node service account: creating one needs the IAM API.
IAM_SERVICE = "iam.googleapis.com"


def node_service_account_id(cluster_name: str) -> str:
    """The id of the node service account a cluster declares for itself."""
    return f"{cluster_name}-nodes"


def network_problems(
    field: Callable[[str], str],
    *,
    network: str | None,
    subnetwork: str | None,
    node_cidr: str,
    node_cidr_set: bool,
    control_plane_cidr: str,
    node_service_account: str | None,
    ref: Callable[[str], str] | None = None,
) -> list[str]:
    """The cluster's network and node identity, for the stack config and GkeClusterArgs alike: a
    subnetwork only with its network; no node range for a network the stack does not create; ranges
    that do not overlap; a service account given as its email. `field(snake_name)` spells a setting."""
    import ipaddress

    ref = ref or field  # how another setting is named inside a message
    problems: list[str] = []
    if subnetwork is not None and network is None:
        problems.append(
            f"{field('subnetwork')}: {subnetwork!r} needs {ref('network')}, the VPC network it belongs to "
            "(got no network)"
        )
    if network is not None and subnetwork is None:
        # Left out, GKE uses the subnetwork named after the network, which only an auto-mode network has: on a
        # custom-mode one (autoCreateSubnetworks false, as shared VPCs are) the cluster's creation fails.
        problems.append(
            f"{field('network')}: {network!r} needs {ref('subnetwork')}, the subnetwork of it the nodes use in the "
            f"cluster's region (got {ref('network')} without {ref('subnetwork')})"
        )
    if network is not None and node_cidr_set:
        problems.append(
            f"{field('network_cidr')}: sizes the network the stack creates, and {ref('network')} brings one "
            f"({network!r}); remove {ref('network_cidr')}"
        )
    if network is None:
        ranges = {field("network_cidr"): node_cidr, "Pods": PODS_CIDR, "Services": SERVICES_CIDR}
        ranges[ref("control_plane_cidr")] = control_plane_cidr
        try:
            nets = {k: ipaddress.ip_network(v) for k, v in ranges.items()}
        except ValueError:
            nets = {}  # reported by the range's own check
        names = list(nets)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if nets[a].overlaps(nets[b]):
                    # The message starts with the setting the user can change.
                    mine, other = (b, a) if a in ("Pods", "Services") else (a, b)
                    problems.append(
                        f"{mine}: {ranges[mine]} overlaps {other} ({ranges[other]}); the cluster's subnetwork takes "
                        f"the nodes' range, Pods {PODS_CIDR} and Services {SERVICES_CIDR}; allowed: a range outside"
                    )
    if node_service_account is not None and not re.fullmatch(SERVICE_ACCOUNT_PATTERN, node_service_account):
        problems.append(
            f"{field('node_service_account')}: {node_service_account!r} is not a service account email; allowed: "
            "<name>@<project>.iam.gserviceaccount.com"
        )
    return problems


#: Compute Engine machine type names: `<series>-<type>[-<vCPUs>...]`, the series of the machine families
#: (cloud.google.com/compute/docs/machine-resource: general purpose C4/C4A/C4D/C3/C3D/E2/N4/N2/N2D/N1/T2D/T2A,
#: compute-optimized H3/H4D/C2/C2D, memory-optimized X4/M4/M3/M2/M1, accelerator A4/A3/A2/G4/G2, storage Z3),
#: plus the shared-core e2-micro/small/medium. A name outside it is a typo or another cloud's.
MACHINE_TYPE_PATTERN = (
    r"(e2-(micro|small|medium)|(a2|a3|a4|a4x|c2|c2d|c3|c3d|c4|c4a|c4d|e2|f1|g1|g2|g4|h3|h4d|m1|m2|m3|m4|n1|n2|n2d|n4"
    r"|n4a|n4d|t2a|t2d|x4|z3)-(standard|highmem|highcpu|highgpu|megagpu|ultragpu|edgegpu|megamem|ultramem"
    r"|hypermem|custom|micro|small|medium)(-[0-9]+[a-z]*)*(-lssd|-metal)?)"
)
MACHINE_TYPE_SOURCE = "Compute Engine machine families"
#: A GKE node pool has one machine type (NodeConfig.machineType): a second would be ignored.
GENERAL_POOL_TYPES = (1, "a GKE node pool has one machine type, so a second one would be ignored; give one")
#: GKE runs its own autoscaler: the stack's `autoscaler` section is refused on gcp (config.IGNORED_SETTINGS).
AUTOSCALER_DURATIONS: dict[str, Bounds] = {}
#: A queued-provisioning (flex-start) node's run time, nodeConfig.maxRunDuration: flex-start capacity is
#: held "for up to seven days" (GKE concepts/dws), which is also what a node gets without the setting. The
#: default keeps that most, now declared; a pool sets less to bound what a stuck job can hold.
DWS_MAX_RUN_HOURS = Bounds(1, 168, "GKE flex-start nodes run at most seven days")
DEFAULT_DWS_MAX_RUN_HOURS = DWS_MAX_RUN_HOURS.high
#: GKE GPU sharing `maxSharedClientsPerGpu`: 2 to 48 (GKE ComputeClass reference, gpuSharing).
TIME_SLICING_REPLICAS = Bounds(2, 48, "GKE maxSharedClientsPerGpu is 2 to 48")


def gpus_per_node_selects(pool: GpuPoolConfig) -> bool:
    """N1 machine types take 1, 2, 4 or 8 attached GPUs: there gpusPerNode is the count."""
    row = gpu_instance_type("gcp", pool.instance_types[0]) if pool.instance_types else None
    return row is not None and bool(row.gpu_counts)


def warnings(cfg: StackConfig) -> list[str]:
    """What the stack's Kubernetes version means on its release channel (a floor, except on EXTENDED)."""
    from elastic_gpu.gcp.versions import floor_warning

    found = floor_warning(cfg.cluster.kubernetes_version, cfg.cluster.release_channel)
    return [f"cluster.releaseChannel: {found}"] if found else []


#: Which machine family each GPU attaches to (cloud.google.com/compute/docs/gpus).
GPU_FAMILIES: dict[str, str] = {
    "t4": "n1",
    "v100": "n1",
    "l4": "g2",
    "a100": "a2",
    "a100-80gb": "a2",
    "h100": "a3",
}


def machine_family(machine_type: str) -> str:
    return machine_type.split("-", 1)[0]


#: A Compute Engine zone: its region's name, "-" and a letter (`us-central1-a`).
ZONE_PATTERN = r"[a-z]+(-[a-z]+)+[0-9]+-[a-z]"


def location_region(location: str) -> str:
    """The region of a GKE location, which is a region (regional cluster) or a zone (zonal cluster)."""
    return location.rsplit("-", 1)[0] if re.fullmatch(ZONE_PATTERN, location) else location


def zone_problems(field: Callable[[int, str], str], region: str | None, zones: Sequence[str]) -> list[str]:
    """Each zone is a zone of `region` (any zone when the region is known only at deploy time); `field(i, zone)`
    names where it was written (`cluster.zones[0]`, `GkeCluster.existing 'x': zones[0]`)."""
    problems = []
    for i, zone in enumerate(zones):
        if region is None and not re.fullmatch(ZONE_PATTERN, zone):
            problems.append(f"{field(i, zone)}: {zone!r} is not a Compute Engine zone such as us-central1-a")
        elif region is not None and not re.fullmatch(re.escape(region) + r"-[a-z]", zone):
            problems.append(
                f"{field(i, zone)}: {zone!r} is not a zone of region {region!r}; allowed: {region}-a, {region}-b, ..."
            )
    return problems


def private_endpoint_problems(cfg: StackConfig) -> list[str]:
    """The control plane's range is a /28; a private endpoint needs private nodes."""
    problems = []
    if cidr_problems("cluster.controlPlaneCidr", cfg.cluster.control_plane_cidr, range(28, 29)):
        cidr = cfg.cluster.control_plane_cidr
        problems.append(f"cluster.controlPlaneCidr: {cidr!r} is not an IPv4 /28 (GKE's control plane range)")
    if not cfg.cluster.api_access.public and not cfg.cluster.private_nodes:
        problems.append(
            "cluster.apiAccess.public: a GKE private endpoint needs private nodes; set cluster.privateNodes: true "
            "(got public: false with privateNodes: false)"
        )
    return problems


def validate(cfg: StackConfig) -> list[str]:
    problems: list[str] = private_endpoint_problems(cfg)
    c = cfg.cluster
    problems += network_problems(
        lambda key: f"cluster.{to_camel(key)}",
        network=c.network,
        subnetwork=c.subnetwork,
        node_cidr=c.network_cidr,
        node_cidr_set="network_cidr" in c.model_fields_set,
        control_plane_cidr=c.control_plane_cidr,
        node_service_account=c.node_service_account,
    )
    region = c.region
    if region not in REGIONS:
        return [*problems, f"cluster.region: {region!r} is not a GCP region; allowed: {', '.join(REGIONS)}"]
    if c.project is not None and not re.fullmatch(PROJECT_ID_PATTERN, c.project):
        problems.append(
            f"cluster.project: {c.project!r} cannot be a GCP project id; allowed: 6 to 30 lowercase letters, "
            "digits and '-', starting with a letter and not ending with '-'"
        )
    problems += tag_problems("tags", cfg.tags, TAG_RULES)
    limit = NODES_PER_POOL_ZONE * len(c.zones)
    for where, size in [("generalPool", cfg.general_pool.max_size)] + [
        (f"gpuPools[{i}]", p.max_size) for i, p in enumerate(cfg.gpu_pools)
    ]:
        if size > limit:
            problems.append(
                f"{where}.maxSize: {size} nodes; allowed: at most {NODES_PER_POOL_ZONE} per zone of the node "
                f"pool, {limit} over {len(c.zones)} zone(s) (GKE limit 'Nodes per node pool zone')"
            )
    problems += zone_problems(lambda i, _: f"cluster.zones[{i}]", region, c.zones)
    if not c.project:
        problems.append("cluster.project: required on gcp (the GCP project id that holds the cluster)")
    if c.node_auto_provisioning is not None and cfg.provisioner != AUTO_PROVISIONING:
        problems.append(
            f"cluster.nodeAutoProvisioning: {str(c.node_auto_provisioning).lower()} is a setting of provisioner "
            f"{AUTO_PROVISIONING} (got provisioner {cfg.provisioner}); allowed: leave it out, or set provisioner: "
            f"{AUTO_PROVISIONING}"
        )
    gp = cfg.general_pool
    per_zone = -(-gp.min_size // len(c.zones))
    if per_zone * len(c.zones) > gp.max_size:
        problems.append(
            f"generalPool.maxSize: GKE starts {per_zone} node(s) in each of the {len(c.zones)} zones, "
            f"so it must be >= {per_zone * len(c.zones)} (got {gp.max_size})"
        )
    for i, pool in enumerate(cfg.gpu_pools):
        problems += _pool_problems(cfg, f"gpuPools[{i}]", pool)
    return problems


def _pool_problems(cfg: StackConfig, where: str, pool: GpuPoolConfig) -> list[str]:
    problems: list[str] = []
    if pool.gpu in GPU_FAMILIES:
        family = GPU_FAMILIES[pool.gpu]
        for j, machine in enumerate(pool.instance_types or []):
            if machine_family(machine) != family:
                attachable = [t.name for t in gpu_instance_types("gcp") if t.gpu == pool.gpu]
                problems.append(
                    f"{where}.instanceTypes[{j}]: gpu {pool.gpu!r} ({GPU_MODELS[pool.gpu].name}) cannot attach to "
                    f"machine type {machine!r} (family {machine_family(machine)}); it goes on {family}: "
                    f"{', '.join(attachable)}"
                )
    gpus = pool.gpus_per_node if "gpus_per_node" in pool.model_fields_set else None
    problems += node_pool_problems(
        lambda key: f"{where}.{to_camel(key)}",
        list(pool.instance_types or []),
        gpus,
        "gpus_per_node",
        queued=pool.queued_provisioning,
        min_size=pool.min_size,
        spot=pool.spot,
        max_run_hours=pool.max_run_hours,
    )
    problems += reservation_problems(
        lambda key: f"{where}.{to_camel(key)}",
        pool.reservations,
        pool_zones=list(cfg.cluster.zones),
        max_size=pool.max_size,
        on_demand_fallback=pool.on_demand_fallback,
        queued=pool.queued_provisioning,
    )
    return problems


def node_pool_problems(
    field: Callable[[str], str],
    instance_types: list[str],
    gpus: int | None,
    gpus_key: str,
    *,
    queued: bool,
    min_size: int,
    spot: bool,
    max_run_hours: int | None = None,
) -> list[str]:
    """A GKE GPU node pool's rules, for the stack config and SpotGpuPoolArgs alike: one machine type, the
    GPU count it takes, and queued provisioning's capacity; `field(snake_name)` spells a setting."""
    problems: list[str] = []
    if len(instance_types) > 1:
        problems.append(
            Problem(
                f"{field('instance_types')}: a GKE node pool has one machine type (got {instance_types}); "
                "allowed: a list of one",
                "instance_types",
            )
        )
    row = gpu_instance_type("gcp", instance_types[0]) if instance_types else None
    if row is not None and gpus is not None and gpus != row.gpus:
        allowed = row.gpu_counts or (row.gpus,)
        if gpus not in allowed:
            problems.append(
                Problem(
                    f"{field(gpus_key)}: {row.name!r} takes {', '.join(map(str, allowed))} x {row.model.name} "
                    f"(got {gpus})",
                    gpus_key,
                )
            )
    if max_run_hours is not None and not queued:
        problems.append(
            Problem(
                f"{field('max_run_hours')}: bounds how long a queued-provisioning (flex-start) node runs; set "
                f"{field('queued_provisioning')}: true or remove it (got {max_run_hours})",
                "max_run_hours",
            )
        )
    elif max_run_hours is not None:
        problems += about(
            "max_run_hours", bounds_problems(field("max_run_hours"), max_run_hours, DWS_MAX_RUN_HOURS, " h")
        )
    if queued:
        if min_size > 0:
            problems.append(
                Problem(
                    f"{field('min_size')}: a queued-provisioning pool gets nodes only through ProvisioningRequests; "
                    f"allowed: 0 (got {min_size})",
                    "min_size",
                )
            )
        if spot:
            problems.append(
                Problem(
                    f"{field('spot')}: a queued-provisioning pool uses flex-start capacity, not spot; "
                    "allowed: false (got true)",
                    "spot",
                )
            )
    return problems


#: The rules above as the deploy protocol's record (elastic_gpu/provider.py ConfigRules): a rule missing here fails
#: the type check.
RULES = ConfigRules(
    problems=validate,
    warnings=warnings,
    gpus_per_node_selects=gpus_per_node_selects,
    provisioners=PROVISIONERS,
    splits_per_zone=SPLITS_PER_ZONE,
    default_per_zone=DEFAULT_PER_ZONE,
    priority_expander=PRIORITY_EXPANDER,
    machine_type_pattern=MACHINE_TYPE_PATTERN,
    machine_type_source=MACHINE_TYPE_SOURCE,
    tag_rules=TAG_RULES,
    disk_gib=DISK_GIB,
    time_slicing_replicas=TIME_SLICING_REPLICAS,
    autoscaler_durations=AUTOSCALER_DURATIONS,
    general_pool_types=GENERAL_POOL_TYPES,
)
