"""Compute Engine's GPU quotas per GPU model and capacity type: the one table the GKE preflight
(elastic_gpu/gcp/preflight.py) and the offline new project (elastic_gpu/tools/gcp/mocks.py) read.

Cloud Quotas ids (service compute.googleapis.com) as `gcloud beta quotas info list --service=compute.googleapis.com`
names them: on-demand VMs draw on `NVIDIA-<M>-GPUS-per-project-region`; Spot VMs and flex-start VMs (Dynamic
Workload Scheduler: GKE queued provisioning) on the preemptible one, `PREEMPTIBLE-NVIDIA-<M>-GPUS-per-project-region`,
while the region has one: "If you don't have preemptible quota, Spot VMs and preemptible VMs consume standard
quota" (Compute Engine "Allocation quotas", Preemptible quotas; GKE "About flex-start VMs": flex-start VMs consume
preemptible quota). So a region whose preemptible quota is 0 is checked against the standard one. A model without a
row (H100, H200, B200: `GPUS-PER-GPU-FAMILY-per-project-region`, dimensioned by GPU family) is not checked here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from elastic_gpu.facts import ReviewedRow

_SOURCE = (
    "Compute Engine allocation quotas (cloud.google.com/compute/resource-usage: GPU quotas, Preemptible quotas) "
    "and Cloud Quotas quota ids"
)
_READ = date(2026, 12, 1)

#: The quota every GPU in every region draws on, whatever its model and capacity type.
ALL_REGIONS = "GPUS-ALL-REGIONS-per-project"


@dataclass(frozen=True)
class GpuQuota(ReviewedRow):
    """The per-region quota ids a GPU model's VMs draw on."""

    gpu: str  #: key into elastic_gpu.gpu_catalog.GPU_MODELS
    standard: str
    preemptible: str
    source: str = _SOURCE
    read_on: date = _READ


def _row(gpu: str, model: str) -> GpuQuota:
    return GpuQuota(
        gpu, f"NVIDIA-{model}-GPUS-per-project-region", f"PREEMPTIBLE-NVIDIA-{model}-GPUS-per-project-region"
    )


GPU_QUOTAS = (
    _row("t4", "T4"),
    _row("l4", "L4"),
    _row("v100", "V100"),
    _row("a100", "A100"),
    _row("a100-80gb", "A100-80GB"),
)


def gpu_quota(gpu: str) -> GpuQuota | None:
    return next((q for q in GPU_QUOTAS if q.gpu == gpu), None)
