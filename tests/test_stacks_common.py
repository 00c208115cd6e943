"""Properties every shipped stack must have, whatever its cloud."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import kubernetes_validate
import pytest
from kubernetes_validate.utils import ValidationError as K8sValidationError

from elastic_gpu.config import load_stack_config
from elastic_gpu.tools.offline.report import pool_rows, to_json
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import ROOT, stack_preview, stack_values, stem

STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


def is_builtin_kind(api_version: str) -> bool:
    """Kubernetes' own API groups; custom resources (Kueue, ComputeClass) are checked in test_crds.py."""
    group = api_version.rpartition("/")[0]
    return "." not in group or (group.endswith(".k8s.io") and not group.endswith(".x-k8s.io"))


def kubernetes_objects(stack: str) -> list[dict]:
    preview = stack_preview(stack)
    return [
        r.inputs
        for r in preview.resources
        if r.custom
        and r.type.startswith("kubernetes:")
        and "apiVersion" in r.inputs  # a Helm release is not an object
        and is_builtin_kind(r.inputs["apiVersion"])
    ]


def test_there_are_stacks() -> None:
    assert {"aws-dev", "aws-prod"} <= set(STACKS)


@pytest.mark.parametrize("stack", STACKS)
def test_kubernetes_objects_match_the_schema_of_the_stack_version(stack: str) -> None:
    version = load_stack_config(stack_values(stack)).cluster.kubernetes_version
    objects = kubernetes_objects(stack)
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)


def test_the_schema_check_rejects_an_unknown_field() -> None:
    obj = json.loads(json.dumps(kubernetes_objects("aws-dev")[0]))
    obj["spec"] = {**obj.get("spec", {}), "replicaz": 1}
    with pytest.raises(K8sValidationError):
        kubernetes_validate.validate(obj, "1.33", strict=True)


@pytest.mark.parametrize("stack", STACKS)
def test_two_runs_capture_identical_output(stack: str) -> None:
    first = json.dumps(to_json(run_preview(stack, ROOT)), sort_keys=True)
    second = json.dumps(to_json(stack_preview(stack)), sort_keys=True)
    assert first == second


@pytest.mark.parametrize("stack", STACKS)
def test_every_resource_has_a_parent_and_gpu_pools_scale_from_zero(stack: str) -> None:
    preview = stack_preview(stack)
    roots = [r for r in preview.resources if r.parent is None]
    assert [r.type for r in roots] == ["pulumi:pulumi:Stack"]
    cfg = load_stack_config(stack_values(stack))
    gpu_pools = {p.name for p in cfg.gpu_pools}
    rows = [p for p in pool_rows(preview) if p.pool in gpu_pools]
    assert rows and all(p.min_size == 0 for p in rows)
    assert {p.pool for p in rows} == gpu_pools


def test_json_preview_masks_secrets_and_lists_options() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "elastic_gpu", "preview", "--stack", "aws-dev", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    data = json.loads(run.stdout)
    assert data["outputs"]["kubeconfig"] == {"value": "[secret]", "secret": True}
    assert "server" not in run.stdout  # the kubeconfig's contents never leak
    by_name = {(r["type"], r["name"]): r for r in data["resources"]}
    ng = by_name[("aws:eks/nodeGroup:NodeGroup", "t4-spot-us-west-2a")]
    assert ng["options"]["ignoreChanges"] == ["scalingConfig.desiredSize"]
    assert ng["parent"].endswith("elastic-gpu:index:SpotGpuPool::t4")
    assert "pulumi:providers:aws::aws::" in ng["options"]["provider"]
    assert {stem(p["node_group"]) for p in data["pools"]} >= {
        "gpu-dev-t4-spot-us-west-2a",
        "gpu-dev-t4-fallback-us-west-2b",
    }
    assert ng["options"]["deleteBeforeReplace"] is False


def test_text_preview_shows_tree_and_pool_table() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "elastic_gpu", "preview", "--stack", "aws-prod"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert "├─ elastic-gpu:index:EksCluster  gpu-prod" in run.stdout
    assert "aws:eks/cluster:Cluster  gpu-prod-eks  [protected]" in run.stdout
    assert re.search(r"gpu-prod-inference-fallback-us-east-1a-[0-9a-f]{6} +on-demand +0 +3 +us-east-1a", run.stdout)
    assert "kubeconfig: [secret]" in run.stdout
