"""GKE node pool auto-creation: the `auto-provisioning` provisioner of the stack setting `provisioner`.

Under it a spot GPU pool declares no node pool: one `ComputeClass` (cloud.google.com/v1) per pool ranks
spot above on-demand, each priority naming the pool's machine type (or machine family) and GPU, with
`nodePoolAutoCreation` on, so GKE's cluster autoscaler creates the node pools itself
(`compute_class.py`). The cluster enables node auto-provisioning with resource limits that cap the
GPUs, vCPUs and memory of every node, auto-created or not (`cluster.py`). From GKE
1.33.3-gke.1136000 on, on any release channel, a ComputeClass gets node pools without it
(`spec.AUTO_CREATION_WITHOUT_NAP`), but its resource limits are the only cap GKE applies to
auto-created nodes (a ComputeClass has no node or resource limit; GKE's other answer is the project's
regional GPU quota: `spec.NO_CAP_WITHOUT_NAP`), so the cluster keeps it on: it is what makes a pool's
maxSize hold, and what `cost` and `simulate` count as the pools' largest size. With it on, GKE may also create
node pools for any other pending Pod within those limits, so auto-created nodes get the cluster's
node service account and network tag (auto-provisioning defaults, nodePoolAutoConfig), and Kueue's
controller selects the general pool (`elastic_gpu/gcp/kueue.py`). The simulation reads the
ComputeClasses as the groups the autoscaler would create (`simulation.py`); the policy pack checks
them (`rules.py`).

A queued-provisioning (DWS) pool keeps its node pool under this provisioner: Kueue's
ProvisioningRequests target a queued-provisioning node pool, not a ComputeClass priority.
"""

from __future__ import annotations

#: The value of the stack setting `provisioner` (and of the GKE cluster handle's `provisioner`).
PROVISIONER = "auto-provisioning"
