"""GKE's managed cluster-autoscaler on a clock: upstream's GCE provider as a stand-in for GKE's closed
build, its defaults as upper bounds, and what GKE documents of queued provisioning (elastic_gpu/tools/simulation
merges every cloud's)."""

from __future__ import annotations

from elastic_gpu.gcp import GKE_CLUSTER
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.backoff import GCE_MIG_INSTANCES_REFRESH
from elastic_gpu.tools.simulation.timings import (
    CA_DEFAULT_MAX_NODE_PROVISION_TIME,
    CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD,
    CA_DEFAULT_SCALE_DOWN_UNNEEDED,
    CA_DEFAULT_SCAN_INTERVAL,
    AutoscalerTiming,
    Evidence,
    early_failure,
    minutes,
    seconds,
)

#: GKE runs its own, closed build of the cluster autoscaler: the upstream GCE provider's clocks stand in
#: for it. What Google documents is the order: a ComputeClass's priorities in turn, the next one tried
#: immediately, with no waiting period, when a priority hits ZONE_RESOURCE_POOL_EXHAUSTED or QUOTA_EXCEEDED
#: (GKE docs, "Troubleshoot custom ComputeClass issues"; "About custom ComputeClasses"), with no time given.
GKE_EVIDENCE = Evidence(
    "proxy",
    "upstream kubernetes/autoscaler cluster-autoscaler-1.33.6 cloudprovider/gce (MIG instance errors read "
    "back at the next loop) standing in for GKE's closed build; documented: ComputeClass priorities in order, "
    "the next one tried immediately on a stockout (GKE docs, Troubleshoot custom ComputeClass issues)",
)


#: A queued-provisioning pool's nodes: what GKE documents (no time is given for the wait).
QUEUED_EVIDENCE = Evidence(
    "docs",
    "GKE docs, queued provisioning with flex-start (nodes only through a ProvisioningRequest, which waits "
    "for capacity); Kueue v0.19 ProvisioningRequest admission check",
)


def autoscaler_settings(preview: Preview) -> AutoscalerTiming | None:
    """GKE's managed autoscaler, when the preview has a GKE cluster."""
    if not preview.of_type(GKE_CLUSTER):
        return None
    return AutoscalerTiming(
        cloud="gcp",
        # GKE's managed autoscaler has no priority expander: a ComputeClass ranks pools instead;
        # it does not document its expander, least-waste is what is modelled here.
        expanders=("least-waste",),
        priorities={},
        # GKE does not expose its scale-down timers; the upstream defaults are an upper bound
        # (the OPTIMIZE_UTILIZATION profile removes unneeded nodes sooner).
        scale_down_unneeded=minutes(CA_DEFAULT_SCALE_DOWN_UNNEEDED),
        scale_down_delay_after_add=minutes(CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD),
        max_node_provision=minutes(CA_DEFAULT_MAX_NODE_PROVISION_TIME),
        # GKE runs its own build of the autoscaler; modelled by the upstream GCE provider.
        machine=early_failure(
            seconds(CA_DEFAULT_SCAN_INTERVAL),
            seconds(CA_DEFAULT_MAX_NODE_PROVISION_TIME),
            GCE_MIG_INSTANCES_REFRESH.seconds,
            "GKE: a stockout (ZONE_RESOURCE_POOL_EXHAUSTED) is an instance error on the MIG, "
            "read back at the next loop while the group scales up",
        ),
        source="GKE managed autoscaler (upstream defaults as upper bounds)",
        evidence=GKE_EVIDENCE,
    )
