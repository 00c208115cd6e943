"""The mock engine's answers: shaped like the cloud's, and deterministic (two previews are identical)."""

from __future__ import annotations

from pulumi.output import Unknown

from elastic_gpu.tools.aws.mocks import _eks_node_group
from elastic_gpu.tools.offline.mocks import MOCK_UUID


def _asg_name(outputs: dict) -> str:
    return outputs["resources"][0]["autoscalingGroups"][0]["name"]


def test_eks_asg_is_named_after_the_node_group_as_eks_does() -> None:
    assert _asg_name(_eks_node_group("res", {"nodeGroupName": "gpu-t4-spot"})) == f"eks-gpu-t4-spot-{MOCK_UUID}"


def test_eks_asg_name_falls_back_to_the_resource_name_when_the_group_name_is_unknown_or_absent() -> None:
    assert _asg_name(_eks_node_group("res", {"nodeGroupName": Unknown()})) == f"eks-res-{MOCK_UUID}"
    assert _asg_name(_eks_node_group("res", {})) == f"eks-res-{MOCK_UUID}"
