"""Azure-only config rules (called by elastic_gpu.config.validate_stack)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from elastic_gpu.azure.cluster import AKS_DURATION_PATTERN, AKS_EXPANDERS, AZURE_ZONES, zoneless_region_problems
from elastic_gpu.azure.node_provisioning import PROVISIONER as NAP
from elastic_gpu.azure.pools import MAX_VM_SIZES, agent_pool_name_problems, agent_pool_stem
from elastic_gpu.azure.reservations import reservation_problems
from elastic_gpu.azure.system_pool import MAX_AGENT_POOL_NAME
from elastic_gpu.config import ConfigRules
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.settings.azure import DEFAULT_AKS_NETWORK_PLUGIN, SystemPoolConfig, spot_max_price_problems
from elastic_gpu.settings.base import Spelling
from elastic_gpu.validation import Bounds, TagRules, bounds_problems, instance_type_problems, said, tag_problems

if TYPE_CHECKING:
    from elastic_gpu.config import GpuPoolConfig, StackConfig

#: A GPU pool's max is split over one agent pool per zone (elastic_gpu/azure/pools.py).
SPLITS_PER_ZONE = True
#: A GPU pool's agent pools by default: one across the zones per VM size. Zonal spot pools take turns in
#: backoff when a scale-set-level error is seen only at maxNodeProvisionTime (kubernetes/autoscaler#8323)
#: and reach the fallback after ~93 min (`simulate`, its timeout regime); one pool reaches it in ~16 min.
DEFAULT_PER_ZONE = False
#: AKS's managed autoscaler honours the priority expander's ConfigMap.
PRIORITY_EXPANDER = True
#: The stack setting `provisioner` on azure: agent pools and AKS's managed cluster-autoscaler, or node
#: auto-provisioning (AKS-managed Karpenter, elastic_gpu/azure/node_provisioning).
PROVISIONERS = ("cluster-autoscaler", NAP)

#: Azure regions with availability zones or AKS (`az account list-locations`, Azure "products by
#: region", 2025). A new region needs a row here.
REGIONS = (
    "eastus", "eastus2", "westus", "westus2", "westus3", "centralus", "northcentralus", "southcentralus",
    "westcentralus", "canadacentral", "canadaeast", "brazilsouth", "mexicocentral", "northeurope",
    "westeurope", "uksouth", "ukwest", "francecentral", "germanywestcentral", "norwayeast", "swedencentral",
    "switzerlandnorth", "polandcentral", "italynorth", "spaincentral", "austriaeast", "belgiumcentral",
    "eastasia", "southeastasia", "japaneast", "japanwest", "koreacentral", "koreasouth", "centralindia",
    "southindia", "westindia", "australiaeast", "australiasoutheast", "australiacentral", "newzealandnorth",
    "indonesiacentral", "malaysiawest", "uaenorth", "qatarcentral", "israelcentral", "southafricanorth",
)  # fmt: skip

#: Azure tag limits (learn.microsoft.com/azure/azure-resource-manager/management/tag-resources,
#: "Limitations"): 50 name/value pairs per resource, name 512 and value 256 characters, names without
#: < > % & \ ? /; the prefixes microsoft, azure and windows are reserved.
TAG_RULES = TagRules(
    what="tag",
    max_count=50,
    key_max=512,
    value_max=256,
    forbidden_key_chars="<>%&\\?/",
    reserved_key_prefixes=("microsoft", "azure", "windows"),
)
#: Agent pool `count`/`maxCount`: 0..1000 nodes for User pools (ManagedClusterAgentPoolProfile.count).
NODES_PER_POOL = Bounds(0, 1000, "AKS agent pool count, ARM API")
#: Agent pool `osDiskSizeGB`: at most 2048 (Microsoft.ContainerService agentPools template reference).
DISK_GIB = Bounds(1, 2048, "AKS osDiskSizeGB, ARM API")


#: Azure VM size names: `Standard_<family><vCPUs>[-<constrained>]<features>[_<accelerator>][_v<version>]`
#: ("Azure virtual machine sizes naming conventions", learn.microsoft.com/azure/virtual-machines/
#: vm-naming-conventions). A name outside it is a typo or another cloud's.
MACHINE_TYPE_PATTERN = r"Standard_[A-Z]{1,3}[0-9]+(-[0-9]+)?[a-z]*(_[A-Z][A-Za-z0-9]*)?(_v[0-9]+)?"
MACHINE_TYPE_SOURCE = "Azure VM size naming conventions"
#: An AKS agent pool has one VM size (ManagedClusterAgentPoolProfile.vmSize).
GENERAL_POOL_TYPES = (1, "an AKS agent pool has exactly one VM size; give one")
#: The AKS managed autoscaler takes whole minutes: "Values must be an integer followed by an 'm'. No unit of time
#: other than minutes (m) is supported" (ManagedClusterPropertiesAutoScalerProfile, learn.microsoft.com/javascript/
#: api/@azure-rest/arm-containerservice/managedclusterpropertiesautoscalerprofile). The stack passes the values
#: as written, so they are refused here by their config field, not later by AksClusterArgs.
DURATION_FORMAT = (AKS_DURATION_PATTERN, "whole minutes, an integer followed by 'm' such as 10m or 60m (AKS)")
#: The bounds of sense are the self-run autoscaler's (aws/config_rules.py AUTOSCALER_DURATIONS has the reasons).
AUTOSCALER_DURATIONS = {
    "max_node_provision_time": Bounds(5 * 60, 2 * 3600, "a GPU node needs minutes to join; over 2h a failed group "
                                      "holds up the fallback for hours"),
    "scale_down_unneeded_time": Bounds(60, 24 * 3600, "over 24h idle GPU nodes defeat scale-to-zero"),
    "scale_down_delay_after_add": Bounds(60, 24 * 3600, "over 24h idle GPU nodes defeat scale-to-zero"),
}  # fmt: skip
#: AKS agent pools run at most 250 pods per node (maxPods 10..250, AKS "Configure Azure CNI"); the pools tell
#: the autoscaler the shared count by a tag (elastic_gpu/azure/node_template.py), so this bound keeps it sane.
TIME_SLICING_REPLICAS = Bounds(2, 250, "AKS maxPods is at most 250 per node")
#: Agent pool `count` of a System pool: 1..1000 (ManagedClusterAgentPoolProfileProperties.count).
SYSTEM_POOL_NODES = Bounds(1, 1000, "AKS System pool count, ARM API")


def gpus_per_node_selects(pool: GpuPoolConfig) -> bool:
    """An Azure VM size fixes its GPU count: gpusPerNode only picks sizes from `gpu`."""
    return False


def warnings(cfg: StackConfig) -> list[str]:
    if cfg.provisioner != NAP:
        return []
    system = cfg.cluster.system_pool or SystemPoolConfig()
    fixed = [
        f"{path}.maxSize: {high} is not used under provisioner karpenter: AKS creates no autoscaling agent "
        f"pool under node auto-provisioning, so the pool keeps {low} nodes (its minSize)"
        for path, low, high in (
            ("cluster.systemPool", system.min_size, system.max_size),
            ("generalPool", cfg.general_pool.min_size, cfg.general_pool.max_size),
        )
        if high > low
    ]
    return fixed


def cluster_items(cfg: StackConfig) -> list[str]:
    """The System pool's VM size: priced like the pools (prices overrides, cost)."""
    return [(cfg.cluster.system_pool or SystemPoolConfig()).vm_size]


def validate(cfg: StackConfig) -> list[str]:
    problems: list[str] = []
    c = cfg.cluster
    if c.region not in REGIONS:
        return [f"cluster.region: {c.region!r} is not an Azure region; allowed: {', '.join(REGIONS)}"]
    problems += tag_problems("tags", cfg.tags, TAG_RULES)
    problems += bounds_problems("generalPool.maxSize", cfg.general_pool.max_size, NODES_PER_POOL)
    zones = max(len(c.zones), 1)  # no zone: one regional agent pool per VM size
    for i, pool in enumerate(cfg.gpu_pools):
        per_pool = -(-pool.max_size // zones) if pool.per_zone else pool.max_size
        if per_pool > NODES_PER_POOL.high:
            problems.append(
                f"gpuPools[{i}].maxSize: {pool.max_size} gives agent pools of up to {per_pool} nodes; allowed: "
                f"at most {NODES_PER_POOL.high} per agent pool ({NODES_PER_POOL.source})"
            )
    for i, zone in enumerate(c.zones):
        if zone not in AZURE_ZONES:
            problems.append(f"cluster.zones[{i}]: {zone!r} is not an Azure zone; allowed: {', '.join(AZURE_ZONES)}")
    problems += zoneless_region_problems("cluster.", c.region, c.zones)

    system = c.system_pool or SystemPoolConfig()
    problems += [
        p.replace("cluster.systemPool.vmSize[0]", "cluster.systemPool.vmSize", 1)
        for p in instance_type_problems("cluster.systemPool.vmSize", cfg.provider, [system.vm_size])
    ]
    problems += bounds_problems("cluster.systemPool.maxSize", system.max_size, SYSTEM_POOL_NODES)
    if system.spot:
        problems.append("cluster.systemPool.spot: AKS does not allow a spot System pool; allowed: false (got true)")
    if system.min_size < 1:
        problems.append(
            f"cluster.systemPool.minSize: an AKS System pool needs at least 1 node; allowed: >= 1 "
            f"(got {system.min_size})"
        )
    if system.max_size < system.min_size:
        problems.append(
            f"cluster.systemPool.maxSize: must be >= minSize (got minSize={system.min_size}, maxSize={system.max_size})"
        )
    if system.vm_size.startswith("Standard_B"):
        problems.append(
            f"cluster.systemPool.vmSize: {system.vm_size!r}: AKS does not support B-series VMs in System pools"
        )

    if cfg.provisioner == NAP and (plugin := c.network_plugin or DEFAULT_AKS_NETWORK_PLUGIN) != "azure":
        problems.append(
            f"cluster.networkPlugin: node auto-provisioning (provisioner karpenter) needs Azure CNI; "
            f"allowed: azure (got {said(plugin)})"
        )
    gp = cfg.general_pool
    if gp.spot:
        problems.append(
            "generalPool.spot: the general pool runs system add-ons and must be on-demand on AKS; "
            "allowed: false (got true)"
        )

    if cfg.autoscaler.expander[0] not in AKS_EXPANDERS:
        problems.append(
            f"autoscaler.expander[0]: {cfg.autoscaler.expander[0]!r} is not an AKS expander; "
            f"allowed first: {', '.join(AKS_EXPANDERS)} (AKS takes one expander, the chain's first)"
        )

    stems: dict[str, str] = {}
    for i, pool in enumerate(cfg.gpu_pools):
        where = f"gpuPools[{i}]"
        problems += agent_pool_name_problems(f"{where}.", pool.name)
        stem = agent_pool_stem(pool.name)
        if stem in stems and stems[stem] != pool.name:
            problems.append(
                f"{where}.name: {pool.name!r} gives the same AKS agent-pool names as {stems[stem]!r} "
                f"(hyphens are dropped, at most {MAX_AGENT_POOL_NAME} characters); rename one"
            )
        stems.setdefault(stem, pool.name)
        if pool.spot_max_price is not None and cfg.provisioner == NAP:
            problems.append(
                f"{where}.spotMaxPrice: node auto-provisioning (provisioner karpenter) always bids up to the "
                f"on-demand price; leave it unset (got {said(pool.spot_max_price)})"
            )
        else:
            problems += spot_max_price_problems(Spelling(f"{where}.", stack_file=True), pool.spot_max_price)
        if pool.instance_types and len(pool.instance_types) > MAX_VM_SIZES:
            count = len(pool.instance_types)
            problems.append(f"{where}.instanceTypes: at most {MAX_VM_SIZES} VM sizes per pool on AKS (got {count})")
        # Configured VM sizes, or the ones picked from `gpu` (then the message names `gpu`).
        sizes = list(pool.instance_types or (cfg.instance_types(pool) if pool.gpu else []))
        problems += reservation_problems(
            Spelling(f"{where}.", stack_file=True), pool, nap=cfg.provisioner == NAP, sizes=len(sizes)
        )
        for j, vm_size in enumerate(sizes):
            row = gpu_instance_type("azure", vm_size)
            if row is not None and row.regions is not None and c.region not in row.regions:
                field = f"instanceTypes[{j}]" if pool.instance_types else f"gpu ({pool.gpu!r} picks {vm_size})"
                problems.append(
                    f"{where}.{field}: {vm_size!r} is not sold in region {c.region!r}; "
                    f"allowed regions: {', '.join(row.regions)}"
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
    duration_format=DURATION_FORMAT,
)
