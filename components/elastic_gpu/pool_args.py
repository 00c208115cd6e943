"""The pools' Args, and what the pool components ask of a cloud: `PoolBuilder` and `PoolCloud`.

`GeneralPoolArgs` and `SpotGpuPoolArgs` are declared here, below the components (elastic_gpu/general_pool.py,
elastic_gpu/spot_gpu_pool.py, which re-export them: import them from there or from `elastic_gpu`), so that the
builder record whose callbacks take them, and the program's preflight that reads them, import them from below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import pulumi
from pydantic import Field

from elastic_gpu.args_doc import documented
from elastic_gpu.cloud_facts import RegisteredCloud
from elastic_gpu.cluster_handle import cloud_provider
from elastic_gpu.gpu_catalog import GpuSpec, gpu_instance_type
from elastic_gpu.pool_overrides import NodeOverrides
from elastic_gpu.pool_types import BuiltPool, ClusterHandle, PoolProvisioner
from elastic_gpu.scheduling import Taint
from elastic_gpu.settings import GeneralPoolSettings, GpuPoolArgsSettings
from elastic_gpu.workload import WorkloadContract


@documented
class GeneralPoolArgs(NodeOverrides, GeneralPoolSettings):
    """The general pool's settings (elastic_gpu.settings.GeneralPoolSettings, a stack file's `generalPool`),
    the nodes' own (NodeOverrides), and what only a program gives; keyword arguments."""

    model_config = NodeOverrides.model_config

    cluster: ClusterHandle
    """The cluster handle the pool joins (EksCluster, AksCluster, GkeCluster or an existing one)."""
    extra_labels: dict[str, str] = Field(default_factory=dict)
    """Node labels on top of the pool's own (elastic-gpu.io/pool, node-class, capacity)."""
    tags: dict[str, str] = Field(default_factory=dict)
    """Tags/labels on the cloud resources (cost allocation)."""


@documented
class SpotGpuPoolArgs(NodeOverrides, GpuPoolArgsSettings):
    """A GPU pool's settings (elastic_gpu.settings.GpuPoolSettings, a stack file's `gpuPools[]`, each cloud's
    own among them), the nodes' own (NodeOverrides), and what only a program gives; keyword arguments."""

    model_config = NodeOverrides.model_config

    cluster: ClusterHandle
    """The cluster component (EksCluster, ...) the pool joins."""
    instance_types: list[str]
    """GPU instance types (several diversify the spot request); all with one GPU count."""
    zones: list[str] | None = None
    """Default: the cluster's zones."""
    extra_taints: list[Taint] = Field(default_factory=list)
    """Taints on top of the GPU taint (which is always there); the device plugin tolerates them."""
    extra_labels: dict[str, str] = Field(default_factory=dict)
    """Node labels on top of the pool's own (GPU, pool, node class, capacity, accelerator)."""
    gpu_spec: GpuSpec | None = None
    """The GPU of the instance_types the catalog (elastic_gpu/gpu_catalog.py) lacks: model (a catalog GPU
    key), count per node, vCPUs and memory GiB, as the cloud's instance-type page gives them. Default None:
    at preview the cloud's API describes them (EKS: EC2 DescribeInstanceTypes, GKE: Compute Engine machine
    types; AKS has no such invoke), else every type must be in the catalog. The nodes carry it as the
    elastic-gpu.io/gpu-spec label, so every tool that reads the stack knows their GPU."""
    provisioner: PoolProvisioner | None = None
    """Default None: the cloud's node groups, scaled by the ClusterAutoscaler. A provisioner that makes the
    nodes itself (EKS: `Karpenter(...).nodes`) declares the pool's objects instead (no node groups)."""
    gpu_sharing_replicas: int = 1
    """Pods per physical GPU when the device plugin time-slices (scales the advertised GPU count)."""
    tags: dict[str, str] = Field(default_factory=dict)
    """Tags/labels on the cloud resources (cost allocation)."""

    @property
    def pool_zones(self) -> list[str]:
        return list(self.zones or self.cluster.zones)

    @property
    def pool_per_zone(self) -> bool:
        """per_zone, or the cluster's cloud's default (ConfigRules.default_per_zone) when it is unset."""
        if self.per_zone is not None:
            return self.per_zone
        return cloud_provider(self.cluster).config_rules().default_per_zone

    @property
    def fallback_promise(self) -> float | None:
        """max_minutes_to_fallback, or the cloud's default; None without a fallback."""
        if not self.on_demand_fallback:
            return None
        if self.max_minutes_to_fallback is not None:
            return float(self.max_minutes_to_fallback)
        return float(pool_cloud(self.cluster).pool_builder().default_max_minutes_to_fallback)

    @property
    def gpus_per_node(self) -> int:
        row = gpu_instance_type(self.cluster.cloud, self.instance_types[0], self.gpu_spec)
        assert row is not None, "validated before use"
        return self.gpu_count or row.gpus

    @property
    def advertised_gpus_per_node(self) -> int:
        """What the device plugin advertises as nvidia.com/gpu per node."""
        return self.gpus_per_node * self.gpu_sharing_replicas

    @property
    def accelerator(self) -> str | None:
        """The accelerator label's value: the one GPU model of the types; None with mixed_gpu_models
        and types of several models (no label then: it would be wrong on some nodes)."""
        rows = [gpu_instance_type(self.cluster.cloud, t, self.gpu_spec) for t in self.instance_types]
        labels = {row.model.accelerator_label for row in rows if row is not None}
        assert labels, "validated before use"
        return labels.pop() if len(labels) == 1 else None


# --- what the pool components ask of a cloud (part of `CloudProvider`, elastic_gpu/provider.py) ---------------


@dataclass(frozen=True)
class PoolBuilder:
    """The builders of the cloud's node groups, which `GeneralPool` and `SpotGpuPool` call after validating."""

    #: the problems of the node overrides (AMI, disk, labels) a pool component's Args set on this cloud
    override_problems: Callable[[str, GeneralPoolArgs | SpotGpuPoolArgs], list[str]]
    #: the problems only this cloud's GPU pool has (name lengths, group counts)
    pool_problems: Callable[[str, SpotGpuPoolArgs], list[str]]
    #: how many node groups a GPU pool makes: (spot groups, on-demand fallback groups); its max and its
    #: fallback's max must cover one node per group
    node_group_counts: Callable[[SpotGpuPoolArgs], tuple[int, int]]
    #: what a pod needs to land on a GPU pool (tolerations, node selector, Job labels)
    workload_contract: Callable[[str, SpotGpuPoolArgs], WorkloadContract]
    #: declare the general pool's, and a GPU pool's, node groups as children of `parent`
    build_general_pool: Callable[[str, GeneralPoolArgs, pulumi.Resource], BuiltPool]
    build_spot_gpu_pool: Callable[[str, SpotGpuPoolArgs, pulumi.Resource], BuiltPool]
    #: the promise a GPU pool with an on-demand fallback makes when its Args set none: minutes to fallback
    default_max_minutes_to_fallback: float


@runtime_checkable
class PoolCloud(RegisteredCloud, Protocol):
    """A cloud as `GeneralPool` and `SpotGpuPool` ask for it: its rules and its node-group builders."""

    def pool_builder(self) -> PoolBuilder:
        """Its node-group builders: called by `GeneralPool` and `SpotGpuPool`."""
        ...


def pool_cloud(cluster: ClusterHandle) -> PoolCloud:
    """The provider of the handle's cloud (cluster_handle.cloud_provider, the edge) as the pools read it: every
    registered provider is a `CloudProvider` (the type checker holds each folder's `PROVIDER` to it), hence a
    PoolCloud."""
    cloud = cloud_provider(cluster)
    if not isinstance(cloud, PoolCloud):
        raise TypeError(f"{cloud!r} lacks the members a pool asks of its cloud (pool_args.PoolCloud)")
    return cloud
