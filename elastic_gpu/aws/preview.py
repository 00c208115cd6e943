"""What the offline reports read of an EKS program's captured resources beyond the node groups."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from elastic_gpu.cluster_handle import SUBNET_IDS_INPUT

SUBNET = "aws:ec2/subnet:Subnet"


class Captured(Protocol):
    type: str
    id: str | None
    custom: bool
    inputs: dict[str, Any]


def subnet_zones(resources: Iterable[Captured]) -> dict[str, str]:
    """Subnet id -> availability zone: from the subnets the program declares, and from the cluster handles'
    zone -> subnet maps (an existing cluster's subnets come from another stack or a config value, so the
    program declares none; the handle still says which zone each is in)."""
    zones: dict[str, str] = {}
    for r in resources:
        if r.type == SUBNET and r.id and isinstance(zone := r.inputs.get("availabilityZone"), str):
            zones[r.id] = zone
        mapping = None if r.custom else r.inputs.get(SUBNET_IDS_INPUT)  # a handle component's
        if isinstance(mapping, dict):
            zones.update({s: z for z, s in mapping.items() if isinstance(s, str) and isinstance(z, str)})
    return zones
