"""A GPU type the catalog lacks on GKE and AKS: GKE asks Compute Engine (gcp.compute.get_machine_types) at
preview; AKS cannot ask (azure-native has no invoke describing a VM size's GPUs), so the pool gives the GPU;
a type neither answers is refused naming the setting that gives it."""

from __future__ import annotations

import pytest

from elastic_gpu.errors import ConfigError
from elastic_gpu.gpu_catalog import GPU_INSTANCE_TYPES, GPU_SPEC_LABEL
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.tools.simulation.templates import node_templates
from tests.conftest import stack_values

#: a3-highgpu-4g: 4 x H100 80GB, 104 vCPUs, 936 GB (Compute Engine, accelerator-optimized machines: A3 High).
GCP_TYPE = "a3-highgpu-4g"
GCP_DESCRIBED = {
    "name": GCP_TYPE,
    "guestCpus": 104,
    "memoryMb": 936 * 1024,
    "accelerators": [{"guestAcceleratorType": "nvidia-h100-80gb", "guestAcceleratorCount": 4}],
}
#: Standard_ND96amsr_A100_v4: 8 x A100 80GB, 96 vCPUs, 1900 GiB (learn.microsoft.com, NDm A100 v4 series).
AZURE_TYPE = "Standard_ND96amsr_A100_v4"


def _gcp_values() -> dict:
    values = stack_values("gcp-dev")
    values["elastic-gpu:gpuPools"] = [{"name": "h100", "instanceTypes": [GCP_TYPE], "maxSize": 2, "spot": True}]
    return values


def _describing(directory, described: dict) -> None:
    """The program's offline_mocks.py: Compute Engine's machine-types list, describing `described` (and only
    the name of any other type the filter names)."""
    (directory / "offline_mocks.py").write_text(
        "import re\n"
        f"DESCRIBED = {described!r}\n"
        "def machine_types(args):\n"
        "    names = re.findall(r'name = \"([^\"]+)\"', args.get('filter') or '')\n"
        "    return {'zone': args.get('zone'), 'machineTypes': [DESCRIBED if n == DESCRIBED['name'] else {'name': n}"
        " for n in names]}\n"
        "INVOKES = {'gcp:compute/getMachineTypes:getMachineTypes': machine_types}\n"
    )


def test_the_types_are_not_in_the_catalog() -> None:
    assert ("gcp", GCP_TYPE) not in GPU_INSTANCE_TYPES and ("azure", AZURE_TYPE) not in GPU_INSTANCE_TYPES


def test_gke_resolves_a_machine_type_the_catalog_lacks_through_compute_engine(program_dir) -> None:
    directory = program_dir(_gcp_values())
    _describing(directory, GCP_DESCRIBED)
    preview = run_preview("test", directory)
    pools = [p for p in preview.of_type("gcp:container/nodePool:NodePool") if "h100" in p.name]
    assert pools
    for p in pools:
        node = p.inputs["nodeConfig"]
        assert node["machineType"] == GCP_TYPE
        assert [(a["type"], a["count"]) for a in node["guestAccelerators"]] == [("nvidia-h100-80gb", 4)]
        assert node["labels"][GPU_SPEC_LABEL] == "h100_4x_104cpu_936gi"
    templates = [t for t in node_templates(preview) if t.pool == "h100"]
    assert templates and all(t.allocatable["cpu"] == 104 and t.allocatable["nvidia.com/gpu"] == 4 for t in templates)
    assert not [v for v in run_policies(preview).violations if v.level == "mandatory"]


def test_gke_refuses_a_machine_type_compute_engine_describes_no_gpu_of(program_dir) -> None:
    """The offline mock knows only the catalog's GPUs: another type reads back without accelerators."""
    with pytest.raises(ConfigError) as err:
        run_preview("test", program_dir(_gcp_values()))
    text = str(err.value)
    assert f"gpuPools[0].instanceTypes[0]: {GCP_TYPE!r} carries no GPU we know on gcp" in text
    assert "Compute Engine describes no GPU" in text
    assert "gpuSpec: {model, count, vcpus, memoryGib}" in text


def test_the_gcp_mock_describes_catalog_machine_types_as_compute_engine_does() -> None:
    from elastic_gpu.gcp.gpu_types import described_machine_type, spec_of
    from elastic_gpu.gpu_catalog import GpuSpec

    d = described_machine_type("a3-megagpu-8g")
    assert d["accelerators"] == [{"guestAcceleratorType": "nvidia-h100-mega-80gb", "guestAcceleratorCount": 8}]
    assert (d["guestCpus"], d["memoryMb"]) == (208, 1872 * 1024)
    accelerators = [{"guest_accelerator_type": "nvidia-h100-mega-80gb", "guest_accelerator_count": 8}]
    assert spec_of(accelerators, 208, 1872 * 1024) == GpuSpec("h100", 8, 208, 1872)
    assert described_machine_type("n1-standard-4")["accelerators"] == []  # N1: the node pool attaches GPUs


def _azure_values(**extra: object) -> dict:
    values = stack_values("azure-dev")
    pool = {"name": "a100", "instanceTypes": [AZURE_TYPE], "maxSize": 2, "spot": True} | extra
    values["elastic-gpu:gpuPools"] = [pool]
    values.pop("elastic-gpu:devicePlugin", None)
    return values


def test_aks_refuses_a_size_the_catalog_lacks_saying_it_cannot_ask(program_dir) -> None:
    with pytest.raises(ConfigError) as err:
        run_preview("test", program_dir(_azure_values()))
    text = str(err.value)
    assert f"gpuPools[0].instanceTypes[0]: {AZURE_TYPE!r} carries no GPU we know on azure" in text
    assert "the azure Pulumi provider has no invoke that describes an instance type's GPU" in text
    assert "gpuSpec: {model, count, vcpus, memoryGib}" in text


def test_aks_previews_a_size_the_catalog_lacks_with_the_gpu_spec(program_dir) -> None:
    spec = {"model": "a100-80gb", "count": 8, "vcpus": 96, "memoryGib": 1900}
    preview = run_preview("test", program_dir(_azure_values(gpuSpec=spec)))
    pools = [p for p in preview.of_type("azure-native:containerservice:AgentPool") if p.inputs["vmSize"] == AZURE_TYPE]
    assert pools and all(p.inputs["nodeLabels"][GPU_SPEC_LABEL] == "a100-80gb_8x_96cpu_1900gi" for p in pools)
    templates = [t for t in node_templates(preview) if t.pool == "a100"]
    assert templates and all(t.allocatable["nvidia.com/gpu"] == 8 for t in templates)
    assert not [v for v in run_policies(preview).violations if v.level == "mandatory"]
