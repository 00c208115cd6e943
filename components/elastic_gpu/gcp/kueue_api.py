"""Kueue's API names the library uses, as plain values (no cloud SDK import): the GKE Kueue component
declares with them and the offline simulation (elastic_gpu.tools.gcp.kueue_simulation) reads them back."""

from __future__ import annotations

KUEUE_API = "kueue.x-k8s.io/v1beta2"
#: GKE's ProvisioningRequest class for queued provisioning.
PROVISIONING_CLASS = "queued-provisioning.gke.io"
#: Kueue's built-in admission-check controller for ProvisioningRequests.
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
#: The Job label that names its LocalQueue (Kueue docs, "Run a Kubernetes Job").
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
