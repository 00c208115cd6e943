"""What a GKE stack creates for itself in the user's project: the nodes' own service account, its own
network, and (when asked) the APIs it calls."""

from __future__ import annotations

from typing import Any

import pytest

from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.gcp.config_rules import NODE_SERVICE_ACCOUNT_ROLE, PODS_CIDR, SERVICES_CIDR
from elastic_gpu.preflight import FINDINGS_INPUT
from elastic_gpu.preflight import TYPE_TOKEN as PREFLIGHT
from elastic_gpu.tools.offline.account import described_account
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import stack_preview, stack_values

NS = "elastic-gpu:"
CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
ACCOUNT = "gcp:serviceaccount/account:Account"
IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
NETWORK = "gcp:compute/network:Network"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
SERVICE = "gcp:projects/service:Service"
FIREWALL = "gcp:compute/firewall:Firewall"
STACKS = ["gcp-dev", "gcp-prod", "gcp-autoprovision"]


def _preview(program_dir, stack: str, **cluster: Any):
    values = stack_values(stack)
    values[NS + "cluster"] = {**values[NS + "cluster"], **cluster}
    return run_preview("test", program_dir(values))


@pytest.mark.parametrize("stack", STACKS)
def test_every_node_runs_as_the_clusters_own_least_privilege_account(stack: str) -> None:
    p = stack_preview(stack)
    name = stack_values(stack)[NS + "cluster"]["name"]
    project = stack_values(stack)[NS + "cluster"]["project"]
    email = f"{name}-nodes@{project}.iam.gserviceaccount.com"
    [account] = p.of_type(ACCOUNT)
    assert account.inputs["accountId"] == f"{name}-nodes" and account.inputs["project"] == project
    [member] = p.of_type(IAM_MEMBER)
    assert member.inputs["role"] == NODE_SERVICE_ACCOUNT_ROLE == "roles/container.defaultNodeServiceAccount"
    assert member.inputs["member"] == f"serviceAccount:{email}"
    pools = p.of_type(NODE_POOL)
    assert pools and {r.inputs["nodeConfig"]["serviceAccount"] for r in pools} == {email}
    cluster = p.one(CLUSTER, f"{name}-gke")
    assert cluster.inputs["nodeConfig"]["serviceAccount"] == email  # the default pool, until removed
    scaling = cluster.inputs["clusterAutoscaling"]
    if scaling.get("enabled"):  # auto-created node pools run as it too
        assert scaling["autoProvisioningDefaults"]["serviceAccount"] == email
        for cc in p.of_type(COMPUTE_CLASS):
            assert cc.inputs["spec"]["nodePoolConfig"]["serviceAccount"] == email


def test_the_users_own_node_account_without_the_node_role_is_a_preflight_warning(program_dir) -> None:
    email = "gpu-nodes@elastic-gpu-prod.iam.gserviceaccount.com"
    values = stack_values("gcp-prod")
    values[NS + "cluster"] = {**values[NS + "cluster"], "nodeServiceAccount": email}
    root = program_dir(values)

    def node_findings(bindings: dict[str, list[str]]) -> list[dict[str, Any]]:
        [component] = run_preview("test", root, described_account({"gcp": {"iamBindings": bindings}})).of_type(
            PREFLIGHT
        )
        return [f for f in component.inputs[FINDINGS_INPUT] if f["check"] == "node-service-account"]

    [lacking] = node_findings({"roles/viewer": [f"serviceAccount:{email}"]})  # a new project binds it nothing
    assert lacking["level"] == "warning" and lacking["pool"] == "cluster"
    assert f"{email} (cluster.nodeServiceAccount) lacks roles/container.defaultNodeServiceAccount" in lacking["message"]
    assert lacking["fix"].startswith(
        f"gcloud projects add-iam-policy-binding elastic-gpu-prod --member=serviceAccount:{email} "
        "--role=roles/container.defaultNodeServiceAccount (or check every path first: gcloud policy-intelligence "
        "troubleshoot-policy iam //cloudresourcemanager.googleapis.com/projects/elastic-gpu-prod "
    )
    assert "a role granted on a folder or the organization, or to a group, is not visible here" in lacking["message"]
    assert node_findings({NODE_SERVICE_ACCOUNT_ROLE: [f"serviceAccount:{email}"]}) == []
    bundled = ["logging.logWriter", "monitoring.metricWriter", "monitoring.viewer"]
    bundled += ["stackdriver.resourceMetadata.writer", "autoscaling.metricsWriter"]
    assert node_findings({f"roles/{r}": [f"serviceAccount:{email}"] for r in bundled}) == []
    assert len(node_findings({f"roles/{r}": [f"serviceAccount:{email}"] for r in bundled[:-1]})) == 1
    # the account the stack creates is granted the role by the stack itself: nothing to read
    [component] = stack_preview("gcp-prod").of_type(PREFLIGHT)
    assert [f for f in component.inputs[FINDINGS_INPUT] if f["check"] == "node-service-account"] == []


def test_the_users_own_node_account_replaces_the_created_one(program_dir) -> None:
    email = "gpu-nodes@elastic-gpu-prod.iam.gserviceaccount.com"
    # With node auto-provisioning on, the node pools it creates for any Pod run as it too.
    p = _preview(program_dir, "gcp-autoprovision", nodeServiceAccount=email, nodeAutoProvisioning=True)
    assert p.of_type(ACCOUNT) == [] and p.of_type(IAM_MEMBER) == []
    assert {r.inputs["nodeConfig"]["serviceAccount"] for r in p.of_type(NODE_POOL)} == {email}
    [cluster] = p.of_type(CLUSTER)
    assert cluster.inputs["clusterAutoscaling"]["autoProvisioningDefaults"]["serviceAccount"] == email
    assert {cc.inputs["spec"]["nodePoolConfig"]["serviceAccount"] for cc in p.of_type(COMPUTE_CLASS)} == {email}


@pytest.mark.parametrize("stack", STACKS)
def test_the_cluster_is_in_its_own_network_not_default(stack: str) -> None:
    p = stack_preview(stack)
    name = stack_values(stack)[NS + "cluster"]["name"]
    [net] = p.of_type(NETWORK)
    [subnet] = p.of_type(SUBNETWORK)
    assert net.inputs["name"] == f"{name}-net" and net.inputs["autoCreateSubnetworks"] is False
    assert subnet.inputs["ipCidrRange"] == "10.0.0.0/16" and subnet.inputs["privateIpGoogleAccess"] is True
    assert [(r["rangeName"], r["ipCidrRange"]) for r in subnet.inputs["secondaryIpRanges"]] == [
        ("pods", PODS_CIDR),
        ("services", SERVICES_CIDR),
    ]
    cluster = p.one(CLUSTER, f"{name}-gke").inputs
    assert cluster["network"] != "default" and "subnetwork" in cluster
    assert cluster["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "pods",
        "servicesSecondaryRangeName": "services",
    }
    for r in p.of_type("gcp:compute/router:Router") + p.of_type(FIREWALL):
        assert r.inputs["network"] == cluster["network"], r.name  # the NAT and Kueue's rule: the new network


def test_a_brought_network_is_joined_and_none_is_created(program_dir) -> None:
    p = _preview(program_dir, "gcp-prod", network="shared-vpc", subnetwork="gpu-nodes")
    assert p.of_type(NETWORK) == [] and p.of_type(SUBNETWORK) == []
    [cluster] = p.of_type(CLUSTER)
    assert cluster.inputs["network"] == "shared-vpc" and cluster.inputs["subnetwork"] == "gpu-nodes"
    [fw] = p.of_type(FIREWALL)
    assert fw.inputs["network"] == "shared-vpc"


def test_services_are_enabled_only_when_asked_and_never_disabled(program_dir) -> None:
    assert stack_preview("gcp-dev").of_type(SERVICE) == []
    p = _preview(program_dir, "gcp-dev", enableServices=True)
    services = p.of_type(SERVICE)
    assert sorted(s.inputs["service"] for s in services) == [
        "compute.googleapis.com",
        "container.googleapis.com",
        "iam.googleapis.com",  # the node service account is created
    ]
    assert all(s.inputs["disableOnDestroy"] is False for s in services)
    [cluster] = p.of_type(CLUSTER)
    assert {s.urn for s in services} <= set(cluster.depends_on)


def _errors(stack: str, **cluster: Any) -> str:
    values = stack_values(stack)
    values[NS + "cluster"] = {**values[NS + "cluster"], **cluster}
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return str(exc.value)


def test_network_and_account_settings_are_checked() -> None:
    assert "cluster.subnetwork: 'nodes' needs cluster.network" in _errors("gcp-dev", subnetwork="nodes")
    assert "cluster.networkCidr: sizes the network the stack creates, and cluster.network brings one ('vpc')" in (
        _errors("gcp-dev", network="vpc", networkCidr="10.1.0.0/16")
    )
    assert "cluster.networkCidr: 10.4.0.0/16 overlaps Pods (10.4.0.0/14)" in _errors(
        "gcp-dev", networkCidr="10.4.0.0/16"
    )
    assert "cluster.nodeServiceAccount: 'nodes' is not a service account email" in (
        _errors("gcp-dev", nodeServiceAccount="nodes")
    )
    assert "cluster.network: a GCP-only setting; remove it for cloud 'azure' (got 'vpc')" in (
        _errors("azure-dev", network="vpc")
    )


def test_an_existing_clusters_pools_run_as_the_given_node_account(run_program) -> None:
    email = "nodes@p-123456.iam.gserviceaccount.com"
    p = run_program(
        "from elastic_gpu import GkeCluster, SpotGpuPool, SpotGpuPoolArgs\n"
        'c = GkeCluster.existing("ext", cluster_name="c1", project="p-123456", location="us-central1",\n'
        '    zones=["us-central1-a"], kubernetes_version="1.35", private_nodes=True, node_service_account=EMAIL)\n'
        'SpotGpuPool("l4", SpotGpuPoolArgs(cluster=c, instance_types=["g2-standard-8"], max_size=2))\n'.replace(
            "EMAIL", repr(email)
        )
    )
    assert {r.inputs["nodeConfig"]["serviceAccount"] for r in p.of_type(NODE_POOL)} == {email}
    assert p.of_type(ACCOUNT) == [] and p.of_type(NETWORK) == []


def test_an_existing_clusters_node_account_must_be_an_email() -> None:
    from elastic_gpu import GkeCluster

    with pytest.raises(ConfigError) as exc:
        GkeCluster.existing(
            "ext", cluster_name="c1", project="p-123456", location="us-central1", zones=["us-central1-a"],
            kubernetes_version="1.35", node_service_account="nodes",
        )  # fmt: skip
    assert "node_service_account: 'nodes' is not a service account email" in str(exc.value)


def test_gke_cluster_args_check_the_network_and_the_derived_account_id() -> None:
    from elastic_gpu.gke_cluster import GkeClusterArgs, gke_cluster_problems

    def problems(**kw: Any) -> str:
        base = dict(cluster_name="c1", project="p-123456", region="us-central1", zones=["us-central1-a"])
        return "\n".join(gke_cluster_problems("x", GkeClusterArgs(kubernetes_version="1.35", **(base | kw))))

    assert problems() == ""
    assert "cluster_name: the node service account id 'a-very-long-gke-cluster-name-nodes'" in problems(
        cluster_name="a-very-long-gke-cluster-name"
    )
    assert (
        problems(cluster_name="a-very-long-gke-cluster-name", node_service_account="n@p.iam.gserviceaccount.com") == ""
    )
    assert "GkeClusterArgs.subnetwork: 's' needs network, the VPC network it belongs to" in problems(subnetwork="s")
    assert "GkeClusterArgs.node_cidr: 10.8.0.0/16 overlaps Services (10.8.0.0/20)" in problems(node_cidr="10.8.0.0/16")


def test_a_control_plane_range_inside_the_pod_range_is_named_first() -> None:
    assert "cluster.controlPlaneCidr: 10.4.0.0/28 overlaps Pods (10.4.0.0/14)" in _errors(
        "gcp-prod", controlPlaneCidr="10.4.0.0/28"
    )
