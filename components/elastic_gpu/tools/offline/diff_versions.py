"""`diff`: the Kubernetes version of each cluster on each side, and the rules a change of it must follow.

A side's clusters are the cluster resources its program declares (each cloud's `version_inputs`: an EKS
`aws:eks/cluster:Cluster` `version`, which pulumi-eks's Cluster declares too; an AKS `ManagedCluster`
`kubernetesVersion`; a GKE `Cluster` `minMasterVersion`, else its `nodeVersion`), and the library's handles on a
cluster the program does not declare (`existing()`); before any preview, the stack file's
`cluster.kubernetesVersion`. A cluster on both sides (the same URN) follows its cloud's rules: no downgrade, one
minor per upgrade, and where the cloud has its own path (`UpgradePath`: GKE moves a floor past its end of support
on its own, AKS takes an unsupported minor straight to the oldest supported one) that path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pulumi.runtime import rpc

from elastic_gpu import versions
from elastic_gpu.cloud_facts import RegisteredCloud
from elastic_gpu.clouds import CLOUDS, all_clouds, get_cloud
from elastic_gpu.provider import UpgradePath, UpgradeReach
from elastic_gpu.tools.offline.runner import CapturedResource

#: The stack file's cluster, the one key a side has before its program runs.
STACK_CONFIG = "stack config"
STACK_CONFIG_FIELD = "cluster.kubernetesVersion"
#: What the stack file names its cloud and its cluster under.
CLOUD_KEY = "elastic-gpu:cloud"
CLUSTER_KEY = "elastic-gpu:cluster"
#: Each managed service upgrades the control plane one minor at a time (EKS, AKS and GKE docs).
MAX_MINOR_STEP = 1


@dataclass(frozen=True)
class ClusterVersion:
    """One cluster's Kubernetes version as one side declares it."""

    #: what names the cluster on both sides: its resource's URN, or STACK_CONFIG
    key: str
    #: how messages name the declaration: "<type> <name>: <input>", or the stack file's field
    where: str
    #: the cloud whose rules apply (None: not known)
    cloud: RegisteredCloud | None
    #: the version as declared ("1.33", "1.26.3", "1.33.5-gke.1000"); rpc.UNKNOWN: known only after deployment;
    #: None: not declared (the cloud picks its default when it creates the cluster)
    declared: Any
    #: the resource's inputs: the cloud's path may read more of them (GKE: the release channel)
    props: Mapping[str, Any] = field(default_factory=dict)

    @property
    def minor(self) -> tuple[int, int] | None:
        return minor_of(self.declared)

    @property
    def shown(self) -> str:
        if self.declared is None:
            return "not declared"
        return "unknown until deployed" if self.declared == rpc.UNKNOWN else str(self.declared)


def minor_of(value: Any) -> tuple[int, int] | None:
    """(1, 33) of "1.33", "v1.33.2" or "1.33.5-gke.1000"; None for anything else ("latest", an unknown)."""
    if not isinstance(value, str):
        return None
    parts = value.removeprefix("v").split(".")
    try:
        return int(parts[0]), int(parts[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _text(minor: tuple[int, int]) -> str:
    return f"{minor[0]}.{minor[1]}"


def _inputs() -> tuple[dict[str, tuple[RegisteredCloud, str]], dict[str, str]]:
    """resource type -> (its cloud, the input carrying the control plane's version); and the nodes' inputs."""
    planes = {t: (c, f) for c in all_clouds() for t, f in c.versions().version_inputs.items()}
    nodes = {t: f for c in all_clouds() for t, f in c.versions().node_version_inputs.items()}
    return planes, nodes


def cluster_versions(resources: Mapping[str, CapturedResource]) -> dict[str, ClusterVersion]:
    """Every cluster a side's program declares, and every handle on a cluster it does not, by URN."""
    planes, nodes = _inputs()
    declared: dict[str, ClusterVersion] = {}
    handles: list[tuple[CapturedResource, RegisteredCloud, str]] = []
    for r in resources.values():
        if r.type not in planes:
            continue
        cloud, name = planes[r.type]
        if not r.custom:  # the library's handle (a component), judged below
            handles.append((r, cloud, name))
            continue
        value = r.inputs.get(name)
        if value is None and r.type in nodes and r.inputs.get(nodes[r.type]) is not None:
            name, value = nodes[r.type], r.inputs.get(nodes[r.type])  # GKE: only nodeVersion declared
        declared[r.urn] = ClusterVersion(r.urn, f"{r.type} {r.name}: {name}", cloud, value, r.inputs)
    # A handle built from a cluster the program declares (`from_*`, which depends on it, or on the pulumi-eks
    # component around it) stands for that cluster: it is judged there.
    owners = set(declared) | {p for urn in declared if (p := resources[urn].parent)}
    for r, cloud, name in handles:
        if not owners & set(r.depends_on):
            declared[r.urn] = ClusterVersion(r.urn, f"{r.type} {r.name}: {name}", cloud, r.inputs.get(name), r.inputs)
    return declared


def config_version(config: Mapping[str, Any]) -> dict[str, ClusterVersion]:
    """The stack file's cluster (`elastic-gpu:cluster.kubernetesVersion`), or nothing."""
    cluster = config.get(CLUSTER_KEY)
    version = cluster.get("kubernetesVersion") if isinstance(cluster, Mapping) else None
    if version is None:
        return {}
    name = config.get(CLOUD_KEY)
    cloud = get_cloud(name) if isinstance(name, str) and name in CLOUDS else None
    return {STACK_CONFIG: ClusterVersion(STACK_CONFIG, STACK_CONFIG_FIELD, cloud, str(version))}


@dataclass
class VersionVerdict:
    """What the version rules say of a change: refusals (exit 2) and notes (warnings)."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _reach(old: ClusterVersion, minor: tuple[int, int], on: date) -> UpgradeReach:
    step = _text((minor[0], minor[1] + MAX_MINOR_STEP))
    if isinstance(old.cloud, UpgradePath):
        return old.cloud.upgrade_reach(_text(minor), old.props, on)
    return UpgradeReach(_text(minor), step)


def _service(cluster: ClusterVersion) -> str:
    return cluster.cloud.facts.service if cluster.cloud is not None else "EKS, AKS and GKE"


def version_verdict(
    base: Mapping[str, ClusterVersion], head: Mapping[str, ClusterVersion], on: date | None = None
) -> VersionVerdict:
    """The rules over every cluster on both sides, on the day `on` (default: versions.today())."""
    day = on or versions.today()
    verdict = VersionVerdict()
    for key, new in head.items():
        old = base.get(key)
        if old is None:
            continue  # a new cluster is created at its version
        b, h = old.minor, new.minor
        if old.declared is None and h is not None:
            verdict.notes.append(
                f"{new.where}: not declared -> {new.declared}: the cluster runs the version {_service(new)} chose "
                f"when it created it, or one it upgraded to since; it moves one minor at a time, so check that the "
                f"cluster runs {_text((h[0], h[1] - 1))} or {_text(h)} before this `up`"
            )
        if b is None or h is None or b == h:
            continue
        service = _service(new)
        if h < b:
            verdict.problems.append(
                f"{new.where}: {old.declared} -> {new.declared} is a downgrade; {service} cannot move a control "
                f"plane back to an older minor (keep {_text(b)}, or build a new cluster)"
            )
            continue
        reach = _reach(old, b, day)
        runs, reaches = minor_of(reach.runs_at_least), minor_of(reach.reaches)
        assert runs is not None and reaches is not None
        steps = (h[0] - b[0]) * 100 + h[1] - b[1]
        if h <= runs:
            verdict.notes.append(f"{new.where}: {old.declared} -> {new.declared}: {reach.why}")
        elif h > reaches:
            from_here = f" ({reach.why})" if reach.why else ""
            verdict.problems.append(
                f"{new.where}: {old.declared} -> {new.declared} jumps {steps} minors; {service} upgrades the "
                f"control plane one minor at a time{from_here}, so deploy {reach.reaches} first, then go on from there"
            )
        elif reach.why:
            verdict.notes.append(f"{new.where}: {old.declared} -> {new.declared}: {reach.why}")
    return verdict


def version_lines(base: Mapping[str, ClusterVersion], head: Mapping[str, ClusterVersion]) -> list[str]:
    """The "Kubernetes:" lines: each cluster's version on both sides, naming the declaration where it changes
    or where there are several clusters."""
    keys = list(head) + [k for k in base if k not in head]
    several = len(keys) > 1
    lines = []
    for key in keys:
        old, new = base.get(key), head.get(key)
        where = (new or old).where  # type: ignore[union-attr]
        b = old.shown if old is not None else "none (a new cluster)"
        h = new.shown if new is not None else "none (deleted)"
        if old is not None and new is not None and old.declared == new.declared:
            lines.append(f"Kubernetes: {h} (unchanged)" + (f" ({where})" if several else ""))
        else:
            lines.append(f"Kubernetes: {b} -> {h} ({where})")
    return lines
