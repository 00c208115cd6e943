"""GKE: the inputs whose change replaces its resources (elastic_gpu/tools/replacement.py merges every cloud's)."""

from __future__ import annotations

from elastic_gpu.clouds import InlinePoolRule, ReplacementRows, ReplaceRule
from elastic_gpu.gcp import GKE_NODE_POOL
from elastic_gpu.gcp.node_spec import NODE_CONFIG_FORCE_NEW, POOL_FORCE_NEW

#: Node-pool resources: the fields that force replacement (the replace table of docs/day-two.md).
POOL_REPLACE_FIELDS = {
    GKE_NODE_POOL: ReplaceRule(
        # The node spec's tables (gcp/node_spec.py): its force_new marks are checked to be among them.
        fields=(*POOL_FORCE_NEW, *(f"nodeConfig.{f}" for f in NODE_CONFIG_FORCE_NEW)),
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
#: boot disk, image type). `diff` marks them.
NODE_ROLLING_FIELDS = {
    GKE_NODE_POOL: ReplaceRule(
        ("version", "nodeConfig.machineType", "nodeConfig.diskSizeGb", "nodeConfig.diskType", "nodeConfig.imageType"),
        "GKE managing-clusters.md manual changes that recreate nodes",
    ),
}


#: The rows above as one record (elastic_gpu/clouds.py ReplacementRows), for `diff` and the merged tables.
ROWS = ReplacementRows(
    pool_replace_fields=POOL_REPLACE_FIELDS,
    other_replace_fields=OTHER_REPLACE_FIELDS,
    pool_name_field=POOL_NAME_FIELD,
    inline_pool_refused_fields=INLINE_POOL_REFUSED_FIELDS,
    node_rolling_fields=NODE_ROLLING_FIELDS,
)
