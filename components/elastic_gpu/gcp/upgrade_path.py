"""GKE: where one `up` can take a cluster's control plane from the floor its program declares (`diff`).

A cluster's `minMasterVersion` is its initial version and a floor, not a pin (elastic_gpu/gcp/versions.py). GKE
upgrades every control plane on its own, at the latest when its minor reaches the end of support: "all clusters'
control planes are automatically upgraded, and when a version reaches the end of support, cluster control planes
and nodes are automatically upgraded regardless of release channel enrollment" (cloud.google.com/kubernetes-engine/
docs/concepts/release-channels, read 2026-12-01). On the Extended channel a minor's support runs on into extended
support, whose end this table does not have, so there the declared minor is all that is known.

So a floor whose minor is past its end of standard support runs at least the next minor, and so on until a minor
still in standard support; raising the floor up to that minor upgrades nothing (terraform-provider-google
google/services/container/resource_container_cluster.go, Update: "Only upgrade the master if the current version
is lower than the desired version"), and one minor past it is an ordinary one-minor upgrade.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from elastic_gpu.cloud_facts import UpgradeReach
from elastic_gpu.clouds import minor_key, next_minor
from elastic_gpu.gcp.versions import CHANNEL_INPUT, KEEPS_MINOR_CHANNEL, KUBERNETES_SUPPORT

_SOURCE = (
    "GKE upgrades every control plane at the end of its minor's support, on every channel but Extended "
    "(cloud.google.com/kubernetes-engine/docs/concepts/release-channels)"
)


def upgrade_reach(minor: str, props: Mapping[str, Any], on: date) -> UpgradeReach:
    """From the floor `minor` of the cluster whose inputs are `props` (its `releaseChannel`), on the day `on`."""
    found = props.get(CHANNEL_INPUT)
    channel = found.get("channel") if isinstance(found, Mapping) else None
    if channel == KEEPS_MINOR_CHANNEL:
        return UpgradeReach(minor, next_minor(minor))
    rows = {minor_key(r.minor): r for r in KUBERNETES_SUPPORT}
    runs = minor_key(minor)
    # A minor older than every row is older than the oldest one GKE still lists: past its end too.
    if runs < min(rows):
        runs = min(rows)
    while (row := rows.get(runs)) is not None and row.end_of_standard_support < on:
        runs = (runs[0], runs[1] + 1)
    running = f"{runs[0]}.{runs[1]}"
    if running == minor:
        return UpgradeReach(minor, next_minor(minor))
    ended = [r for k, r in rows.items() if minor_key(minor) <= k < runs]
    last = f" (the last, {ended[-1].minor}, on {ended[-1].end_of_standard_support.isoformat()})" if ended else ""
    why = (
        f"on release channel {channel or 'none'} GKE has already upgraded a cluster whose floor is {minor} to at "
        f"least {running}: every minor from {minor} reached its end of standard support before {on.isoformat()}"
        f"{last}. {_SOURCE}; a floor raised to a minor the cluster already runs upgrades nothing"
    )
    return UpgradeReach(running, next_minor(running), why)
