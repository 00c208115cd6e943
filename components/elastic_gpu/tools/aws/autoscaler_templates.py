"""EKS in the simulation: each managed node group's scale-from-zero template, made from its `NodeGroupView`
and the stack's ASG tags (elastic_gpu/tools/simulation merges every cloud's; the autoscaler's clocks are in
elastic_gpu/tools/aws/autoscaler_timing.py).

- EKS (cloudprovider/aws, aws_manager.go buildNodeFromTemplate): vCPU, memory and GPUs of the
  group's FIRST instance type (buildInstanceType: instanceTypesOverrides[0]), in its first zone;
  the managed node group's labels and taints (read through eks:DescribeNodegroup, which drops a
  taint without a value); then the ASG's `node-template/label|taint|resources` tags on top, and
  the node group's own `node-template/resources` tags (also from DescribeNodegroup) over those.
  No tag, no ephemeral-storage (kubernetes/autoscaler#1650).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict

from elastic_gpu.aws.asg_tags import NODE_TEMPLATE_PREFIX, taint_from_eks_api
from elastic_gpu.scheduling import Taint
from elastic_gpu.tools.node_group_view import AUTOSCALED_GROUP, NodeGroupView
from elastic_gpu.tools.offline.mocks import MOCK_UUID
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.fit import NodeTemplate
from elastic_gpu.tools.simulation.pod import quantity
from elastic_gpu.tools.simulation.templates import (
    EVICTION_HARD_MEMORY,
    MIB,
    ZONE_LABEL,
    shape,
    tiered_cpu_reserve,
)

ASG_TAG = "aws:autoscaling/tag:Tag"
#: What an EKS AL2023 node keeps: kube-reserved (`eks_kube_reserved`) for the instance type's ENI-limited max pods
#: and the kubelet's 100Mi hard eviction (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go at 0137549:
#: GenerateKubeletConfig -> withDefaultReservedResources(GetClassicMaxPods(type)), which reads maxPods from its
#: eni-max-pods.txt and reserves 11 x maxPods + 255 MiB; the memory limit on maxPods is an opt-in feature gate).
#: A type `ENI_MAX_PODS` lacks is counted with no pods: the 255 MiB base is then a lower bound.
AL2023_RESERVE_SOURCE = "EKS AL2023 nodeadm kube-reserved (11 MiB per ENI-limited pod + 255 MiB) and 100Mi eviction"

#: Pods an EKS node runs with the VPC CNI: ENIs of the default network card x (IPv4 addresses per ENI - 1) + 2
#: (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go:485-505 ENILimitedPods, the
#: formula of amazon-eks-ami's eni-max-pods.txt), from EC2's figures for each catalog type as that tag
#: records them (pkg/providers/instancetype/zz_generated.vpclimits.go, e.g. g4dn.xlarge :5138).
ENI_MAX_PODS: dict[str, int] = {
    "g4dn.xlarge": 29,
    "g4dn.2xlarge": 29,
    "g4dn.4xlarge": 29,
    "g4dn.8xlarge": 58,
    "g4dn.12xlarge": 234,
    "g5.xlarge": 58,
    "g5.2xlarge": 58,
    "g5.4xlarge": 234,
    "g5.8xlarge": 234,
    "g5.12xlarge": 737,
    "g5.48xlarge": 345,
    "g6.xlarge": 58,
    "g6.2xlarge": 58,
    "g6.4xlarge": 234,
    "g6.12xlarge": 234,
    "g6e.xlarge": 58,
    "g6e.2xlarge": 58,
    "g6e.4xlarge": 234,
    "g6e.16xlarge": 737,
    "g6e.24xlarge": 492,
    "g6e.48xlarge": 492,
    "p3.2xlarge": 58,
    "p3.8xlarge": 234,
    "p3.16xlarge": 234,
    "p4d.24xlarge": 737,
    "p5.48xlarge": 100,
    "p5e.48xlarge": 100,
    "p5en.48xlarge": 198,
    "p6-b200.48xlarge": 198,
}


def eks_kube_reserved(vcpus: float, max_pods: int) -> dict[str, float]:
    """EKS's kube-reserved CPU and memory: CPU by tiers, memory 11 MiB x maxPods + 255 MiB. One formula that
    two places apply: the AL2023 node image (nodeadm, above) and Karpenter when it decides a type fits
    (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go:522-552 kubeReservedResources,
    the same CPU ranges and 11*pods+255 Mi)."""
    return {"cpu": tiered_cpu_reserve(vcpus), "memory": (11 * max_pods + 255) * MIB}


def al2023_reserve(allocatable: dict[str, float], instance_type: str) -> dict[str, float]:
    cpu, memory = allocatable.get("cpu", 0.0), allocatable.get("memory", 0.0)
    if math.isinf(cpu) or math.isinf(memory):
        return {}
    reserved = eks_kube_reserved(cpu, ENI_MAX_PODS.get(instance_type, 0))
    return {"cpu": reserved["cpu"], "memory": reserved["memory"] + EVICTION_HARD_MEMORY}


#: The tail of an ASG name EKS makes for a managed node group (eks-<nodegroup>-<uuid>).
_UUID = re.compile(r"[0-9a-f-]+")


def node_templates(preview: Preview, views: list[NodeGroupView]) -> list[NodeTemplate]:
    tags: dict[str, dict[str, str]] = defaultdict(dict)
    for r in preview.of_type(ASG_TAG):
        tag = r.inputs.get("tag") or {}
        tags[r.inputs.get("autoscalingGroupName", "")][tag.get("key", "")] = tag.get("value", "")
    out = []
    for view in views:
        if view.kind != AUTOSCALED_GROUP:
            continue
        name = view.name
        # EKS names a managed node group's Auto Scaling group eks-<nodegroup>-<uuid>.
        prefix = f"eks-{name}-"
        # Without ASG tags to name it, the ASG name EKS would give it (its uuid as the mock's).
        asg = next(
            (a for a in tags if a.startswith(prefix) and _UUID.fullmatch(a, len(prefix))), f"{prefix}{MOCK_UUID}"
        )
        asg_tags = tags.get(asg, {})
        types = view.instance_types or ["?"]
        allocatable = shape("aws", types[0], view.gpu_spec)
        labels = dict(view.labels)
        # DescribeNodegroup taints; one without a value is skipped by the autoscaler (asg_tags.taint_from_eks_api).
        taints = {t for t in view.taints if taint_from_eks_api(t)}
        for key, value in asg_tags.items():
            if not key.startswith(NODE_TEMPLATE_PREFIX + "/"):
                continue
            kind, _, rest = key[len(NODE_TEMPLATE_PREFIX) + 1 :].partition("/")
            if kind == "label":
                labels[rest] = value
            elif kind == "taint":
                tvalue, _, effect = value.rpartition(":")
                taints.add(Taint(rest, tvalue, effect))  # type: ignore[arg-type]  # the tag's effect, as written
            elif kind == "resources":
                allocatable[rest] = quantity(value)
        # The node group's own node-template resources tags (DescribeNodegroup) override the ASG's.
        for resource, value in view.template_resources.items():
            allocatable[resource] = quantity(value)
        zones = [z for z in view.zones if z != "?"]
        if zones:
            # The template node is placed in the group's first zone (aws_manager.go, template.Zone
            # = the ASG's AvailabilityZones[0]), whatever zone a real node would land in.
            labels[ZONE_LABEL] = zones[0]
        out.append(
            NodeTemplate(
                name=name,
                resource=view.resource,
                autoscaler_name=asg,
                pool=view.pool,
                capacity="spot" if view.spot else "on-demand",
                instance_type=types[0],
                labels=labels,
                taints=sorted(taints),
                allocatable=allocatable,
                min_size=view.min_size or 0,
                max_size=view.max_size or 0,
                zones=zones,
                region=view.region,
                # The autoscaler's AWS template is the raw capacity (aws_manager.go:291-292); the node is not.
                reserved=al2023_reserve(allocatable, types[0]),
                reserved_source=AL2023_RESERVE_SOURCE,
            )
        )
    return out
