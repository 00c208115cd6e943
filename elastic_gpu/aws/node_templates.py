"""EKS in the simulation: each managed node group's scale-from-zero template, and the self-run
cluster-autoscaler's settings (elastic_gpu/tools/simulation merges every cloud's).

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

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.aws.asg_tags import NODE_TEMPLATE_PREFIX, taint_from_eks_api
from elastic_gpu.aws.reader import subnet_zones
from elastic_gpu.scheduling import POOL_LABEL, Taint
from elastic_gpu.tools.offline.mocks import MOCK_UUID
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.backoff import AWS_ASG_REFRESH
from elastic_gpu.tools.simulation.fit import NodeTemplate
from elastic_gpu.tools.simulation.pod import quantity
from elastic_gpu.tools.simulation.templates import (
    EVICTION_HARD_MEMORY,
    MIB,
    ZONE_LABEL,
    provider_region,
    shape,
    template_taint,
    tiered_cpu_reserve,
)
from elastic_gpu.tools.simulation.timings import (
    CA_DEFAULT_EXPANDER,
    CA_DEFAULT_MAX_NODE_PROVISION_TIME,
    CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD,
    CA_DEFAULT_SCALE_DOWN_UNNEEDED,
    CA_DEFAULT_SCAN_INTERVAL,
    AutoscalerSettings,
    Evidence,
    autoscaler_flags,
    autoscaler_image,
    early_failure,
    listed_groups,
    minutes,
    priorities,
    seconds,
)

ASG_TAG = "aws:autoscaling/tag:Tag"
#: What an EKS AL2023 node keeps (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go
#: withDefaultReservedResources): kube-reserved CPU by tiers, memory 11 MiB x maxPods + 255 MiB, and the
#: kubelet's 100Mi hard eviction. maxPods comes from the instance's ENIs, not known here: the 255 MiB base
#: is a lower bound, and a pod near the node's memory is reported "fits only if".
AL2023_RESERVE_SOURCE = "EKS AL2023 nodeadm kube-reserved (11 MiB per pod on top) and 100Mi eviction"


def al2023_reserve(allocatable: dict[str, float]) -> dict[str, float]:
    cpu, memory = allocatable.get("cpu", 0.0), allocatable.get("memory", 0.0)
    if math.isinf(cpu) or math.isinf(memory):
        return {}
    return {"cpu": tiered_cpu_reserve(cpu), "memory": 255 * MIB + EVICTION_HARD_MEMORY}


def node_templates(preview: Preview) -> list[NodeTemplate]:
    tags: dict[str, dict[str, str]] = defaultdict(dict)
    for r in preview.of_type(ASG_TAG):
        tag = r.inputs.get("tag") or {}
        tags[r.inputs.get("autoscalingGroupName", "")][tag.get("key", "")] = tag.get("value", "")
    zone_of = subnet_zones(preview.resources)
    out = []
    for ng in preview.of_type(EKS_NODE_GROUP):
        p = ng.inputs
        name = p.get("nodeGroupName", ng.name)
        # EKS names a managed node group's Auto Scaling group eks-<nodegroup>-<uuid>.
        pattern = re.compile(rf"^eks-{re.escape(name)}-[0-9a-f-]+$")
        # Without ASG tags to name it, the ASG name EKS would give it (its uuid as the mock's).
        asg = next((a for a in tags if pattern.match(a)), f"eks-{name}-{MOCK_UUID}")
        asg_tags = tags.get(asg, {})
        types = list(p.get("instanceTypes") or ["?"])
        allocatable = shape("aws", types[0])
        labels = dict(p.get("labels") or {})
        # DescribeNodegroup taints; one without a value is skipped by the autoscaler (asg_tags.taint_from_eks_api).
        taints = {template_taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in p.get("taints") or []}
        taints = {t for t in taints if taint_from_eks_api(t)}
        for key, value in asg_tags.items():
            if not key.startswith(NODE_TEMPLATE_PREFIX + "/"):
                continue
            kind, _, rest = key[len(NODE_TEMPLATE_PREFIX) + 1 :].partition("/")
            if kind == "label":
                labels[rest] = value
            elif kind == "taint":
                tvalue, _, effect = value.rpartition(":")
                taints.add(Taint(rest, tvalue, effect))  # type: ignore[arg-type]
            elif kind == "resources":
                allocatable[rest] = quantity(value)
        # The node group's own node-template resources tags (DescribeNodegroup) override the ASG's.
        for key, value in (p.get("tags") or {}).items():
            if key.startswith(resources_prefix := f"{NODE_TEMPLATE_PREFIX}/resources/"):
                allocatable[key.removeprefix(resources_prefix)] = quantity(value)
        zones = [z for s in p.get("subnetIds") or [] if isinstance(s, str) and (z := zone_of.get(s))]
        if zones:
            # The template node is placed in the group's first zone (aws_manager.go, template.Zone
            # = the ASG's AvailabilityZones[0]), whatever zone a real node would land in.
            labels[ZONE_LABEL] = zones[0]
        scaling = p.get("scalingConfig") or {}
        out.append(
            NodeTemplate(
                group=name,
                resource=ng.name,
                autoscaler_name=asg,
                pool=labels.get(POOL_LABEL, name),
                capacity="spot" if p.get("capacityType") == "SPOT" else "on-demand",
                instance_type=types[0],
                labels=labels,
                taints=sorted(taints),
                allocatable=allocatable,
                min_size=int(scaling.get("minSize", 0)),
                max_size=int(scaling.get("maxSize", 0)),
                zones=zones,
                region=provider_region(preview, ng),
                # The autoscaler's AWS template is the raw capacity (aws_manager.go:291-292); the node is not.
                reserved=al2023_reserve(allocatable),
                reserved_source=AL2023_RESERVE_SOURCE,
            )
        )
    return out


def autoscaler_settings(preview: Preview) -> AutoscalerSettings | None:
    """The self-run cluster-autoscaler's flags, when the preview has EKS node groups."""
    if not preview.of_type(EKS_NODE_GROUP):
        return None
    flags = autoscaler_flags(preview) or {}
    provision = minutes(flags.get("max-node-provision-time", CA_DEFAULT_MAX_NODE_PROVISION_TIME))
    return AutoscalerSettings(
        cloud="aws",
        expanders=tuple(flags.get("expander", CA_DEFAULT_EXPANDER).split(",")),
        priorities=priorities(preview),
        scale_down_unneeded=minutes(flags.get("scale-down-unneeded-time", CA_DEFAULT_SCALE_DOWN_UNNEEDED)),
        scale_down_delay_after_add=minutes(
            flags.get("scale-down-delay-after-add", CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD)
        ),
        max_node_provision=provision,
        machine=early_failure(
            seconds(flags.get("scan-interval", CA_DEFAULT_SCAN_INTERVAL)),
            round(provision * 60),
            AWS_ASG_REFRESH.seconds,
            "EKS: a failed spot launch (InsufficientInstanceCapacity) is a failed ASG scaling activity, "
            "which the next ASG cache refresh turns into an out-of-resources placeholder (autoscaler#4489)",
        ),
        source="cluster-autoscaler Deployment flags",
        groups=listed_groups(preview),
        # The autoscaler this stack runs, as is: its code is the evidence.
        evidence=Evidence(
            "source",
            f"kubernetes/autoscaler cluster-autoscaler-1.33.6 core, clusterstate and cloudprovider/aws (backoff and "
            f"loop code unchanged in 1.34.5 and 1.35.2), the image this stack deploys: "
            f"{autoscaler_image(preview) or 'its cluster-autoscaler Deployment'}",
        ),
    )
