"""The policy pack's rules for EKS node groups (aws/pack): the autoscaler's node-template ASG tags
(and nobody re-declares EKS's own); the autoscaler lists every GPU group; one GPU model per labelled group."""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict

from pulumi_policy import (
    EnforcementLevel,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.aws.asg_tags import (
    AUTO_DISCOVERY_ENABLED_KEY,
    CA_TAG_PREFIX,
    NODE_TEMPLATE_PREFIX,
    taint_from_eks_api,
)
from elastic_gpu.gpu_catalog import gpu_instance_type, gpu_spec_of
from elastic_gpu.scheduling import AWS_ACCELERATOR_LABEL, GPU_NODE_LABEL, GPU_RESOURCE
from elastic_gpu.tools.node_group_reading import pools_of
from elastic_gpu.tools.policy._base import parent_urn, props_of

ASG_TAG = "aws:autoscaling/tag:Tag"


class _TagIndex:
    """The stack's ASG tags, indexed once so each node group's lookup costs only its own tags.

    A Tag resource is matched to a node group when it shares the node group's parent and its name starts
    with the node group's resource name (how the components name them), or when its ASG name contains the
    node group's name as whole `-`-separated words (EKS names the ASG `eks-<nodeGroupName>-<uuid>`; the name
    is unknown during a real preview).
    """

    def __init__(self, tags: list[PolicyResource]) -> None:
        self.by_parent: dict[str | None, list[tuple[str, str, str]]] = defaultdict(list)
        self.by_asg_words: dict[str, list[tuple[str, str]]] = defaultdict(list)
        by_asg: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for t in tags:
            try:
                p = props_of(t)
                tag = p.get("tag") or {}
                key, value = tag.get("key", ""), str(tag.get("value", ""))
                self.by_parent[parent_urn(t)].append((t.name, key, value))
                asg = p.get("autoscalingGroupName")
            except UnknownValueError:
                continue
            if isinstance(asg, str):
                by_asg[asg].append((key, value))
        for asg, pairs in by_asg.items():  # once per ASG, not per tag
            words = asg.split("-")
            # every run of whole words: `-ng-` in `-asg-` is exactly "ng is such a run"
            for run in {"-".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}:
                self.by_asg_words[run].extend(pairs)

    def tags_for(self, ng: PolicyResource) -> dict[str, str]:
        ng_name = props_of(ng).get("nodeGroupName") or ng.name
        found: dict[str, str] = {}
        prefix = f"{ng.name}-"
        for name, key, value in self.by_parent.get(parent_urn(ng), ()):
            if name.startswith(prefix):
                found[key] = value
        if isinstance(ng_name, str):
            for key, value in self.by_asg_words.get(ng_name, ()):
                found.setdefault(key, value)
        return found


def _eks_owned(key: str) -> bool:
    """EKS tags every managed node group's ASG with these auto-discovery keys itself."""
    return key == AUTO_DISCOVERY_ENABLED_KEY or (
        key.startswith(f"{CA_TAG_PREFIX}/") and not key.startswith(f"{NODE_TEMPLATE_PREFIX}/") and key.count("/") == 2
    )


def validate_asg_tags(args: StackValidationArgs, report: ReportViolation) -> None:
    index = _TagIndex([r for r in args.resources if r.resource_type == ASG_TAG])
    for ng in args.resources:
        if ng.resource_type != EKS_NODE_GROUP:
            continue
        props = props_of(ng)
        label = props.get("nodeGroupName") or ng.name
        have = index.tags_for(ng)
        if owned := sorted(k for k in have if _eks_owned(k)):
            report(
                f"Node group '{label}' re-declares ASG tags that EKS sets on every managed node group: "
                + ", ".join(owned)
                + ". Removing the pool (or the Tag resource) later deletes EKS's own tag, and the autoscaler's "
                "IAM condition relies on it (as does any autoscaler that discovers groups by those tags). "
                "Declare only the node-template tags "
                "(elastic_gpu/aws/asg_tags.py node_template_tags).",
                ng.urn,
            )
        # The autoscaler reads a managed group's labels and valued taints from EKS DescribeNodegroup
        # (asg_tags.py): only what the group itself lacks must be a node-template tag.
        need: dict[str, str] = {}
        for pool in pools_of(ng.resource_type, ng.name, props):
            if pool.gpu:
                if GPU_NODE_LABEL not in pool.labels:
                    need[f"{NODE_TEMPLATE_PREFIX}/label/{GPU_NODE_LABEL}"] = "true"
                need[f"{NODE_TEMPLATE_PREFIX}/resources/{GPU_RESOURCE}"] = ""  # any GPU count
                for t in pool.taints:
                    if not taint_from_eks_api(t):
                        need[f"{NODE_TEMPLATE_PREFIX}/taint/{t.key}"] = f"{t.value}:{t.effect}"
        # node-template resources tags on the node group itself count too (DescribeNodegroup returns its tags)
        have = have | {k: str(v) for k, v in (props.get("tags") or {}).items() if k.startswith(NODE_TEMPLATE_PREFIX)}
        missing = [k for k, v in need.items() if k not in have or (v and have[k] != v)]
        if missing:
            report(
                f"Node group '{label}' lacks cluster-autoscaler node-template tags (on it or its ASG): "
                + ", ".join(f"{k}={need[k] or '<gpus per node>'}" for k in missing)
                + ". Without them the autoscaler cannot scale a GPU group up from zero. Add "
                "them to the node group's tags or as aws.autoscaling.Tag resources on its ASG (SpotGpuPool does; see "
                "elastic_gpu/aws/asg_tags.py).",
                ng.urn,
            )


eks_autoscaler_asg_tags = StackValidationPolicy(
    name="eks-autoscaler-asg-tags",
    description=(
        "Every EKS GPU node group gives the cluster-autoscaler what scale-from-zero needs: its GPU label and each "
        "taint as node group labels/taints (read through eks:DescribeNodegroup) or node-template ASG tags (a taint "
        "without a value only as a tag), and a resources/nvidia.com/gpu tag on the node group or its ASG; and no "
        "program re-declares "
        "the auto-discovery tags EKS itself sets on managed node groups' ASGs (k8s.io/cluster-autoscaler/enabled, "
        "k8s.io/cluster-autoscaler/<cluster>). Fix: elastic_gpu/aws/asg_tags.py node_template_tags."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_asg_tags,
)


# --- eks-gpu-groups-autoscaled ------------------------------------------------------------------------

DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def _listed_asgs(deployment: PolicyResource) -> list[str] | None:
    """The ASG names an AWS cluster-autoscaler Deployment lists with `--nodes=<min>:<max>:<name>`; None
    when it is not one, or finds its groups by tag (`--node-group-auto-discovery`: every group EKS tagged)."""
    spec = ((props_of(deployment).get("spec") or {}).get("template") or {}).get("spec") or {}
    for container in spec.get("containers") or []:
        words = [*(container.get("command") or []), *(container.get("args") or [])]
        if not words or not str(words[0]).endswith("cluster-autoscaler") or "--cloud-provider=aws" not in words:
            continue
        if any(str(w).startswith("--node-group-auto-discovery") for w in words):
            return None
        return [str(w).split(":", 2)[-1] for w in words if str(w).startswith("--nodes=")]
    return None


def validate_gpu_groups_autoscaled(args: StackValidationArgs, report: ReportViolation) -> None:
    listed: list[str] = []
    autoscalers = 0
    for r in args.resources:
        if r.resource_type != DEPLOYMENT:
            continue
        try:
            names = _listed_asgs(r)
        except UnknownValueError:
            return  # a real preview: the ASG names are known only after the node groups exist
        if names is not None:
            autoscalers += 1
            listed += names
    if not autoscalers:
        return  # no autoscaler with a list in this stack (it may run elsewhere)
    listed.sort()  # the first listed name not below a prefix is the one that starts with it, if any does
    for ng in args.resources:
        if ng.resource_type != EKS_NODE_GROUP:
            continue
        props = props_of(ng)
        try:
            name = props.get("nodeGroupName")
            gpu = any(pool.gpu for pool in pools_of(ng.resource_type, ng.name, props))
        except UnknownValueError:
            continue
        if not gpu or not isinstance(name, str):
            continue
        # EKS names a managed node group's ASG eks-<nodeGroupName>-<uuid>.
        prefix = f"eks-{name}-"
        at = bisect_left(listed, prefix)
        if at == len(listed) or not listed[at].startswith(prefix):
            report(
                f"GPU node group '{name}' is not among the groups this stack's cluster-autoscaler scales "
                "(--nodes=<min>:<max>:<ASG>), so nothing scales it up from zero. Pass its SpotGpuPool in "
                "ClusterAutoscalerArgs.gpu_pools.",
                ng.urn,
            )


eks_gpu_groups_autoscaled = StackValidationPolicy(
    name="eks-gpu-groups-autoscaled",
    description=(
        "Where the stack's cluster-autoscaler lists the groups it scales (--nodes, as elastic-gpu's does: EKS tags "
        "every managed group for auto-discovery, so a tag cannot single out the library's), every EKS GPU node "
        "group is among them; otherwise it never scales up from zero. Fix: pass the pool in "
        "ClusterAutoscalerArgs.gpu_pools."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_gpu_groups_autoscaled,
)


# --- gpu-node-group-one-model ---------------------------------------------------------------


def validate_one_model(args: ResourceValidationArgs, report: ReportViolation) -> None:
    """An EKS node group labelled with one accelerator carries only that GPU model."""
    if args.resource_type != EKS_NODE_GROUP:
        return
    label = (args.props.get("labels") or {}).get(AWS_ACCELERATOR_LABEL)
    types = args.props.get("instanceTypes") or []
    if not isinstance(label, str) or isinstance(types, str):
        return
    spec = gpu_spec_of(args.props.get("labels"))
    models: dict[str, list[str]] = {}
    for t in types:
        row = gpu_instance_type("aws", t, spec) if isinstance(t, str) else None
        if row is not None:
            models.setdefault(row.model.accelerator_label, []).append(t)
    others = {m: ts for m, ts in models.items() if m != label}
    if others:
        listed = "; ".join(f"{m}: {', '.join(ts)}" for m, ts in others.items())
        report(
            f"Node group '{args.name}' is labelled {AWS_ACCELERATOR_LABEL}={label} but also runs other GPUs "
            f"({listed}): a pod that selects one model lands on another. Make one pool per model, or set no "
            "accelerator label (SpotGpuPoolArgs.mixed_gpu_models=True in a program, mixedGpuModels: true in a "
            "stack file).",
            None,
        )


gpu_node_group_one_model = ResourceValidationPolicy(
    name="gpu-node-group-one-model",
    description=(
        f"An EKS GPU node group labelled {AWS_ACCELERATOR_LABEL}=<model> runs only instance types of that GPU model. "
        "Fix: one pool per model, or no accelerator label (mixed_gpu_models / mixedGpuModels)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_one_model,
)
