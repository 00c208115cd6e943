"""The cluster side of auto-provisioning: node auto-provisioning on, with resource limits.

GKE applies the cluster's resource limits to every node, in auto-created node pools and in the
others ("Any resource limits that you set for the cluster when you enable node auto-provisioning
also apply to the node pools that GKE creates for ComputeClasses", how-to/node-auto-provisioning;
the provider: "These limits will apply to node pool autoscaling in addition to node
auto-provisioning", pulumi_gcp ClusterClusterAutoscalingArgs.resource_limits). So the limits are
the sum over every pool's largest node count:

- a GPU pool under a ComputeClass: (maxSize + fallbackMaxSize) nodes, each with the pool's GPUs and
  the vCPUs and memory of its largest eligible machine type;
- a queued-provisioning pool (its own node pool): maxSize nodes of its machine type;
- the general pool: maxSize nodes of its largest machine type.

`cpu` and `memory` limits are required to enable node auto-provisioning (pulumi_gcp: "Resource limits
for `cpu` and `memory` must be defined"); a GPU type without a limit is never auto-created.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pulumi_gcp as gcp

from elastic_gpu.gcp.autoprovisioning.compute_class import instance_types_eligible, planned_nodes
from elastic_gpu.gcp.config_rules import DEFAULT_BOOT_DISK_TYPE, boot_disk_type
from elastic_gpu.gcp.node_config import OAUTH_SCOPES
from elastic_gpu.gpu_catalog import GpuSpec, gpu_instance_type

if TYPE_CHECKING:
    from elastic_gpu.config import StackConfig

#: GB of memory per vCPU of GCE's predefined machine types by type, N1 apart
#: (cloud.google.com/compute/docs/general-purpose-machines: standard 4 GB/vCPU, highmem 8, highcpu 1;
#: N1 standard 3.75, highmem 6.5, highcpu 0.9).
GB_PER_VCPU = {"standard": 4.0, "highmem": 8.0, "highcpu": 1.0}
N1_GB_PER_VCPU = {"standard": 3.75, "highmem": 6.5, "highcpu": 0.9}
#: `<series>-<type>-<vCPUs>`: a predefined machine type whose shape follows from its name.
PREDEFINED = re.compile(r"^(?P<series>[a-z0-9]+)-(?P<type>standard|highmem|highcpu)-(?P<vcpus>[0-9]+)$")
#: Auto-created nodes: the node pools' disk type (gcp/config_rules.py boot_disk_type: a Hyperdisk-only series
#: such as A3 Ultra or A4 where every machine NAP may create is one); secure boot and integrity monitoring
#: (GKE's shielded node defaults for new node pools); GKE repairs and upgrades them.


@dataclass(frozen=True)
class AutoProvisioningLimits:
    """The cluster-wide caps node auto-provisioning works within (ClusterAutoscaling.resourceLimits)."""

    cpu: int
    """vCPUs of every node of the cluster together."""
    memory_gb: int
    """GB of memory of every node together."""
    gpus: dict[str, int] = field(default_factory=dict)
    """GPUs per GKE accelerator type (`nvidia-l4`); a type without a limit is never auto-created."""
    disk_type: str = DEFAULT_BOOT_DISK_TYPE
    """Default "pd-balanced": the boot disk type of node pools GKE auto-creates without a ComputeClass, the type
    every machine they may be takes (elastic_gpu/gcp/config_rules.py BOOT_DISK_TYPES: "hyperdisk-balanced" when
    all are A3 Ultra or A4); a ComputeClass priority sets its own machines' type."""

    def resource_limits(self) -> list[gcp.container.ClusterClusterAutoscalingResourceLimitArgs]:
        limits = [
            gcp.container.ClusterClusterAutoscalingResourceLimitArgs(resource_type="cpu", minimum=0, maximum=self.cpu),
            gcp.container.ClusterClusterAutoscalingResourceLimitArgs(
                resource_type="memory", minimum=0, maximum=self.memory_gb
            ),
        ]
        return limits + [
            gcp.container.ClusterClusterAutoscalingResourceLimitArgs(resource_type=t, minimum=0, maximum=n)
            for t, n in sorted(self.gpus.items())
        ]


def machine_shape(machine_type: str, spec: GpuSpec | None = None) -> tuple[int, float] | None:
    """(vCPUs, memory GB) of a GCE machine type: the GPU catalog's row (or `spec`'s), else a predefined type's
    name."""
    row = gpu_instance_type("gcp", machine_type, spec)
    if row is not None:
        return row.vcpus, float(row.memory_gib)
    m = PREDEFINED.match(machine_type)
    if m is None:
        return None
    per_vcpu = (N1_GB_PER_VCPU if m["series"] == "n1" else GB_PER_VCPU)[m["type"]]
    return int(m["vcpus"]), int(m["vcpus"]) * per_vcpu


def _gpus_per_node(instance_type: str, gpus_per_node: int, gpus_set: bool, spec: GpuSpec | None = None) -> int:
    row = gpu_instance_type("gcp", instance_type, spec)
    assert row is not None, "validated before use"
    return gpus_per_node if row.gpu_counts and gpus_set else row.gpus


def limits_problems(cfg: StackConfig) -> list[str]:
    """Machine types whose shape the limits cannot be summed from (a custom type of the general pool)."""
    return [
        f"generalPool.instanceTypes[{i}]: {t!r}: node auto-provisioning's cpu and memory limits cover every node, "
        "and this machine type's shape is unknown; allowed: a predefined type <series>-standard|highmem|highcpu-<vCPUs>"
        for i, t in enumerate(cfg.general_pool.instance_types)
        if machine_shape(t) is None
    ]


def limits_for(cfg: StackConfig) -> AutoProvisioningLimits:
    """The limits that let every pool reach its largest size, and no more (see the module docstring)."""
    from elastic_gpu.config import gpu_spec

    cpu, memory = 0.0, 0.0
    gpus: dict[str, int] = {}
    disks = {boot_disk_type(t) for t in cfg.general_pool.instance_types}
    shapes = [s for t in cfg.general_pool.instance_types if (s := machine_shape(t))]
    cpu += cfg.general_pool.max_size * max(s[0] for s in shapes)
    memory += cfg.general_pool.max_size * max(s[1] for s in shapes)
    for pool in cfg.gpu_pools:
        types = cfg.instance_types(pool)
        spec = gpu_spec(pool)
        count = _gpus_per_node(types[0], pool.gpus_per_node, "gpus_per_node" in pool.model_fields_set, spec)
        if pool.queued_provisioning:
            types, nodes = types[:1], pool.max_size
        else:
            types = instance_types_eligible(types, count, spec)
            nodes = planned_nodes(pool)
        disks |= {boot_disk_type(t) for t in types}
        shapes = [s for t in types if (s := machine_shape(t, spec))]
        cpu += nodes * max(s[0] for s in shapes)
        memory += nodes * max(s[1] for s in shapes)
        row = gpu_instance_type("gcp", types[0], spec)
        assert row is not None and row.accelerator, "validated before use"
        gpus[row.accelerator] = gpus.get(row.accelerator, 0) + nodes * count
    # One disk type for every auto-created pool: the one all their machines take, else the default (each
    # GPU pool's ComputeClass names its own machines' type).
    disk = disks.pop() if len(disks) == 1 else DEFAULT_BOOT_DISK_TYPE
    return AutoProvisioningLimits(cpu=math.ceil(cpu), memory_gb=math.ceil(memory), gpus=gpus, disk_type=disk)


def cluster_autoscaling_args(
    limits: AutoProvisioningLimits, zones: list[str], profile: str, service_account: str
) -> gcp.container.ClusterClusterAutoscalingArgs:
    """Node auto-provisioning on, within `limits`, in the cluster's zones, with the node pools' defaults:
    the cluster's node service account (without it GKE uses the Compute Engine default account), and
    the node pools' scopes, disk and management. (The nodes' network tag is the cluster's
    nodePoolAutoConfig, elastic_gpu/gcp/cluster.py.)"""
    return gcp.container.ClusterClusterAutoscalingArgs(
        enabled=True,
        autoscaling_profile=profile,
        resource_limits=limits.resource_limits(),
        auto_provisioning_locations=list(zones),
        auto_provisioning_defaults=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsArgs(
            service_account=service_account,
            oauth_scopes=OAUTH_SCOPES,
            disk_type=limits.disk_type,
            management=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsManagementArgs(
                auto_repair=True, auto_upgrade=True
            ),
            shielded_instance_config=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_integrity_monitoring=True
            ),
        ),
    )
