"""AKS's managed cluster-autoscaler on a clock: its settings as the simulation reads them from the cluster's
autoScalerProfile, and the two regimes in which a spot scale-up fails and the fallback is asked
(elastic_gpu/tools/simulation merges every cloud's)."""

from __future__ import annotations

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_DEFAULT_EXPANDER, AKS_EXISTING_CLUSTER, AKS_MANAGED_CLUSTER
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.timings import (
    CA_DEFAULT_MAX_NODE_PROVISION_TIME,
    CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD,
    CA_DEFAULT_SCALE_DOWN_UNNEEDED,
    CA_DEFAULT_SCAN_INTERVAL,
    AutoscalerTiming,
    Evidence,
    Regime,
    early_failure,
    minutes,
    priorities,
    seconds,
    timeout_only,
)

#: Where AKS's figures come from: its own documentation of its managed autoscaler, and the upstream
#: Azure provider's code that documentation describes.
AKS_EVIDENCE = Evidence(
    "docs",
    "AKS release notes 2025-09-21 and 2025-10-12 (Azure/AKS CHANGELOG.md: nodes that fail to provision are "
    "deleted at once), Azure/AKS#5589; AKS autoScalerProfile reference; the behaviour is upstream "
    "kubernetes/autoscaler cluster-autoscaler-1.33.6 cloudprovider/azure (azure_scale_set_instance_cache.go:227-247) "
    "and clusterstate (kubernetes/autoscaler#8323), run by AKS in its own build",
)
REGIME_FAST_DELETE = "VM fails to provision (AKS deletes it at once)"
REGIME_TIMEOUT = "scale-set-level error (waits for maxNodeProvisionTime)"


#: The expander an existing cluster's profile is judged with: the one ClusterAutoscaler requires of it (its
#: preview warns, with the `az aks update` command, when a pool falls back), so the promise is judged on the
#: cluster the program asks for rather than left unjudged.
EXISTING_CLUSTER_EXPANDER = "priority"
EXISTING_CLUSTER_SOURCE = (
    "AKS autoScalerProfile defaults (the existing cluster's own profile is not read at preview; expander "
    f"{EXISTING_CLUSTER_EXPANDER}, as ClusterAutoscaler requires)"
)


def autoscaler_settings(preview: Preview) -> AutoscalerTiming | None:
    """AKS's managed autoscaler, from the cluster's autoScalerProfile; on a cluster the program only holds a
    handle on (`AksCluster.existing`) with agent pools of ours, AKS's default profile with the priority
    expander, so the promise of its pools is judged too."""
    clusters = preview.of_type(AKS_MANAGED_CLUSTER)
    if clusters:
        return _settings(preview, clusters[0].inputs.get("autoScalerProfile") or {}, "AKS autoScalerProfile")
    if preview.of_type(AKS_EXISTING_CLUSTER) and preview.of_type(AKS_AGENT_POOL):
        return _settings(preview, {"expander": EXISTING_CLUSTER_EXPANDER}, EXISTING_CLUSTER_SOURCE)
    return None


def _settings(preview: Preview, profile: dict[str, str], source: str) -> AutoscalerTiming:
    """The settings from an autoScalerProfile's ARM keys; a key it lacks takes AKS's default (its autoscaler
    profile reference: upstream's defaults, but the expander `random`)."""
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
    return AutoscalerTiming(
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
        source=source,
        evidence=AKS_EVIDENCE,
        # A scale set spanning zones is one node group: a zonal shortage can fail and back off all of it
        # (AKS reliability-zone-resiliency-recommendations: the autoscaler is not zone-aware).
        zone_aware=False,
    )
