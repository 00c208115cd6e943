"""AWS's own settings of a GPU pool (merged into elastic_gpu.settings.GpuPoolSettings; refused on other clouds)."""

from __future__ import annotations

from typing import ClassVar, Literal

from elastic_gpu.settings_base import CloudOptions

#: The EKS-optimised AMI family of a GPU pool's nodes.
AmiFamily = Literal["al2023", "bottlerocket"]
DEFAULT_AMI_FAMILY: AmiFamily = "al2023"


class AwsGpuPoolOptions(CloudOptions):
    cloud: ClassVar[str] = "aws"

    ami_family: AmiFamily = DEFAULT_AMI_FAMILY
    """AWS only: the EKS-optimised AMI family of the nodes, "al2023" (default) or "bottlerocket" (ships its own
    device plugin)."""
