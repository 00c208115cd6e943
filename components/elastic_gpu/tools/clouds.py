"""The tools' registry of clouds, and `CloudTools`: what any layer of the tools may ask of a cloud in the
library's own terms.

The library's deploy protocol (`CloudProvider`, elastic_gpu/provider.py) is what a `pulumi up` asks of a cloud; it
knows nothing of the tools. The tools (preview, policy, simulate, cost, diff) ask more, layer by layer, and each
layer declares what it asks in its own terms (interface segregation), so that this registry sits at the bottom of
the tools and every layer may look a cloud up without importing the layers above it:
- `CloudTools` here: a `CloudProvider` with its replacement rows (elastic_gpu/tools/replacement.py);
- `ReaderParts` (tools/node_group_view.py): how its node groups are read from captured resources;
- `MockParts` (tools/offline/cloud_mocks.py): the mock engine's answers and its new account;
- `TimedCloud` (tools/simulation/timings.py), `TemplateParts` (tools/simulation/templates.py): its autoscaler's
  timing and its scale-from-zero templates;
- `PackParts` (tools/policy/pack_parts.py): its part of the policy pack;
- optional capabilities, each where it is asked for: `LivePriceSource` (tools/cost.py), `RunningVersion`
  (tools/policy/version_rules.py), `OwnProvisioner`, `QueueAdmission` and `GroupOrder` (tools/simulation/run.py).
`ToolCloud` (tools/tool_cloud.py), at the top of the tools, extends them all; each cloud's class
(`elastic_gpu/tools/<cloud>/cloud.py`, exported as `TOOLS`) is checked against it by the type checker, which is
what makes each layer's view of a registered cloud sound.

The registry follows the library's (`elastic_gpu.clouds.REGISTRY`: its names, its order, its error for an unknown
name); `REGISTRY` here maps each name to the module that exports its tools. Tests may add a cloud of their own to
both (monkeypatch.setitem).

Importing a cloud's tools loads no cloud SDK: its methods import the cloud's modules when called, by full name
(elastic_gpu/provider.py says why).
"""

from __future__ import annotations

from importlib import import_module
from typing import Protocol

from elastic_gpu import clouds
from elastic_gpu.clouds import ReplacementRows
from elastic_gpu.provider import CloudProvider

#: cloud name -> the module that exports its tools as `TOOLS` (`elastic_gpu/tools/<cloud>/cloud.py`).
REGISTRY: dict[str, str] = {
    "aws": "elastic_gpu.tools.aws.cloud",
    "azure": "elastic_gpu.tools.azure.cloud",
    "gcp": "elastic_gpu.tools.gcp.cloud",
}


class CloudTools(CloudProvider, Protocol):
    """One cloud as the registry hands it to any layer of the tools: its deploy provider's members, and those of
    its tools' members that speak only the library's types. A layer that asks more views the cloud through its own
    protocol, which extends this one."""

    def replacement(self) -> ReplacementRows:
        """Its replacement rows: read when elastic_gpu/tools/replacement.py loads (diff, docs/day-two.md's table)."""
        ...


def get_cloud(name: str) -> CloudTools:
    """The tools of a cloud by name; an unknown name is the library registry's ConfigError."""
    clouds.get_cloud(name)  # the name's check, and its error, are the library registry's
    tools: CloudTools = import_module(REGISTRY[name]).TOOLS
    return tools


def all_clouds() -> list[CloudTools]:
    """Every cloud's tools, in the library registry's order."""
    return [get_cloud(name) for name in clouds.REGISTRY]
