"""Pinned images and the Kubernetes versions each cloud accepts: one table each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from elastic_gpu.cloud_facts import MinorSupport, UpgradePath, VersionedCloud
from elastic_gpu.clouds import all_clouds, next_minor

__all__ = ["MinorSupport"]  # its type is the clouds' rows' (elastic_gpu/cloud_facts.py)

#: A Kubernetes minor as every cloud and the autoscaler table take it, e.g. "1.33".
KUBERNETES_MINOR_PATTERN = r"^1\.[0-9]+$"

#: The cluster-autoscaler's minor must match the cluster's Kubernetes minor; use the
#: latest patch of that minor. Tags from the kubernetes/autoscaler git tags
#: `cluster-autoscaler-<ver>` (see ../shared/reference/facts.md §3, read 2026-07).
CLUSTER_AUTOSCALER_IMAGE_REPO = "registry.k8s.io/autoscaling/cluster-autoscaler"
CLUSTER_AUTOSCALER_TAGS: dict[str, str] = {
    "1.30": "v1.30.7",
    "1.31": "v1.31.5",
    "1.32": "v1.32.7",
    "1.33": "v1.33.6",
    "1.34": "v1.34.5",
    "1.35": "v1.35.2",
    # kubernetes/autoscaler tag cluster-autoscaler-1.36.1 (mirror of 2026-08-22; no 1.37 tag there yet).
    "1.36": "v1.36.1",
}

#: NVIDIA's device plugin, as in its static manifest
#: (NVIDIA/k8s-device-plugin deployments/static/nvidia-device-plugin.yml, v0.20.0).
DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"


#: Every minor each cloud offers that the library accepts (one table per cloud, elastic_gpu/<cloud>/versions.py;
#: config, preview, policy and README read the merged table). A minor past end of standard support previews
#: with a warning and the policy's advisory; past end of life the policy's mandatory check fails.
KUBERNETES_SUPPORT: dict[str, dict[str, MinorSupport]] = {}
#: Kubernetes minors each cloud accepts: its support-table rows (with an autoscaler image where we deploy one).
SUPPORTED_KUBERNETES_VERSIONS: dict[str, tuple[str, ...]] = {}
#: What the support table (support_table) says of each cloud: its service's name, and whether the library pins
#: the autoscaler image there (else the service manages it).
_SERVICES: dict[str, tuple[str, bool]] = {}
# The one pass over every cloud that merges the tables above, in registry order.
for _cloud in all_clouds():
    KUBERNETES_SUPPORT[_cloud.name] = {r.minor: r for r in _cloud.versions().kubernetes_support}
    SUPPORTED_KUBERNETES_VERSIONS[_cloud.name] = tuple(
        m
        for m in KUBERNETES_SUPPORT[_cloud.name]
        if not _cloud.facts.pins_autoscaler_image or m in CLUSTER_AUTOSCALER_TAGS
    )
    _SERVICES[_cloud.name] = (_cloud.facts.service, _cloud.facts.pins_autoscaler_image)
del _cloud


def _minor(kubernetes_version: str) -> str:
    return ".".join(kubernetes_version.split(".")[:2])


def _minor_key(minor: str) -> tuple[int, ...] | None:
    """ "1.33" -> (1, 33); None for what is not a minor."""
    try:
        return tuple(int(part) for part in minor.split("."))
    except ValueError:
        return None


@dataclass(frozen=True)
class SupportStatus:
    """Where a minor stands on a day: "standard", "past-standard" (extended or no support) or "end-of-life".

    `provider` is the cloud's provider (its service's name and upgrade path word the advice); `row` is the
    minor's row of the support table, or None for a minor older than every row: the table keeps the minors a
    service still lists, so an older one is past its end of life.
    """

    provider: VersionedCloud
    row: MinorSupport | None
    level: str
    next_minor: str | None
    minor: str = ""
    day: date | None = None
    #: what the cloud adds about the version that will run (GKE: its release channel), after the message
    note: str = ""

    @property
    def cloud(self) -> str:
        """The cloud's name (elastic_gpu/clouds.py CLOUDS), as the messages name it."""
        return self.provider.name

    def upgrade_advice(self) -> str:
        """ "; upgrade to X (standard support until D)": the oldest later minor still in standard support on the
        day (one minor at a time when that skips some), never a date already past; "" when the table has none."""
        day = self.day or today()
        rows = KUBERNETES_SUPPORT[self.cloud]
        key = _minor_key(self.minor)
        later = [r for m, r in rows.items() if key is None or (_minor_key(m) or ()) > key]
        target = next((r for r in later if r.end_of_standard_support >= day), None)
        if target is None:
            return "; upgrade to a minor in standard support"
        through = [r.minor for r in later if (_minor_key(r.minor) or ()) < (_minor_key(target.minor) or ())]
        if through and self.minor and isinstance(cloud := self.provider, UpgradePath):
            # the cloud's own path may skip them (AKS: from an unsupported minor into the oldest supported one)
            reach = cloud.upgrade_reach(self.minor, {}, day)
            if (_minor_key(target.minor) or ()) <= (_minor_key(reach.reaches) or ()):
                through = []
        steps = f" one minor at a time (through {', '.join(through)})" if through else ""
        return (
            f"; upgrade to {target.minor}{steps} (standard support until {target.end_of_standard_support.isoformat()})"
        )

    def message(self) -> str:
        """What is wrong and what to do, naming the dates and the minor to upgrade to (empty in standard support)."""
        if self.level == "standard":
            return ""
        return f"{self._message()} {self.note}".strip()

    def _message(self) -> str:
        upgrade = self.upgrade_advice()
        r = self.row
        if r is None:
            oldest = next(iter(KUBERNETES_SUPPORT[self.cloud].values()))
            reaches = "reached" if (self.day or today()) > oldest.end_of_life else "reaches"
            return (
                f"Kubernetes {self.minor} on {self.cloud} is past its end of life: it is older than every minor "
                f"{self.provider.facts.service} still lists (the oldest, {oldest.minor}, {reaches} end of "
                f"life on {oldest.end_of_life.isoformat()}){upgrade}. Source: {oldest.source}."
            )
        if self.level == "end-of-life":
            standard = (
                ""
                if r.end_of_standard_support == r.end_of_life
                else f" (end of standard support {r.end_of_standard_support.isoformat()})"
            )
            return (
                f"Kubernetes {r.minor} on {self.cloud} reached end of life on {r.end_of_life.isoformat()}{standard}"
                f"{upgrade}. Source: {r.source}."
            )
        until = (
            f"; extended support, at extra cost, until {r.end_of_life.isoformat()}"
            if r.end_of_life > r.end_of_standard_support
            else ""
        )
        return (
            f"Kubernetes {r.minor} on {self.cloud} is past its end of standard support "
            f"({r.end_of_standard_support.isoformat()}{until}){upgrade}. Source: {r.source}."
        )


def today() -> date:
    """The day support is judged on (the current date; tests replace it)."""
    return date.today()


def support_status(cloud: VersionedCloud, kubernetes_version: str, on: date | None = None) -> SupportStatus | None:
    """The support status of ``kubernetes_version`` ("1.33" or "1.33.2") on ``cloud`` on the day ``on``
    (default: `today()`): a minor older than every row of the cloud's table is end of life; None for one newer
    than the table (not known yet) or for what is not a Kubernetes version."""
    minor = _minor(kubernetes_version)
    rows = KUBERNETES_SUPPORT.get(cloud.name, {})
    day = on or today()
    row = rows.get(minor)
    if row is None:
        key = _minor_key(minor)
        keys = [k for k in (_minor_key(m) for m in rows) if k is not None]
        if key is None or len(key) != 2 or not keys or key > min(keys):
            return None
        oldest = next(iter(rows))
        return SupportStatus(cloud, None, "end-of-life", oldest, minor, day)
    if day > row.end_of_life:
        level = "end-of-life"
    elif day > row.end_of_standard_support:
        level = "past-standard"
    else:
        level = "standard"
    candidate = next_minor(minor)
    return SupportStatus(cloud, row, level, candidate if candidate in rows else None, minor, day)


def minor_support_warnings(where: str, cloud: VersionedCloud, kubernetes_version: str) -> list[str]:
    """The preview warning for a minor past its end of standard support (none in standard support)."""
    status = support_status(cloud, kubernetes_version)
    return [f"{where}{status.message()}"] if status is not None and status.level != "standard" else []


#: docs/kubernetes-versions.md's support table is generated from KUBERNETES_SUPPORT (tests compare them).
README_BEGIN = "<!-- support table: generated by elastic_gpu.versions.support_table() -->"
README_END = "<!-- end of support table -->"


def support_table() -> str:
    """docs/kubernetes-versions.md's table: per cloud and minor, the dates, the autoscaler image and the source."""
    lines = [
        README_BEGIN,
        "| Cloud | Minor | End of standard support | End of life | Autoscaler image | Note |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for cloud, rows in KUBERNETES_SUPPORT.items():
        service, pins_image = _SERVICES[cloud]
        for minor, r in rows.items():
            if not pins_image:
                image = f"managed by {service}"
            else:
                image = CLUSTER_AUTOSCALER_TAGS.get(minor, "none pinned (minor refused)")
            note = f"{r.note} until {r.lts_end_of_life.isoformat()}" if r.lts_end_of_life else r.note
            lines.append(
                f"| {service} | {minor} | {r.end_of_standard_support.isoformat()} | "
                f"{r.end_of_life.isoformat()} | {image} | {note} |"
            )
    sources = {r.source for rows in KUBERNETES_SUPPORT.values() for r in rows.values()}
    lines += ["", "Sources:", *(f"- {s}" for s in sorted(sources)), README_END]
    return "\n".join(lines)


def cluster_autoscaler_image(kubernetes_version: str) -> str:
    """The autoscaler image whose minor matches ``kubernetes_version`` ("1.33" or "1.33.2")."""
    minor = _minor(kubernetes_version)
    try:
        return f"{CLUSTER_AUTOSCALER_IMAGE_REPO}:{CLUSTER_AUTOSCALER_TAGS[minor]}"
    except KeyError:
        allowed = ", ".join(CLUSTER_AUTOSCALER_TAGS)
        raise ValueError(f"no cluster-autoscaler release pinned for Kubernetes {minor}; pinned: {allowed}") from None
