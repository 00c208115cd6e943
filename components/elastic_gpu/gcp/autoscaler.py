"""ClusterAutoscaler on GKE: Google's managed autoscaler, nothing of ours to run.

GKE's cluster autoscaler is part of the control plane: the GkeCluster sets the
`OPTIMIZE_UTILIZATION` profile and every node pool carries its own autoscaling
limits. It has no priority expander (a ComputeClass ranks spot above on-demand
instead, see elastic_gpu/gcp/pools.py), so the neutral component declares no
priority ConfigMap here, and no pod of ours runs on the general pool, so that
pool may be spot (stack gcp-dev: a small spot general pool).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

if TYPE_CHECKING:
    from elastic_gpu.cluster_autoscaler import ClusterAutoscalerArgs

#: Read by elastic_gpu.cluster_autoscaler: skip the priority-expander ConfigMap.
SUPPORTS_PRIORITY_EXPANDER = False
#: Read by elastic_gpu.cluster_autoscaler: no autoscaler pod of ours, so no placement is needed.
RUNS_POD = False


def build_autoscaler(name: str, args: ClusterAutoscalerArgs, parent: pulumi.Resource) -> dict[str, object]:
    """GKE: nothing to declare; the profile and per-pool limits live on the cluster and pools."""
    return {"image": None, "role_arn": None}
