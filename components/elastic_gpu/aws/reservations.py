"""EKS: a GPU pool's reserved tier (elastic_gpu.settings.Reservations): EC2 On-Demand Capacity Reservations and
Capacity Blocks for ML, their rules, and how the preview reads them.

Under Karpenter the pool's EC2NodeClass selects the reservations (`capacityReservationSelectorTerms`, by id or
tags) and a NodePool of capacity type `reserved` ranks first (aws/karpenter/nodes.py). Under the cluster-autoscaler
each reservation gets a managed node group in its zone whose launch template targets it (an ODCR: capacityType
ON_DEMAND; a Capacity Block: CAPACITY_BLOCK and market type `capacity-block`), ranked first by the priority
expander (aws/pools.py).

Reading a reservation: pulumi-aws 7.51.1 has one invoke, `aws.ec2.get_capacity_block_reservation`
(aws:ec2/getCapacityBlockReservation; none named for an ODCR, no `aws.ec2.get_capacity_reservation`). Its docs
say it returns Capacity Blocks only, but the data source behind it (terraform-provider-aws
internal/service/ec2/ec2_capacity_block_reservation_data_source.go, Read) calls DescribeCapacityReservations with
the id and no reservation-type filter, so an ODCR read by id answers too, with `reservation_type` "default".
What the invoke cannot answer is checked with `aws ec2 describe-capacity-reservations` (`describe_command`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from elastic_gpu.preflight import attempt
from elastic_gpu.validation import duplicate_problems

if TYPE_CHECKING:
    from elastic_gpu.settings import Reservations, Spelling

#: An EC2 capacity reservation id, as Karpenter's EC2NodeClass CRD takes it (capacityReservationSelectorTerms[].id
#: pattern, aws/karpenter-provider-aws v1.14.1 pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml), e.g.
#: cr-0123456789abcdef0.
RESERVATION_ID_PATTERN = r"cr-[0-9a-z]+"
#: Karpenter's EC2NodeClass: at most 30 selector terms, at most 20 tags in one term, no empty tag key or value
#: (same CRD: maxItems, maxProperties, x-kubernetes-validations).
MAX_SELECTOR_TERMS = 30
MAX_SELECTOR_TAGS = 20
#: DescribeCapacityReservations' ReservationType of a Capacity Block for ML (EC2 API CapacityReservation
#: ReservationType: default | capacity-block; Karpenter's label karpenter.k8s.aws/capacity-reservation-type takes
#: the same values).
CAPACITY_BLOCK = "capacity-block"
ON_DEMAND_RESERVATION = "default"
#: States in which a reservation launches instances now, or will at its start (EC2 API CapacityReservation State:
#: active | expired | cancelled | pending | failed | scheduled | payment-pending | payment-failed | assessing |
#: delayed | unsupported; a Capacity Block is `scheduled` until its start date, then `active`).
USABLE_STATES = ("active",)
UPCOMING_STATES = ("scheduled", "pending", "payment-pending", "assessing", "delayed")


def describe_command(ids: Sequence[str], region: str) -> str:
    """The CLI command that shows what a reservation is (compare InstanceType, AvailabilityZone, TotalInstanceCount
    and AvailableInstanceCount, State, StartDate and EndDate, ReservationType with the pool)."""
    return (
        f"aws ec2 describe-capacity-reservations --capacity-reservation-ids {' '.join(ids)} --region {region} "
        "--query 'CapacityReservations[].[CapacityReservationId,ReservationType,InstanceType,AvailabilityZone,"
        "TotalInstanceCount,AvailableInstanceCount,State,StartDate,EndDate]'"
    )


@dataclass(frozen=True)
class ReadReservation:
    """One capacity reservation as the invoke describes it."""

    id: str
    #: CAPACITY_BLOCK or ON_DEMAND_RESERVATION
    reservation_type: str
    instance_type: str
    availability_zone: str
    instance_count: int
    available_instance_count: int
    state: str
    #: RFC 3339, "" when it has none (an ODCR without an end date)
    start_date: str
    end_date: str

    @property
    def capacity_block(self) -> bool:
        return self.reservation_type == CAPACITY_BLOCK


def read_reservation(reservation_id: str, region: str) -> ReadReservation | str:
    """The reservation as aws.ec2.get_capacity_block_reservation reads it by id, or the invoke's error as text."""
    import pulumi_aws as aws

    def read() -> ReadReservation:
        r = aws.ec2.get_capacity_block_reservation(id=reservation_id, region=region)
        return ReadReservation(
            id=reservation_id,
            reservation_type=r.reservation_type or ON_DEMAND_RESERVATION,
            instance_type=r.instance_type,
            availability_zone=r.availability_zone,
            instance_count=int(r.instance_count or 0),
            available_instance_count=int(r.available_instance_count or 0),
            state=r.state or "",
            start_date=r.start_date or "",
            end_date=r.end_date or "",
        )

    return attempt(read)


def reservation_problems(spell: Spelling, reservations: Reservations | None, *, karpenter: bool, max_size: int,
                         on_demand_fallback: bool) -> list[str]:  # fmt: skip
    """The pool's `reservations` on AWS: EC2 reservation ids, `tags` only under Karpenter (its selector terms; a
    node group's launch template targets one reservation by id), Karpenter's CRD bounds, and `only` with no
    other tier. The same rules for a stack file (`gpuPools[i].reservations.ids`) and a program (`reservations`)."""
    if reservations is None:
        return []
    where = spell.path("reservations")
    problems = []
    for i, rid in enumerate(reservations.ids):
        if not isinstance(rid, str) or not re.fullmatch(RESERVATION_ID_PATTERN, rid):
            problems.append(
                f"{where}.ids[{i}]: {rid!r} is not an EC2 capacity reservation id; allowed: cr- and lowercase letters "
                "or digits, e.g. cr-0123456789abcdef0 (`aws ec2 describe-capacity-reservations` lists them)"
            )
    problems += duplicate_problems(f"{where}.ids", tuple(reservations.ids))
    if not reservations.ids and not reservations.tags:
        problems.append(f"{where}: name the reservations by ids (or, under Karpenter, tags); got neither")
    if reservations.tags and not karpenter:
        problems.append(
            f"{where}.tags: under the cluster-autoscaler each reservation is a node group whose launch template "
            "targets it by id (EC2 CapacityReservationTarget: an id or a resource group ARN, no tags); allowed: ids, "
            "or provisioner karpenter, whose EC2NodeClass selects reservations by tags"
        )
    if karpenter:
        if len(reservations.tags) > MAX_SELECTOR_TAGS:
            problems.append(
                f"{where}.tags: Karpenter's capacityReservationSelectorTerms take at most {MAX_SELECTOR_TAGS} tags "
                f"in a term (got {len(reservations.tags)})"
            )
        if [k for k, v in reservations.tags.items() if not k or not v]:
            problems.append(f"{where}.tags: empty tag keys or values aren't supported (Karpenter's EC2NodeClass)")
        terms = len(reservations.ids) + bool(reservations.tags)
        if terms > MAX_SELECTOR_TERMS:
            problems.append(
                f"{where}: Karpenter's EC2NodeClass takes at most {MAX_SELECTOR_TERMS} "
                f"capacityReservationSelectorTerms (one per id, one for the tags; got {terms})"
            )
    elif reservations.ids and reservations.nodes < len(reservations.ids):
        problems.append(
            f"{where}.nodes: under the cluster-autoscaler each reservation is a node group of at least one node; "
            f"allowed: >= {len(reservations.ids)} (one per id; got {reservations.nodes})"
        )
    return problems
