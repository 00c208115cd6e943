"""Pinned images and the Kubernetes versions each cloud accepts: one table each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

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

#: Which clouds deploy our pinned cluster-autoscaler image (AKS runs its own managed autoscaler).
CLOUDS_WITH_AUTOSCALER_IMAGE = ("aws", "gcp")


@dataclass(frozen=True)
class MinorSupport:
    """One Kubernetes minor on one managed service: until when it is in standard support, when it
    reaches end of life (no support at all; the service refuses new clusters or upgrades them), and
    the source of both dates."""

    minor: str
    end_of_standard_support: date
    end_of_life: date
    source: str
    note: str = ""


_EKS = (
    "EKS calendar (docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html) as mirrored by "
    "endoflife-date/endoflife.date products/amazon-eks.md (eol = end of standard support, eoes = end of "
    "extended support; commit a70eca3 of 2026-08-22)"
)
_AKS = (
    "AKS release calendar, MicrosoftDocs/azure-aks-docs articles/aks/supported-kubernetes-versions.md "
    "(commit fb060ab of 2026-08-21): End of life column, the last day of the month it names"
)
_GKE = (
    "GKE release schedule (cloud.google.com/kubernetes-engine/docs/release-schedule) as mirrored by "
    "endoflife-date/endoflife.date products/google-kubernetes-engine.md (eol = end of standard support; "
    "commit a70eca3 of 2026-08-22)"
)
#: AKS: after End of life only AKS's paid Long Term Support (Premium tier) continues, which this library
#: does not enable, so end of standard support is end of life. GKE: at end of standard support GKE
#: upgrades clusters on the Rapid/Regular/Stable channels (only the Extended channel stays longer; its
#: end dates were not found here), so the same date again. EKS: 12 months of paid extended support.
_AKS_NOTE = "AKS LTS (Premium tier) would extend it one more year; not enabled by this library"
_GKE_NOTE = "Extended channel: about 10 more months (dates not verified here)"

#: Every minor each cloud offers that the library accepts (one table; config, preview, policy and README
#: read it). A minor past end of standard support previews with a warning and the policy's advisory;
#: past end of life the policy's mandatory check fails. Newer minors than these could not be verified:
#: EKS 1.37 and GKE 1.37 were not listed in sources read on 2026-08-22, and kubernetes/autoscaler had no
#: 1.37 tag then (so no autoscaler image to pin on EKS/GKE). AKS 1.37 (GA planned Oct 2026 in the AKS
#: calendar) needs no autoscaler image: AKS runs its own.
KUBERNETES_SUPPORT: dict[str, dict[str, MinorSupport]] = {
    "aws": {
        r.minor: r
        for r in (
            MinorSupport("1.32", date(2026, 3, 23), date(2027, 3, 23), _EKS),
            MinorSupport("1.33", date(2026, 7, 29), date(2027, 7, 29), _EKS),
            MinorSupport("1.34", date(2026, 12, 2), date(2027, 12, 2), _EKS),
            MinorSupport("1.35", date(2027, 3, 27), date(2028, 3, 27), _EKS),
            MinorSupport("1.36", date(2027, 8, 2), date(2028, 8, 2), _EKS),
        )
    },
    "azure": {
        r.minor: r
        for r in (
            MinorSupport("1.32", date(2026, 3, 31), date(2026, 3, 31), _AKS, _AKS_NOTE),
            MinorSupport("1.33", date(2026, 7, 31), date(2026, 7, 31), _AKS, _AKS_NOTE),
            MinorSupport("1.34", date(2026, 11, 30), date(2026, 11, 30), _AKS, _AKS_NOTE),
            MinorSupport("1.35", date(2027, 3, 31), date(2027, 3, 31), _AKS, _AKS_NOTE),
            MinorSupport("1.36", date(2027, 6, 30), date(2027, 6, 30), _AKS, _AKS_NOTE),
            MinorSupport(
                "1.37",
                date(2027, 10, 31),
                date(2027, 10, 31),
                _AKS,
                _AKS_NOTE + "; GA planned Oct 2026, not re-checked",
            ),
        )
    },
    "gcp": {
        r.minor: r
        for r in (
            MinorSupport("1.32", date(2026, 4, 11), date(2026, 4, 11), _GKE, _GKE_NOTE),
            MinorSupport("1.33", date(2026, 8, 3), date(2026, 8, 3), _GKE, _GKE_NOTE),
            MinorSupport("1.34", date(2026, 10, 1), date(2026, 10, 1), _GKE, _GKE_NOTE),
            MinorSupport("1.35", date(2027, 4, 11), date(2027, 4, 11), _GKE, _GKE_NOTE),
            MinorSupport("1.36", date(2027, 8, 9), date(2027, 8, 9), _GKE, _GKE_NOTE),
        )
    },
}

#: Kubernetes minors each cloud accepts: its support-table rows (with an autoscaler image where we deploy one).
SUPPORTED_KUBERNETES_VERSIONS: dict[str, tuple[str, ...]] = {
    cloud: tuple(m for m in rows if cloud not in CLOUDS_WITH_AUTOSCALER_IMAGE or m in CLUSTER_AUTOSCALER_TAGS)
    for cloud, rows in KUBERNETES_SUPPORT.items()
}


def _minor(kubernetes_version: str) -> str:
    return ".".join(kubernetes_version.split(".")[:2])


def _next_minor(minor: str) -> str:
    major, m = minor.split(".")
    return f"{major}.{int(m) + 1}"


@dataclass(frozen=True)
class SupportStatus:
    """Where a minor stands on a day: "standard", "past-standard" (extended or no support) or "end-of-life"."""

    cloud: str
    row: MinorSupport
    level: str
    next_minor: str | None

    def message(self) -> str:
        """What is wrong and what to do, naming the dates and the next minor (empty in standard support)."""
        if self.level == "standard":
            return ""
        r = self.row
        upgrade = "" if self.next_minor is None else f"; upgrade to {self.next_minor}"
        nxt = KUBERNETES_SUPPORT[self.cloud].get(self.next_minor or "")
        if nxt is not None:
            upgrade += f" (standard support until {nxt.end_of_standard_support.isoformat()})"
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
        return (
            f"Kubernetes {r.minor} on {self.cloud} is past its end of standard support "
            f"({r.end_of_standard_support.isoformat()}; extended support, at extra cost, until "
            f"{r.end_of_life.isoformat()}){upgrade}. Source: {r.source}."
        )


def today() -> date:
    """The day support is judged on (the current date; tests replace it)."""
    return date.today()


def support_status(cloud: str, kubernetes_version: str, on: date | None = None) -> SupportStatus | None:
    """The support status of ``kubernetes_version`` ("1.33" or "1.33.2") on ``cloud`` on the day ``on``
    (default: `today()`), or None for a minor the table does not list."""
    minor = _minor(kubernetes_version)
    row = KUBERNETES_SUPPORT.get(cloud, {}).get(minor)
    if row is None:
        return None
    day = on or today()
    if day > row.end_of_life:
        level = "end-of-life"
    elif day > row.end_of_standard_support:
        level = "past-standard"
    else:
        level = "standard"
    candidate = _next_minor(minor)
    return SupportStatus(cloud, row, level, candidate if candidate in KUBERNETES_SUPPORT[cloud] else None)


def minor_support_warnings(where: str, cloud: str, kubernetes_version: str) -> list[str]:
    """The preview warning for a minor past its end of standard support (none in standard support)."""
    status = support_status(cloud, kubernetes_version)
    return [f"{where}{status.message()}"] if status is not None and status.level != "standard" else []


#: README's support table is generated from KUBERNETES_SUPPORT (tests compare them).
README_BEGIN = "<!-- support table: generated by elastic_gpu.versions.support_table() -->"
README_END = "<!-- end of support table -->"
_CLOUD_NAMES = {"aws": "EKS", "azure": "AKS", "gcp": "GKE"}


def support_table() -> str:
    """The README's table: per cloud and minor, the dates, the autoscaler image and the source."""
    lines = [
        README_BEGIN,
        "| Cloud | Minor | End of standard support | End of life | Autoscaler image | Note |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for cloud, rows in KUBERNETES_SUPPORT.items():
        for minor, r in rows.items():
            if cloud not in CLOUDS_WITH_AUTOSCALER_IMAGE:
                image = "managed by AKS"
            else:
                image = CLUSTER_AUTOSCALER_TAGS.get(minor, "none pinned (minor refused)")
            lines.append(
                f"| {_CLOUD_NAMES[cloud]} | {minor} | {r.end_of_standard_support.isoformat()} | "
                f"{r.end_of_life.isoformat()} | {image} | {r.note} |"
            )
    sources = {r.source for rows in KUBERNETES_SUPPORT.values() for r in rows.values()}
    lines += ["", "Sources:", *(f"- {s}" for s in sorted(sources)), README_END]
    return "\n".join(lines)


#: Kueue, which routes GPU Jobs to GKE queued provisioning (Dynamic Workload Scheduler): its Helm chart,
#: pinned to the newest release verified (checked 2026-11-23): charts/kueue 0.19.4 promoted to registry.k8s.io
#: on 2026-09-10 (kubernetes/k8s.io PR 9917). Its objects use kueue.x-k8s.io/v1beta2 (storage version since
#: 0.16; v1beta1 dropped in 0.17). From 0.13.x go through 0.15 and 0.16 (each release's upgrade notes).
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_VERSION = "0.19.4"
#: The port Kueue's webhook server listens on (its chart's webhook Service targets it).
KUEUE_WEBHOOK_PORT = 9443
#: The port Kueue's visibility API server listens on (apis/config/v1beta2/defaults.go DefaultVisibilityBindPort,
#: v0.19.2): on by default (feature VisibilityOnDemand, beta and default true since 0.9), and the chart
#: registers its APIService with the kube-apiserver, which must reach it like the webhook.
KUEUE_VISIBILITY_PORT = 8082


def cluster_autoscaler_image(kubernetes_version: str) -> str:
    """The autoscaler image whose minor matches ``kubernetes_version`` ("1.33" or "1.33.2")."""
    minor = _minor(kubernetes_version)
    try:
        return f"{CLUSTER_AUTOSCALER_IMAGE_REPO}:{CLUSTER_AUTOSCALER_TAGS[minor]}"
    except KeyError:
        allowed = ", ".join(CLUSTER_AUTOSCALER_TAGS)
        raise ValueError(f"no cluster-autoscaler release pinned for Kubernetes {minor}; pinned: {allowed}") from None


#: EKS managed add-ons per Kubernetes minor: the latest version of the EKS add-on type for each minor, as
#: the EKS user guide's tables list them (managing-kube-proxy, managing-coredns: the ja_jp .md copy that
#: lists 1.36, the newest found; 1.33 coredns stays v1.13.2 from the docs.amazonaws.cn copy, as that copy
#: lists it and an add-on is not downgraded). vpc-cni: one version serves every minor in each copy of its
#: table (managing-vpc-cni); no copy listing 1.35 or 1.36 was found, so v1.21.1-eksbuild.7 there is
#: unverified. eks-pod-identity-agent has no per-minor table (one agent serves every supported minor); its
#: version is the newest seen in published EKS configs, unverified for 1.36.
#: Check against `aws eks describe-addon-versions --addon-name <name> --kubernetes-version <minor>`.
EKS_ADDON_VERSIONS: dict[str, dict[str, str]] = {
    "1.32": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.32.13-eksbuild.16",
        "coredns": "v1.11.4-eksbuild.40",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.33": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.33.10-eksbuild.13",
        "coredns": "v1.13.2-eksbuild.4",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.34": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.34.6-eksbuild.13",
        "coredns": "v1.13.2-eksbuild.11",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.35": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.35.3-eksbuild.13",
        "coredns": "v1.14.3-eksbuild.3",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.36": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.36.0-eksbuild.14",
        "coredns": "v1.14.3-eksbuild.3",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
}


def eks_addon_versions(kubernetes_version: str) -> dict[str, str]:
    """The EKS managed add-ons and their versions for ``kubernetes_version`` ("1.33" or "1.33.2")."""
    minor = _minor(kubernetes_version)
    try:
        return dict(EKS_ADDON_VERSIONS[minor])
    except KeyError:
        allowed = ", ".join(EKS_ADDON_VERSIONS)
        raise ValueError(f"no EKS add-on versions pinned for Kubernetes {minor}; pinned: {allowed}") from None
