"""help() on every Args class shows each field with its type, default and meaning."""

from __future__ import annotations

import dataclasses
import pydoc
import re

import pytest

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
    for f in dataclasses.fields(cls):
        assert f" {f.name}: " in text, f.name


def test_help_shows_the_values_of_defaults() -> None:
    text = help_text(elastic_gpu.ClusterAutoscalerArgs)
    assert "workload_name: str = 'cluster-autoscaler'" in text
    assert "expander: list[Expander] = ['priority', 'least-waste']" in text
    assert "the cluster already runs an autoscaler under that name" in text
    spot = help_text(elastic_gpu.SpotGpuPoolArgs)
    assert "min_size: int = 0" in spot and "cluster: ClusterHandle = required" in spot
