"""Every custom resource the library declares, in every shipped stack and example, against its upstream
CRD (tests/data/crds, SOURCE.md): unknown fields, types, enums, patterns, defaults and CEL rules."""

from __future__ import annotations

import copy
from functools import cache

import pytest

from elastic_gpu.tools.offline.runner import Preview, run_preview
from tests.conftest import ROOT, stack_preview
from tests.crd_schemas import CRD_DIR, crds, validate
from tests.test_stacks_common import is_builtin_kind

STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
EXAMPLES = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "Pulumi.yaml").exists())


@cache
def example(name: str) -> Preview:
    return run_preview("dev", ROOT / "examples" / name)


def custom_resources(preview: Preview) -> dict[str, dict]:
    """Kubernetes objects of API groups Kubernetes does not serve itself (a Helm release is not an object)."""
    return {
        r.name: r.inputs
        for r in preview.resources
        if r.custom
        and r.type.startswith("kubernetes:")
        and "apiVersion" in r.inputs
        and not is_builtin_kind(r.inputs["apiVersion"])
    }


@pytest.mark.parametrize("program", [f"stack:{s}" for s in STACKS] + [f"example:{e}" for e in EXAMPLES])
def test_every_custom_resource_validates_against_its_crd(program: str) -> None:
    kind, _, name = program.partition(":")
    objects = custom_resources(stack_preview(name) if kind == "stack" else example(name))
    for res_name, obj in objects.items():
        assert validate(obj) == [], res_name


def test_the_shipped_programs_declare_the_custom_resources_checked_here() -> None:
    kinds = {o["kind"] for o in custom_resources(stack_preview("gcp-prod")).values()}
    assert kinds == {"ComputeClass", "ClusterQueue", "LocalQueue", "ResourceFlavor", "AdmissionCheck"} | {
        "ProvisioningRequestConfig"
    }
    assert {o["kind"] for o in custom_resources(example("existing-gke")).values()} == {"ComputeClass"}
    assert {(f"{c.group}/{c.version}", c.kind, c.node_class_group) for c in crds().values()} == set(crds())


def test_a_custom_resource_without_a_crd_schema_fails() -> None:
    assert validate({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}) == [
        "example.com/v1 Widget: no CRD schema in tests/data/crds (add the upstream one)"
    ]


def test_every_crd_file_names_its_source() -> None:
    source = (CRD_DIR / "SOURCE.md").read_text()
    for path in CRD_DIR.glob("*.yaml"):
        first = path.read_text().splitlines()[0]
        assert first.startswith("# ") and path.name in source, path.name
        assert path.stat().st_size < 70_000, f"{path.name}: trim it (tests/data/crds/trim.py)"


def _compute_class() -> dict:
    [obj] = [o for o in custom_resources(stack_preview("gcp-prod")).values() if o["kind"] == "ComputeClass"]
    return copy.deepcopy(obj)


def _cluster_queue() -> dict:
    [obj] = [o for o in custom_resources(stack_preview("gcp-prod")).values() if o["kind"] == "ClusterQueue"]
    return copy.deepcopy(obj)


def test_a_misspelt_compute_class_field_fails() -> None:
    obj = _compute_class()
    obj["spec"]["priorities"][0]["nodePools"] = obj["spec"]["priorities"][0].pop("nodepools")
    [error] = validate(obj)
    assert "spec.priorities.0" in error and "'nodePools' was unexpected" in error


def test_a_compute_class_enum_and_type_are_checked() -> None:
    obj = _compute_class()
    obj["spec"]["whenUnsatisfiable"] = "Never"
    obj["spec"]["activeMigration"]["optimizeRulePriority"] = "yes"
    errors = validate(obj)
    assert any("whenUnsatisfiable: 'Never' is not one of ['ScaleUpAnyway', 'DoNotScaleUp']" in e for e in errors)
    assert any("activeMigration.optimizeRulePriority: 'yes' is not of type 'boolean'" in e for e in errors)


def test_a_compute_class_cel_rule_is_checked() -> None:
    # GKE's rule: a priority that names node pools may say nothing else (size(dyn(self)) == 1).
    obj = _compute_class()
    obj["spec"]["priorities"][0]["spot"] = True
    [error] = validate(obj)
    assert error.startswith("ComputeClass 'inference-spot-first': <root>.spec.priorities[0]: Invalid value:")


def test_the_compute_class_defaults_fill_required_fields_as_the_api_server_does() -> None:
    obj = _compute_class()
    del obj["spec"]["whenUnsatisfiable"]  # required, with default DoNotScaleUp
    assert validate(obj) == []
    obj["spec"]["activeMigration"] = {}  # optimizeRulePriority: required, default false
    assert validate(obj) == []


def test_a_wrong_cluster_queue_field_fails() -> None:
    obj = _cluster_queue()
    obj["spec"]["admissionChecks"] = ["dws-prov"]  # the v1beta1 field, gone in v1beta2
    [error] = validate(obj)
    assert "'admissionChecks' was unexpected" in error


def test_a_cluster_queue_quota_must_be_a_quantity() -> None:
    obj = _cluster_queue()
    obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]["nominalQuota"] = "340 GiB"
    [error] = validate(obj)
    assert "resourceGroups.0.flavors.0.resources.1.nominalQuota: '340 GiB' does not match" in error


def test_a_cluster_queue_cel_rule_and_list_map_keys_are_checked() -> None:
    obj = _cluster_queue()
    group = obj["spec"]["resourceGroups"][0]
    group["flavors"][0]["resources"].pop()  # every flavor must list every covered resource
    [error] = validate(obj)
    assert "<root>.spec.resourceGroups[0]: Invalid value:" in error
    obj = _cluster_queue()
    flavor = obj["spec"]["resourceGroups"][0]["flavors"][0]
    flavor["resources"][1] = dict(flavor["resources"][0])  # cpu twice
    errors = validate(obj)
    assert any("Duplicate value: {'name': 'cpu'}" in e for e in errors)


def test_an_invalid_object_name_fails() -> None:
    obj = _cluster_queue()
    obj["metadata"]["name"] = "DWS_queue"
    assert validate(obj) == ["ClusterQueue 'DWS_queue': metadata.name: must be a DNS-1123 subdomain (got 'DWS_queue')"]
