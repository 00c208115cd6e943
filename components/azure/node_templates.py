"""AKS in the simulation: each agent pool's scale-from-zero template, and the managed autoscaler's
settings (autoScalerProfile) (components/simulation merges every cloud's).

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
from elastic_gpu.offline.runner import Preview
from elastic_gpu.pool_view import parse_taint_string
from elastic_gpu.scheduling import AKS_SPOT_LABEL, AKS_SPOT_TAINT, EPHEMERAL_STORAGE, POOL_LABEL
from elastic_gpu.simulation.fit import NodeTemplate
from elastic_gpu.simulation.pod import quantity
from elastic_gpu.simulation.templates import GIB, shape
from elastic_gpu.simulation.timings import (
    CA_DEFAULT_EXPANDER,
    CA_DEFAULT_MAX_NODE_PROVISION_TIME,
    CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD,
    CA_DEFAULT_SCALE_DOWN_UNNEEDED,
    CA_DEFAULT_SCAN_INTERVAL,
    AutoscalerSettings,
    minutes,
    priorities,
    seconds,
    timeout_only,
)

#: AKS names an agent pool's scale set aks-<pool>-<number>-vmss; the number is a hash we cannot
#: know offline, so a placeholder of the same shape stands in.
AKS_VMSS_NUMBER = "12345678"
AKS_AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"


def _aks_template(resource: str, p: dict[str, Any], region: str | None) -> NodeTemplate:
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
    )


def node_templates(preview: Preview) -> list[NodeTemplate]:
    clusters = preview.of_type(AKS_MANAGED_CLUSTER)
    region = next((c.inputs.get("location") for c in clusters if c.inputs.get("location")), None)
    out = [
        _aks_template(f"{c.name}[{i}]", profile, region)
        for c in clusters
        for i, profile in enumerate(c.inputs.get("agentPoolProfiles") or [])
    ]
    return out + [
        _aks_template(r.name, r.inputs, region or preview.provider_inputs(r).get("location"))
        for r in preview.of_type(AKS_AGENT_POOL)
    ]


def autoscaler_settings(preview: Preview) -> AutoscalerSettings | None:
    """AKS's managed autoscaler, from the cluster's autoScalerProfile."""
    clusters = preview.of_type(AKS_MANAGED_CLUSTER)
    if not clusters:
        return None
    profile = clusters[0].inputs.get("autoScalerProfile") or {}
    provision = minutes(profile.get("maxNodeProvisionTime", CA_DEFAULT_MAX_NODE_PROVISION_TIME))
    return AutoscalerSettings(
        cloud="azure",
        # AKS's managed autoscaler takes one expander (autoScalerProfile.expander).
        expanders=(profile.get("expander", CA_DEFAULT_EXPANDER),),
        priorities=priorities(preview),
        scale_down_unneeded=minutes(profile.get("scaleDownUnneededTime", CA_DEFAULT_SCALE_DOWN_UNNEEDED)),
        scale_down_delay_after_add=minutes(
            profile.get("scaleDownDelayAfterAdd", CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD)
        ),
        max_node_provision=provision,
        # A spot scale set that cannot allocate is seen only when the scale-up times out: the
        # fast path (autoscaler#5548) needs enableFastDeleteOnFailedProvisioning, off by default
        # and not in autoScalerProfile (autoscaler#8323).
        machine=timeout_only(
            seconds(profile.get("scanInterval", CA_DEFAULT_SCAN_INTERVAL)),
            round(provision * 60),
            "AKS: a spot scale set that cannot allocate is not reported (autoscaler#8323)",
        ),
        source="AKS autoScalerProfile",
    )
