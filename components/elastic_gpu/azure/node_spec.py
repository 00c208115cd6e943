"""AKS: one spec of a pool's nodes, built once from the pool's Args and read by every AKS builder.

`PoolNodes` is what all of a pool's nodes share (disk, subnet, kubelet settings, taints, labels, tags): the agent
pools (azure/pools.py) and node auto-provisioning's AKSNodeClass and NodePools (azure/node_provisioning/) read it
instead of the Args. `AksNodeSpec` is one agent pool's nodes (a VM size, zones, a capacity type) on top of it.

The fields of `AksNodeSpec` that set an agent-pool input whose change replaces the pool are marked once, on the
field (`replaces`, elastic_gpu/node_marks.py). From the marks come the agent-pool name digest (`forcing`: such a
change renames the pool, so AKS gets the new pool before the old one is deleted), the replacement rows of
azure/replacement.py, hence docs/day-two.md's replace table, and the inline-pool fields `diff` refuses
(`refused_in_place_inputs`).

What the library does not wrap (an agent-pool input it has no setting for) a program sets with Pulumi's own
`transforms` resource option on the SpotGpuPool/GeneralPool: it reaches the child AgentPools (tests/
test_azure_node_spec.py shows one adding an input); the names of inputs the library owns must stay its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elastic_gpu.azure.network import pool_subnet
from elastic_gpu.gpu_catalog import gpu_spec_labels
from elastic_gpu.node_marks import digest_marks, marked_inputs, replaces
from elastic_gpu.pool_overrides import kubelet_args
from elastic_gpu.pool_types import Capacity
from elastic_gpu.scheduling import (
    AKS_SPOT_LABEL,
    AKS_SPOT_TAINT,
    CAPACITY_LABEL,
    CAPACITY_RESERVED,
    GPU_TAINT,
    NODE_CLASS_GPU,
    Taint,
    node_labels,
)

if TYPE_CHECKING:
    from elastic_gpu.general_pool import GeneralPoolArgs
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

#: KubeletConfiguration key -> the AKS SDK argument that sets it (azure-native containerservice.KubeletConfigArgs).
KUBELET_KEYS: dict[str, str] = {
    "cpuManagerPolicy": "cpu_manager_policy",
    "cpuCFSQuota": "cpu_cfs_quota",
    "cpuCFSQuotaPeriod": "cpu_cfs_quota_period",
    "podPidsLimit": "pod_max_pids",
    "imageGCHighThresholdPercent": "image_gc_high_threshold",
    "imageGCLowThresholdPercent": "image_gc_low_threshold",
    "containerLogMaxFiles": "container_log_max_files",
    "topologyManagerPolicy": "topology_manager_policy",
    "allowedUnsafeSysctls": "allowed_unsafe_sysctls",
    "failSwapOn": "fail_swap_on",
}
#: The OS of every agent pool this library declares (AgentPool osType).
OS_TYPE = "Linux"


@dataclass(frozen=True)
class PoolNodes:
    """What every node of one pool shares, from its Args: the one reading of disk, subnet, kubelet, taints,
    labels and tags that the agent pools and the node auto-provisioning objects consume."""

    pool: str
    disk_size_gib: int
    #: the pool's VNet subnet (its own, else the cluster's; None: the VNet AKS creates)
    vnet_subnet_id: str | None
    #: kubelet settings as azure-native KubeletConfigArgs keywords (KUBELET_KEYS)
    kubelet_config: dict[str, Any]
    #: Azure tags on the node resources (cost allocation)
    tags: dict[str, str]
    #: taints of the pool's on-demand (and reserved) GPU nodes: the GPU taint and the pool's own
    gpu_taints: tuple[Taint, ...] = ()
    #: labels on top of the pool's own: the GPU spec's and the program's
    extra_labels: dict[str, str] = field(default_factory=dict)

    @property
    def spot_taints(self) -> tuple[Taint, ...]:
        """Taints of its spot nodes: AKS adds its spot taint to every spot node (spot-node-pool.md)."""
        return tuple(sorted({*self.gpu_taints, AKS_SPOT_TAINT}))

    def gpu_labels(self, spot: bool) -> dict[str, str]:
        """A GPU node's labels: pool, node class, capacity, the GPU spec's and the program's."""
        return node_labels(pool=self.pool, node_class=NODE_CLASS_GPU, spot=spot) | self.extra_labels

    def reserved_labels(self) -> dict[str, str]:
        """A reserved agent pool's labels: an on-demand GPU node's, its capacity label saying "reserved"."""
        return self.gpu_labels(spot=False) | {CAPACITY_LABEL: CAPACITY_RESERVED}

    def agent_pool_labels(self, spot: bool) -> dict[str, str]:
        """A GPU agent pool's labels; a spot one declares AKS's own spot label too, so the spec matches the
        nodes (the azurerm provider documents declaring it on spot pools: node_labels)."""
        labels = self.gpu_labels(spot)
        return labels | {AKS_SPOT_LABEL: AKS_SPOT_TAINT.value} if spot else labels


def pool_nodes(name: str, args: GeneralPoolArgs | SpotGpuPoolArgs) -> PoolNodes:
    """The pool's node settings, read from its Args once."""
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

    gpu_taints: tuple[Taint, ...] = ()
    extra_labels = dict(args.extra_labels)
    if isinstance(args, SpotGpuPoolArgs):
        gpu_taints = tuple(sorted({GPU_TAINT, *args.extra_taints}))
        extra_labels = gpu_spec_labels(args.gpu_spec) | args.extra_labels
    return PoolNodes(
        pool=name,
        disk_size_gib=args.disk_size_gib,
        vnet_subnet_id=pool_subnet(args),
        kubelet_config=kubelet_args(args, KUBELET_KEYS),
        tags=dict(args.tags),
        gpu_taints=gpu_taints,
        extra_labels=extra_labels,
    )


#: terraform-provider-azurerm internal/services/containers/kubernetes_cluster_node_pool_resource.go: the schema's
#: ForceNew attributes (priority, eviction_policy, spot_max_price, os_type, gpu_instance,
#: capacity_reservation_group_id), and the ones resourceKubernetesClusterNodePoolUpdate rotates the pool for
#: (cycleNodePoolProperties, with temporary_name_for_rotation) because AKS refuses to change them in place.
_AZURERM_FORCE_NEW = "azurerm kubernetes_cluster_node_pool: ForceNew"
_AZURERM_ROTATES = "azurerm kubernetes_cluster_node_pool: rotates the pool (temporary_name_for_rotation); AKS refuses"


@dataclass(frozen=True, kw_only=True)
class AksNodeSpec:
    """One AKS agent pool's nodes, as declared: a VM size in some zones, of one capacity type.

    The fields that set an AgentPool input whose change replaces the pool are marked (`replaces`,
    elastic_gpu/node_marks.py) and declared in the order of the replace table (docs/day-two.md); the ones AKS
    refuses to change in place are `refused_in_place`, which is also what `diff` refuses on a pool inline in its
    cluster (azure/replacement.py INLINE_POOL_REFUSED_FIELDS)."""

    #: our pool's name stem (agent_pool_stem) and kind letter; the AKS name adds a digest of `forcing`
    stem: str
    kind: str
    capacity: Capacity
    vm_size: str = field(metadata=replaces("vmSize", source=_AZURERM_ROTATES, refused_in_place=True))
    zones: list[str] = field(metadata=replaces("availabilityZones", source=_AZURERM_ROTATES, refused_in_place=True))
    disk_size_gib: int = field(metadata=replaces("osDiskSizeGB", source=_AZURERM_ROTATES, refused_in_place=True))
    #: the OS of every agent pool this library declares (not in the digest: it never varies)
    os_type: str = field(
        default=OS_TYPE, init=False, metadata=replaces("osType", source=_AZURERM_FORCE_NEW, digest="never")
    )
    #: Spot for spot nodes, Regular for the rest (from `capacity`)
    scale_set_priority: str = field(init=False, metadata=replaces("scaleSetPriority", source=_AZURERM_FORCE_NEW))
    #: Delete (not Deallocate) for spot: an evicted spot VM stops costing disk and frees quota; None for the rest
    #: (not in the digest: it follows scaleSetPriority)
    scale_set_eviction_policy: str | None = field(
        init=False, metadata=replaces("scaleSetEvictionPolicy", source=_AZURERM_FORCE_NEW, digest="never")
    )
    spot_max_price: float | None = field(default=None, metadata=replaces("spotMaxPrice", source=_AZURERM_FORCE_NEW))
    #: a MIG profile: this library sets none (the GPU is whole, shared by time-slicing if at all)
    gpu_instance_profile: str | None = field(
        default=None,
        init=False,
        metadata=replaces("gpuInstanceProfile", source=_AZURERM_FORCE_NEW, digest="when_set"),
    )
    #: the pool's own VNet subnet (vnetSubnetID) and kubelet settings (KubeletConfigArgs keywords)
    vnet_subnet_id: str | None = field(
        default=None,
        metadata=replaces("vnetSubnetID", source=_AZURERM_ROTATES, digest="when_set", refused_in_place=True),
    )
    kubelet_config: dict[str, Any] = field(
        default_factory=dict,
        metadata=replaces("kubeletConfig", source=_AZURERM_ROTATES, digest="when_set", refused_in_place=True),
    )
    #: the reserved tier's capacity reservation group (capacity "reserved": Regular VMs drawn from the group).
    #: AKS takes a pool's group when it creates the pool (`az aks nodepool add --crg-id`; Azure/AKS#5943 asks to
    #: change it on an existing pool); azurerm's capacity_reservation_group_id is ForceNew
    #: (terraform-provider-azurerm #17395).
    capacity_reservation_group_id: str | None = field(
        default=None,
        metadata=replaces("capacityReservationGroupID", source=_AZURERM_FORCE_NEW, digest="when_set"),
    )
    min_count: int
    max_count: int
    labels: dict[str, str]
    taints: list[Taint]
    #: price rank among the pool's agent pools of this capacity (0 = cheapest)
    rank: int = 0
    #: tags on top of the pool's own: the autoscaler's node-template resources (azure/node_template.py)
    node_template_tags: dict[str, str] = field(default_factory=dict)
    #: False: a fixed count of min_count nodes (under node auto-provisioning no agent pool autoscales)
    autoscaled: bool = True

    def __post_init__(self) -> None:
        spot = self.capacity == "spot"
        object.__setattr__(self, "scale_set_priority", "Spot" if spot else "Regular")
        object.__setattr__(self, "scale_set_eviction_policy", "Delete" if spot else None)


#: The agent pool's URL parameters (azure-native replaces a resource on its path's parameters).
URL_PARAMETERS = ("agentPoolName", "resourceName", "resourceGroupName")
#: The agent-pool inputs AKS refuses to change in place that no spec field sets (the library's agent pools leave
#: them at AKS's defaults; a program's own ManagedCluster may set them on its inline pools): the rest of azurerm's
#: cycleNodePoolProperties (kubernetes_cluster_node_pool_resource.go resourceKubernetesClusterNodePoolUpdate:
#: os_disk_type, kubelet_disk_type, max_pods, pod_subnet_id, linux_os_config, host_encryption_enabled,
#: node_public_ip_enabled, fips_enabled, ultra_ssd_enabled, snapshot_id), by their AgentPool names.
REFUSED_IN_PLACE_UNSET = (
    "osDiskType",
    "kubeletDiskType",
    "maxPods",
    "podSubnetID",
    "linuxOSConfig",
    "enableEncryptionAtHost",
    "enableNodePublicIP",
    "enableFIPS",
    "enableUltraSSD",
    "creationData",
)


def forcing(spec: AksNodeSpec) -> dict[str, object]:
    """The values of the spec's replacing inputs its agent-pool name digests, by input name."""
    return {mark.input: list(value) if isinstance(value, tuple | list) else value for mark, value in digest_marks(spec)}


def refused_in_place_inputs() -> tuple[str, ...]:
    """Every agent-pool input AKS refuses to change in place: the spec's marked ones, then those it never sets."""
    return (*marked_inputs(AksNodeSpec, "replaces", refused_in_place=True), *REFUSED_IN_PLACE_UNSET)
