"""Rule 4: EKS node groups carry the cluster autoscaler's ASG tags (auto-discovery and node templates)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyResource, ReportViolation, StackValidationArgs, StackValidationPolicy
from pulumi_policy.proxy import UnknownValueError

from elastic_gpu.aws.asg_tags import (
    AUTO_DISCOVERY_ENABLED_KEY,
    NODE_TEMPLATE_PREFIX,
    auto_discovery_cluster_key,
)
from elastic_gpu.policy_rules._base import parent_urn, props_of
from elastic_gpu.pool_view import EKS_NODE_GROUP, pools_of
from elastic_gpu.scheduling import GPU_NODE_LABEL, GPU_RESOURCE

ASG_TAG = "aws:autoscaling/tag:Tag"


def _tags_for(ng: PolicyResource, tags: list[PolicyResource]) -> dict[str, str]:
    """The ASG tags aimed at a node group's Auto Scaling group.

    A Tag resource is matched when it shares the node group's parent and its name starts with the node
    group's resource name (how the components name them), or when its ASG name contains the node group's
    name (EKS names the ASG `eks-<nodeGroupName>-<uuid>`; unknown during a real preview).
    """
    ng_name = props_of(ng).get("nodeGroupName") or ng.name
    found: dict[str, str] = {}
    for t in tags:
        p = props_of(t)
        try:
            by_name = parent_urn(t) == parent_urn(ng) and t.name.startswith(f"{ng.name}-")
            asg = None if by_name else p.get("autoscalingGroupName")  # unknown during a real preview
            if by_name or (isinstance(asg, str) and f"-{ng_name}-" in f"-{asg}-"):
                tag = p.get("tag") or {}
                found[tag.get("key", "")] = str(tag.get("value", ""))
        except UnknownValueError:
            continue
    return found


def validate_asg_tags(args: StackValidationArgs, report: ReportViolation) -> None:
    tags = [r for r in args.resources if r.resource_type == ASG_TAG]
    for ng in args.resources:
        if ng.resource_type != EKS_NODE_GROUP:
            continue
        props = props_of(ng)
        have = _tags_for(ng, tags)
        cluster = props.get("clusterName")
        need = {AUTO_DISCOVERY_ENABLED_KEY: "true"}
        if isinstance(cluster, str):
            need[auto_discovery_cluster_key(cluster)] = "owned"
        for pool in pools_of(ng.resource_type, ng.name, props):
            if pool.gpu:
                need[f"{NODE_TEMPLATE_PREFIX}/label/{GPU_NODE_LABEL}"] = pool.labels.get(GPU_NODE_LABEL, "true")
                need[f"{NODE_TEMPLATE_PREFIX}/resources/{GPU_RESOURCE}"] = ""  # any GPU count
                for t in pool.taints:
                    need[f"{NODE_TEMPLATE_PREFIX}/taint/{t.key}"] = f"{t.value}:{t.effect}"
        missing = [k for k, v in need.items() if k not in have or (v and have[k] != v)]
        if missing:
            report(
                f"Node group '{props.get('nodeGroupName') or ng.name}' lacks cluster-autoscaler ASG tags: "
                + ", ".join(f"{k}={need[k] or '<gpus per node>'}" for k in missing)
                + ". Without auto-discovery tags the autoscaler never sees the group; without node-template "
                "tags it cannot scale a GPU group up from zero. Add aws.autoscaling.Tag resources on the "
                "group's ASG (SpotGpuPool does this; see components/aws/asg_tags.py).",
                ng.urn,
            )


eks_autoscaler_asg_tags = StackValidationPolicy(
    name="eks-autoscaler-asg-tags",
    description=(
        "Every EKS node group's Auto Scaling group carries the cluster-autoscaler auto-discovery tags, and every "
        "GPU group also the node-template tags for its GPU label, each taint and resources/nvidia.com/gpu, so "
        "scale-from-zero works. Fix: add aws.autoscaling.Tag resources (components/aws/asg_tags.py)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_asg_tags,
)
