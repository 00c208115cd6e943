"""GPU models and the GPU instance types of each cloud: the single table.

Config validation, pools (node-template GPU count, accelerator label), the
device plugin and the cost model all read it. Figures are from the clouds'
instance-type pages (AWS EC2 accelerated computing instances).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuModel:
    key: str  #: what a stack config says: `gpu: t4`
    name: str
    memory_gib: int
    #: value of the accelerator label the autoscaler and workloads select on
    accelerator_label: str


GPU_MODELS: dict[str, GpuModel] = {
    m.key: m
    for m in (
        GpuModel("t4", "NVIDIA T4", 16, "nvidia-tesla-t4"),
        GpuModel("a10g", "NVIDIA A10G", 24, "nvidia-a10g"),
        GpuModel("l4", "NVIDIA L4", 24, "nvidia-l4"),
        GpuModel("l40s", "NVIDIA L40S", 48, "nvidia-l40s"),
        GpuModel("v100", "NVIDIA V100", 16, "nvidia-tesla-v100"),
        GpuModel("a100", "NVIDIA A100 40GB", 40, "nvidia-tesla-a100"),
        GpuModel("a100-80gb", "NVIDIA A100 80GB", 80, "nvidia-a100-80gb"),
        GpuModel("h100", "NVIDIA H100 80GB", 80, "nvidia-h100-80gb"),
    )
}


@dataclass(frozen=True)
class GpuInstanceType:
    cloud: str
    name: str
    gpu: str  #: key into GPU_MODELS
    gpus: int
    vcpus: int
    memory_gib: int

    @property
    def model(self) -> GpuModel:
        return GPU_MODELS[self.gpu]


def _aws(name: str, gpu: str, gpus: int, vcpus: int, memory_gib: int) -> GpuInstanceType:
    return GpuInstanceType("aws", name, gpu, gpus, vcpus, memory_gib)


GPU_INSTANCE_TYPES: dict[tuple[str, str], GpuInstanceType] = {
    (t.cloud, t.name): t
    for t in (
        _aws("g4dn.xlarge", "t4", 1, 4, 16),
        _aws("g4dn.2xlarge", "t4", 1, 8, 32),
        _aws("g4dn.4xlarge", "t4", 1, 16, 64),
        _aws("g4dn.8xlarge", "t4", 1, 32, 128),
        _aws("g4dn.12xlarge", "t4", 4, 48, 192),
        _aws("g5.xlarge", "a10g", 1, 4, 16),
        _aws("g5.2xlarge", "a10g", 1, 8, 32),
        _aws("g5.4xlarge", "a10g", 1, 16, 64),
        _aws("g5.8xlarge", "a10g", 1, 32, 128),
        _aws("g5.12xlarge", "a10g", 4, 48, 192),
        _aws("g5.48xlarge", "a10g", 8, 192, 768),
        _aws("g6.xlarge", "l4", 1, 4, 16),
        _aws("g6.2xlarge", "l4", 1, 8, 32),
        _aws("g6.4xlarge", "l4", 1, 16, 64),
        _aws("g6.12xlarge", "l4", 4, 48, 192),
        _aws("g6e.xlarge", "l40s", 1, 4, 32),
        _aws("g6e.2xlarge", "l40s", 1, 8, 64),
        _aws("p3.2xlarge", "v100", 1, 8, 61),
        _aws("p3.8xlarge", "v100", 4, 32, 244),
        _aws("p3.16xlarge", "v100", 8, 64, 488),
        _aws("p4d.24xlarge", "a100", 8, 96, 1152),
        _aws("p5.48xlarge", "h100", 8, 192, 2048),
    )
}


def gpu_instance_type(cloud: str, name: str) -> GpuInstanceType | None:
    """The catalog row for ``name`` on ``cloud``, or None if it carries no GPU we know."""
    return GPU_INSTANCE_TYPES.get((cloud, name))


def gpu_instance_types(cloud: str) -> list[GpuInstanceType]:
    return [t for (c, _), t in GPU_INSTANCE_TYPES.items() if c == cloud]


def default_instance_types(cloud: str, gpu: str, gpus_per_node: int = 1) -> list[str]:
    """Every catalog type of ``gpu`` with ``gpus_per_node`` GPUs: a diversified spot request."""
    return [t.name for t in gpu_instance_types(cloud) if t.gpu == gpu and t.gpus == gpus_per_node]
