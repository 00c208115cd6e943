"""A GPU instance type the catalog lacks: the pool gives its GPU (`gpuSpec`), and pools, node templates,
simulation and the gate read that row; without it the type is refused with the setting that fixes it."""

from __future__ import annotations

import pytest

from elastic_gpu.compose import PlannedCluster
from elastic_gpu.errors import ConfigError
from elastic_gpu.gpu_catalog import GPU_INSTANCE_TYPES, GPU_SPEC_LABEL, GpuSpec
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs, spot_gpu_pool_problems
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.tools.simulation import simulate
from elastic_gpu.tools.simulation.templates import node_templates
from tests.conftest import stack_values

#: p4de.24xlarge: 8 x A100 80GB, 96 vCPUs, 1152 GiB (EC2 accelerated computing instances, P4de).
TYPE = "p4de.24xlarge"
SPEC = {"model": "a100-80gb", "count": 8, "vcpus": 96, "memoryGib": 1152}


def _values(**extra: object) -> dict:
    values = stack_values("aws-dev")
    pool = {"name": "a100", "instanceTypes": [TYPE], "maxSize": 2, "onDemandFallback": True} | extra
    values["elastic-gpu:gpuPools"] = [pool]
    values.pop("elastic-gpu:devicePlugin", None)  # no time slicing: one advertised GPU per GPU
    return values


def test_the_type_is_not_in_the_catalog() -> None:
    assert ("aws", TYPE) not in GPU_INSTANCE_TYPES


def test_a_type_the_catalog_lacks_previews_with_the_gpu_the_pool_gives(program_dir) -> None:
    preview = run_preview("test", program_dir(_values(gpuSpec=SPEC)))
    groups = [g for g in preview.of_type("aws:eks/nodeGroup:NodeGroup") if g.inputs.get("instanceTypes") == [TYPE]]
    assert len(groups) == 4  # spot and fallback in each of the two zones
    for g in groups:
        tags = g.inputs["tags"]
        assert tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "8"
        assert g.inputs["labels"]["k8s.amazonaws.com/accelerator"] == "nvidia-a100-80gb"
        assert {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"} in g.inputs["taints"]
    # the simulator's node templates and the gate read the same row
    templates = [t for t in node_templates(preview) if t.pool == "a100"]
    assert templates and all(t.allocatable["nvidia.com/gpu"] == 8 for t in templates)
    assert simulate(preview)
    assert not [v for v in run_policies(preview).violations if v.level == "mandatory"]


def test_a_type_the_catalog_lacks_is_refused_naming_gpu_spec(program_dir) -> None:
    with pytest.raises(ConfigError) as err:
        run_preview("test", program_dir(_values()))
    assert f"gpuPools[0].instanceTypes[0]: {TYPE!r} carries no GPU we know on aws" in str(err.value)
    assert "gpuSpec: {model, count, vcpus, memoryGib}" in str(err.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({**SPEC, "model": "gb200"}, "gpuPools[0].gpuSpec.model: unknown GPU 'gb200'; allowed: t4, a10g"),
        ({**SPEC, "count": 0}, "gpuPools[0].gpuSpec.count"),
        ({**SPEC, "vcpus": 0}, "gpuPools[0].gpuSpec.vcpus"),
    ],
)
def test_a_bad_gpu_spec_is_refused_by_field(program_dir, spec: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        run_preview("test", program_dir(_values(gpuSpec=spec)))
    assert message in str(err.value)


def test_a_gpu_spec_for_catalog_types_only_is_refused(program_dir) -> None:
    values = _values(gpuSpec=SPEC, instanceTypes=["p4d.24xlarge"])
    with pytest.raises(ConfigError, match=r"gpuPools\[0\]\.gpuSpec: every instance type of the pool is in the catalog"):
        run_preview("test", program_dir(values))


def test_the_library_args_take_a_gpu_spec_and_check_it() -> None:
    handle = PlannedCluster("aws", "c", ["us-east-1a"], "1.35", {})

    def problems(spec: GpuSpec | None) -> list[str]:
        return spot_gpu_pool_problems(
            "a100", SpotGpuPoolArgs(cluster=handle, instance_types=[TYPE], max_size=2, gpu_spec=spec)
        )

    assert "gpu_spec=GpuSpec(model, count, vcpus, memory_gib)" in " ".join(problems(None))
    assert problems(GpuSpec("a100-80gb", 0, 96, 1152)) == [
        "SpotGpuPool 'a100': SpotGpuPoolArgs.gpu_spec.count: must be a whole number >= 1 (got 0)"
    ]
    args = SpotGpuPoolArgs(
        cluster=handle, instance_types=[TYPE], max_size=2, gpu_spec=GpuSpec("a100-80gb", 8, 96, 1152)
    )
    assert spot_gpu_pool_problems("a100", args) == []
    assert (args.gpus_per_node, args.accelerator) == (8, "nvidia-a100-80gb")


def test_at_preview_eks_resolves_the_gpu_of_a_type_the_catalog_lacks(program_dir) -> None:
    """No gpuSpec: the GPU is read from EC2 (aws.ec2.get_instance_type), here as the program's offline_mocks.py
    describes p4de.24xlarge; the offline mock describes only the catalog's types."""
    directory = program_dir(_values())
    described = {
        "defaultVcpus": 96,
        "memorySize": 1152 * 1024,
        "gpuses": [{"count": 8, "manufacturer": "NVIDIA", "name": "A100", "memorySize": 81920}],
    }
    (directory / "offline_mocks.py").write_text(
        f"INVOKES = {{'aws:ec2/getInstanceType:getInstanceType': lambda args: {described!r}}}\n"
    )
    preview = run_preview("test", directory)
    groups = [g for g in preview.of_type("aws:eks/nodeGroup:NodeGroup") if g.inputs.get("instanceTypes") == [TYPE]]
    assert groups
    for g in groups:
        assert g.inputs["tags"]["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "8"
        assert g.inputs["labels"]["k8s.amazonaws.com/accelerator"] == "nvidia-a100-80gb"
    # the gate reads the captured resources (and their prices) without asking EC2 again
    assert not [v for v in run_policies(preview).violations if v.level == "mandatory"]


def test_the_offline_mock_describes_catalog_types_as_ec2_does() -> None:
    from elastic_gpu.aws.gpu_types import described_instance_type, spec_of

    d = described_instance_type("p4d.24xlarge")
    assert d is not None and d["gpuses"] == [
        {"count": 8, "manufacturer": "NVIDIA", "name": "A100", "memorySize": 40960}
    ]
    gpus = [{"count": 8, "manufacturer": "NVIDIA", "name": "A100", "memory_size": 40960}]
    assert spec_of(gpus, 96, 1152 * 1024) == GpuSpec("a100", 8, 96, 1152)
    assert described_instance_type(TYPE) is None


def test_the_gpu_spec_travels_with_the_node_groups_not_the_process(program_dir) -> None:
    """The preview's node groups carry the spec as a label; the policy pack (its own process in a real
    `pulumi preview`), simulate and cost read it from the captured resources alone: nothing in this process
    knows the type after the preview."""
    from elastic_gpu.gpu_catalog import gpu_instance_type
    from elastic_gpu.tools.cost import pool_cost
    from elastic_gpu.tools.node_group_reading import gpu_pools_of

    preview = run_preview("test", program_dir(_values(gpuSpec=SPEC)))
    assert gpu_instance_type("aws", TYPE) is None  # no process-wide row left behind
    groups = [g for g in preview.of_type("aws:eks/nodeGroup:NodeGroup") if g.inputs.get("instanceTypes") == [TYPE]]
    assert {g.inputs["labels"][GPU_SPEC_LABEL] for g in groups} == {"a100-80gb_8x_96cpu_1152gi"}
    # what a resource policy is given: the resource's type, name and props
    views = [v for g in groups for v in gpu_pools_of(g.type, g.name, g.inputs)]
    assert views and all(v.gpu_spec == GpuSpec("a100-80gb", 8, 96, 1152) for v in views)
    row = views[0].gpu_row(TYPE)
    assert row is not None and (row.gpus, row.vcpus, row.memory_gib, row.gpu) == (8, 96, 1152, "a100-80gb")
    assert pool_cost(views[0]).gpus_per_node == 8
    templates = [t for t in node_templates(preview) if t.pool == "a100"]
    assert templates and all(t.allocatable["cpu"] == 96 and t.allocatable["nvidia.com/gpu"] == 8 for t in templates)
    assert not [v for v in run_policies(preview).violations if v.level == "mandatory"]


def test_a_library_pool_asks_ec2_for_a_type_the_catalog_lacks(run_program, tmp_path) -> None:
    """A program's SpotGpuPool with no gpu_spec: the GPU is read through aws.ec2.get_instance_type at preview."""
    preview = run_program(_library_program(tmp_path, EC2_P4DE))
    groups = [g for g in preview.of_type("aws:eks/nodeGroup:NodeGroup") if g.inputs.get("instanceTypes") == [TYPE]]
    assert groups
    for g in groups:
        assert g.inputs["tags"]["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "8"
        assert g.inputs["labels"]["k8s.amazonaws.com/accelerator"] == "nvidia-a100-80gb"
        assert g.inputs["labels"][GPU_SPEC_LABEL] == "a100-80gb_8x_96cpu_1152gi"


def test_a_library_pool_of_a_type_neither_knows_is_refused_naming_gpu_spec(run_program, tmp_path) -> None:
    with pytest.raises(ConfigError) as err:
        run_program(_library_program(tmp_path, None))
    text = str(err.value)
    assert f"SpotGpuPool 'a100': SpotGpuPoolArgs.instance_types[0]: {TYPE!r} carries no GPU we know on aws" in text
    assert "couldn't find resource" in text  # EC2's answer, as the mock gives it for a type it does not describe
    assert "gpu_spec=GpuSpec(model, count, vcpus, memory_gib)" in text


#: p4de.24xlarge as DescribeInstanceTypes gives it (8 x A100 80GB, 96 vCPUs, 1152 GiB).
EC2_P4DE = {
    "defaultVcpus": 96,
    "memorySize": 1152 * 1024,
    "gpuses": [{"count": 8, "manufacturer": "NVIDIA", "name": "A100", "memorySize": 81920}],
}


def _library_program(directory, described: dict | None) -> str:
    """A program of its own: an EksCluster and one SpotGpuPool of TYPE, no gpu_spec; its offline_mocks.py
    describes the type through EC2's invoke when `described` is given."""
    if described is not None:
        (directory / "offline_mocks.py").write_text(
            f"INVOKES = {{'aws:ec2/getInstanceType:getInstanceType': lambda args: {described!r}}}\n"
        )
    return (
        "from elastic_gpu import EksCluster, EksClusterArgs, SpotGpuPool, SpotGpuPoolArgs\n"
        "cluster = EksCluster('c', EksClusterArgs(cluster_name='c', region='us-east-1',\n"
        "                     zones=['us-east-1a', 'us-east-1b'], kubernetes_version='1.35'))\n"
        f"SpotGpuPool('a100', SpotGpuPoolArgs(cluster=cluster, instance_types=[{TYPE!r}], max_size=2))\n"
    )


#: DescribeInstanceTypes' GpuInfo (name, MiB per GPU), as Karpenter's generated instance-types reference lists it
#: (aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md, instance-gpu-name/-memory).
EC2_GPU_INFO = {
    "g4dn.xlarge": ("t4", 16384),
    "g5.xlarge": ("a10g", 22888),
    "g6.xlarge": ("l4", 22888),
    "g6e.xlarge": ("l40s", 45776),
    "p4d.24xlarge": ("a100", 40960),
    "p5.48xlarge": ("h100", 81920),
    "p5e.48xlarge": ("h200", 144384),
    "p5en.48xlarge": ("h200", 144384),
    "p6-b200.48xlarge": ("b200", 183359),
}


@pytest.mark.parametrize(("instance_type", "info"), EC2_GPU_INFO.items())
def test_the_mock_names_each_gpu_as_ec2_does_and_reads_back_the_catalog_row(instance_type: str, info) -> None:
    from elastic_gpu.aws.gpu_types import described_instance_type, spec_of

    d = described_instance_type(instance_type)
    assert d is not None
    [gpu] = d["gpuses"]
    assert (gpu["name"].lower(), gpu["memorySize"]) == info
    row = GPU_INSTANCE_TYPES[("aws", instance_type)]
    described = [{"count": gpu["count"], "name": gpu["name"], "memory_size": gpu["memorySize"]}]
    assert spec_of(described, d["defaultVcpus"], d["memorySize"]) == GpuSpec(
        row.gpu, row.gpus, row.vcpus, row.memory_gib
    )


def test_ec2_tells_the_a100s_apart_by_their_memory() -> None:
    from elastic_gpu.aws.gpu_types import spec_of

    p4de = [{"count": 8, "name": "A100", "memory_size": 81920}]  # p4de.24xlarge as EC2 describes it
    assert spec_of(p4de, 96, 1152 * 1024) == GpuSpec("a100-80gb", 8, 96, 1152)
