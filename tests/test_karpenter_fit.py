"""A pod reaches a Karpenter (EKS) or node auto-provisioning (AKS) NodePool only if it fits what Karpenter
counts of the NodePool's biggest type: capacity less the VM memory overhead, less kube-reserved, eviction
and the DaemonSets that would run there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from elastic_gpu.__main__ import main
from elastic_gpu.tools.aws.karpenter.simulate import MODEL as EKS
from elastic_gpu.tools.azure.node_provisioning.simulation import MODEL as NAP
from elastic_gpu.tools.simulation import simulate
from elastic_gpu.tools.simulation.karpenter import KarpenterModel, simulate_pod
from elastic_gpu.tools.simulation.pod import pod_shape
from elastic_gpu.tools.simulation.run import pool_contracts
from elastic_gpu.workload import job_manifest
from tests.conftest import stack_preview

GI = 2**30


def _job(stack: str, pool: str, **requests: str) -> dict[str, Any]:
    contract = next(c for c in pool_contracts(stack_preview(stack)) if c.pool == pool)
    job = job_manifest(contract)
    job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"].update(requests)
    return job


# The inference NodePools' biggest eligible types: g4dn.8xlarge (32 vCPU, 128 GiB; Karpenter counts
# 118.4 GiB, keeps 150m and 993 MiB) and Standard_NC16as_T4_v3 (16 vCPU, 110 GiB; counts 101.75 GiB,
# keeps 260m and 9187 MiB); kube-proxy takes 100m on both.
TOO_BIG = [
    ("aws-karpenter", EKS, {"memory": "120Gi"}, "memory"),  # < 128Gi raw; > 118.4Gi less the VM overhead
    ("aws-karpenter", EKS, {"cpu": "31900m"}, "cpu"),  # < 32 raw; > 32 - 150m kube-reserved - 100m
    ("azure-karpenter", NAP, {"memory": "100Gi"}, "memory"),  # < 110Gi raw; > 101.75Gi - 8.97Gi
    ("azure-karpenter", NAP, {"cpu": "15800m"}, "cpu"),  # < 16 raw; > 16 - 260m - 100m
]


@pytest.mark.parametrize(("stack", "model", "requests", "resource"), TOO_BIG)
def test_a_pod_that_fits_the_raw_type_but_not_karpenters_overhead_does_not_reach(
    stack: str, model: KarpenterModel, requests: dict[str, str], resource: str
) -> None:
    preview = stack_preview(stack)
    job = _job(stack, "inference", **requests)
    [outcome] = simulate(preview, job)
    assert not outcome.reaches
    direct = simulate_pod(preview, pod_shape(job), None, "inference", None, model)
    assert not direct.reaches
    assert f"insufficient {resource}" in direct.reason and "Karpenter's" in direct.reason


@pytest.mark.parametrize(
    ("stack", "requests"),
    [("aws-karpenter", {"memory": "100Gi", "cpu": "31"}), ("azure-karpenter", {"memory": "90Gi", "cpu": "15"})],
)
def test_a_pod_that_fits_after_the_overhead_reaches_and_one_near_it_fits_only_if(
    stack: str, requests: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = tmp_path / "job.yaml"
    pod.write_text(yaml.safe_dump(_job(stack, "inference", **requests)))
    assert main(["simulate", "--stack", stack, "--pod", str(pod), "--json"]) == 0
    (out,) = json.loads(capsys.readouterr().out)["pools"]
    assert out["reaches"] and out["first_choice"] == "inference-spot-first"
    assert out["fit_notes"] and all("fits only if" in n for n in out["fit_notes"])
    # the pool's own workload is far from the edge: no note
    [own] = [o for o in simulate(stack_preview(stack)) if o.pool == "inference"]
    assert own.reaches and not own.fit_notes


def test_karpenters_overhead_is_its_providers_formula() -> None:
    """Two figures worked by hand from the providers' code (aws: kube-reserved CPU 60+10+10+70 m on 32 vCPU,
    memory 11 x 58 pods + 255 MiB + 100Mi eviction; azure: brackets of 16 vCPU and 110 GiB + 750Mi)."""
    from elastic_gpu.gpu_catalog import gpu_instance_type

    g4dn, nc16 = gpu_instance_type("aws", "g4dn.8xlarge"), gpu_instance_type("azure", "Standard_NC16as_T4_v3")
    assert g4dn is not None and nc16 is not None
    aws = EKS.type_resources(g4dn, 100 * GI)
    assert aws.overhead["cpu"] == pytest.approx(0.15)
    assert aws.overhead["memory"] == (11 * 58 + 255 + 100) * 2**20
    assert aws.capacity["memory"] == (131072 - 9831) * 2**20  # ceil(7.5% of 128 GiB in MiB)
    assert aws.overhead["ephemeral-storage"] == GI + 10 * GI
    azure = NAP.type_resources(nc16, None)
    assert azure.overhead["cpu"] == pytest.approx(0.26)
    assert azure.overhead["memory"] == (8437 + 750) * 2**20
