"""What a built pool tells the Kubernetes-side components (cloud-neutral)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

import pulumi

from elastic_gpu.scheduling import Taint

Capacity = Literal["spot", "on-demand"]


@dataclass(frozen=True)
class NodeGroupRef:
    """One cloud node group (EKS node group, AKS agent pool, GKE node pool) of a pool."""

    name: str
    capacity: Capacity
    #: regex over the cloud's node-group name, as the priority expander matches it
    name_regex: str
    #: rank among the pool's groups of the same capacity, cheapest 0: the priority expander
    #: ranks them so, instead of drawing between them at random
    rank: int = 0


@dataclass
class BuiltPool:
    """What a per-cloud builder returns to its pool component."""

    node_groups: list[NodeGroupRef]
    taints: list[Taint]
    labels: dict[str, str]
    resources: list[pulumi.Resource] = field(default_factory=list)
    #: the node image runs its own NVIDIA device plugin (e.g. Bottlerocket NVIDIA)
    ships_device_plugin: bool = False


class ClusterHandle(Protocol):
    """What pools need from a cluster component: every cloud's cluster provides it."""

    cloud: str

    @property
    def zones(self) -> list[str]: ...

    @property
    def kubernetes_version(self) -> str: ...
