"""A GPU pool's reserved tier on GKE: which Compute Engine reservations it names, in which zone, and the rules on
`reservations` (settings.Reservations) for the stack file and SpotGpuPoolArgs alike.

A Compute Engine reservation is zonal and holds on-demand VMs of one machine type and GPU: Spot VMs and preemptible
instances cannot consume one (Compute Engine "Consume reservations", Limitations,
cloud.google.com/compute/docs/instances/reservations-consume), so the reserved tier is on-demand. A node pool
consumes one with `reservationAffinity: SPECIFIC_RESERVATION`, key
`compute.googleapis.com/reservation-name` and the names (a reservation shared from another project as
`projects/<project>/reservations/<name>`), in the reservation's zone. A ComputeClass priority consumes one with
`reservations: {affinity: Specific, specific: [{name, project, zones}]}` (GKE "About custom compute classes",
priorities[].reservations; the CRD in tests/data/crds).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from elastic_gpu.errors import about
from elastic_gpu.settings import Reservations

if TYPE_CHECKING:
    from elastic_gpu.pool_args import SpotGpuPoolArgs

#: A Compute Engine resource name (RFC 1035: 1-63 lowercase letters, digits and hyphens, a letter first).
_NAME = r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
#: A project id: 6-30 lowercase letters, digits and hyphens, a letter first (Resource Manager project ids).
_PROJECT = r"[a-z][-a-z0-9]{4,28}[a-z0-9]"
_ZONE = r"[a-z]+-[a-z]+[0-9]+-[a-z]"
#: name | projects/P/reservations/N (GKE's shared form) | [projects/P/]zones/Z/reservations/N (the reservation's
#: own resource path, as `gcloud compute reservations describe` gives its selfLink), which says its zone too.
RESERVATION_ID = re.compile(
    rf"^(?:(?P<bare>{_NAME})|(?:projects/(?P<project>{_PROJECT})/)?(?:zones/(?P<zone>{_ZONE})/)?"
    rf"reservations/(?P<name>{_NAME}))$"
)
ALLOWED_IDS = (
    "a reservation name, projects/<project>/reservations/<name> (shared from another project), or "
    "[projects/<project>/]zones/<zone>/reservations/<name>"
)


@dataclass(frozen=True)
class GkeReservation:
    """One reservation a pool names: its name, the project that owns it (None: the cluster's), its zone (None:
    the pool's one zone)."""

    name: str
    project: str | None
    zone: str | None

    @property
    def affinity_value(self) -> str:
        """The name as a node pool's reservationAffinity.values take it (GKE: a shared reservation by its path)."""
        return f"projects/{self.project}/reservations/{self.name}" if self.project else self.name


def parse(reservation_id: str) -> GkeReservation | None:
    m = RESERVATION_ID.match(reservation_id)
    if m is None:
        return None
    if m["bare"]:
        return GkeReservation(m["bare"], None, None)
    return GkeReservation(m["name"], m["project"], m["zone"])


def reservations_of(res: Reservations, pool_zones: list[str]) -> tuple[list[GkeReservation], str]:
    """The pool's reservations (valid ids, see reservation_problems) and the one zone they are in."""
    parsed = [r for r in map(parse, res.ids) if r is not None]
    zones = {r.zone for r in parsed if r.zone}
    zone = next(iter(zones)) if zones else pool_zones[0]
    return [GkeReservation(r.name, r.project, r.zone or zone) for r in parsed], zone


def reservation_problems(
    field: Callable[[str], str],
    res: Reservations | None,
    *,
    pool_zones: list[str],
    max_size: int,
    on_demand_fallback: bool,
    queued: bool,
) -> list[str]:
    """The reserved tier's rules on GKE; `field(snake_name)` spells a pool setting."""
    if res is None:
        return []
    where = field("reservations")
    problems: list[str] = []
    if res.tags:
        problems.append(
            f"{where}.tags: AWS only (Karpenter's capacityReservationSelectorTerms); a GKE pool names its "
            f"reservations in ids (got {sorted(res.tags)})"
        )
    if not res.ids:
        problems.append(f"{where}.ids: at least one reservation; allowed: {ALLOWED_IDS} (got [])")
    parsed = []
    for i, rid in enumerate(res.ids):
        r = parse(rid) if isinstance(rid, str) else None
        if r is None:
            problems.append(f"{where}.ids[{i}]: allowed: {ALLOWED_IDS} (got {rid!r})")
        else:
            parsed.append((i, r))
    zones = sorted({r.zone for _, r in parsed if r.zone})
    if len(zones) > 1:
        problems.append(
            f"{where}.ids: one zone per pool's reserved tier (its node pool runs in the reservations' zone); "
            f"got {', '.join(zones)}"
        )
    for i, r in parsed:
        if r.zone and r.zone not in pool_zones:
            problems.append(
                f"{where}.ids[{i}]: zone {r.zone} is not one of the pool's zones ({', '.join(pool_zones)}); "
                "allowed: a reservation in one of them"
            )
    if parsed and not zones and len(pool_zones) > 1:
        problems.append(
            f"{where}.ids: a reservation is zonal and the pool spans {', '.join(pool_zones)}: name its zone "
            f"(zones/<zone>/reservations/<name>) or give the pool one zone (got {[r for r in res.ids]})"
        )
    if queued:
        problems.append(
            f"{where}: a queued-provisioning pool takes flex-start capacity and consumes no reservation (GKE "
            f"DWS docs: --reservation-affinity=none); allowed: none with {field('queued_provisioning')}"
        )
    return problems


def pool_reservation_problems(where: str, args: SpotGpuPoolArgs, *, queued: bool) -> list[str]:
    """A pool component's reserved tier on GKE, its node pools' and its ComputeClass's alike: each problem is
    about the Args field `reservations`."""
    return about(
        "reservations",
        reservation_problems(
            lambda key: f"{where}{key}",
            args.reservations,
            pool_zones=args.pool_zones,
            max_size=args.max_size,
            on_demand_fallback=args.on_demand_fallback,
            queued=queued,
        ),
    )
