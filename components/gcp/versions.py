"""GKE: the Kubernetes minors it accepts (components/versions.py merges them) and the pinned Kueue."""

from __future__ import annotations

from datetime import date

from elastic_gpu.clouds import MinorSupport
from elastic_gpu.gcp import GKE_CLUSTER, GKE_NODE_POOL

_SOURCE = (
    "GKE release schedule (cloud.google.com/kubernetes-engine/docs/release-schedule) as mirrored by "
    "endoflife-date/endoflife.date products/google-kubernetes-engine.md (eol = end of standard support; "
    "commit a70eca3 of 2026-08-22)"
)
#: At end of standard support GKE upgrades clusters on the Rapid/Regular/Stable channels (only the Extended
#: channel stays longer; its end dates were not found here), so the same date again.
_NOTE = "Extended channel: about 10 more months (dates not verified here)"
KUBERNETES_SUPPORT = (
    MinorSupport("1.32", date(2026, 4, 11), date(2026, 4, 11), _SOURCE, _NOTE),
    MinorSupport("1.33", date(2026, 8, 3), date(2026, 8, 3), _SOURCE, _NOTE),
    MinorSupport("1.34", date(2026, 10, 1), date(2026, 10, 1), _SOURCE, _NOTE),
    MinorSupport("1.35", date(2027, 4, 11), date(2027, 4, 11), _SOURCE, _NOTE),
    MinorSupport("1.36", date(2027, 8, 9), date(2027, 8, 9), _SOURCE, _NOTE),
)

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

#: Its cluster resource and the input that carries its Kubernetes version (the version policy rules).
VERSION_INPUTS = {GKE_CLUSTER: "minMasterVersion"}

#: Its node-pool resource and the input that carries the nodes' Kubernetes version (`diff`: version skew
#: between control plane and nodes). Unset, the nodes follow the control plane.
NODE_VERSION_INPUTS = {GKE_NODE_POOL: "version"}
