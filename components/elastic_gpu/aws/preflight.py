"""The account preflight's EKS part (elastic_gpu/preflight.py): EC2 vCPU quotas of the GPU families for spot and
on-demand and of the standard families for the general pool, EKS's managed node groups per cluster, and the zones
that offer each instance type, read through pulumi-aws's invokes. The EC2 Spot service-linked role Karpenter needs
is not a finding: the stack creates or adopts it (elastic_gpu.aws.karpenter.spot_role)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import pulumi_aws as aws

from elastic_gpu.aws.config_rules import KARPENTER, node_groups
from elastic_gpu.aws.karpenter.nodes import eligible_types
from elastic_gpu.aws.quotas import STANDARD_QUOTA, ec2_quota
from elastic_gpu.aws.reservations import UPCOMING_STATES, USABLE_STATES, describe_command, read_reservation
from elastic_gpu.preflight import Finding, QuotaNeed, add_need, attempt, capacities, quota_findings, unread

if TYPE_CHECKING:
    from elastic_gpu.config import StackConfig

#: EKS quota "Managed node groups per cluster" (EKS User Guide, "Amazon EKS service quotas").
NODE_GROUPS_QUOTA = ("eks", "L-6D54EA21", "Managed node groups per cluster")


def type_vcpus(instance_type: str, region: str) -> int | str:
    """The type's vCPUs as EC2 describes them (DescribeInstanceTypes' DefaultVCpus), or why they could not be
    read."""
    return attempt(
        lambda: int(aws.ec2.get_instance_type(instance_type=instance_type, region=region).default_vcpus or 0)
    )


def request(service: str, code: str, value: float, region: str) -> str:
    return (
        f"aws service-quotas request-service-quota-increase --service-code {service} --quota-code {code} "
        f"--desired-value {int(value)} --region {region}"
    )


def quota_value(service: str, code: str, region: str) -> float | str:
    """The quota's value, or why it could not be read."""
    return attempt(
        lambda: float(aws.servicequotas.get_service_quota(service_code=service, quota_code=code, region=region).value)
    )


def quota_unread(by_pool: dict[str, int], what: str, service: str, code: str, region: str, error: str) -> Finding:
    return unread(
        by_pool,
        f"{what} (the pools need {sum(by_pool.values())})",
        error,
        f"allow servicequotas:GetServiceQuota, or read it: aws service-quotas get-service-quota --service-code "
        f"{service} --quota-code {code} --region {region}",
    )


def vcpu_findings(cfg: StackConfig) -> list[Finding]:
    """vCPUs of each GPU family quota the pools need at their max (largest type x nodes), spot and on-demand;
    under Karpenter the largest type its NodePools may launch."""
    region = cfg.cluster.region
    needs: dict[tuple[str, str], dict[str, int]] = {}
    for cap in capacities(cfg):
        if cfg.provisioner == KARPENTER:  # its NodePools take every catalog type of the pool's GPU and count
            cap = replace(cap, instance_types=tuple(eligible_types(cap.instance_types)))
        codes = {(q.code, q.name) for t in cap.instance_types if (q := ec2_quota(t, cap.spot)) is not None}
        for quota in sorted(codes):  # a pool of two families may draw on either quota: each must cover it
            add_need(needs, quota, cap.pool, cap.nodes * cap.per_node("aws", "vcpus"))
    found = []
    for (code, name), by_pool in needs.items():
        have = quota_value("ec2", code, region)
        if isinstance(have, str):
            found.append(quota_unread(by_pool, f"'{name}' ({code})", "ec2", code, region, have))
            continue
        need = QuotaNeed(f"'{name}' ({code}) in {region}", by_pool, have, "vCPUs")
        check = "spot-quota" if "Spot" in name else "on-demand-quota"
        found += quota_findings([need], check, lambda n, code=code: request("ec2", code, n.need, region))
    return found


def general_vcpu_findings(cfg: StackConfig) -> list[Finding]:
    """vCPUs of the standard families' quota the general pool needs at its max (its largest type x its max size);
    under Karpenter the controller runs there, so the need is the same."""
    pool, region = cfg.general_pool, cfg.cluster.region
    if not pool.max_size:
        return []
    vcpus = {t: type_vcpus(t, region) for t in pool.instance_types}
    if errors := {t: v for t, v in vcpus.items() if isinstance(v, str)}:
        types = ",".join(errors)
        return [
            unread(
                ["general"],
                f"the vCPUs of {', '.join(errors)}",
                next(iter(errors.values())),
                f"allow ec2:DescribeInstanceTypes, or read them: aws ec2 describe-instance-types --instance-types "
                f"{types} --region {region} --query 'InstanceTypes[].[InstanceType,VCpuInfo.DefaultVCpus]'",
            )
        ]
    per_node = max((v for v in vcpus.values() if isinstance(v, int)), default=0)
    if not per_node:
        return []
    code, name = STANDARD_QUOTA.code, STANDARD_QUOTA.name
    by_pool = {"general": pool.max_size * per_node}
    have = quota_value("ec2", code, region)
    if isinstance(have, str):
        return [quota_unread(by_pool, f"'{name}' ({code})", "ec2", code, region, have)]
    need = QuotaNeed(f"'{name}' ({code}) in {region}", by_pool, have, "vCPUs")
    return quota_findings([need], "cpu-quota", lambda n: request("ec2", code, n.need, region))


def node_group_findings(cfg: StackConfig) -> list[Finding]:
    """EKS managed node groups the stack declares (under Karpenter only the general pool's)."""
    groups = node_groups(cfg)[:1] if cfg.provisioner == KARPENTER else node_groups(cfg)
    service, code, name = NODE_GROUPS_QUOTA
    have = quota_value(service, code, cfg.cluster.region)
    by_pool: dict[str, int] = {}
    for path, _ in groups:
        index = re.search(r"\[(\d+)\]", path)
        pool = cfg.gpu_pools[int(index.group(1))].name if index else "general"
        by_pool[pool] = by_pool.get(pool, 0) + 1
    if isinstance(have, str):
        return [quota_unread(by_pool, f"'{name}' ({code})", service, code, cfg.cluster.region, have)]
    need = QuotaNeed(f"'{name}' ({code})", by_pool, have, "node groups")
    fix = request(service, code, need.need, cfg.cluster.region)
    return quota_findings([need], "node-group-quota", fix + " (or fewer pools, perZone: false, or no fallback)")


def offering_findings(cfg: StackConfig) -> list[Finding]:
    """Each pool's types in each of its zones (`aws ec2 describe-instance-type-offerings`): a zone that offers
    none of them is an error where the pool has a group of its own there (perZone), else a warning."""
    region, zones = cfg.cluster.region, list(cfg.cluster.zones)
    pools = [("general", tuple(cfg.general_pool.instance_types), False)]
    pools += [(p.name, tuple(cfg.instance_types(p)), bool(p.per_zone)) for p in cfg.gpu_pools]
    types = sorted({t for _, ts, _ in pools for t in ts})
    command = (
        f"aws ec2 describe-instance-type-offerings --location-type availability-zone --filters "
        f"Name=instance-type,Values={{types}} --region {region}"
    )
    result = attempt(
        lambda: aws.ec2.get_instance_type_offerings(
            location_type="availability-zone",
            filters=[
                aws.ec2.GetInstanceTypeOfferingsFilterArgs(name="instance-type", values=types),
                aws.ec2.GetInstanceTypeOfferingsFilterArgs(name="location", values=zones),
            ],
            region=region,
        )
    )
    if isinstance(result, str):
        fix = "allow ec2:DescribeInstanceTypeOfferings, or read them: " + command.format(types=",".join(types))
        return [unread([p for p, _, _ in pools], "the zones that offer each instance type", result, fix)]
    offered = set(zip(result.instance_types or [], result.locations or [], strict=False))
    found = []
    for pool, ts, per_zone in pools:
        missing = [z for z in zones if not any((t, z) in offered for t in ts)]
        if not missing:
            continue
        cannot = per_zone or len(missing) == len(zones)
        found.append(
            Finding(
                pool,
                "zone-offering",
                "error" if cannot else "warning",
                f"{', '.join(missing)} offer{'s' if len(missing) == 1 else ''} none of {', '.join(ts)}"
                + (": its node group there can never start a node" if cannot else ": its nodes start in the others"),
                f"take {', '.join(missing)} out of cluster.zones or give the pool a type offered there "
                f"({command.format(types=','.join(ts))})",
            )
        )
    return found


def reservation_findings(cfg: StackConfig, now: datetime | None = None) -> list[Finding]:
    """Each pool's reservations as the account describes them (aws/reservations.py read_reservation): one the
    account lacks, of another instance type than the pool may launch, in another zone than the cluster's, no longer
    active or past its end (a Capacity Block outside its window) is an error; one not started yet, or holding fewer
    instances than `reservations.nodes`, a warning; one that cannot be read, or selected by tags only, a warning
    with the command that shows it."""
    region, now = cfg.cluster.region, now or datetime.now(timezone.utc)
    found: list[Finding] = []
    for pool in cfg.gpu_pools:
        reservations = pool.reservations
        if reservations is None:
            continue
        types = list(cfg.instance_types(pool))
        if cfg.provisioner == KARPENTER:
            types = eligible_types(types)
        held = 0
        for rid in reservations.ids:
            read = read_reservation(rid, region)
            command = describe_command([rid], region)
            if isinstance(read, str):
                if "couldn't find resource" in read:
                    # A warning: Karpenter then launches nothing from it and the pool's pods go to its spot and
                    # on-demand NodePools (under the cluster-autoscaler the pool refuses to build: aws/pools.py).
                    found.append(
                        Finding(pool.name, "reservation", "warning", f"the account has no capacity reservation {rid} "
                                f"in {region}: the pool's reserved tier launches nothing",
                                f"name a reservation of the account ({command}) or buy one")
                    )  # fmt: skip
                else:
                    found.append(unread([pool.name], f"capacity reservation {rid}", read,
                                        f"allow ec2:DescribeCapacityReservations, or read it: {command}"))  # fmt: skip
                continue
            kind = "Capacity Block" if read.capacity_block else "On-Demand Capacity Reservation"
            what = f"{kind} {rid} ({read.instance_count} x {read.instance_type} in {read.availability_zone})"
            problems = []
            if read.instance_type not in types:
                problems.append(f"reserves {read.instance_type}, which the pool never launches ({', '.join(types)})")
            if read.availability_zone not in cfg.cluster.zones:
                problems.append(f"is in {read.availability_zone}, not one of cluster.zones ({cfg.cluster.zones})")
            end, start = _instant(read.end_date), _instant(read.start_date)
            if end is not None and end <= now:
                problems.append(f"ended {read.end_date} (state {read.state})")
            elif read.state not in USABLE_STATES + UPCOMING_STATES:
                problems.append(f"is {read.state}: it launches no instance")
            if problems:
                found.append(
                    Finding(pool.name, "reservation", "error", f"{what} " + "; ".join(problems),
                            f"name a reservation that matches the pool, or change the pool ({command})")
                )  # fmt: skip
                continue
            held += read.instance_count
            if read.state in UPCOMING_STATES or (start is not None and start > now):
                found.append(
                    Finding(pool.name, "reservation", "warning",
                            f"{what} is {read.state} until {read.start_date or 'its start'}: until then the pool's "
                            "reserved tier launches nothing and its pods go to spot or on-demand",
                            f"nothing, if that is planned ({command})")
                )  # fmt: skip
        if reservations.ids and 0 < held < reservations.nodes:
            found.append(
                Finding(pool.name, "reservation", "warning",
                        f"its reservations hold {held} instances, fewer than reservations.nodes "
                        f"({reservations.nodes}): the reserved tier never reaches its nodes",
                        f"set reservations.nodes to at most {held}")
            )  # fmt: skip
        if reservations.tags:
            tags = " ".join(f"Name=tag:{k},Values={v}" for k, v in reservations.tags.items())
            found.append(
                unread([pool.name], f"the reservations selected by tags {reservations.tags}",
                       "Karpenter resolves tag selectors itself; no invoke lists reservations by tag",
                       f"aws ec2 describe-capacity-reservations --filters {tags} --region {region}")
            )  # fmt: skip
    return found


def _instant(text: str) -> datetime | None:
    """An RFC 3339 time as the EC2 API gives it (`2026-12-01T11:30:00Z`), or None for none."""
    if not text:
        return None
    instant = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return instant if instant.tzinfo else instant.replace(tzinfo=timezone.utc)


def findings(cfg: StackConfig) -> list[Finding]:
    return (
        offering_findings(cfg)
        + vcpu_findings(cfg)
        + general_vcpu_findings(cfg)
        + node_group_findings(cfg)
        + reservation_findings(cfg)
    )
