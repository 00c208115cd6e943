"""ClusterAutoscaler on AKS: the managed autoscaler, configured on the cluster and per pool.

AKS runs the cluster-autoscaler itself. Its settings are the cluster's
`autoScalerProfile` (AksCluster) and each agent pool's autoscaling min/max
(the pools); with expander `priority` it reads the
`cluster-autoscaler-priority-expander` ConfigMap in kube-system, which the
cloud-neutral ClusterAutoscaler declares. So nothing more is declared here; this
only checks that the component's settings are the ones the cluster carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from elastic_gpu.aks_cluster import AksCluster
from elastic_gpu.errors import ConfigError

if TYPE_CHECKING:
    from elastic_gpu.cluster_autoscaler import ClusterAutoscalerArgs

#: The managed autoscaler lives in kube-system; the priority ConfigMap must be there too.
AKS_AUTOSCALER_NAMESPACE = "kube-system"


def build_autoscaler(name: str, args: ClusterAutoscalerArgs, parent: pulumi.Resource) -> dict[str, object]:
    """AKS: no Deployment, no identity; returns {"image": None, "role_arn": None}."""
    cluster = args.cluster
    if not isinstance(cluster, AksCluster):
        raise TypeError(f"an AKS autoscaler needs an AksCluster, got {type(cluster).__name__}")
    where = f"ClusterAutoscaler '{name}': "
    c = cluster.args
    problems = [
        f"{where}{field}: on AKS the autoscaler's settings live on the AksCluster's autoScalerProfile "
        f"({field}={theirs!r}); got {ours!r}: set the same value on both"
        for field, ours, theirs in (
            ("scale_down_unneeded_time", args.scale_down_unneeded_time, c.scale_down_unneeded_time),
            ("scale_down_delay_after_add", args.scale_down_delay_after_add, c.scale_down_delay_after_add),
            ("max_node_provision_time", args.max_node_provision_time, c.max_node_provision_time),
            ("expander", args.expander[:1], c.expander[:1]),
        )
        if ours != theirs
    ]
    if args.image is not None:
        problems.append(f"{where}image: AKS runs its own managed autoscaler; leave image unset (got {args.image!r})")
    if args.namespace != AKS_AUTOSCALER_NAMESPACE:
        problems.append(
            f"{where}namespace: AKS's autoscaler reads its priority ConfigMap from "
            f"{AKS_AUTOSCALER_NAMESPACE} (got {args.namespace!r})"
        )
    if problems:
        raise ConfigError(problems, source=f"ClusterAutoscaler '{name}'")
    return {"image": None, "role_arn": None}
