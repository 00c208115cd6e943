"""Ordering the real engine needs, read from each resource's captured dependencies (dependsOn)."""

from __future__ import annotations

import re

import pytest

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.aws.node_groups import MAX_NODE_GROUP_NAME, eks_node_group_name
from elastic_gpu.azure import AKS_AGENT_POOL
from elastic_gpu.gcp import GKE_NODE_POOL
from elastic_gpu.gcp.pools import MAX_NODE_POOL_NAME, gke_node_pool_name
from elastic_gpu.tools.offline.runner import CapturedResource, Preview
from elastic_gpu.tools.replacement import POOL_REPLACE_FIELDS, replace_table_markdown
from tests.conftest import stack_preview
from tests.docs_pages import page

ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
STACKS = ["aws-dev", "aws-prod", "azure-dev", "azure-prod", "gcp-dev", "gcp-prod"]


def deps(preview: Preview, r: CapturedResource) -> set[str]:
    return set(r.depends_on)


def urns(resources: list[CapturedResource]) -> set[str]:
    return {r.urn for r in resources}


@pytest.mark.parametrize("stack", ["aws-dev", "aws-prod"])
def test_iam_attachments_come_before_the_cluster_and_node_groups(stack: str) -> None:
    p = stack_preview(stack)
    attachments = p.of_type(ATTACHMENT)
    cluster_role = {a.urn for a in attachments if "-cluster-role-" in a.name}
    node_role = {a.urn for a in attachments if "-node-role-" in a.name}
    assert cluster_role and node_role
    [cluster] = p.of_type("aws:eks/cluster:Cluster")
    assert cluster_role <= deps(p, cluster)
    for ng in p.of_type(EKS_NODE_GROUP):
        assert node_role <= deps(p, ng), ng.name


@pytest.mark.parametrize("stack", ["aws-dev", "aws-prod"])
def test_autoscaler_waits_for_its_iam_policy_and_every_node_group(stack: str) -> None:
    p = stack_preview(stack)
    dep = p.one("kubernetes:apps/v1:Deployment", "cluster-autoscaler-deployment")
    policy = p.one("aws:iam/rolePolicy:RolePolicy", "cluster-autoscaler-policy")
    assert policy.urn in dep.depends_on
    assert urns(p.of_type(EKS_NODE_GROUP)) <= deps(p, dep)


@pytest.mark.parametrize("stack", ["azure-dev", "azure-prod"])
def test_aks_agent_pools_are_created_one_after_another(stack: str) -> None:
    pools = stack_preview(stack).of_type(AKS_AGENT_POOL)
    pool_urns = urns(pools)
    previous = {r.urn: [d for d in r.depends_on if d in pool_urns] for r in pools}
    assert all(len(v) <= 1 for v in previous.values())
    # one chain through every pool: a single first pool, and each pool is the previous of at most one
    assert sum(1 for v in previous.values() if not v) == 1
    followers = [v[0] for v in previous.values() if v]
    assert len(followers) == len(set(followers)) == len(pools) - 1


@pytest.mark.parametrize("stack", ["azure-dev", "azure-prod"])
def test_aks_pools_follow_the_control_plane_version(stack: str) -> None:
    p = stack_preview(stack)
    [cluster] = p.of_type("azure-native:containerservice:ManagedCluster")
    for pool in p.of_type(AKS_AGENT_POOL):
        assert pool.inputs["orchestratorVersion"] == cluster.inputs["kubernetesVersion"]
        assert cluster.urn in pool.depends_on


def test_kueue_objects_wait_for_the_chart_and_the_chart_for_the_general_nodes() -> None:
    p = stack_preview("gcp-prod")
    release = p.one("kubernetes:helm.sh/v3:Release", "kueue-kueue")
    crs = [r for r in p.resources if r.type.startswith("kubernetes:kueue.x-k8s.io/")]
    assert len(crs) >= 5 and all(release.urn in r.depends_on for r in crs)
    general = [r for r in p.of_type(GKE_NODE_POOL) if r.name == "general-np"]
    assert general and urns(general) <= set(release.depends_on)


@pytest.mark.parametrize("stack", STACKS)
def test_every_node_pool_is_replaced_create_first(stack: str) -> None:
    pools = [r for r in stack_preview(stack).resources if r.type in POOL_REPLACE_FIELDS]
    assert pools and all(r.delete_before_replace is False for r in pools)


def test_readme_shows_the_replacement_table() -> None:
    assert replace_table_markdown() in page("day-two.md")


@pytest.mark.parametrize("stack", ["aws-prod", "azure-prod"])
def test_priority_configmap_follows_the_node_groups_it_ranks(stack: str) -> None:
    p = stack_preview(stack)
    cm = p.one("kubernetes:core/v1:ConfigMap", "cluster-autoscaler-priorities")
    pools = [r for r in p.resources if r.type in POOL_REPLACE_FIELDS]
    assert pools and urns(pools) <= set(cm.depends_on)


def test_pool_names_fit_each_clouds_limit_and_change_only_with_replacing_fields() -> None:
    fields = {"capacityType": "SPOT", "instanceTypes": ["g5.xlarge"], "subnetIds": ["subnet-1"], "amiType": "A"}
    longest = "a" * 20 + "-" + "b" * 20 + "-fallback-ap-southeast-2a"  # cluster and pool names at their limit
    name = eks_node_group_name(longest, fields)
    assert len(name) == MAX_NODE_GROUP_NAME and re.fullmatch(r"[a-z0-9-]+-[0-9a-f]{6}", name)
    assert eks_node_group_name(longest, fields) == name  # stable
    other = eks_node_group_name(longest, fields | {"instanceTypes": ["g5.2xlarge"]})
    assert other != name and other[:-6] == name[:-6]  # same stem, new digest: a new group, created first
    gke = gke_node_pool_name("b" * 20 + "-fallback", {"spot": False})
    assert len(gke) <= MAX_NODE_POOL_NAME and gke != gke_node_pool_name("b" * 20 + "-fallback", {"spot": True})
