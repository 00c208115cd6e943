"""The node-template resources tag the Azure cluster-autoscaler provider reads from a scale set.

kubernetes/autoscaler cluster-autoscaler/cloudprovider/azure (1.30-1.35.2): azure_util.go defines
`nodeResourcesTagName = "k8s.io_cluster-autoscaler_node-template_resources_"`, and azure_template.go
(buildNodeFromTemplate -> extractAllocatableResourcesFromScaleSet) sets the template node's capacity of
`<resource>` from the VMSS tag `<prefix><resource>`, with "_" (and "~2") read back as "/" (Azure tag names
cannot hold "/"). AKS copies an agent pool's tags to its scale set (AKS docs use-tags.md, "Add tags to node
pools"). Verified in upstream source only: AKS runs its own build of the autoscaler (v1.35.0-aks-*), whose
template code could not be read here.
"""

from __future__ import annotations

from collections.abc import Mapping

NODE_TEMPLATE_RESOURCES_PREFIX = "k8s.io_cluster-autoscaler_node-template_resources_"


def resources_tag(resource: str) -> str:
    """The scale-set tag that declares a template node's `resource` ("nvidia.com/gpu")."""
    return NODE_TEMPLATE_RESOURCES_PREFIX + resource.replace("/", "_")


def resources_from_tags(tags: Mapping[str, str]) -> dict[str, str]:
    """The resources a scale set's tags declare, as the provider reads them (resource name -> quantity text)."""
    return {
        key.removeprefix(NODE_TEMPLATE_RESOURCES_PREFIX).replace("_", "/").replace("~2", "/"): value
        for key, value in tags.items()
        if key.startswith(NODE_TEMPLATE_RESOURCES_PREFIX) and key != NODE_TEMPLATE_RESOURCES_PREFIX
    }
