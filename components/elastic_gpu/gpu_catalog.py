"""GPU models and the GPU instance types of each cloud: the single table.

Config validation, pools (node-template GPU count, accelerator label), the
device plugin and the cost model all read it. Figures are from the clouds'
instance-type pages (AWS EC2 accelerated computing instances).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol, runtime_checkable

from elastic_gpu.cloud_facts import KnownCloud
from elastic_gpu.clouds import all_clouds
from elastic_gpu.facts import ReviewedRow
from elastic_gpu.scheduling import LABEL_PREFIX


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
        GpuModel("a10", "NVIDIA A10", 24, "nvidia-a10"),
        GpuModel("l4", "NVIDIA L4", 24, "nvidia-l4"),
        GpuModel("l40s", "NVIDIA L40S", 48, "nvidia-l40s"),
        GpuModel("v100", "NVIDIA V100", 16, "nvidia-tesla-v100"),
        GpuModel("a100", "NVIDIA A100 40GB", 40, "nvidia-tesla-a100"),
        GpuModel("a100-80gb", "NVIDIA A100 80GB", 80, "nvidia-a100-80gb"),
        GpuModel("h100", "NVIDIA H100 80GB", 80, "nvidia-h100-80gb"),
        GpuModel("h100-nvl", "NVIDIA H100 NVL 94GB", 94, "nvidia-h100-nvl"),
        GpuModel("h200", "NVIDIA H200 141GB", 141, "nvidia-h200-141gb"),
        GpuModel("b200", "NVIDIA B200", 180, "nvidia-b200"),
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
    #: GCP: the GKE accelerator type attached to the machine (e.g. "nvidia-tesla-t4")
    accelerator: str | None = None
    #: GCP N1: the GPU counts this machine type can attach (chosen by `gpusPerNode`);
    #: empty when the machine type fixes its count (G2, A2, A3 and every AWS/Azure type)
    gpu_counts: tuple[int, ...] = ()
    #: regions where the type is sold, where we know them; None: not checked
    regions: tuple[str, ...] | None = None

    @property
    def model(self) -> GpuModel:
        return GPU_MODELS[self.gpu]


def _aws(name: str, gpu: str, gpus: int, vcpus: int, memory_gib: int) -> GpuInstanceType:
    return GpuInstanceType("aws", name, gpu, gpus, vcpus, memory_gib)


def _gcp(
    name: str, gpu: str, gpus: int, vcpus: int, memory_gib: int, accelerator: str, gpu_counts: tuple[int, ...] = ()
) -> GpuInstanceType:
    return GpuInstanceType("gcp", name, gpu, gpus, vcpus, memory_gib, accelerator, gpu_counts)


#: GCP accelerator types (GKE `guest_accelerators.type`) and the machine families
#: they attach to (cloud.google.com/compute/docs/gpus): T4 and V100 on N1 (1, 2,
#: 4 [or 8 for V100] GPUs, limited by vCPUs), L4 on G2, A100 on A2, H100 on A3.
#: One N1 machine type takes either GPU, but a row has one GPU: T4 rows use
#: n1-standard, V100 rows n1-highmem (the catalog's pairing, not the only one).
GCP_T4 = "nvidia-tesla-t4"
GCP_V100 = "nvidia-tesla-v100"
GCP_L4 = "nvidia-l4"
GCP_A100 = "nvidia-tesla-a100"
GCP_A100_80GB = "nvidia-a100-80gb"
GCP_H100 = "nvidia-h100-80gb"
#: A3 Mega's H100 (GPUDirect-TCPXO), A3 Ultra's H200 and A4's B200: GKE accelerator types of their own
#: (cloud.google.com/compute/docs/accelerator-optimized-machines; Vertex AI AcceleratorType names the same GPUs).
GCP_H100_MEGA = "nvidia-h100-mega-80gb"
GCP_H200 = "nvidia-h200-141gb"
GCP_B200 = "nvidia-b200"


def _azure(
    name: str, gpu: str, gpus: int, vcpus: int, memory_gib: int, regions: tuple[str, ...] | None = None
) -> GpuInstanceType:
    return GpuInstanceType("azure", name, gpu, gpus, vcpus, memory_gib, regions=regions)


#: Azure regions offering the NCasT4_v3 series (Azure "products by region"; a
#: snapshot, extend it when Azure adds a region: a region missing here is rejected).
_AZURE_T4_REGIONS = (
    "australiaeast",
    "brazilsouth",
    "canadacentral",
    "centralindia",
    "eastus",
    "eastus2",
    "francecentral",
    "germanywestcentral",
    "japaneast",
    "koreacentral",
    "northeurope",
    "southcentralus",
    "southeastasia",
    "uksouth",
    "westeurope",
    "westus2",
    "westus3",
)

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
        # g6e shapes as EC2 DescribeInstanceTypes reports them (SkyPilot's AWS catalog, price_sources.csv)
        _aws("g6e.4xlarge", "l40s", 1, 16, 128),
        _aws("g6e.16xlarge", "l40s", 1, 64, 512),
        _aws("g6e.24xlarge", "l40s", 4, 96, 768),
        _aws("g6e.48xlarge", "l40s", 8, 192, 1536),
        _aws("p3.2xlarge", "v100", 1, 8, 61),
        _aws("p3.8xlarge", "v100", 4, 32, 244),
        _aws("p3.16xlarge", "v100", 8, 64, 488),
        _aws("p4d.24xlarge", "a100", 8, 96, 1152),
        _aws("p5.48xlarge", "h100", 8, 192, 2048),
        # H200 (p5e, p5en) and B200 (p6-b200): 8 GPUs, 192 vCPUs, 2048 GiB as DescribeInstanceTypes gives them
        # (Karpenter's generated instance-types reference: instance-cpu 192, instance-memory 2097152 MiB)
        _aws("p5e.48xlarge", "h200", 8, 192, 2048),
        _aws("p5en.48xlarge", "h200", 8, 192, 2048),
        _aws("p6-b200.48xlarge", "b200", 8, 192, 2048),
        # GCP: T4 on N1 takes 1, 2 or 4 GPUs on any of these (<= 48 vCPUs for 1-2 GPUs).
        _gcp("n1-standard-4", "t4", 1, 4, 15, GCP_T4, (1, 2, 4)),
        _gcp("n1-standard-8", "t4", 1, 8, 30, GCP_T4, (1, 2, 4)),
        _gcp("n1-standard-16", "t4", 1, 16, 60, GCP_T4, (1, 2, 4)),
        # V100 on N1: 1 GPU up to 12 vCPUs, 2 up to 24, 4 up to 48, 8 up to 96.
        _gcp("n1-highmem-8", "v100", 1, 8, 52, GCP_V100, (1, 2, 4, 8)),
        _gcp("n1-highmem-16", "v100", 2, 16, 104, GCP_V100, (2, 4, 8)),
        _gcp("n1-highmem-32", "v100", 4, 32, 208, GCP_V100, (4, 8)),
        _gcp("g2-standard-4", "l4", 1, 4, 16, GCP_L4),
        _gcp("g2-standard-8", "l4", 1, 8, 32, GCP_L4),
        _gcp("g2-standard-12", "l4", 1, 12, 48, GCP_L4),
        _gcp("g2-standard-16", "l4", 1, 16, 64, GCP_L4),
        _gcp("g2-standard-32", "l4", 1, 32, 128, GCP_L4),
        _gcp("g2-standard-24", "l4", 2, 24, 96, GCP_L4),
        _gcp("g2-standard-48", "l4", 4, 48, 192, GCP_L4),
        _gcp("g2-standard-96", "l4", 8, 96, 384, GCP_L4),
        _gcp("a2-highgpu-1g", "a100", 1, 12, 85, GCP_A100),
        _gcp("a2-highgpu-2g", "a100", 2, 24, 170, GCP_A100),
        _gcp("a2-highgpu-4g", "a100", 4, 48, 340, GCP_A100),
        _gcp("a2-highgpu-8g", "a100", 8, 96, 680, GCP_A100),
        _gcp("a2-megagpu-16g", "a100", 16, 96, 1360, GCP_A100),
        _gcp("a2-ultragpu-1g", "a100-80gb", 1, 12, 170, GCP_A100_80GB),
        _gcp("a2-ultragpu-2g", "a100-80gb", 2, 24, 340, GCP_A100_80GB),
        _gcp("a2-ultragpu-4g", "a100-80gb", 4, 48, 680, GCP_A100_80GB),
        _gcp("a2-ultragpu-8g", "a100-80gb", 8, 96, 1360, GCP_A100_80GB),
        _gcp("a3-highgpu-8g", "h100", 8, 208, 1872, GCP_H100),
        _gcp("a3-megagpu-8g", "h100", 8, 208, 1872, GCP_H100_MEGA),
        # A3 Ultra and A4: Compute Engine "Accelerator-optimized machine family" (A3 Ultra 8 x H200, A4 8 x B200);
        # the vCPU and GB figures as its machine-type table lists them (224 vCPU; 2,952 GB and 3,968 GB).
        _gcp("a3-ultragpu-8g", "h200", 8, 224, 2952, GCP_H200),
        _gcp("a4-highgpu-8g", "b200", 8, 224, 3968, GCP_B200),
        # Azure: learn.microsoft.com/azure/virtual-machines/sizes (NCasT4_v3, NCv3, NC A100 v4,
        # NCads H100 v5, NVadsA10 v5). An AKS agent pool has exactly one of these sizes.
        _azure("Standard_NC4as_T4_v3", "t4", 1, 4, 28, _AZURE_T4_REGIONS),
        _azure("Standard_NC8as_T4_v3", "t4", 1, 8, 56, _AZURE_T4_REGIONS),
        _azure("Standard_NC16as_T4_v3", "t4", 1, 16, 110, _AZURE_T4_REGIONS),
        _azure("Standard_NC64as_T4_v3", "t4", 4, 64, 440, _AZURE_T4_REGIONS),
        # NCv3 (V100) was retired on 2025-09-30: RETIRED_TYPES refuses its sizes and names their successors.
        _azure("Standard_NC24ads_A100_v4", "a100-80gb", 1, 24, 220),
        _azure("Standard_NC48ads_A100_v4", "a100-80gb", 2, 48, 440),
        _azure("Standard_NC96ads_A100_v4", "a100-80gb", 4, 96, 880),
        _azure("Standard_NC40ads_H100_v5", "h100-nvl", 1, 40, 320),
        _azure("Standard_NC80adis_H100_v5", "h100-nvl", 2, 80, 640),
        _azure("Standard_NV36ads_A10_v5", "a10", 1, 36, 440),
        # ND H100 v5: 96 vCPUs, 1900 GiB, 8 x H100 80GB (MicrosoftDocs/azure-docs articles/virtual-machines/sizes/
        # gpu-accelerated/includes/ndh100v5-series-specs.md). ND H200 v5: 96 vCPUs, 1850 GiB, 8 GPUs (Microsoft's
        # AKS VM size list, Aspire.Hosting.Azure.Kubernetes StandardNDISRH200V5; Learn's nd-h200-v5-series page).
        _azure("Standard_ND96isr_H100_v5", "h100", 8, 96, 1900),
        _azure("Standard_ND96isr_H200_v5", "h200", 8, 96, 1850),
    )
}


@dataclass(frozen=True)
class RetiredType(ReviewedRow):
    """An instance type the cloud has retired: it no longer starts, so a pool of it never gets a node. Retired for
    good, the row stands until its reading is due for review (ReviewedRow)."""

    cloud: str
    name: str
    retired_on: date
    #: the type the cloud names as its replacement, with the pool's GPU count (in the catalog)
    successor: str
    source: str
    read_on: date

    def refusal(self) -> str:
        return (
            f"{self.name!r} was retired by the cloud on {self.retired_on.isoformat()} and starts no VM; use its "
            f"successor {self.successor!r} (source: {self.source})"
        )


_NCV3_SOURCE = (
    "Azure NCv3-series retirement (learn.microsoft.com/azure/virtual-machines/sizes/retirement/ncv3-series-"
    "retirement: retired 2025-09-30; migrate to NC A100 v4 or NCads H100 v5)"
)
#: Retired types, refused wherever a type is taken (config, SpotGpuPoolArgs, NAP, the quota preflight) with the
#: successor of the same GPU count.
RETIRED_TYPES: dict[tuple[str, str], RetiredType] = {
    (r.cloud, r.name): r
    for r in (
        RetiredType(
            "azure", "Standard_NC6s_v3", date(2025, 9, 30), "Standard_NC24ads_A100_v4", _NCV3_SOURCE, date(2026, 12, 1)
        ),
        RetiredType(
            "azure", "Standard_NC12s_v3", date(2025, 9, 30), "Standard_NC48ads_A100_v4", _NCV3_SOURCE, date(2026, 12, 1)
        ),
        RetiredType(
            "azure", "Standard_NC24s_v3", date(2025, 9, 30), "Standard_NC96ads_A100_v4", _NCV3_SOURCE, date(2026, 12, 1)
        ),
    )
}


def retired_type(cloud: str, name: str) -> RetiredType | None:
    return RETIRED_TYPES.get((cloud, name))


@dataclass(frozen=True)
class GpuSpec:
    """The GPU of an instance type the catalog lacks, as a pool gives it: a catalog row's figures."""

    model: str  #: key into GPU_MODELS
    count: int
    vcpus: int
    memory_gib: int


#: The node label a pool of a type the catalog lacks carries its GPU spec in (`<model>_<count>x_<vcpus>cpu_<memory
#: GiB>gi`, a valid label value): the spec travels with the node group it describes, so every reader of the
#: resources (the policy pack in its own process, the captured preview, simulate, cost) reads the same row.
GPU_SPEC_LABEL = f"{LABEL_PREFIX}/gpu-spec"
_SPEC_VALUE = re.compile(r"^([a-z0-9-]+)_([0-9]+)x_([0-9]+)cpu_([0-9]+)gi$")


def gpu_spec_labels(spec: GpuSpec | None) -> dict[str, str]:
    """The node label that carries `spec` (none without one)."""
    if spec is None:
        return {}
    return {GPU_SPEC_LABEL: f"{spec.model}_{spec.count}x_{spec.vcpus}cpu_{spec.memory_gib}gi"}


def gpu_spec_of(labels: Mapping[str, Any] | None) -> GpuSpec | None:
    """The spec a node group's labels carry (gpu_spec_labels), None when absent or not one."""
    value = (labels or {}).get(GPU_SPEC_LABEL)
    match = _SPEC_VALUE.match(value) if isinstance(value, str) else None
    if match is None or match.group(1) not in GPU_MODELS:
        return None
    model, count, vcpus, memory = match.groups()
    return GpuSpec(model, int(count), int(vcpus), int(memory))


def gpu_spec_problems(where: str, cloud: str, names: list[str], spec: GpuSpec | None) -> list[str]:
    """What is wrong with `spec` as the GPU of the `names` the catalog lacks, each led by ``where`` (the spec's
    field): a figure below 1, an unknown model, a spec no type needs."""
    if spec is None:
        return []
    problems = [
        f"{where}.{field}: must be a whole number >= 1 (got {value!r})"
        for field, value in (("count", spec.count), ("vcpus", spec.vcpus), ("memory_gib", spec.memory_gib))
        if isinstance(value, bool) or not isinstance(value, int) or value < 1
    ]
    if spec.model not in GPU_MODELS:
        problems.append(f"{where}.model: unknown GPU {spec.model!r}; allowed: {', '.join(GPU_MODELS)}")
    if not problems and all((cloud, n) in GPU_INSTANCE_TYPES for n in names):
        problems.append(
            f"{where}: every instance type of the pool is in the catalog (elastic_gpu/gpu_catalog.py), "
            f"which gives its GPU; remove it (got types {names})"
        )
    return problems


@runtime_checkable
class GpuResolver(Protocol):
    """A reader of the GPU an instance type carries from the cloud's API through its provider's invoke (EC2's
    DescribeInstanceTypes, GCE's machine types), for a type the catalog lacks: an optional capability a provider
    implements too (elastic_gpu/provider.py), checked with isinstance."""

    def resolve_gpu(self, instance_type: str, region: str | None, zones: Sequence[str]) -> GpuSpec | str:
        """The type's GPU as the cloud describes it in `region` (None: the provider's) or its `zones`, or why
        the cloud gave none."""
        ...


def resolve_gpu_spec(
    resolver: KnownCloud, names: Sequence[str], region: str | None, zones: Sequence[str]
) -> tuple[GpuSpec | None, dict[str, str]]:
    """Ask the cloud's API (its provider `resolver`'s invoke, at preview) for the GPU of the `names` the catalog
    lacks: the one spec they share, and why each type it gives none of was not resolved (empty when the cloud has
    no such invoke: GpuResolver)."""
    cloud = resolver.name
    lacking = [n for n in names if (cloud, n) not in GPU_INSTANCE_TYPES and (cloud, n) not in RETIRED_TYPES]
    if not lacking or not isinstance(resolver, GpuResolver):
        return None, {}
    found = {n: resolver.resolve_gpu(n, region, zones) for n in lacking}
    why = {n: answer for n, answer in found.items() if isinstance(answer, str)}
    specs = {n: answer for n, answer in found.items() if isinstance(answer, GpuSpec)}
    if why or not specs:
        return None, why
    first, spec = next(iter(specs.items()))
    if others := [n for n, s in specs.items() if s != spec]:
        shown = f"{spec.count} x {spec.model}, {spec.vcpus} vCPU, {spec.memory_gib} GiB"
        return None, {
            n: f"the cloud describes it unlike {first} ({shown}); a pool's types the catalog lacks share one GPU "
            "spec, so make one pool per type"
            for n in others
        }
    return spec, {}


def accelerator_priced_clouds() -> frozenset[str]:
    """The clouds that attach (and price) GPUs as their own item (CloudFacts.prices_accelerators: GKE's guest
    accelerators), by name: the catalog and the price table are keyed by cloud name and merged over every cloud,
    so this is their one pass over the registry for that fact (read on each call, so a cloud registered later, as
    the tests' fake is, counts)."""
    return frozenset(c.name for c in all_clouds() if c.facts.prices_accelerators)


def gpu_instance_type(cloud: str, name: str, spec: GpuSpec | None = None) -> GpuInstanceType | None:
    """The catalog row for ``name`` on ``cloud``, else the row ``spec`` (the GPU its pool gives or the cloud
    described) makes of it, or None if it carries no GPU we know."""
    row = GPU_INSTANCE_TYPES.get((cloud, name))
    if row is not None or spec is None or spec.model not in GPU_MODELS:
        return row
    # A cloud that attaches (and prices) GPUs as their own item (GKE's guest accelerators): the catalog's
    # accelerator types are the models' accelerator labels (nvidia-tesla-t4, nvidia-h100-80gb, ...).
    accelerator = GPU_MODELS[spec.model].accelerator_label if cloud in accelerator_priced_clouds() else None
    return GpuInstanceType(cloud, name, spec.model, spec.count, spec.vcpus, spec.memory_gib, accelerator)


def gpu_instance_types(cloud: str) -> list[GpuInstanceType]:
    return [t for (c, _), t in GPU_INSTANCE_TYPES.items() if c == cloud]


def default_instance_types(cloud: KnownCloud, gpu: str, gpus_per_node: int = 1) -> list[str]:
    """The catalog types of ``gpu`` with ``gpus_per_node`` GPUs on ``cloud``: a diversified spot request where
    each type gets its own group (AKS), only the smallest shape where one group holds them all (EKS)."""
    rows = [t for t in gpu_instance_types(cloud.name) if t.gpu == gpu and t.gpus == gpus_per_node]
    # One group holds several types (an EKS managed node group): they must share one shape
    # (see validation.gpu_instance_type_problems).
    if rows and cloud.facts.one_group_many_types:
        first = min(rows, key=lambda t: (t.vcpus, t.memory_gib))
        rows = [t for t in rows if (t.vcpus, t.memory_gib) == (first.vcpus, first.memory_gib)]
    return [t.name for t in rows]
