"""AKS in the simulation: each agent pool's scale-from-zero template, made from its `NodeGroupView`
(elastic_gpu/tools/simulation merges every cloud's; the managed autoscaler's clocks are in
elastic_gpu/tools/azure/autoscaler_timing.py).

- AKS (cloudprovider/azure, azure_template.go): the agent pool's VM size (its physical GPUs, unless
  the pool's `k8s.io_cluster-autoscaler_node-template_resources_*` tags, copied to the scale set, say
  otherwise: time-slicing), its node labels and taints, plus what AKS puts on
  every node itself (agent-pool label; on spot pools the scalesetpriority label and taint);
  ephemeral-storage from the OS disk, DiskSizeGB x 1024^3 (processVMSSTemplate). A multi-zone
  pool's template takes a random one of its zones there, so no zone label is modelled.
"""

from __future__ import annotations

from elastic_gpu.scheduling import AKS_SPOT_LABEL, AKS_SPOT_TAINT, EPHEMERAL_STORAGE
from elastic_gpu.tools.azure.reader import AKS_OTHER_MAX_PODS
from elastic_gpu.tools.node_group_view import AUTOSCALED_GROUP, NodeGroupView
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.fit import NodeTemplate
from elastic_gpu.tools.simulation.pod import quantity
from elastic_gpu.tools.simulation.templates import EVICTION_HARD_MEMORY, shape

#: AKS names an agent pool's scale set aks-<pool>-<number>-vmss; the number is a hash we cannot
#: know offline, so a placeholder of the same shape stands in.
AKS_VMSS_NUMBER = "12345678"
AKS_AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
#: What an AKS node keeps (AKS docs, node-resource-reservations, AKS 1.29+): kube-reserved CPU by the
#: host's cores, memory the lesser of 20 MB x maxPods + 50 MB and 25% of the VM's, and 100Mi eviction.
AKS_RESERVED_CPU_MILLICORES = {1: 60, 2: 100, 4: 140, 8: 180, 16: 260, 32: 420, 64: 740}
AKS_RESERVE_SOURCE = "AKS node-resource-reservations: kube-reserved and 100Mi eviction"


def aks_reserve(allocatable: dict[str, float], max_pods: int) -> dict[str, float]:
    cpu, memory = allocatable.get("cpu", 0.0), allocatable.get("memory", 0.0)
    if cpu == float("inf") or memory == float("inf"):
        return {}
    cores = max((c for c in AKS_RESERVED_CPU_MILLICORES if c <= cpu), default=1)
    kube_memory = min(20e6 * max_pods + 50e6, 0.25 * memory)
    return {"cpu": AKS_RESERVED_CPU_MILLICORES[cores] / 1000, "memory": kube_memory + EVICTION_HARD_MEMORY}


def _aks_template(view: NodeGroupView) -> NodeTemplate:
    name = view.name
    labels = dict(view.labels) | {AKS_AGENTPOOL_LABEL: name}
    taints = set(view.taints)
    if view.spot:
        # AKS puts these on every spot node whether the pool declares them or not (spot-node-pool docs).
        labels[AKS_SPOT_LABEL] = AKS_SPOT_TAINT.value
        taints.add(AKS_SPOT_TAINT)
    size = view.instance_types[0] if view.instance_types else "?"
    allocatable = shape("azure", size, view.gpu_spec)
    if view.disk_bytes:
        allocatable[EPHEMERAL_STORAGE] = view.disk_bytes
    # The scale set's node-template resources tags (copied from the agent pool's) override the VM size's.
    for resource, value in view.template_resources.items():
        allocatable[resource] = quantity(value)
    return NodeTemplate(
        name=name,
        resource=view.resource,
        autoscaler_name=f"aks-{name}-{AKS_VMSS_NUMBER}-vmss",
        pool=view.pool,
        capacity="spot" if view.spot else "on-demand",
        instance_type=size,
        labels=labels,
        taints=sorted(taints),
        allocatable=allocatable,
        min_size=view.min_size or 0,
        max_size=view.max_size or 0,
        zones=list(view.zones),
        region=view.region,
        # The autoscaler's Azure template is the raw capacity (azure_template.go:276-277); the node is not.
        reserved=aks_reserve(allocatable, view.max_pods or AKS_OTHER_MAX_PODS),
        reserved_source=AKS_RESERVE_SOURCE,
    )


def node_templates(preview: Preview, views: list[NodeGroupView]) -> list[NodeTemplate]:
    """The agent pools' templates (a ManagedCluster's inline pools come first: it is declared before its pools)."""
    return [_aks_template(v) for v in views if v.kind == AUTOSCALED_GROUP]
