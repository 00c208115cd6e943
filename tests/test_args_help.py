"""help() on every Args class shows each field with its type, default and meaning."""

from __future__ import annotations

import dataclasses
import pydoc
import re

import pytest
from pydantic import BaseModel

import elastic_gpu


def help_text(cls: type) -> str:
    """What help() prints, with pydoc's " |  " margins and line breaks folded into single spaces."""
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    return re.sub(r"\s+", " ", re.sub(r"\n\s*\|", "\n", text))


ARGS = [
    "EksClusterArgs",
    "AksClusterArgs",
    "GkeClusterArgs",
    "GeneralPoolArgs",
    "SpotGpuPoolArgs",
    "ClusterAutoscalerArgs",
    "NvidiaDevicePluginArgs",
    "EksAddonsArgs",
]


@pytest.mark.parametrize("name", ARGS)
def test_help_lists_every_field_with_default_and_meaning(name: str) -> None:
    cls = getattr(elastic_gpu, name)
    text = help_text(cls)
    assert "(undocumented)" not in text
    names = list(cls.model_fields) if issubclass(cls, BaseModel) else [f.name for f in dataclasses.fields(cls)]
    for field in names:
        assert f" {field}: " in text, field


def test_help_shows_the_values_of_defaults() -> None:
    text = help_text(elastic_gpu.ClusterAutoscalerArgs)
    assert "workload_name: str = 'cluster-autoscaler'" in text
    assert "expander: list[Expander] = ['priority', 'least-waste']" in text
    assert "the cluster already runs an autoscaler under that name" in text
    spot = help_text(elastic_gpu.SpotGpuPoolArgs)
    assert "min_size: int = 0" in spot and "cluster: ClusterHandle = required" in spot
    # A setting's meaning is written once, on the settings model the stack file and the Args share.
    assert "Default 0: the pool scales to zero when no GPU pod is pending." in spot
    assert "ami_family: AmiFamily = 'al2023' AWS only:" in spot


COMPONENTS = {
    "SpotGpuPool": ["node_groups", "node_group_names", "cloud_outputs", "workload", "taints"],
    "GeneralPool": ["node_groups", "node_group_ids", "args"],
    "ClusterAutoscaler": ["role", "role_arn", "deployment", "priority_config", "service_account_name"],
    "NvidiaDevicePlugin": ["daemonset", "tolerations"],
    "EksCluster": ["cluster", "node_role", "oidc_provider", "provider", "zones", "subnet_ids", "kubeconfig"],
    "AksCluster": ["cluster", "resource_group", "provider", "location", "autoscaler_profile"],
    "GkeCluster": ["cluster", "provider", "project", "location", "kubernetes_version"],
    "ExistingEksCluster": ["cluster_name", "node_role_arn", "oidc_issuer_url", "kubeconfig"],
    "ExistingAksCluster": ["resource_group_name", "provider"],
    "ExistingGkeCluster": ["project", "zones"],
}


@pytest.mark.parametrize("name", COMPONENTS)
def test_help_on_a_component_lists_its_outputs_not_pulumis_params(name: str) -> None:
    cls = getattr(elastic_gpu, name)
    text = help_text(cls)
    assert ":param str t" not in text  # ComponentResource.__init__'s docstring, meaningless to a user
    assert "Declare the" in text and "Outputs (attribute: type):" in text
    lines = (cls.__doc__ or "").split("Outputs (attribute: type):\n")[1].splitlines()
    for attr in COMPONENTS[name]:
        # "    name: type", then its meaning indented below it
        [i] = [i for i, line in enumerate(lines) if line.startswith(f"    {attr}: ")]
        assert len(lines[i]) > len(f"    {attr}: ") and lines[i + 1].startswith(" " * 8) and lines[i + 1].strip()


RESOURCES = """
import pulumi
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster, GkeCluster, SpotGpuPool,
                         SpotGpuPoolArgs)
eks = EksCluster.existing("a", cluster_name="a", kubernetes_version="1.33", region="us-east-1",
    node_role_arn="arn:aws:iam::123456789012:role/nodes", subnet_ids={"us-east-1a": "subnet-1"},
    oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/x", oidc_provider_url="https://x")
l4 = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=eks, instance_types=["g6.xlarge"], max_size=2,
                                       on_demand_fallback=True))
ca = ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=eks, gpu_pools=[l4], node_selector={"a": "b"}))
gke = GkeCluster.existing("g", cluster_name="g", project="p", location="us-central1", zones=["us-central1-a"],
                          kubernetes_version="1.33")
g2 = SpotGpuPool("g2", SpotGpuPoolArgs(cluster=gke, instance_types=["g2-standard-4"], max_size=2,
                                       on_demand_fallback=True))
pulumi.export("eks", [type(r).__module__ + "." + type(r).__name__ for r in l4.node_groups])
pulumi.export("eksNames", [r.node_group_name for r in l4.node_groups])
pulumi.export("lts", [type(r).__name__ for r in l4.cloud_outputs["launch_templates"]])
pulumi.export("gke", [type(r).__name__ for r in g2.node_groups])
pulumi.export("role", type(ca.role).__name__)
pulumi.export("roleArn", ca.role.arn)
pulumi.export("deployment", ca.deployment.metadata.name)
"""


def test_pool_and_autoscaler_outputs_are_the_resources_themselves(run_program) -> None:
    out = {k: v.value for k, v in run_program(RESOURCES).outputs.items()}
    assert out["eks"] == ["pulumi_aws.eks.node_group.NodeGroup"] * 2  # spot and fallback in one zone
    assert all(name.startswith("a-l4-") for name in out["eksNames"])
    assert out["lts"] == ["LaunchTemplate", "LaunchTemplate"]
    assert out["gke"] == ["NodePool", "NodePool"]  # the node pools, not the ComputeClass
    assert out["role"] == "Role" and out["roleArn"].endswith(":role/ca-role")
    assert out["deployment"] == "cluster-autoscaler"


def public_args_classes() -> list[type]:
    """Every public `*Args` class the library's modules define (the workbench excluded): a new one is covered
    without being listed here."""
    import importlib
    import pkgutil

    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(elastic_gpu.__path__, "elastic_gpu."):
        if info.name.startswith("elastic_gpu.tools") or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for attr, value in vars(module).items():
            if attr.endswith("Args") and isinstance(value, type) and value.__module__ == info.name:
                found[f"{info.name}.{attr}"] = value
    return [found[k] for k in sorted(found)]


def field_names(cls: type) -> list[str]:
    return list(cls.model_fields) if issubclass(cls, BaseModel) else [f.name for f in dataclasses.fields(cls)]


@pytest.mark.parametrize("cls", public_args_classes(), ids=lambda c: c.__name__)
def test_signature_names_the_python_fields_with_types_and_documented_defaults(cls: type) -> None:
    import inspect

    if issubclass(cls, BaseModel):
        # pydantic sets a signature again when it completes a deferred model (on first use): still ours after.
        cls.model_rebuild()
    signature = inspect.signature(cls)
    assert list(signature.parameters) == field_names(cls)
    text = str(signature)
    # No validation internals (pydantic's Annotated bounds and regex patterns) and no `<factory>` placeholder.
    for leak in ("Annotated", "pattern=", "Ge(", "MinLen", "<factory>", "typing."):
        assert leak not in text, (leak, text)
    for name, param in signature.parameters.items():
        assert param.annotation is not inspect.Parameter.empty, name
    # help() prints the same first line.
    assert f"{cls.__name__}{text}" in help_text(cls)


def test_spot_gpu_pool_args_signature_is_the_constructor_a_program_calls() -> None:
    import inspect

    text = str(inspect.signature(elastic_gpu.SpotGpuPoolArgs))
    assert "cluster: ClusterHandle" in text and "max_size: int" in text and "min_size: int = 0" in text
    assert "maxSize" not in text and "minSize" not in text
    # Documented defaults as values: a factory's value, not `<factory>`.
    assert "extra_taints: list[Taint] = []" in text
    autoscaler = str(inspect.signature(elastic_gpu.ClusterAutoscalerArgs))
    assert "expander: list[Expander] = ['priority', 'least-waste']" in autoscaler
    assert "scale_down_unneeded_time: Duration = '10m'" in autoscaler
    assert "tags: dict[str, str] = {}" in str(inspect.signature(elastic_gpu.EksClusterArgs))
    # What the signature shows is what the constructor takes.
    with pytest.raises(TypeError, match="maxSize"):
        elastic_gpu.SpotGpuPoolArgs(cluster=None, instance_types=["g6.xlarge"], maxSize=4)  # type: ignore[call-arg]
