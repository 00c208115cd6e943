"""What a built pool tells the Kubernetes-side components (cloud-neutral)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import pulumi
import pulumi_kubernetes as k8s

from elastic_gpu.cluster_handle import ClusterHandle
from elastic_gpu.scheduling import Taint

Capacity = Literal["reserved", "spot", "on-demand"]


@dataclass(frozen=True)
class NodeGroupRef:
    """One cloud node group (EKS node group, AKS agent pool, GKE node pool) of a pool."""

    #: the cloud's name of the group; an Output where it derives from an Output cluster name
    name: pulumi.Input[str]
    capacity: Capacity
    #: regex over the cloud's node-group name, as the priority expander matches it
    name_regex: pulumi.Input[str]
    #: rank among the pool's groups of the same capacity, cheapest 0: the priority expander
    #: ranks them so, instead of drawing between them at random
    rank: int = 0
    #: the group as a self-run autoscaler lists it (EKS: the Auto Scaling group's name, known once EKS
    #: made it) with its bounds: `--nodes=<min_size>:<max_size>:<autoscaler_group>`; None elsewhere
    autoscaler_group: pulumi.Input[str] | None = None
    min_size: int = 0
    max_size: int = 0


@dataclass
class BuiltPool:
    """What a per-cloud builder returns to its pool component."""

    node_groups: list[NodeGroupRef]
    taints: list[Taint]
    labels: dict[str, str]
    #: the cloud's node-group resources (EKS node groups, AKS agent pools, GKE node pools)
    resources: list[pulumi.Resource] = field(default_factory=list)
    #: their ids; default: the ids of `resources`
    node_group_ids: list[pulumi.Output[str]] | None = None
    #: cloud-specific outputs, e.g. AWS: asg_names, launch_template_ids, node_role_arn
    cloud_outputs: dict[str, Any] = field(default_factory=dict)
    #: the node image runs its own NVIDIA device plugin (e.g. Bottlerocket NVIDIA)
    ships_device_plugin: bool = False
    #: the node groups alone, when `resources` holds more (a GKE ComputeClass); default: `resources`
    nodes: list[pulumi.Resource] | None = None

    @property
    def node_resources(self) -> list[pulumi.Resource]:
        """What a Kubernetes object that needs these nodes depends on."""
        return list(self.resources if self.nodes is None else self.nodes)


@runtime_checkable
class PoolProvisioner(Protocol):
    """A provisioner that makes a GPU pool's nodes itself (Karpenter on EKS: `Karpenter(...).nodes`), in
    place of the node groups the cluster-autoscaler scales. A SpotGpuPool with one declares its objects."""

    def build_pool(self, name: str, args: Any, parent: pulumi.Resource) -> BuiltPool:
        """The pool's objects (children of `parent`), as a node-group builder returns them."""
        ...


class PoolComponent(pulumi.ComponentResource):
    """What GeneralPool and SpotGpuPool share: the outputs a user wires on (listed by `help()`)."""

    pool_name: str
    """The pool's name: its nodes' `elastic-gpu.io/pool` label, the stem of its children's names."""
    node_groups: list[pulumi.Resource]
    """The cloud's node-group resources, to pass to `depends_on` or read any output of: EKS
    `aws.eks.NodeGroup`, AKS `containerservice.AgentPool`, GKE `gcp.container.NodePool` (one per zone,
    VM size and capacity, as the pool splits)."""
    node_group_resources: list[pulumi.Resource]
    """Every cloud-side resource of the pool: the node groups and, on GKE with a fallback, its ComputeClass."""
    node_group_names: pulumi.Output[list[str]]
    """The cloud's node-group names (they follow an Output cluster name)."""
    node_group_ids: pulumi.Output[list[str]]
    """The node groups' provider ids."""
    node_group_refs: list[NodeGroupRef]
    """Each node group's name, capacity and name regex, as the ClusterAutoscaler ranks them."""
    taints: list[Taint]
    """The taints the pool's nodes carry (a pod tolerates them to land there)."""
    labels: dict[str, str]
    """The labels of the pool's (first) node group."""
    cloud_outputs: dict[str, Any]
    """Per cloud. AWS: `asg_names` (the Auto Scaling groups EKS made), `launch_templates` (the
    `aws.ec2.LaunchTemplate` resources) and `launch_template_ids`, `node_role_arn` (the nodes' IAM role).
    AKS: `kubelet_identity_object_id` (the identity the nodes act as)."""

    def _publish(self, name: str, built: BuiltPool) -> None:
        self.pool_name = name
        self.node_group_refs = built.node_groups
        self.taints = built.taints
        self.labels = built.labels
        self.node_group_resources = list(built.resources)
        self.node_groups = built.node_resources
        #: the cloud node groups alone: Kubernetes objects that need these nodes depend on them
        self.nodes: list[pulumi.Resource] = built.node_resources
        self.node_group_names = pulumi.Output.all(*[g.name for g in built.node_groups])
        ids = built.node_group_ids if built.node_group_ids is not None else [r.id for r in built.resources]  # type: ignore[attr-defined]
        self.node_group_ids = pulumi.Output.all(*ids)
        self.cloud_outputs = dict(built.cloud_outputs)
        self.register_outputs(
            {"node_group_names": self.node_group_names, "node_group_ids": self.node_group_ids, **self.cloud_outputs}
        )


def provisioner_node_pool_names(pool: PoolComponent) -> list[pulumi.Output[Any]]:
    """The metadata.name of each NodePool of a pool whose nodes a provisioner makes (Karpenter, AKS node
    auto-provisioning): the pool's resources after its node class."""
    names = []
    for r in pool.node_group_resources[1:]:
        assert isinstance(r, k8s.apiextensions.CustomResource), "a provisioner's NodePools are custom resources"
        # pulumi-kubernetes' CustomResource declares no `metadata` attribute (apiextensions/CustomResource.py):
        # registering the resource sets it, an Output of the object's metadata.
        metadata: pulumi.Output[dict[str, Any]] = r.metadata  # type: ignore[attr-defined]
        names.append(metadata["name"])
    return names


__all__ = ["BuiltPool", "Capacity", "ClusterHandle", "NodeGroupRef", "PoolComponent", "PoolProvisioner"]
