"""The autoscaler's settings per cloud, read from the captured resources, and how long its
documented behaviour takes to move on from a group and to scale a pool back to zero."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, cast

import yaml

from elastic_gpu.cluster_autoscaler import PRIORITY_CONFIGMAP
from elastic_gpu.durations import parse_duration
from elastic_gpu.files import SAFE_LOADER
from elastic_gpu.tools.clouds import CloudTools, all_clouds
from elastic_gpu.tools.offline.runner import UNKNOWN, Preview
from elastic_gpu.tools.simulation.backoff import SECOND, Machine

#: cluster-autoscaler's own defaults (FAQ, "What are the parameters to CA?"); the expander's is
#: least-waste since 1.33 (cluster-autoscaler-1.33.6 config/flags/flags.go:143).
CA_DEFAULT_EXPANDER = "least-waste"
CA_DEFAULT_SCALE_DOWN_UNNEEDED = "10m"
CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD = "10m"
CA_DEFAULT_MAX_NODE_PROVISION_TIME = "15m"
CA_DEFAULT_SCAN_INTERVAL = "10s"


def minutes(duration: str) -> float:
    """A Go duration in minutes: '90s' -> 1.5, '14m30s' -> 14.5, '1h' -> 60 (ValueError if it is none)."""
    return parse_duration(duration) / 60


#: What a runtime figure rests on: `source`, upstream code that runs as is, at a tag (the
#: cluster-autoscaler this library deploys on EKS, Karpenter); `docs`, a managed service's own
#: documentation (AKS, GKE, node auto-provisioning); `proxy`, upstream code standing in for a closed build.
EvidenceClass = Literal["source", "docs", "proxy"]


@dataclass(frozen=True)
class Evidence:
    """The class of a figure's evidence and its reference (repository and tag, or documentation page)."""

    kind: EvidenceClass
    reference: str

    def to_json(self) -> dict[str, str]:
        return {"class": self.kind, "reference": self.reference}

    def __str__(self) -> str:
        return f"{self.kind}: {self.reference}"


@dataclass(frozen=True)
class Regime:
    """One way the autoscaler learns that a group failed, with its own clocks (AKS has two)."""

    name: str
    machine: Machine
    #: what the regime applies to, for the report
    when: str = ""


@dataclass(frozen=True)
class AutoscalerTiming:
    """The timing model of one cloud's autoscaler in a preview: its settings as the simulation reads them, its clocks
    and their evidence (a stack's own autoscaler settings are elastic_gpu.settings.AutoscalerSettings)."""

    cloud: str
    expanders: tuple[str, ...]
    #: priority expander ranks {priority: [regex]}; empty when not configured
    priorities: dict[int, list[str]]
    scale_down_unneeded: float
    scale_down_delay_after_add: float
    max_node_provision: float
    #: the autoscaler's clocks: how long an attempt on a group without capacity lasts, backoff
    machine: Machine
    #: where those figures come from, for the report
    source: str
    #: the groups (by the autoscaler's name for them: EKS ASG names) it may scale; None: every group
    groups: frozenset[str] | None = None
    #: what the figures rest on
    evidence: Evidence = Evidence("proxy", "")
    #: the ways a failed group is seen, each with its clocks; empty: `machine` alone. The promise is
    #: judged on `machine`, the slowest.
    regimes: tuple[Regime, ...] = field(default_factory=tuple)
    #: does a zonal shortage fail only that zone's part of a multi-zone group? AKS's autoscaler is not
    #: zone-aware: a scale set spanning zones can fail, and be backed off whole, for one zone's shortage.
    zone_aware: bool = True

    @property
    def all_regimes(self) -> tuple[Regime, ...]:
        return self.regimes or (Regime("", self.machine),)

    @property
    def minutes_to_zero(self) -> float:
        """A node whose pod has ended goes after scale-down-unneeded-time, and no sooner than
        scale-down-delay-after-add after the scale-up that made it: the worst case for a short job."""
        return max(self.scale_down_unneeded, self.scale_down_delay_after_add)


def priorities(preview: Preview) -> dict[int, list[str]]:
    """The priority expander's levels (priority -> node-group regexes) from the stack's ConfigMap; read once per
    `reading` block (Preview.memo): the list holds a regex per node group."""
    return preview.memo("autoscaler-priorities", lambda: _priorities(preview))


def _priorities(preview: Preview) -> dict[int, list[str]]:
    for r in preview.of_type("kubernetes:core/v1:ConfigMap"):
        if (r.inputs.get("metadata") or {}).get("name") == PRIORITY_CONFIGMAP:
            data = yaml.load((r.inputs.get("data") or {}).get("priorities") or "", Loader=SAFE_LOADER) or {}
            return {int(k): list(v) for k, v in data.items()}
    return {}


def _words(preview: Preview) -> list[str] | None:
    """The command line of a self-run cluster-autoscaler Deployment (EKS), or None when there is none."""
    for r in preview.of_type("kubernetes:apps/v1:Deployment"):
        for c in (((r.inputs.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []:
            words = [*(c.get("command") or []), *(c.get("args") or [])]
            if any(isinstance(w, str) and w.endswith("cluster-autoscaler") for w in words[:1]):
                return [w for w in words if isinstance(w, str)]
    return None


def autoscaler_flags(preview: Preview) -> dict[str, str] | None:
    """The flags of a self-run cluster-autoscaler Deployment (EKS), or None when there is none."""
    words = _words(preview)
    return None if words is None else dict(w[2:].partition("=")[::2] for w in words if w.startswith("--"))


def autoscaler_image(preview: Preview) -> str | None:
    """The image of a self-run cluster-autoscaler Deployment (EKS), or None when there is none or it is not known
    at preview (chosen from a cluster's minor that is known only once the cluster exists)."""
    for r in preview.of_type("kubernetes:apps/v1:Deployment"):
        for c in (((r.inputs.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []:
            words = [*(c.get("command") or []), *(c.get("args") or [])]
            if words and isinstance(words[0], str) and words[0].endswith("cluster-autoscaler"):
                image = c.get("image")
                return image if isinstance(image, str) and image != UNKNOWN else None
    return None


def listed_groups(preview: Preview) -> frozenset[str] | None:
    """The ASGs an EKS autoscaler lists with `--nodes=<min>:<max>:<name>`; None when it lists none (tag
    auto-discovery finds every managed group: EKS tags them all) or there is no autoscaler."""
    words = _words(preview) or []
    names = [w.removeprefix("--nodes=").split(":", 2)[-1] for w in words if w.startswith("--nodes=")]
    return frozenset(names) if names else None


def seconds(duration: str) -> int:
    return round(minutes(duration) * 60)


def early_failure(scan: int, provision: int, refresh: int, how: str) -> Machine:
    """A provider that reports the failed launch: seen at the first loop after its cache shows it
    (at most ``refresh`` later), and never later than max-node-provision-time."""
    return Machine(
        attempt=(min(scan, provision + SECOND), min(refresh + scan, provision + scan)),
        scan=scan,
        source=f"{how}: seen {scan}s to {refresh + scan}s after the scale-up, "
        "plus the cloud's own time to fail the launch (not in the autoscaler's source)",
    )


def timeout_only(scan: int, provision: int, how: str) -> Machine:
    """A provider that does not report it: the scale-up times out at the first loop after
    max-node-provision-time (clusterstate.go:277 ExpectedAddTime.Before(now)) and backs the group off;
    its VM, first listed a loop after the ask, is long-unregistered a loop later (clusterstate.go:666),
    no longer upcoming (:1003) and removed (static_autoscaler.go:405-420): the next group is asked then."""
    return Machine(
        attempt=(provision + scan + SECOND, provision + 2 * scan),
        scan=scan,
        timeout_bound=True,
        lag=scan,
        source=f"{how}: the scale-up times out at the first loop after max-node-provision-time "
        f"({provision // 60:g} min + up to one {scan}s scan interval) and the next group is asked a loop later, "
        "when the failed VM is long-unregistered and removed",
    )


class TimedCloud(CloudTools, Protocol):
    """A cloud as the simulation's clocks ask for it: its autoscaler's timing."""

    def autoscaler_timing(self, preview: Preview) -> AutoscalerTiming | None:
        """The timing model of its autoscaler in the preview: its settings, clocks and evidence, as the
        simulation times a pending pod; None when the preview has none of this cloud's autoscalers."""
        ...


def timed_clouds() -> list[TimedCloud]:
    """Every registered cloud, viewed by its autoscaler's timing (the registry's order). Sound because each
    cloud's class is checked against `ToolCloud` (tools/tool_cloud.py), which extends `TimedCloud`."""
    return cast(list[TimedCloud], all_clouds())


def autoscaler_settings(preview: Preview) -> AutoscalerTiming:
    """The settings of the first cloud (in cloud order) whose autoscaler the preview has: which cloud a preview
    is on is known only from what it captured."""
    for cloud in timed_clouds():
        settings = cloud.autoscaler_timing(preview)
        if settings is not None:
            return settings
    raise NoAutoscaler("no EKS node group, AKS cluster or GKE cluster in the captured resources")


class NoAutoscaler(ValueError):
    """The preview has no cluster whose autoscaler the simulation knows (a ValueError for older callers); any
    other ValueError from autoscaler_settings is a setting it could not read, such as a bad duration."""
