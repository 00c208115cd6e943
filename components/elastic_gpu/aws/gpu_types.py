"""An EC2 instance type's GPU as EC2 describes it (DescribeInstanceTypes through `aws.ec2.get_instance_type`):
the preview's answer for a type the catalog lacks, and the offline mock's answer from the catalog."""

from __future__ import annotations

from typing import Any

from elastic_gpu.gpu_catalog import GPU_INSTANCE_TYPES, GPU_MODELS, GpuSpec

MIB_PER_GIB = 1024
#: GpuInfo's MemoryInfo.SizeInMiB per GPU as DescribeInstanceTypes gives it, where it is not the model's GiB x 1024
#: (EC2 reports usable memory): Karpenter's instance-types reference, generated from DescribeInstanceTypes
#: (aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md at v1.14.0-68-g1d927085d,
#: instance-gpu-memory: g5 22888, g6 22888, g6e 45776, p6-b200 183359; there t4 16384, a100 40960 and 81920,
#: h100 81920, h200 144384 are GiB x 1024). EC2 names the GPUs as the models' second word (A100, H200, B200).
EC2_GPU_MEMORY_MIB: dict[str, int] = {"a10g": 22888, "l4": 22888, "l40s": 45776, "b200": 183359}


def _ec2_name(model: str) -> str:
    """EC2's GpuInfo name of a catalog model ("NVIDIA A100 80GB" -> "A100")."""
    return GPU_MODELS[model].name.split()[1]


def spec_of(gpus: list[dict[str, Any]], vcpus: int | None, memory_mib: int | None) -> GpuSpec | str:
    """The catalog spec of EC2's GpuInfo (`gpuses`: count, manufacturer, name, memory MiB per GPU), or why not."""
    if not gpus:
        return "EC2 describes no GPU on it"
    if len(gpus) > 1 or not vcpus or not memory_mib:
        return f"EC2 describes {gpus}, {vcpus} vCPU, {memory_mib} MiB: not one GPU model with a shape"
    gpu = gpus[0]
    name, memory = str(gpu.get("name", "")), int(gpu.get("memory_size") or 0)
    # A100 40GB and 80GB share EC2's name: the GPU memory tells them apart.
    models = [m for m in GPU_MODELS if _ec2_name(m).lower() == name.lower()]
    if not models:
        return f"EC2 names its GPU {gpu.get('manufacturer', '')} {name}, which the catalog does not know"
    model = min(models, key=lambda m: abs(GPU_MODELS[m].memory_gib * MIB_PER_GIB - memory))
    return GpuSpec(model, int(gpu["count"]), int(vcpus), int(memory_mib) // MIB_PER_GIB)


def resolve_gpu(instance_type: str, region: str | None) -> GpuSpec | str:
    """The GPU EC2 describes for `instance_type` in `region` (None: the provider's), or why it gave none (at
    preview, with the program's credentials; a type EC2 does not sell is its error)."""
    import pulumi_aws as aws

    try:
        found = aws.ec2.get_instance_type(instance_type=instance_type, region=region)
    except Exception as exc:  # the provider's error, whatever its class
        return str(exc) or type(exc).__name__
    gpus = [
        {"count": g.count, "manufacturer": g.manufacturer, "name": g.name, "memory_size": g.memory_size}
        for g in found.gpuses or []
    ]
    return spec_of(gpus, found.default_vcpus, found.memory_size)


def described_instance_type(instance_type: str) -> dict[str, Any] | None:
    """The catalog row of `instance_type` as DescribeInstanceTypes gives it (the mock's answer), None if absent
    (the catalog's own rows, never one a pool declared)."""
    row = GPU_INSTANCE_TYPES.get(("aws", instance_type))
    if row is None:
        return None
    gpu = {
        "count": row.gpus,
        "manufacturer": "NVIDIA",
        "name": _ec2_name(row.gpu),
        "memorySize": EC2_GPU_MEMORY_MIB.get(row.gpu, row.model.memory_gib * MIB_PER_GIB),
    }
    return {
        "instanceType": instance_type,
        "id": instance_type,
        "defaultVcpus": row.vcpus,
        "memorySize": row.memory_gib * MIB_PER_GIB,
        "gpuses": [gpu],
    }
