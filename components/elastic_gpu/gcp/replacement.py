"""GKE: the inputs whose change replaces its resources (elastic_gpu/tools/replacement.py merges every cloud's)."""

from __future__ import annotations

from elastic_gpu.clouds import InlinePoolRule, KeptRule, ReplacementRows, ReplaceRule
from elastic_gpu.gcp import GKE_CLUSTER, GKE_NODE_POOL
from elastic_gpu.gcp.node_spec import NODE_CONFIG_FORCE_NEW_UNSET, POOL_FORCE_NEW_UNSET, RECREATES_NODES, GkeNodeSpec
from elastic_gpu.node_marks import marked_inputs

#: Node-pool resources: the fields that force replacement (the replace table of docs/day-two.md).
POOL_REPLACE_FIELDS = {
    GKE_NODE_POOL: ReplaceRule(
        # The pool's own ForceNew inputs no spec field sets, the node spec's `replaces` marks (gcp/node_spec.py
        # GkeNodeSpec), and the nodeConfig ForceNew inputs no spec field sets.
        fields=(
            *POOL_FORCE_NEW_UNSET,
            *marked_inputs(GkeNodeSpec, "replaces"),
            *(f"nodeConfig.{f}" for f in NODE_CONFIG_FORCE_NEW_UNSET),
        ),
        source="pulumi-gcp container.NodePool = terraform-provider-google google/services/container/"
        "resource_container_node_pool.go and node_config.go, ForceNew fields (flex_start and max_run_duration "
        "ForceNew in schemaNodeConfig; machineType, diskSizeGb, diskType, labels, taints, nodeLocations, "
        "autoscaling update in place)",
    ),
}

OTHER_REPLACE_FIELDS: dict[str, ReplaceRule] = {}

#: The input that is a pool's cloud name.
POOL_NAME_FIELD = {GKE_NODE_POOL: "name"}

INLINE_POOL_REFUSED_FIELDS: dict[str, InlinePoolRule] = {}

#: Node-pool inputs whose in-place update recreates every node of the pool with the pool's upgrade strategy
#: (GKE "Planning for disruptions", manual changes that recreate the nodes: node version, machine type,
#: boot disk, image type): the version, which no spec field sets, and the node spec's `rolls` marks. `diff`
#: marks them.
NODE_ROLLING_FIELDS = {
    GKE_NODE_POOL: ReplaceRule(("version", *marked_inputs(GkeNodeSpec, "rolls")), RECREATES_NODES),
}

#: The cluster's node auto-provisioning inputs are Optional and Computed (terraform-provider-google
#: google/services/container/resource_container_cluster.go, `cluster_autoscaling` and its `enabled`,
#: `resource_limits`, `auto_provisioning_defaults`, `auto_provisioning_locations`): a program that drops them leaves
#: the cluster as it was, so turning node auto-provisioning off takes `enabled: false` (gcp/cluster.py sets it), and
#: the limits and defaults then stay in the state, unused. "We automatically set the enabled value to false if the
#: block is not returned in API responses" (same file): a cluster created without it has `enabled: false`.
KEPT_WHEN_DROPPED = {
    GKE_CLUSTER: KeptRule(
        fields=(
            "clusterAutoscaling.enabled",
            "clusterAutoscaling.resourceLimits",
            "clusterAutoscaling.autoProvisioningDefaults",
            "clusterAutoscaling.autoProvisioningLocations",
        ),
        created_as={"clusterAutoscaling.enabled": False},
        source="terraform-provider-google resource_container_cluster.go cluster_autoscaling (Optional, Computed)",
    ),
}


#: The rows above as one record (elastic_gpu/clouds.py ReplacementRows), for `diff` and the merged tables.
ROWS = ReplacementRows(
    pool_replace_fields=POOL_REPLACE_FIELDS,
    other_replace_fields=OTHER_REPLACE_FIELDS,
    pool_name_field=POOL_NAME_FIELD,
    inline_pool_refused_fields=INLINE_POOL_REFUSED_FIELDS,
    node_rolling_fields=NODE_ROLLING_FIELDS,
    kept_when_dropped=KEPT_WHEN_DROPPED,
)
