"""`simulate` for Karpenter on EKS: the AWS side of the cloud-neutral NodePool simulation
(elastic_gpu.tools.simulation.karpenter): EC2NodeClass root volumes, `node.kubernetes.io/instance-type`, and
`model`'s timings (elastic_gpu/tools/simulation/run.py asks the stack's cloud for this through
`elastic_gpu.tools.aws.provisioning`)."""

from __future__ import annotations

import math

from elastic_gpu.aws.karpenter.release import NODE_CLASS_API
from elastic_gpu.aws.node_spec import EVICTION_NODEFS_PERCENT, KUBE_RESERVED_STORAGE_GIB
from elastic_gpu.gpu_catalog import GpuInstanceType
from elastic_gpu.karpenter_core import INSTANCE_TYPE_KEY
from elastic_gpu.scheduling import EPHEMERAL_STORAGE, GPU_RESOURCE
from elastic_gpu.tools.aws.autoscaler_templates import ENI_MAX_PODS, eks_kube_reserved
from elastic_gpu.tools.aws.karpenter import model
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.karpenter import GIB, KarpenterModel, TypeResources, after_failures
from elastic_gpu.tools.simulation.pod import quantity
from elastic_gpu.tools.simulation.templates import EVICTION_HARD_MEMORY, MIB
from elastic_gpu.tools.simulation.timings import Evidence

NODE_CLASS_TYPE = f"kubernetes:{NODE_CLASS_API}:EC2NodeClass"


def root_volume(preview: Preview, node_class: str) -> float | None:
    """Bytes of the root volume the EC2NodeClass gives its nodes: their ephemeral storage."""
    for r in preview.of_type(NODE_CLASS_TYPE):
        if (r.inputs.get("metadata") or {}).get("name") == node_class:
            for device in (r.inputs.get("spec") or {}).get("blockDeviceMappings") or []:
                if device.get("rootVolume") and (size := (device.get("ebs") or {}).get("volumeSize")):
                    return quantity(str(size))
    return None


_TYPES = "aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go"
#: The share of a type's memory Karpenter takes off as the VM's overhead before it has seen a node of that type
#: (aws/karpenter-provider-aws v1.14.1 pkg/operator/options/options.go:58 vm-memory-overhead-percent; the chart
#: this library installs leaves it at its default).
VM_MEMORY_OVERHEAD_PERCENT = 0.075
#: kube-reserved ephemeral storage and the nodefs.available eviction share (types.go:525, :556; one place for the
#: figures: elastic_gpu/aws/pools.py, whose node-group templates offer the same).
KUBE_RESERVED_STORAGE = KUBE_RESERVED_STORAGE_GIB * GIB
OVERHEAD_SOURCE = (
    f"Karpenter's AL2023 overhead, {_TYPES}: kube-reserved (CPU tiers, 11 MiB per ENI-limited pod + 255 MiB), "
    f"100Mi eviction, {VM_MEMORY_OVERHEAD_PERCENT:.1%} VM memory overhead"
)


def type_resources(row: GpuInstanceType, disk: float | None) -> TypeResources:
    """An EC2 type as Karpenter sizes it (types.go:126-160 NewInstanceType): memory less the VM overhead
    (:356-365), overhead kube-reserved by the ENI-limited pod count, which AL2023 uses for memory overhead
    (:150-151; amifamily/resolver.go:127-133 UsesENILimitedMemoryOverhead), no system-reserved (the
    EC2NodeClass sets no kubelet config) and the 100Mi hard eviction (:554-574)."""
    mib = row.memory_gib * 1024
    memory = (mib - math.ceil(mib * VM_MEMORY_OVERHEAD_PERCENT)) * MIB
    capacity = {"cpu": float(row.vcpus), "memory": float(memory), GPU_RESOURCE: float(row.gpus)}
    overhead = eks_kube_reserved(row.vcpus, ENI_MAX_PODS.get(row.name, 0))
    overhead["memory"] += EVICTION_HARD_MEMORY
    if disk is not None:
        capacity[EPHEMERAL_STORAGE] = disk
        overhead[EPHEMERAL_STORAGE] = KUBE_RESERVED_STORAGE + math.ceil(disk / 100 * EVICTION_NODEFS_PERCENT)
    return TypeResources(capacity, overhead, OVERHEAD_SOURCE)


MODEL = KarpenterModel(
    cloud="aws",
    type_key=INSTANCE_TYPE_KEY,
    disk=root_volume,
    first_node=model.first_node,
    to_fallback=lambda _spot_types, _one_node_pool: after_failures(1),  # one CreateFleet covers every type
    source=model.SOURCE,
    # The Karpenter this library deploys, as is.
    evidence=Evidence("source", model.SOURCE),
    type_resources=type_resources,
)
