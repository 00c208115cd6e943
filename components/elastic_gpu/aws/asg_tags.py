"""Cluster-autoscaler tags on Auto Scaling groups: the single source of their keys.

Formats from kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md
("Auto-Discovery Setup" and "Scaling a node group to 0").
"""

from __future__ import annotations

from collections.abc import Mapping

from elastic_gpu.scheduling import Taint

CA_TAG_PREFIX = "k8s.io/cluster-autoscaler"
AUTO_DISCOVERY_ENABLED_KEY = f"{CA_TAG_PREFIX}/enabled"
NODE_TEMPLATE_PREFIX = f"{CA_TAG_PREFIX}/node-template"


def auto_discovery_cluster_key(cluster_name: str) -> str:
    """`k8s.io/cluster-autoscaler/<cluster>`: EKS sets it to "owned" on managed groups' ASGs."""
    return f"{CA_TAG_PREFIX}/{cluster_name}"


def node_template_tags(
    *, labels: Mapping[str, str], taints: list[Taint], resources: Mapping[str, str]
) -> dict[str, str]:
    """Tags that describe a node of an empty group, so the autoscaler can scale it from zero."""
    tags = {f"{NODE_TEMPLATE_PREFIX}/label/{k}": v for k, v in sorted(labels.items())}
    tags |= {f"{NODE_TEMPLATE_PREFIX}/taint/{t.key}": f"{t.value}:{t.effect}" for t in sorted(taints)}
    tags |= {f"{NODE_TEMPLATE_PREFIX}/resources/{k}": v for k, v in sorted(resources.items())}
    return tags


def taint_from_eks_api(taint: Taint) -> bool:
    """Whether the autoscaler reads this managed node group taint from EKS DescribeNodegroup.

    It skips a taint the API returns without a value (cloudprovider/aws/aws_wrapper.go
    getManagedNodegroupInfo: `taint.Value != nil`), so a value-less taint still needs its ASG tag."""
    return bool(taint.value)


# For an EKS managed node group's ASG (EKS tags it `eks:nodegroup-name`/`eks:cluster-name`) the
# autoscaler builds the scale-from-zero node from the group itself, read with eks:DescribeNodegroup:
# its labels, its valued taints, and the `node-template/resources/*` keys among the node group's own
# tags (overriding the ASG's); GPUs from its instance-type table (kubernetes/autoscaler
# cluster-autoscaler/cloudprovider/aws/aws_manager.go buildNodeFromTemplate, in every release we pin,
# 1.30.7-1.35.2; the autoscaler role has eks:DescribeNodegroup, aws/autoscaler.py). So a managed group
# needs no Tag resource on its ASG (each one a resource to manage, on a group EKS owns, and a slot of the
# ASG's 50-tag limit) except for a taint without a value.


def managed_node_group_asg_tags(*, taints: list[Taint]) -> dict[str, str]:
    """The node-template ASG tags a managed node group still needs: its value-less taints."""
    return node_template_tags(labels={}, taints=[t for t in taints if not taint_from_eks_api(t)], resources={})


def managed_node_group_resource_tags(resources: Mapping[str, str]) -> dict[str, str]:
    """`node-template/resources/*` tags for the node group itself (its `tags`, which DescribeNodegroup returns)."""
    return node_template_tags(labels={}, taints=[], resources=resources)
