"""Current GPU types preview: H200 and B200 instance types on each cloud carry their model and GPU count into
what the stack declares (the autoscaler's node template, the accelerator label, GKE's accelerator type)."""

from __future__ import annotations

import pytest

from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import stack_values


@pytest.mark.parametrize(
    ("cloud", "name", "model", "gpus"),
    [
        ("aws", "p5en.48xlarge", "NVIDIA H200 141GB", 8),
        ("aws", "p5e.48xlarge", "NVIDIA H200 141GB", 8),
        ("aws", "p6-b200.48xlarge", "NVIDIA B200", 8),
        ("aws", "g6e.48xlarge", "NVIDIA L40S", 8),
        ("azure", "Standard_ND96isr_H100_v5", "NVIDIA H100 80GB", 8),
        ("azure", "Standard_ND96isr_H200_v5", "NVIDIA H200 141GB", 8),
        ("gcp", "a3-megagpu-8g", "NVIDIA H100 80GB", 8),
        ("gcp", "a3-ultragpu-8g", "NVIDIA H200 141GB", 8),
        ("gcp", "a4-highgpu-8g", "NVIDIA B200", 8),
    ],
)
def test_current_gpu_types_are_in_the_catalog(cloud: str, name: str, model: str, gpus: int) -> None:
    row = gpu_instance_type(cloud, name)
    assert row is not None and (row.model.name, row.gpus) == (model, gpus)


def _preview(program_dir, stack: str, pool: dict) -> object:
    values = stack_values(stack)
    values["elastic-gpu:gpuPools"] = [pool]
    values.pop("elastic-gpu:devicePlugin", None)  # no time slicing: one advertised GPU per GPU
    return run_preview("test", program_dir(values))


def test_an_eks_pool_of_p6_b200_previews_with_eight_b200(program_dir) -> None:
    preview = _preview(
        program_dir,
        "aws-dev",
        {"name": "b200", "instanceTypes": ["p6-b200.48xlarge"], "maxSize": 2, "spot": True, "onDemandFallback": True},
    )
    groups = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    gpu_groups = [g for g in groups if g.inputs.get("instanceTypes") == ["p6-b200.48xlarge"]]
    assert gpu_groups
    for g in gpu_groups:
        assert g.inputs["labels"]["k8s.amazonaws.com/accelerator"] == "nvidia-b200"
        # the autoscaler's node template for an empty group: eight GPUs
        assert g.inputs["tags"]["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "8"


def test_a_gke_pool_of_a3_ultra_attaches_eight_h200(program_dir) -> None:
    preview = _preview(
        program_dir,
        "gcp-dev",
        {"name": "h200", "instanceTypes": ["a3-ultragpu-8g"], "maxSize": 2, "spot": True, "perZone": False},
    )
    [pool] = [p for p in preview.of_type("gcp:container/nodePool:NodePool") if "h200" in p.name]
    [accelerator] = pool.inputs["nodeConfig"]["guestAccelerators"]
    assert (accelerator["type"], accelerator["count"]) == ("nvidia-h200-141gb", 8)
