"""AKS in the simulation: each agent pool's scale-from-zero template, and the managed autoscaler's
settings (autoScalerProfile) (elastic_gpu/tools/simulation merges every cloud's).

- AKS (cloudprovider/azure, azure_template.go): the agent pool's VM size (its physical GPUs, unless
  the pool's `k8s.io_cluster-autoscaler_node-template_resources_*` tags, copied to the scale set, say
  otherwise: time-slicing), its node labels and taints, plus what AKS puts on
  every node itself (agent-pool label; on spot pools the scalesetpriority label and taint);
  ephemeral-storage from the OS disk, DiskSizeGB x 1024^3 (processVMSSTemplate). A multi-zone
  pool's template takes a random one of its zones there, so no zone label is modelled.
"""

from __future__ import annotations

from typing import Any

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_MANAGED_CLUSTER
from elastic_gpu.azure.node_template import resources_from_tags
from elastic_gpu.node_group_view import parse_taint_string
from elastic_gpu.scheduling import AKS_SPOT_LABEL, AKS_SPOT_TAINT, EPHEMERAL_STORAGE, POOL_LABEL
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.fit import NodeTemplate
from elastic_gpu.tools.simulation.pod import quantity
from elastic_gpu.tools.simulation.templates import EVICTION_HARD_MEMORY, GIB, shape
from elastic_gpu.tools.simulation.timings import (
    CA_DEFAULT_MAX_NODE_PROVISION_TIME,
    CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD,
    CA_DEFAULT_SCALE_DOWN_UNNEEDED,
    CA_DEFAULT_SCAN_INTERVAL,
    AutoscalerSettings,
    Evidence,
    Regime,
    early_failure,
    minutes,
    priorities,
    seconds,
    timeout_only,
)

#: AKS names an agent pool's scale set aks-<pool>-<number>-vmss; the number is a hash we cannot
#: know offline, so a placeholder of the same shape stands in.
AKS_VMSS_NUMBER = "12345678"
AKS_AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
#: AKS's managed autoscaler's default expander (ManagedClusterAutoScalerProfile.expander: "If not
#: specified, the default is 'random'"), not upstream's least-waste.
AKS_DEFAULT_EXPANDER = "random"
#: Where AKS's figures come from: its own documentation of its managed autoscaler, and the upstream
#: Azure provider's code that documentation describes.
AKS_EVIDENCE = Evidence(
    "docs",
    "AKS release notes 2025-09-21 and 2025-10-12 (Azure/AKS CHANGELOG.md: nodes that fail to provision are "
    "deleted at once), Azure/AKS#5589; AKS autoScalerProfile reference; the behaviour is upstream "
    "kubernetes/autoscaler cluster-autoscaler-1.33.6 cloudprovider/azure (azure_scale_set_instance_cache.go:227-247) "
    "and clusterstate (kubernetes/autoscaler#8323), run by AKS in its own build",
)
#: What an AKS node keeps (AKS docs, node-resource-reservations, AKS 1.29+): kube-reserved CPU by the
#: host's cores, memory the lesser of 20 MB x maxPods + 50 MB and 25% of the VM's, and 100Mi eviction.
AKS_RESERVED_CPU_MILLICORES = {1: 60, 2: 100, 4: 140, 8: 180, 16: 260, 32: 420, 64: 740}
#: maxPods when the agent pool does not set it, by the cluster's network plugin (AKS docs, AKSNodeClass and
#: Azure CNI: overlay 250, Azure CNI with node subnet 30, otherwise 110).
AKS_DEFAULT_MAX_PODS = {("azure", "overlay"): 250, ("azure", None): 30}
AKS_OTHER_MAX_PODS = 110


def default_max_pods(cluster: dict[str, Any]) -> int:
    network = cluster.get("networkProfile") or {}
    key = (network.get("networkPlugin"), network.get("networkPluginMode"))
    return AKS_DEFAULT_MAX_PODS.get(key, AKS_OTHER_MAX_PODS)


AKS_RESERVE_SOURCE = "AKS node-resource-reservations: kube-reserved and 100Mi eviction"


def aks_reserve(allocatable: dict[str, float], max_pods: int) -> dict[str, float]:
    cpu, memory = allocatable.get("cpu", 0.0), allocatable.get("memory", 0.0)
    if cpu == float("inf") or memory == float("inf"):
        return {}
    cores = max((c for c in AKS_RESERVED_CPU_MILLICORES if c <= cpu), default=1)
    kube_memory = min(20e6 * max_pods + 50e6, 0.25 * memory)
    return {"cpu": AKS_RESERVED_CPU_MILLICORES[cores] / 1000, "memory": kube_memory + EVICTION_HARD_MEMORY}


REGIME_FAST_DELETE = "VM fails to provision (AKS deletes it at once)"
REGIME_TIMEOUT = "scale-set-level error (waits for maxNodeProvisionTime)"


def _aks_template(resource: str, p: dict[str, Any], region: str | None, max_pods: int) -> NodeTemplate:
    name = p.get("agentPoolName") or p.get("name") or resource
    spot = p.get("scaleSetPriority") == "Spot"
    labels = dict(p.get("nodeLabels") or {}) | {AKS_AGENTPOOL_LABEL: name}
    taints = {parse_taint_string(t) for t in p.get("nodeTaints") or []}
    if spot:
        # AKS puts these on every spot node whether the pool declares them or not (spot-node-pool docs).
        labels[AKS_SPOT_LABEL] = AKS_SPOT_TAINT.value
        taints.add(AKS_SPOT_TAINT)
    allocatable = shape("azure", p.get("vmSize", "?"))
    if p.get("osDiskSizeGB"):
        allocatable[EPHEMERAL_STORAGE] = float(p["osDiskSizeGB"]) * GIB
    # The scale set's node-template resources tags (copied from the agent pool's) override the VM size's.
    for resource, value in resources_from_tags(p.get("tags") or {}).items():
        allocatable[resource] = quantity(value)
    return NodeTemplate(
        group=name,
        resource=resource,
        autoscaler_name=f"aks-{name}-{AKS_VMSS_NUMBER}-vmss",
        pool=labels.get(POOL_LABEL, name),
        capacity="spot" if spot else "on-demand",
        instance_type=p.get("vmSize", "?"),
        labels=labels,
        taints=sorted(taints),
        allocatable=allocatable,
        min_size=int(p.get("minCount", p.get("count", 0)) or 0),
        max_size=int(p.get("maxCount", p.get("count", 0)) or 0),
        zones=list(p.get("availabilityZones") or []),
        region=region,
        # The autoscaler's Azure template is the raw capacity (azure_template.go:276-277); the node is not.
        reserved=aks_reserve(allocatable, int(p.get("maxPods") or max_pods)),
        reserved_source=AKS_RESERVE_SOURCE,
    )


def node_templates(preview: Preview) -> list[NodeTemplate]:
    clusters = preview.of_type(AKS_MANAGED_CLUSTER)
    region = next((c.inputs.get("location") for c in clusters if c.inputs.get("location")), None)
    max_pods = default_max_pods(clusters[0].inputs) if clusters else AKS_OTHER_MAX_PODS
    out = [
        _aks_template(f"{c.name}[{i}]", profile, region, max_pods)
        for c in clusters
        for i, profile in enumerate(c.inputs.get("agentPoolProfiles") or [])
    ]
    return out + [
        _aks_template(r.name, r.inputs, region or preview.provider_inputs(r).get("location"), max_pods)
        for r in preview.of_type(AKS_AGENT_POOL)
    ]


def autoscaler_settings(preview: Preview) -> AutoscalerSettings | None:
    """AKS's managed autoscaler, from the cluster's autoScalerProfile."""
    clusters = preview.of_type(AKS_MANAGED_CLUSTER)
    if not clusters:
        return None
    profile = clusters[0].inputs.get("autoScalerProfile") or {}
    provision = minutes(profile.get("maxNodeProvisionTime", CA_DEFAULT_MAX_NODE_PROVISION_TIME))
    scan = seconds(profile.get("scanInterval", CA_DEFAULT_SCAN_INTERVAL))
    # Two regimes. A spot VM that fails to provision (spot capacity: SkuNotAvailable/AllocationFailed on
    # the VM) is deleted at once by AKS's managed autoscaler and seen at the next loop after the scale
    # set's update returns. A scale-set-level asynchronous error (OverconstrainedAllocationRequest,
    # kubernetes/autoscaler#8323) leaves no failed VM to delete: the scale-up times out.
    timeout = timeout_only(
        scan, round(provision * 60), "AKS, scale-set-level error (autoscaler#8323): not reported as a failed VM"
    )
    fast = early_failure(
        scan,
        round(provision * 60),
        scan,
        "AKS, VM that fails to provision: deleted at once by AKS's autoscaler (fast delete, AKS 2025-09-21)",
    )
    return AutoscalerSettings(
        cloud="azure",
        # AKS's managed autoscaler takes one expander (autoScalerProfile.expander).
        expanders=(profile.get("expander", AKS_DEFAULT_EXPANDER),),
        priorities=priorities(preview),
        scale_down_unneeded=minutes(profile.get("scaleDownUnneededTime", CA_DEFAULT_SCALE_DOWN_UNNEEDED)),
        scale_down_delay_after_add=minutes(
            profile.get("scaleDownDelayAfterAdd", CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD)
        ),
        max_node_provision=provision,
        # The promise is judged on the slower regime.
        machine=timeout,
        regimes=(
            Regime(REGIME_FAST_DELETE, fast, "spot capacity errors on the VM (the common case)"),
            Regime(REGIME_TIMEOUT, timeout, "asynchronous errors of the whole scale set"),
        ),
        source="AKS autoScalerProfile",
        evidence=AKS_EVIDENCE,
        # A scale set spanning zones is one node group: a zonal shortage can fail and back off all of it
        # (AKS reliability-zone-resiliency-recommendations: the autoscaler is not zone-aware).
        zone_aware=False,
    )
