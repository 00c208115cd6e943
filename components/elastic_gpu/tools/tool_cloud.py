"""`ToolCloud`: one cloud as the offline tools ask for it, whole. It sits at the top of the tools.

Each layer of the tools declares what it asks of a cloud in its own terms, and looks the clouds up in the registry
(tools/clouds.py, the bottom) through that view; `ToolCloud` extends every view, and each cloud's class
(`elastic_gpu/tools/<cloud>/cloud.py`, exported as `TOOLS: ToolCloud`) is checked against it by the type checker,
so a cloud that lacks a member any layer asks for fails `make typecheck`. The layers, bottom up (each imports
only those below it):
- `CloudTools` (tools/clouds.py): the deploy provider's members, and its replacement rows;
- `ReaderParts` (tools/node_group_view.py): its reader of node groups, as the read model asks for it;
- `MockParts` (tools/offline/cloud_mocks.py): the mock engine's answers and its new account;
- `TimedCloud` (tools/simulation/timings.py): its autoscaler's timing;
- `TemplateParts` (tools/simulation/templates.py): its reader, whole, with its scale-from-zero templates;
- `PackParts` (tools/policy/pack_parts.py): its part of the policy pack.
The optional capabilities are checked with isinstance where they are asked for: `LivePriceSource`
(tools/cost.py), `RunningVersion` (tools/policy/version_rules.py), `OwnProvisioner`, `QueueAdmission` and
`GroupOrder` (tools/simulation/run.py).
"""

from __future__ import annotations

from typing import Protocol

from elastic_gpu.tools.offline.cloud_mocks import MockParts
from elastic_gpu.tools.policy.pack_parts import PackParts
from elastic_gpu.tools.simulation.templates import TemplateParts
from elastic_gpu.tools.simulation.timings import TimedCloud


class ToolCloud(TemplateParts, TimedCloud, MockParts, PackParts, Protocol):
    """One cloud, as the offline tools ask for it: its deploy provider's members, and every layer's."""
