"""GKE node pool auto-creation: the `auto-provisioning` provisioner of the stack setting `provisioner`.

Under it a spot GPU pool declares no node pool: one `ComputeClass` (cloud.google.com/v1) per pool ranks
spot above on-demand, each priority naming the pool's machine type (or machine family) and GPU, with
`nodePoolAutoCreation` on, so GKE's cluster autoscaler creates the node pools itself
(`compute_class.py`).

Cluster-wide node auto-provisioning is a separate choice (`cluster.py`, the stack file's
`cluster.nodeAutoProvisioning`). From GKE 1.33.3-gke.1136000 on, on any release channel, a ComputeClass
gets node pools without it (`spec.AUTO_CREATION_WITHOUT_NAP`), so by default it stays off there: GKE then
creates node pools only for Pods that select a class, in the class's zones, as the class's
`nodePoolConfig` says (the node service account among them). Below that version it is required and on.
Its resource limits are the only cap GKE applies to auto-created nodes (a ComputeClass has no node or
resource limit: `spec.NO_CAP_WITHOUT_NAP`), so without it only the project's regional GPU quota bounds
the pools: each class carries the nodes its pool plans (`spec.PLANNED_NODES_ANNOTATION`), which `cost`
and `simulate` read as its size, and the policy rule gke-auto-provisioning-gpu-cap says it is not held.
With it on (`nodeAutoProvisioning: true`), the limits, summed from every pool's maxSize, hold the pools,
but GKE may also create node pools for any other pending Pod within them, so those nodes get the
cluster's node service account (auto-provisioning defaults) and network tag (nodePoolAutoConfig, which
GKE documents for node auto-provisioning-enabled clusters), and Kueue's controller selects the general
pool either way (`elastic_gpu/gcp/kueue.py`). The simulation reads the ComputeClasses as the groups the
autoscaler would create (elastic_gpu/tools/gcp/autoprovisioning/simulation.py); the policy pack checks
them (elastic_gpu/tools/gcp/pack/auto_provisioning.py).

A queued-provisioning (DWS) pool keeps its node pool under this provisioner: Kueue's
ProvisioningRequests target a queued-provisioning node pool, not a ComputeClass priority.
"""

from __future__ import annotations

#: The value of the stack setting `provisioner` (and of the GKE cluster handle's `provisioner`).
PROVISIONER = "auto-provisioning"
