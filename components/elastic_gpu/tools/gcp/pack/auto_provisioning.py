"""Policy rules for GKE auto-provisioning: a ComputeClass that auto-creates GPU node pools.

- gke-auto-provisioning-gpu-limits: the cluster enables node auto-provisioning with a resource limit for
  every GPU type a class names where GKE needs one to create the pools (mandatory): with node auto-provisioning on
  (GKE creates no pool of a GPU type without a limit), or on a version below 1.33.3-gke.1136000 (GKE creates no pool
  for a ComputeClass without node auto-provisioning; gcp/autoprovisioning/spec.py AUTO_CREATION_WITHOUT_NAP).
- gke-auto-provisioning-gpu-cap: from that version on GKE creates them without it, on any release channel, and
  then nothing in the cluster caps them (spec.NO_CAP_WITHOUT_NAP): the finding names the regional GPU quotas, GKE's
  own (project-wide) alternative (advisory).
- gke-compute-class-gpu-taint: every priority of a GPU class names its GPU (type and count), so each node
  GKE creates carries the GPU and GKE's GPU taint (nvidia.com/gpu=present:NoSchedule).
- gke-compute-class-spot-first: spot priorities come before on-demand ones (GKE tries them in order).
- gke-compute-class-scale-down: the class bounds how long an unneeded node stays
  (autoscalingPolicy.consolidationDelayMinutes), so its pools return to zero in a known time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from elastic_gpu.gcp import GKE_CLUSTER, GKE_COMPUTE_CLASS
from elastic_gpu.gcp.autoprovisioning.spec import (
    AUTO_CREATION_WITHOUT_NAP,
    NO_CAP_WITHOUT_NAP,
    auto_creates,
    auto_creation_needs_nap,
    version_floor,
)
from elastic_gpu.gcp.quotas import gpu_quota
from elastic_gpu.gpu_catalog import gpu_instance_types
from elastic_gpu.tools.gcp.reader import cluster_limits
from elastic_gpu.tools.policy._base import config, props_of, schema
from elastic_gpu.tools.policy.scope import judged


def _auto_class(resource_type: str, props: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]]] | None:
    """(class name, priorities) of a ComputeClass that auto-creates node pools; None for anything else."""
    if resource_type != GKE_COMPUTE_CLASS:
        return None
    try:
        spec = props.get("spec") or {}
        if not auto_creates(spec):
            return None
        return (props.get("metadata") or {}).get("name", "?"), list(spec.get("priorities") or [])
    except UnknownValueError:
        return None


def _gpu_type(priority: dict[str, Any]) -> Any:
    return (priority.get("gpu") or {}).get("type")


# --- gke-auto-provisioning-gpu-limits ----------------------------------------------------------


def _gpu_classes(
    args: StackValidationArgs,
) -> tuple[dict[str, int], str, bool, list[tuple[Any, str, int, Any, list[bool]]]]:
    """The cluster's GPU limits, its version floor, whether auto-creation needs node auto-provisioning there, and
    (urn, class, count, GPU type, the `spot` of each priority naming it) of every GPU a judged auto-creating class
    names."""
    clusters = [r for r in args.resources if r.resource_type == GKE_CLUSTER]
    limits = cluster_limits(clusters)
    props = props_of(clusters[0]) or {}
    declared = props.get("minMasterVersion")
    # Unknown at preview (a new cluster that takes GKE's default): at least the oldest minor GKE offers.
    version = version_floor(declared if isinstance(declared, str) else None)
    found = []
    for r in args.resources:
        auto = _auto_class(r.resource_type, props_of(r))
        if auto is None or not judged(args, r.urn):
            continue
        name, priorities = auto
        gpus: dict[Any, dict[str, Any]] = {p["gpu"].get("type"): p["gpu"] for p in priorities if p.get("gpu")}
        found += [
            (r.urn, name, int(g.get("count") or 1), t, [bool(p.get("spot")) for p in priorities if _gpu_type(p) == t])
            for t, g in gpus.items()
        ]
    return limits, version, auto_creation_needs_nap(version), found


def validate_gpu_limits(args: StackValidationArgs, report: ReportViolation) -> None:
    if not any(r.resource_type == GKE_CLUSTER for r in args.resources):
        return  # an existing cluster: its limits are not in the program (GkeCluster.existing documents them)
    limits, version, needs_nap, classes = _gpu_classes(args)
    for urn, name, count, gpu_type, _ in classes:
        have = limits.get(str(gpu_type))
        if not limits and not needs_nap:
            continue  # GKE creates the pools without node auto-provisioning (gke-auto-provisioning-gpu-cap)
        if have is None or have < count:
            what = (
                f"has node auto-provisioning off and may run a version below {AUTO_CREATION_WITHOUT_NAP} "
                f"(minMasterVersion {version!r}), where a ComputeClass needs it"
                if not limits
                else f"has a {gpu_type} limit of {have or 0}"
            )
            report(
                f"ComputeClass '{name}' asks GKE to auto-create nodes with {count} x {gpu_type}, but the cluster "
                f"{what}: GKE creates no such node pool. Enable clusterAutoscaling with a resourceLimits entry "
                f"for {gpu_type} of at least {count} (GkeClusterArgs.auto_provisioning does it)"
                + ("" if limits else f", or set minMasterVersion to {AUTO_CREATION_WITHOUT_NAP} or later")
                + ".",
                urn,
            )


def quota_ids(gpu_type: str, spots: list[bool]) -> list[str]:
    """The regional Compute Engine quotas the class's nodes of `gpu_type` draw on (gcp/quotas.py): on-demand
    priorities the standard one, spot priorities the preemptible one; a model without a row, its family's."""
    model = next((t.gpu for t in gpu_instance_types("gcp") if t.accelerator == gpu_type), None)
    quota = gpu_quota(model) if model else None
    if quota is None:
        return ["GPUS-PER-GPU-FAMILY-per-project-region"]
    return [q for q, used in ((quota.preemptible, any(spots)), (quota.standard, not all(spots))) if used]


def validate_gpu_cap(args: StackValidationArgs, report: ReportViolation) -> None:
    if not any(r.resource_type == GKE_CLUSTER for r in args.resources):
        return
    limits, version, needs_nap, classes = _gpu_classes(args)
    if limits or needs_nap:
        return  # node auto-provisioning's limits cap the pools, or gke-auto-provisioning-gpu-limits judges them
    for urn, name, count, gpu_type, spots in classes:
        report(
            f"ComputeClass '{name}' asks GKE to auto-create nodes with {count} x {gpu_type}, and the cluster "
            f"(at least {version}) has node auto-provisioning off: GKE creates them with no cap; {NO_CAP_WITHOUT_NAP} "
            f"({', '.join(quota_ids(str(gpu_type), spots))} in the cluster's region). To have GKE hold the pools to "
            f"their maxSize, enable clusterAutoscaling with resourceLimits for cpu, memory and {gpu_type} (stack "
            "file: cluster.nodeAutoProvisioning: true; a program: GkeClusterArgs.auto_provisioning), at the cost of "
            "node pools GKE may then create for any pending Pod; or hold the regional quota at what the project's GPU "
            "pools may use.",
            urn,
        )


gke_auto_provisioning_gpu_limits = StackValidationPolicy(
    name="gke-auto-provisioning-gpu-limits",
    description=(
        "Every GPU type a ComputeClass auto-creates node pools for has a node auto-provisioning resource limit "
        "on the cluster where GKE needs one: with node auto-provisioning on, GKE creates no pool of a GPU type "
        "without one; with it off, GKE below 1.33.3-gke.1136000 creates none, on any release channel (a new cluster "
        "whose version is not known yet runs at least the oldest minor GKE offers). Fix: enable clusterAutoscaling "
        "with resourceLimits for the GPU type (GkeClusterArgs.auto_provisioning)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_gpu_limits,
)

gke_auto_provisioning_gpu_cap = StackValidationPolicy(
    name="gke-auto-provisioning-gpu-cap",
    description=(
        "A ComputeClass that auto-creates GPU node pools on a cluster without node auto-provisioning (GKE "
        "1.33.3-gke.1136000 and later create them, on any release channel) gets pools with no cap: a ComputeClass "
        "has no node limit and the cluster's resource limits apply only with node auto-provisioning, so the pool's "
        "maxSize holds nowhere; only the project's regional GPU quota bounds them. Fix: enable clusterAutoscaling "
        "with resourceLimits for the GPU type (cluster.nodeAutoProvisioning: true; GkeClusterArgs.auto_provisioning), "
        "or hold the regional quota at what the project's GPU pools may use."
    ),
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=validate_gpu_cap,
)

# --- gke-compute-class-gpu-taint ---------------------------------------------------------------


def validate_gpu_taint(args: ResourceValidationArgs, report: ReportViolation) -> None:
    found = _auto_class(args.resource_type, args.props)
    if found is None:
        return
    name, priorities = found
    if not any(p.get("gpu") for p in priorities):
        return  # not a GPU class
    for i, p in enumerate(priorities):
        gpu = p.get("gpu") or {}
        if not gpu.get("type") or int(gpu.get("count") or 0) < 1:
            report(
                f"ComputeClass '{name}' priority {i} names no GPU (gpu: {gpu or 'none'}): GKE would create nodes "
                "without the GPU and without its nvidia.com/gpu NoSchedule taint, so CPU pods may land there. Give "
                "every priority of a GPU class `gpu: {type, count}`.",
                None,
            )


gke_compute_class_gpu_taint = ResourceValidationPolicy(
    name="gke-compute-class-gpu-taint",
    description=(
        "Every priority of a ComputeClass that auto-creates GPU nodes names its GPU (type and count), so each "
        "node GKE creates has the GPU and GKE's nvidia.com/gpu=present:NoSchedule taint. Fix: add `gpu` to "
        "the priority (SpotGpuPool does it for you)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_gpu_taint,
)

# --- gke-compute-class-spot-first --------------------------------------------------------------


def validate_spot_first(args: ResourceValidationArgs, report: ReportViolation) -> None:
    found = _auto_class(args.resource_type, args.props)
    if found is None:
        return
    name, priorities = found
    spot = [bool(p.get("spot")) for p in priorities]
    first_on_demand = spot.index(False) if False in spot else len(spot)
    if True in spot[first_on_demand:]:
        late = [i for i, s in enumerate(spot) if s and i > first_on_demand]
        report(
            f"ComputeClass '{name}' ranks on-demand priority {first_on_demand} before spot priorities {late}: "
            "GKE tries priorities in order, so pods get on-demand nodes while spot may be free. Put every "
            "`spot: true` priority first.",
            None,
        )


gke_compute_class_spot_first = ResourceValidationPolicy(
    name="gke-compute-class-spot-first",
    description=(
        "In a ComputeClass that auto-creates node pools, every spot priority comes before every on-demand one "
        "(GKE tries them in order). Fix: reorder the priorities (SpotGpuPool puts spot first)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_spot_first,
)

# --- gke-compute-class-scale-down --------------------------------------------------------------

_SCALE_DOWN_SCHEMA = schema(
    maxConsolidationDelayMinutes={
        "type": "integer",
        "minimum": 1,
        "default": 60,
        "description": "Most minutes an unneeded auto-created node may stay "
        "(autoscalingPolicy.consolidationDelayMinutes).",
    }
)


def validate_scale_down(args: ResourceValidationArgs, report: ReportViolation) -> None:
    found = _auto_class(args.resource_type, args.props)
    if found is None:
        return
    name, _ = found
    most = int(config(args, _SCALE_DOWN_SCHEMA)["maxConsolidationDelayMinutes"])
    delay = ((args.props.get("spec") or {}).get("autoscalingPolicy") or {}).get("consolidationDelayMinutes")
    if delay is None or int(delay) > most:
        got = "unset" if delay is None else f"{delay} min"
        report(
            f"ComputeClass '{name}' does not bound how long an unneeded node stays (consolidationDelayMinutes: "
            f"{got}, allowed: 1 to {most}), so its GPU pools may not return to zero in a known time. Set "
            "spec.autoscalingPolicy.consolidationDelayMinutes (SpotGpuPool sets 10).",
            None,
        )


gke_compute_class_scale_down = ResourceValidationPolicy(
    name="gke-compute-class-scale-down",
    description=(
        "A ComputeClass that auto-creates node pools sets autoscalingPolicy.consolidationDelayMinutes at or "
        "below `maxConsolidationDelayMinutes` (default 60), so its nodes scale down to zero in a known time. "
        "Fix: set it (SpotGpuPool sets 10)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=_SCALE_DOWN_SCHEMA,
    validate=validate_scale_down,
)

POLICIES = (
    gke_auto_provisioning_gpu_limits,
    gke_auto_provisioning_gpu_cap,
    gke_compute_class_gpu_taint,
    gke_compute_class_spot_first,
    gke_compute_class_scale_down,
)
