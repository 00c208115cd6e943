"""GKE: the Kubernetes minors it accepts (elastic_gpu/versions.py merges them) and the pinned Kueue."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, Any

from elastic_gpu.cloud_facts import VersionRows
from elastic_gpu.clouds import HANDLE_VERSION_INPUT, MinorSupport
from elastic_gpu.gcp import GKE_CLUSTER, GKE_EXISTING_CLUSTER, GKE_NODE_POOL

if TYPE_CHECKING:
    from elastic_gpu.versions import SupportStatus

_SOURCE = (
    "GKE release schedule (cloud.google.com/kubernetes-engine/docs/release-schedule) as mirrored by "
    "endoflife-date/endoflife.date products/google-kubernetes-engine.md (eol = end of standard support; "
    "commit a70eca3 of 2026-08-22)"
)
_SOURCE_137 = (
    "GKE release notes 2026-10-08 (2026-R43): 1.37.1-gke.1552000 available in the Rapid channel; its end of "
    "standard support is not published yet: Kubernetes 1.37's own end of life (kubernetes.io/releases, 2027-10-28) "
    "stands in as a lower bound (GKE supports a minor about 14 months from its Regular availability)"
)
#: At end of standard support GKE upgrades clusters on the Rapid/Regular/Stable channels (only the Extended
#: channel stays longer; its end dates were not found here), so the same date again.
_NOTE = "Extended channel: about 10 more months (dates not verified here)"
#: The minors GKE offers on 2026-12-01 and their end of standard support, from GKE's own calendar (not from the
#: cluster-autoscaler's image tags: GKE runs its own autoscaler). 1.32 to 1.34 have left it (end of standard support
#: 2026-04-11, 2026-08-03 and 2026-10-01): a stack asking for them is refused, a cluster declaring them fails the
#: end-of-life rule.
KUBERNETES_SUPPORT = (
    MinorSupport("1.35", date(2027, 4, 11), date(2027, 4, 11), _SOURCE, _NOTE),
    MinorSupport("1.36", date(2027, 8, 9), date(2027, 8, 9), _SOURCE, _NOTE),
    MinorSupport(
        "1.37",
        date(2027, 10, 28),
        date(2027, 10, 28),
        _SOURCE_137,
        "Rapid channel only on 2026-10-08; dates a lower bound until GKE publishes them",
        # GKE moves a minor to the Regular channel a few months after Rapid, and publishes its dates then.
        review_by=date(2027, 3, 1),
    ),
)

#: Kueue, which routes GPU Jobs to GKE queued provisioning (Dynamic Workload Scheduler): its Helm chart,
#: pinned to the newest release verified (checked 2026-11-23): charts/kueue 0.19.4 promoted to registry.k8s.io
#: on 2026-09-10 (kubernetes/k8s.io PR 9917). Its objects use kueue.x-k8s.io/v1beta2, the storage version since
#: 0.16; v1beta1 is still served there, deprecated (config/elastic_gpu/crd/bases/kueue.x-k8s.io_clusterqueues.yaml
#: at v0.16.0 through v0.19.2: `deprecated: true`, `served: true`, `storage: false`). From 0.13.x go through 0.15
#: and 0.16 (each release's upgrade notes).
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_VERSION = "0.19.4"
#: The port Kueue's webhook server listens on (its chart's webhook Service targets it).
KUEUE_WEBHOOK_PORT = 9443
#: The port Kueue's visibility API server listens on (apis/config/v1beta2/defaults.go DefaultVisibilityBindPort,
#: v0.19.2): on by default (feature VisibilityOnDemand, beta and default true since 0.9), and the chart
#: registers its APIService with the kube-apiserver, which must reach it like the webhook.
KUEUE_VISIBILITY_PORT = 8082

#: Its cluster resource and the input that carries its Kubernetes version, and the handle on a cluster this
#: library did not create, whose minor its node groups follow (the version policy rules judge both).
VERSION_INPUTS = {GKE_CLUSTER: "minMasterVersion", GKE_EXISTING_CLUSTER: HANDLE_VERSION_INPUT}

#: Its node-pool resource and the input that carries the nodes' Kubernetes version (`diff`: version skew
#: between control plane and nodes). Unset, the nodes follow the control plane. The cluster's own `nodeVersion` is
#: its default node pool's, which "must either be unset or set to the same value as min_master_version on create"
#: (terraform-provider-google resource_container_cluster.go, node_version), so a cluster declaring only it declares
#: its version there.
NODE_VERSION_INPUTS = {GKE_NODE_POOL: "version", GKE_CLUSTER: "nodeVersion"}

#: The release channel on which GKE keeps a cluster's minor: "GKE clusters on the Extended release channel stay
#: on the same GKE minor version until shortly before the extended support period ends" (Google Cloud blog,
#: "Introducing GKE extended support", 2024-07-17). On the others (RAPID, REGULAR, STABLE) the cluster's
#: minMasterVersion is its initial version and a floor (terraform-provider-google resource_container_cluster.go,
#: min_master_version: "The minimum version of the master ... GKE will auto-update the master to new versions"):
#: GKE upgrades the control plane and the nodes past it as the channel's auto-upgrade target moves, at the
#: latest at the minor's end of standard support.
KEEPS_MINOR_CHANNEL = "EXTENDED"
#: The cluster's input that carries its release channel ({"channel": ...}).
CHANNEL_INPUT = "releaseChannel"


def floor_warning(minor: str, channel: str) -> str | None:
    """What the stack's Kubernetes version means on `channel`: None where GKE keeps it (EXTENDED)."""
    if channel == KEEPS_MINOR_CHANNEL:
        return None
    return (
        f"{channel}: GKE upgrades this cluster past Kubernetes {minor} as the channel moves (minMasterVersion is "
        f"the initial version and a floor, not a pin), at the latest at {minor}'s end of standard support; set "
        f"releaseChannel: {KEEPS_MINOR_CHANNEL} to keep {minor} (extended support, billed, until shortly before "
        "its end)"
    )


def running_support(status: SupportStatus, props: Mapping[str, Any]) -> SupportStatus:
    """The support status of the version the cluster will run, from its declared floor's (`status`) and its
    release channel: on EXTENDED the minor runs on past its end of standard support (extended support, whose
    end this table does not have), so that is advisory, not end of life; elsewhere the version is a floor that
    GKE upgrades past, and past its end a cluster runs a newer minor and GKE creates none at it."""
    from dataclasses import replace

    found = props.get(CHANNEL_INPUT)
    channel = found.get("channel") if isinstance(found, Mapping) else None
    if status.level == "standard":
        return status
    if channel == KEEPS_MINOR_CHANNEL:
        return replace(
            status,
            level="past-standard",
            note=f"On the {KEEPS_MINOR_CHANNEL} channel GKE keeps the minor in extended support (billed) until shortly "
            "before its end of extended support, which this table does not have: check GKE's release schedule.",
        )
    return replace(
        status,
        note=f"On release channel {channel or 'none'} {status.minor} is a floor (minMasterVersion): a cluster "
        "that exists runs a newer minor (GKE upgraded it) and GKE creates none at it; raise kubernetesVersion to "
        "the minor the cluster runs.",
    )


#: The rows above as the deploy protocol's record (elastic_gpu/provider.py VersionRows).
ROWS = VersionRows(
    kubernetes_support=KUBERNETES_SUPPORT, version_inputs=VERSION_INPUTS, node_version_inputs=NODE_VERSION_INPUTS
)
