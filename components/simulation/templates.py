"""Each node group's scale-from-zero node template, built from the captured resources the way
that cloud's autoscaler builds it (never from the stack config).

- EKS (cloudprovider/aws, aws_manager.go buildNodeFromTemplate): vCPU, memory and GPUs of the
  group's FIRST instance type (buildInstanceType: instanceTypesOverrides[0]), in its first zone;
  the managed node group's labels and taints (read through eks:DescribeNodegroup, which drops a
  taint without a value); then the ASG's `node-template/label|taint|resources` tags on top, and
  the node group's own `node-template/resources` tags (also from DescribeNodegroup) over those.
  No tag, no ephemeral-storage (kubernetes/autoscaler#1650).
- AKS (cloudprovider/azure, azure_template.go): the agent pool's VM size (its physical GPUs, unless
  the pool's `k8s.io_cluster-autoscaler_node-template_resources_*` tags, copied to the scale set, say
  otherwise: time-slicing), its node labels and taints, plus what AKS puts on
  every node itself (agent-pool label; on spot pools the scalesetpriority label and taint);
  ephemeral-storage from the OS disk, DiskSizeGB x 1024^3 (processVMSSTemplate). A multi-zone
  pool's template takes a random one of its zones there, so no zone label is modelled.
- GKE (cloudprovider/gce templates.go): the machine type, the accelerators (x shared clients with
  gpuSharingConfig), node labels and taints plus GKE's own (node-pool and accelerator labels,
  the GPU taint, the queued-provisioning taint), ephemeral-storage from the boot disk. A
  queued-provisioning pool is marked `queued`: only a ProvisioningRequest scales it (simulation/kueue.py).

Capacity is what the template holds; the kubelet's reservations are left out (the shipped
workloads request far less than a node). A CPU type the GPU catalog does not know has no
vCPU/memory figure here, so those do not limit it (GPU pods are kept off it by the GPU request).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any

from elastic_gpu.aws.asg_tags import NODE_TEMPLATE_PREFIX, taint_from_eks_api
from elastic_gpu.aws.preview import subnet_zones
from elastic_gpu.azure.node_template import resources_from_tags
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.offline.mocks import MOCK_UUID
from elastic_gpu.offline.runner import CapturedResource, Preview
from elastic_gpu.pool_view import (
    AKS_AGENT_POOL,
    AKS_MANAGED_CLUSTER,
    EKS_NODE_GROUP,
    GKE_NODE_POOL,
    gce_region,
    parse_taint_string,
)
from elastic_gpu.scheduling import (
    AKS_SPOT_LABEL,
    AKS_SPOT_TAINT,
    EPHEMERAL_STORAGE,
    GKE_COMPUTE_CLASS_KEY,
    GKE_GPU_TAINT,
    GKE_QUEUED_TAINT,
    GPU_RESOURCE,
    KUBERNETES_TAINT_EFFECT,
    POOL_LABEL,
    Taint,
)
from elastic_gpu.simulation.fit import NodeTemplate
from elastic_gpu.simulation.pod import quantity

ASG_TAG = "aws:autoscaling/tag:Tag"
GIB = 2**30
#: AKS names an agent pool's scale set aks-<pool>-<number>-vmss; the number is a hash we cannot
#: know offline, so a placeholder of the same shape stands in.
AKS_VMSS_NUMBER = "12345678"
AKS_AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
GKE_NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
GKE_SPOT_LABEL = "cloud.google.com/gke-spot"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
ZONE_LABEL = "topology.kubernetes.io/zone"


def _shape(cloud: str, instance_type: str) -> dict[str, float]:
    row = gpu_instance_type(cloud, instance_type)
    if row is None:
        return {"cpu": math.inf, "memory": math.inf}
    return {"cpu": float(row.vcpus), "memory": float(row.memory_gib * GIB), GPU_RESOURCE: float(row.gpus)}


def _taint(key: str, value: str | None, effect: str) -> Taint:
    return Taint(key, value or "", KUBERNETES_TAINT_EFFECT.get(effect, effect))  # type: ignore[arg-type]


def _provider_region(preview: Preview, r: CapturedResource) -> str | None:
    """The region `r`'s provider is pinned to: its explicit provider's, else the stack config's
    (`aws:region`, `gcp:region`), which is what the engine's default provider uses."""
    region = preview.provider_inputs(r).get("region")
    return region if isinstance(region, str) and region else None


def aws_templates(preview: Preview) -> list[NodeTemplate]:
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
        allocatable = _shape("aws", types[0])
        labels = dict(p.get("labels") or {})
        # DescribeNodegroup taints; one without a value is skipped by the autoscaler (asg_tags.taint_from_eks_api).
        taints = {_taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in p.get("taints") or []}
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
                region=_provider_region(preview, ng),
            )
        )
    return out


def _aks_template(resource: str, p: dict[str, Any], region: str | None) -> NodeTemplate:
    name = p.get("agentPoolName") or p.get("name") or resource
    spot = p.get("scaleSetPriority") == "Spot"
    labels = dict(p.get("nodeLabels") or {}) | {AKS_AGENTPOOL_LABEL: name}
    taints = {parse_taint_string(t) for t in p.get("nodeTaints") or []}
    if spot:
        # AKS puts these on every spot node whether the pool declares them or not (spot-node-pool docs).
        labels[AKS_SPOT_LABEL] = AKS_SPOT_TAINT.value
        taints.add(AKS_SPOT_TAINT)
    allocatable = _shape("azure", p.get("vmSize", "?"))
    if p.get("osDiskSizeGB"):
        allocatable[EPHEMERAL_STORAGE] = float(p["osDiskSizeGB"]) * GIB
    # The scale set's node-template resources tags (copied from the agent pool's) override the VM size's.
    for resource, value in resources_from_tags(p.get("tags") or {}).items():
        allocatable[resource] = quantity(value)
    return NodeTemplate(
        group=name,
        resource=resource,
        autoscaler_name=f"aks-{name}-{AKS_VMSS_NUMBER}-vmss",
        pool=labels.get(POOL_LABEL, name),
        capacity="spot" if spot else "on-demand",
        instance_type=p.get("vmSize", "?"),
        labels=labels,
        taints=sorted(taints),
        allocatable=allocatable,
        min_size=int(p.get("minCount", p.get("count", 0)) or 0),
        max_size=int(p.get("maxCount", p.get("count", 0)) or 0),
        zones=list(p.get("availabilityZones") or []),
        region=region,
    )


def azure_templates(preview: Preview) -> list[NodeTemplate]:
    clusters = preview.of_type(AKS_MANAGED_CLUSTER)
    region = next((c.inputs.get("location") for c in clusters if c.inputs.get("location")), None)
    out = [
        _aks_template(f"{c.name}[{i}]", profile, region)
        for c in clusters
        for i, profile in enumerate(c.inputs.get("agentPoolProfiles") or [])
    ]
    return out + [
        _aks_template(r.name, r.inputs, region or preview.provider_inputs(r).get("location"))
        for r in preview.of_type(AKS_AGENT_POOL)
    ]


def gcp_templates(preview: Preview) -> list[NodeTemplate]:
    out = []
    for np in preview.of_type(GKE_NODE_POOL):
        p = np.inputs
        node = p.get("nodeConfig") or {}
        name = p.get("name", np.name)
        machine = node.get("machineType", "?")
        allocatable = _shape("gcp", machine)
        allocatable.pop(GPU_RESOURCE, None)
        labels = dict(node.get("labels") or {}) | {GKE_NODEPOOL_LABEL: name}
        taints = {_taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in node.get("taints") or []}
        accelerators = []
        for acc in node.get("guestAccelerators") or []:
            count = int(acc.get("count", 0))
            accelerators.append((acc.get("type", ""), count))
            shared = (acc.get("gpuSharingConfig") or {}).get("maxSharedClientsPerGpu") or 1
            allocatable[GPU_RESOURCE] = allocatable.get(GPU_RESOURCE, 0.0) + count * int(shared)
            labels[GKE_ACCELERATOR_LABEL] = acc.get("type", "")
            taints.add(GKE_GPU_TAINT)  # GKE taints GPU nodes itself
        if node.get("spot"):
            labels[GKE_SPOT_LABEL] = "true"
        queued = bool((p.get("queuedProvisioning") or {}).get("enabled"))
        if queued:
            taints.add(GKE_QUEUED_TAINT)  # GKE taints queued-provisioning nodes itself
        if node.get("diskSizeGb"):
            allocatable[EPHEMERAL_STORAGE] = float(node["diskSizeGb"]) * 1e9
        scaling = p.get("autoscaling") or {}
        location = p.get("location") or ""
        out.append(
            NodeTemplate(
                group=name,
                resource=np.name,
                autoscaler_name=name,
                pool=labels.get(POOL_LABEL, name),
                capacity="spot" if node.get("spot") else "on-demand",
                instance_type=machine,
                labels=labels,
                taints=sorted(taints),
                allocatable=allocatable,
                min_size=int(scaling.get("totalMinNodeCount", scaling.get("minNodeCount", 0)) or 0),
                max_size=int(scaling.get("totalMaxNodeCount", scaling.get("maxNodeCount", 0)) or 0),
                zones=list(p.get("nodeLocations") or []),
                region=gce_region(location)
                if isinstance(location, str) and location
                else _provider_region(preview, np),
                accelerators=accelerators,
                compute_class=labels.get(GKE_COMPUTE_CLASS_KEY),
                queued=queued,
            )
        )
    return out


def node_templates(preview: Preview) -> list[NodeTemplate]:
    from elastic_gpu.gcp.autoprovisioning.simulation import templates as gke_auto_created

    return aws_templates(preview) + azure_templates(preview) + gcp_templates(preview) + gke_auto_created(preview)
