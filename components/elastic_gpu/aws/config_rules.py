"""AWS-only config rules (called by elastic_gpu.config.validate_stack), each with the limit's source."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from elastic_gpu.aws.network import MAX_ZONES
from elastic_gpu.aws.partitions import partition_problems
from elastic_gpu.aws.reservations import reservation_problems
from elastic_gpu.config import ConfigRules
from elastic_gpu.durations import parse_duration
from elastic_gpu.settings.base import Spelling
from elastic_gpu.validation import (
    PODS_PER_NODE,
    Bounds,
    TagRules,
    said,
    tag_problems,
)

if TYPE_CHECKING:
    from elastic_gpu.config import GpuPoolConfig, StackConfig

#: A GPU pool's max is split over one node group per zone (elastic_gpu/aws/pools.py).
SPLITS_PER_ZONE = True
#: A GPU pool's node groups by default: one per zone (the autoscaler backs off a zone's group, asks the next
#: zone's, and reaches the fallback in minutes: `simulate aws-dev`).
DEFAULT_PER_ZONE = True
#: The stack setting `provisioner` on aws: managed node groups and the cluster-autoscaler, or Karpenter
#: (elastic_gpu/aws/karpenter).
PROVISIONERS = ("cluster-autoscaler", "karpenter")
KARPENTER = "karpenter"
#: The self-run cluster-autoscaler has the priority expander that ranks spot above the fallback.
PRIORITY_EXPANDER = True

#: Commercial, GovCloud and China regions ("Regions and Availability Zones", AWS docs / `aws ec2
#: describe-regions --all-regions`, 2025). A new region needs a row here.
REGIONS = (
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "ca-west-1", "mx-central-1",
    "sa-east-1", "eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1", "eu-central-2", "eu-north-1",
    "eu-south-1", "eu-south-2", "il-central-1", "me-south-1", "me-central-1", "af-south-1",
    "ap-east-1", "ap-east-2", "ap-south-1", "ap-south-2", "ap-northeast-1", "ap-northeast-2",
    "ap-northeast-3", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4",
    "ap-southeast-5", "ap-southeast-7", "us-gov-east-1", "us-gov-west-1", "cn-north-1", "cn-northwest-1",
)  # fmt: skip

#: AWS tag restrictions (e.g. docs.aws.amazon.com/AmazonECS/latest/APIReference/API_Tag.html, the same
#: in every service): 50 tags per resource, key 1..128 and value 0..256 characters, no `aws:` prefix;
#: keys and values of Unicode letters, digits, white space and `_ . : / = + - @` (the API's pattern
#: `^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$`, docs.aws.amazon.com/efs/latest/ug/API_Tag.html).
#: The subnets add up to 3 tags of their own (Name, kubernetes.io/cluster/<name>, kubernetes.io/role/*),
#: so the stack's own tags may use 47; `Name` is set by the components.
TAG_RULES = TagRules(
    what="tag",
    max_count=50 - 3,
    key_max=128,
    value_max=256,
    reserved_key_prefixes=("aws:",),
    reserved_value_prefixes=("aws:",),
    reserved_keys=("Name",),
    allowed_punctuation="_.:/=+-@",
)
#: EKS quota "Nodes per managed node group": 450 by default, adjustable (same page).
NODES_PER_GROUP_QUOTA = 450
#: gp3 root volume size (EC2 LaunchTemplateEbsBlockDeviceRequest.VolumeSize: gp2 and gp3 1 - 16,384 GiB).
#: Low end: the EKS-optimized AMIs' root snapshot is 20 GiB (awslabs/amazon-eks-ami #1581 for AL2023) and EC2
#: refuses a volume smaller than its snapshot ("Volume of size 10GB is smaller than snapshot ... expect size>= 20GB").
DISK_GIB = Bounds(20, 16384, "gp3 volume size (EC2 API); at least the EKS AMIs' 20 GiB root snapshot")


#: EC2 instance type names: `<family><generation>[<options>].<size>` ("Instance type naming conventions",
#: docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html); the family letters are the
#: documented series (general purpose m/t/mac/a, compute c, memory r/x/z/u, storage d/h/i/im/is, accelerated
#: f/g/gr/p/dl/inf/trn/vt, hpc). A name outside it is a typo or another cloud's.
MACHINE_TYPE_PATTERN = (
    r"(u-[0-9]+tb[0-9]|(a|c|d|dl|f|g|gr|h|hpc|i|im|inf|is|m|mac|p|r|t|trn|u|vt|x|z)[0-9]+[a-z0-9-]*)"
    r"\.(nano|micro|small|medium|large|xlarge|[0-9]+xlarge|metal(-[0-9]+xl)?)"
)
MACHINE_TYPE_SOURCE = "EC2 instance type naming conventions"
#: Whole cluster-autoscaler durations (the self-run autoscaler takes any Go duration). Bounds of sense, not of
#: the API: a node needs minutes to join (VM start, and for a GPU node the driver: 15m is the upstream default
#: and the measured cold-GPU time in kubernetes/autoscaler#3464), so below 5m the autoscaler gives up on nodes
#: that were coming and pays for the next group too; above 2h a failed group holds up the fallback for hours. A
#: scale-down delay beyond 24h keeps idle GPU nodes a day, which defeats scale-to-zero.
AUTOSCALER_DURATIONS = {
    "max_node_provision_time": Bounds(5 * 60, 2 * 3600, "a GPU node needs minutes to join; over 2h a failed group "
                                      "holds up the fallback for hours"),
    "scale_down_unneeded_time": Bounds(1, 24 * 3600, "over 24h idle GPU nodes defeat scale-to-zero"),
    "scale_down_delay_after_add": Bounds(1, 24 * 3600, "over 24h idle GPU nodes defeat scale-to-zero"),
}  # fmt: skip
#: NVIDIA time-slicing replicas per GPU: each replica is a pod slot, and a node runs at most 110 pods
#: (Kubernetes; the EKS AMI's max-pods is lower still on small types).
TIME_SLICING_REPLICAS = PODS_PER_NODE
#: How many instance types one general pool may list: an EKS managed node group takes several (None: no
#: limit checked here).
GENERAL_POOL_TYPES: tuple[int, str] | None = None


def gpus_per_node_selects(pool: GpuPoolConfig) -> bool:
    """An EC2 instance type fixes its GPU count: gpusPerNode only picks types from `gpu`."""
    return False


def node_groups(cfg: StackConfig) -> list[tuple[str, int]]:
    """(config path, max nodes) of every managed node group the stack declares (elastic_gpu/aws/pools.py)."""
    zones = len(cfg.cluster.zones)
    groups = [("generalPool.maxSize", cfg.general_pool.max_size)]
    for i, p in enumerate(cfg.gpu_pools):
        if p.per_zone:
            groups += [(f"gpuPools[{i}].maxSize", -(-p.max_size // zones))] * zones
        else:
            groups.append((f"gpuPools[{i}].maxSize", p.max_size))
        if p.on_demand_fallback:  # one fallback group per zone, sharing fallbackMaxSize (default maxSize)
            groups += [(f"gpuPools[{i}].fallbackMaxSize", -(-p.fallback_total // zones))] * zones
    return groups


def warnings(cfg: StackConfig) -> list[str]:
    """What deploys only after a quota increase. (The managed node groups per cluster are read from the
    account by the preflight: elastic_gpu/aws/preflight.py.)"""
    out = []
    groups = node_groups(cfg)
    for where, biggest in sorted(set(groups)):
        if biggest > NODES_PER_GROUP_QUOTA:
            out.append(
                f"{where}: a node group of up to {biggest} nodes; the default EKS quota is {NODES_PER_GROUP_QUOTA} "
                "nodes per managed node group: request an increase before the autoscaler needs them"
            )
    return out


#: An availability-zone id (`use1-az1`, `euc1-az2`): one physical zone in every account, but EC2 and EKS
#: take the zone's name (`eu-central-1b`) in subnets and node groups ("AZ IDs", AWS RAM User Guide).
AZ_ID_PATTERN = r"[a-z]{2,5}[0-9]-az[0-9]+"
#: A zone name: the region's name and a letter (`us-east-1a`, `us-gov-west-1b`).
ZONE_NAME_PATTERN = r"[a-z]{2}(-[a-z]+)+-[0-9]+[a-z]"


def zone_problems(field: Callable[[int, str], str], region: str | None, zones: Sequence[str]) -> list[str]:
    """Each zone is a zone name of `region` (of any region when it is not known before deployment), not
    an AZ id; `field(i, zone)` names where the zone was written (`cluster.zones[0]`, `subnet_ids['x']`)."""
    problems = []
    example = f"{region or 'us-east-1'}a"
    for i, zone in enumerate(zones):
        if re.fullmatch(AZ_ID_PATTERN, zone):
            problems.append(
                f"{field(i, zone)}: {zone!r} is an availability-zone id; EC2 and EKS take the zone's name, such as "
                f"{example} (`aws ec2 describe-availability-zones --zone-ids {zone}` shows it)"
            )
        elif region is None and not re.fullmatch(ZONE_NAME_PATTERN, zone):
            problems.append(f"{field(i, zone)}: {zone!r} is not an availability-zone name such as {example}")
        elif region is not None and not re.fullmatch(re.escape(region) + r"[a-z]", zone):
            problems.append(
                f"{field(i, zone)}: {zone!r} is not a zone of region {region!r}; allowed: {region}a, {region}b, ..."
            )
    return problems


def validate(cfg: StackConfig) -> list[str]:
    problems: list[str] = []
    region = cfg.cluster.region
    if region not in REGIONS:
        return [f"cluster.region: {region!r} is not an AWS region; allowed: {', '.join(REGIONS)}"]
    if partition_refused := partition_problems("cluster.region", region):
        return partition_refused
    problems += tag_problems("tags", cfg.tags, TAG_RULES)
    for i, pool in enumerate(cfg.gpu_pools):
        problems += reservation_problems(
            Spelling(f"gpuPools[{i}].", stack_file=True),
            pool.reservations,
            karpenter=cfg.provisioner == KARPENTER,
            max_size=pool.max_size,
            on_demand_fallback=pool.on_demand_fallback,
        )
    problems += zone_problems(lambda i, _: f"cluster.zones[{i}]", region, cfg.cluster.zones)
    if len(cfg.cluster.zones) > MAX_ZONES:
        problems.append(f"cluster.zones: at most {MAX_ZONES} zones (got {len(cfg.cluster.zones)})")
    if cfg.general_pool.spot:
        problems.append(
            "generalPool.spot: the cluster-autoscaler runs on the general pool and must never run on spot nodes; "
            "allowed: false (got true)"
        )
    if cfg.provisioner == KARPENTER:
        problems += [
            f"gpuPools[{i}].amiFamily: under provisioner karpenter the pool's EC2NodeClass runs AL2023 "
            f"(elastic_gpu/aws/karpenter/nodes.py AMI_ALIAS); allowed: al2023 (got {said(p.ami_family)})"
            for i, p in enumerate(cfg.gpu_pools)
            if p.ami_family != "al2023"
        ]
        idle = cfg.autoscaler.scale_down_unneeded_time
        if parse_duration(idle) % 1:
            # NodePool consolidateAfter's CRD pattern is ^(([0-9]+(s|m|h))+|Never)$: whole seconds at least.
            problems.append(
                f"autoscaler.scaleDownUnneededTime: under provisioner karpenter it is the NodePools' consolidateAfter, "
                f"which takes whole seconds (got {said(idle)})"
            )
    elif "spot_service_linked_role" in cfg.cluster.model_fields_set:
        problems.append(
            "cluster.spotServiceLinkedRole: only Karpenter needs the EC2 Spot service-linked role "
            f"(provisioner karpenter; got provisioner {cfg.provisioner}): remove it"
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
