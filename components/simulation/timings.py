"""The autoscaler's settings per cloud, read from the captured resources, and how long its
documented behaviour takes to move on from a group and to scale a pool back to zero."""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from elastic_gpu.cluster_autoscaler import PRIORITY_CONFIGMAP
from elastic_gpu.offline.runner import Preview
from elastic_gpu.pool_view import AKS_MANAGED_CLUSTER, EKS_NODE_GROUP, GKE_CLUSTER

#: cluster-autoscaler's own defaults (FAQ, "What are the parameters to CA?").
CA_DEFAULT_EXPANDER = "random"
CA_DEFAULT_SCALE_DOWN_UNNEEDED = "10m"
CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD = "10m"
CA_DEFAULT_MAX_NODE_PROVISION_TIME = "15m"

#: EKS: an ASG that cannot launch (no spot capacity) records a failed scaling activity; since
#: cluster-autoscaler 1.24 (kubernetes/autoscaler#4489, "Early abort if AWS node group has no
#: capacity"; needs autoscaling:DescribeScalingActivities, which our role has) the autoscaler
#: backs the group off on its next loop instead of waiting max-node-provision-time. The activity
#: and the ASG cache refresh take seconds to a minute: one minute per group.
AWS_FAILED_LAUNCH_MINUTES = 1.0
#: GKE: a managed instance group that cannot create VMs reports ZONE_RESOURCE_POOL_EXHAUSTED /
#: stockout errors, which the autoscaler's GCE provider maps to out-of-resources and backs off at
#: once (cloudprovider/gce, instance error codes); GKE then tries the ComputeClass's next priority.
GKE_FAILED_LAUNCH_MINUTES = 1.0


def minutes(duration: str) -> float:
    """'90s' -> 1.5, '15m' -> 15, '1h' -> 60."""
    match = re.fullmatch(r"([0-9.]+)(s|m|h)", duration.strip())
    if not match:
        raise ValueError(f"not a duration: {duration!r}")
    return float(match[1]) * {"s": 1 / 60, "m": 1, "h": 60}[match[2]]


@dataclass(frozen=True)
class AutoscalerSettings:
    cloud: str
    expanders: tuple[str, ...]
    #: priority expander ranks {priority: [regex]}; empty when not configured
    priorities: dict[int, list[str]]
    scale_down_unneeded: float
    scale_down_delay_after_add: float
    max_node_provision: float
    #: minutes until the autoscaler gives up on a group that cannot get capacity
    failed_group_minutes: float
    #: where those figures come from, for the report
    source: str
    #: the groups (by the autoscaler's name for them: EKS ASG names) it may scale; None: every group
    groups: frozenset[str] | None = None

    @property
    def minutes_to_zero(self) -> float:
        """A node whose pod has ended goes after scale-down-unneeded-time, and no sooner than
        scale-down-delay-after-add after the scale-up that made it: the worst case for a short job."""
        return max(self.scale_down_unneeded, self.scale_down_delay_after_add)


def _priorities(preview: Preview) -> dict[int, list[str]]:
    for r in preview.of_type("kubernetes:core/v1:ConfigMap"):
        if (r.inputs.get("metadata") or {}).get("name") == PRIORITY_CONFIGMAP:
            data = yaml.safe_load((r.inputs.get("data") or {}).get("priorities") or "") or {}
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


def _flags(preview: Preview) -> dict[str, str] | None:
    """The flags of a self-run cluster-autoscaler Deployment (EKS), or None when there is none."""
    words = _words(preview)
    return None if words is None else dict(w[2:].partition("=")[::2] for w in words if w.startswith("--"))


def listed_groups(preview: Preview) -> frozenset[str] | None:
    """The ASGs an EKS autoscaler lists with `--nodes=<min>:<max>:<name>`; None when it lists none (tag
    auto-discovery finds every managed group: EKS tags them all) or there is no autoscaler."""
    words = _words(preview) or []
    names = [w.removeprefix("--nodes=").split(":", 2)[-1] for w in words if w.startswith("--nodes=")]
    return frozenset(names) if names else None


def autoscaler_settings(preview: Preview) -> AutoscalerSettings:
    if preview.of_type(EKS_NODE_GROUP):
        flags = _flags(preview) or {}
        provision = minutes(flags.get("max-node-provision-time", CA_DEFAULT_MAX_NODE_PROVISION_TIME))
        return AutoscalerSettings(
            cloud="aws",
            expanders=tuple(flags.get("expander", CA_DEFAULT_EXPANDER).split(",")),
            priorities=_priorities(preview),
            scale_down_unneeded=minutes(flags.get("scale-down-unneeded-time", CA_DEFAULT_SCALE_DOWN_UNNEEDED)),
            scale_down_delay_after_add=minutes(
                flags.get("scale-down-delay-after-add", CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD)
            ),
            max_node_provision=provision,
            failed_group_minutes=min(AWS_FAILED_LAUNCH_MINUTES, provision),
            source="cluster-autoscaler Deployment flags; failed ASG launch seen in ~1 min (autoscaler#4489)",
            groups=listed_groups(preview),
        )
    clusters = preview.of_type(AKS_MANAGED_CLUSTER)
    if clusters:
        profile = clusters[0].inputs.get("autoScalerProfile") or {}
        provision = minutes(profile.get("maxNodeProvisionTime", CA_DEFAULT_MAX_NODE_PROVISION_TIME))
        return AutoscalerSettings(
            cloud="azure",
            # AKS's managed autoscaler takes one expander (autoScalerProfile.expander).
            expanders=(profile.get("expander", CA_DEFAULT_EXPANDER),),
            priorities=_priorities(preview),
            scale_down_unneeded=minutes(profile.get("scaleDownUnneededTime", CA_DEFAULT_SCALE_DOWN_UNNEEDED)),
            scale_down_delay_after_add=minutes(
                profile.get("scaleDownDelayAfterAdd", CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD)
            ),
            max_node_provision=provision,
            # Worst case: a spot scale set that cannot allocate is given up on after
            # max-node-provision-time (faster when Azure reports the failed VMs, autoscaler#5548).
            failed_group_minutes=provision,
            source="AKS autoScalerProfile; a failed spot pool is given up on after maxNodeProvisionTime",
        )
    if preview.of_type(GKE_CLUSTER):
        return AutoscalerSettings(
            cloud="gcp",
            # GKE's managed autoscaler has no priority expander: a ComputeClass ranks pools instead;
            # it does not document its expander, least-waste is what is modelled here.
            expanders=("least-waste",),
            priorities={},
            # GKE does not expose its scale-down timers; the upstream defaults are an upper bound
            # (the OPTIMIZE_UTILIZATION profile removes unneeded nodes sooner).
            scale_down_unneeded=minutes(CA_DEFAULT_SCALE_DOWN_UNNEEDED),
            scale_down_delay_after_add=minutes(CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD),
            max_node_provision=minutes(CA_DEFAULT_MAX_NODE_PROVISION_TIME),
            failed_group_minutes=GKE_FAILED_LAUNCH_MINUTES,
            source="GKE managed autoscaler (upstream defaults as upper bounds); stockouts back off at once",
        )
    raise ValueError("no EKS node group, AKS cluster or GKE cluster in the captured resources")
