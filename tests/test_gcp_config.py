"""GCP config errors, by message, raised before any resource is declared."""

from __future__ import annotations

from typing import Any

import pytest

from elastic_gpu.clouds import get_cloud
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.gpu_catalog import default_instance_types, gpu_instance_type
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import stack_values

NS = "elastic-gpu:"


def errors(values: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return str(exc.value)


def test_shipped_stacks_parse() -> None:
    assert load_stack_config(stack_values("gcp-prod")).cluster.regional is True


def test_accelerator_on_wrong_machine_family() -> None:
    v = stack_values("gcp-dev")
    v[NS + "gpuPools"][0]["instanceTypes"] = ["g2-standard-4"]  # gpu: t4
    msg = errors(v)
    assert "gpuPools[0].instanceTypes[0]: gpu 't4' (NVIDIA T4) cannot attach to machine type 'g2-standard-4'" in msg
    assert "it goes on n1: n1-standard-4" in msg


def test_a100_needs_a2() -> None:
    v = stack_values("gcp-prod")
    v[NS + "gpuPools"][1]["instanceTypes"] = ["n1-standard-8"]
    assert "gpu 'a100' (NVIDIA A100 40GB) cannot attach to machine type 'n1-standard-8' (family n1)" in errors(v)


def test_n1_gpu_count_must_be_attachable() -> None:
    v = stack_values("gcp-dev")
    v[NS + "gpuPools"][0]["gpusPerNode"] = 3
    assert "gpuPools[0].gpusPerNode: 'n1-standard-4' takes 1, 2, 4 x NVIDIA T4 (got 3)" in errors(v)


def test_queued_provisioning_with_min_above_zero() -> None:
    v = stack_values("gcp-prod")
    v[NS + "gpuPools"][1]["minSize"] = 1
    assert (
        "gpuPools[1].minSize: a queued-provisioning pool gets nodes only through ProvisioningRequests; "
        "allowed: 0 (got 1)" in errors(v)
    )


def test_spot_with_queued_provisioning() -> None:
    v = stack_values("gcp-prod")
    v[NS + "gpuPools"][1]["spot"] = True
    assert (
        "gpuPools[1].spot: a queued-provisioning pool uses flex-start capacity, not spot; allowed: false (got true)"
        in errors(v)
    )


def test_zone_outside_region_and_missing_project() -> None:
    v = stack_values("gcp-dev")
    v[NS + "cluster"]["zones"] = ["us-east1-b"]
    del v[NS + "cluster"]["project"]
    msg = errors(v)
    assert "cluster.zones[0]: 'us-east1-b' is not a zone of region 'us-central1'" in msg
    assert "cluster.project: required on gcp" in msg


def test_gcp_only_keys_rejected_on_aws() -> None:
    v = stack_values("aws-dev")
    v[NS + "cluster"]["releaseChannel"] = "STABLE"
    v[NS + "gpuPools"][0]["queuedProvisioning"] = True
    msg = errors(v)
    assert "cluster.releaseChannel: a GCP-only setting; remove it for cloud 'aws'" in msg
    assert "gpuPools[0].queuedProvisioning: a GCP-only setting; remove it for cloud 'aws'" in msg


def test_one_machine_type_per_gke_pool() -> None:
    v = stack_values("gcp-dev")
    v[NS + "gpuPools"][0]["instanceTypes"] = ["n1-standard-4", "n1-standard-8"]
    assert "gpuPools[0].instanceTypes: a GKE node pool has one machine type" in errors(v)


def test_catalog_knows_gcp_families_and_counts() -> None:
    assert default_instance_types(get_cloud("gcp"), "t4") == ["n1-standard-4", "n1-standard-8", "n1-standard-16"]
    assert gpu_instance_type("gcp", "a2-highgpu-8g").gpus == 8
    assert gpu_instance_type("gcp", "a3-highgpu-8g").accelerator == "nvidia-h100-80gb"
    assert gpu_instance_type("gcp", "g2-standard-48").gpus == 4


def test_error_raised_before_any_resource(program_dir) -> None:
    v = stack_values("gcp-prod")
    v[NS + "gpuPools"][1]["minSize"] = 2
    with pytest.raises(ConfigError, match=r"gpuPools\[1\]\.minSize"):
        run_preview("test", program_dir(v))
