"""GCP's own settings of a GPU pool (merged into elastic_gpu.settings.GpuPoolSettings; refused on other clouds)."""

from __future__ import annotations

from typing import ClassVar, Literal

from elastic_gpu.settings_base import CloudOptions

GpuDriverVersion = Literal["DEFAULT", "LATEST"]
#: GKE installs the "Default" NVIDIA driver of the node's GKE version ("LATEST" for the newest).
DEFAULT_GPU_DRIVER_VERSION: GpuDriverVersion = "DEFAULT"


class GcpGpuPoolOptions(CloudOptions):
    cloud: ClassVar[str] = "gcp"

    gpu_driver_version: GpuDriverVersion = DEFAULT_GPU_DRIVER_VERSION
    """GCP only: the NVIDIA driver GKE installs on the nodes, "DEFAULT" (default) or "LATEST"."""
    queued_provisioning: bool = False
    """GCP only: Dynamic Workload Scheduler queued provisioning (flex-start capacity via ProvisioningRequests
    and Kueue, not spot); needs spot false and min size 0 (default false)."""
    max_run_hours: int | None = None
    """GCP only, with queued provisioning: hours a node runs before GKE removes it (nodeConfig.maxRunDuration),
    1 to 168; default None: 168, GKE's most for flex-start. Changing it replaces the node pool."""


class GcpGpuPoolArgsOptions(GcpGpuPoolOptions):
    """What a program sets beyond the stack file's GCP settings (a stack file's `gpusPerNode` picks it)."""

    cloud: ClassVar[str] = "gcp"

    gpu_count: int | None = None
    """GCP N1 only: GPUs attached per node (1, 2, 4 or 8 by the catalog's `gpu_counts`); default None: the
    catalog's count for the machine type."""
