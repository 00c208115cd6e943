"""A GKE cluster the pools join, read as it is: its Workload Identity pool decides whether the node pools ask for
the GKE metadata server, its private nodes without a Cloud NAT are a finding that names the registries they cannot
reach, a network the stack does not own gets no Router or NAT from it, and the nodes' service account comes from
the cluster (or the program's own Account)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import UPSTREAM, stem, upstream_copy

from elastic_gpu.errors import ConfigError
from elastic_gpu.gcp.cluster import PUBLIC_REGISTRIES
from elastic_gpu.tools.offline.runner import Preview, run_preview

NODE_POOL = "gcp:container/nodePool:NodePool"
ROUTER = "gcp:compute/router:Router"
NAT = "gcp:compute/routerNat:RouterNat"


def gpu_pools(preview: Preview) -> list:
    return [p for p in preview.of_type(NODE_POOL) if p.name.startswith("l4-")]


def nat_findings(preview: Preview) -> list[str]:
    return [w for w in preview.warnings if "private nodes without a Cloud NAT" in w]


# --- Workload Identity: GKE_METADATA only with a workload pool ------------------------------------------------


def test_a_cluster_without_a_workload_pool_gets_no_gke_metadata_request() -> None:
    # pulumi/examples gcp-py-gke declares no workload_identity_config: GKE would refuse GKE_METADATA there.
    pools = gpu_pools(run_preview("dev", UPSTREAM / "gcp-py-gke"))
    assert pools and all(p.inputs["nodeConfig"].get("workloadMetadataConfig") is None for p in pools)


def test_the_same_cluster_with_a_workload_pool_gets_it(tmp_path: Path) -> None:
    program = upstream_copy(
        "gcp-py-gke",
        tmp_path,
        (
            "    initial_node_count=NODE_COUNT,\n",
            "    initial_node_count=NODE_COUNT,\n"
            '    workload_identity_config={"workload_pool": f"{project}.svc.id.goog"},\n',
        ),
    )
    pools = gpu_pools(run_preview("dev", program))
    assert pools and all(p.inputs["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"} for p in pools)


EXISTING = """
from elastic_gpu import GkeCluster, SpotGpuPool, SpotGpuPoolArgs
c = GkeCluster.existing("ext", cluster_name="c1", project="acme-ml", location="us-central1",
                        zones=["us-central1-a"], kubernetes_version="1.35"EXTRA)
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=c, instance_types=["g2-standard-4"], max_size=2))
"""


def test_an_existing_cluster_s_workload_pool_is_read_through_get_cluster(run_program, tmp_path: Path) -> None:
    # The mock knows the cluster only by name: a Standard cluster as created by default, without Workload Identity.
    plain = run_program(EXISTING.replace("EXTRA", ""))
    assert [p.inputs["nodeConfig"].get("workloadMetadataConfig") for p in gpu_pools(plain)] == [None]
    # Described with a pool (as getCluster answers for a cluster that has one), the node pool asks for it.
    (tmp_path / "offline_mocks.py").write_text(
        "INVOKES = {'gcp:container/getCluster:getCluster': lambda a: {'name': a['name'], 'endpoint': '203.0.113.9',"
        " 'masterAuths': [{'clusterCaCertificate': 'Q0E='}], 'workloadIdentityConfigs': "
        "[{'workloadPool': 'acme-ml.svc.id.goog'}], 'privateClusterConfigs': [{'enablePrivateNodes': True}]}}\n"
    )
    described = run_program(EXISTING.replace("EXTRA", ""))
    assert [p.inputs["nodeConfig"]["workloadMetadataConfig"] for p in gpu_pools(described)] == [
        {"mode": "GKE_METADATA"}
    ]
    # ... and its private nodes, read from getCluster, are a finding until a NAT is said to serve them.
    assert nat_findings(described) and not nat_findings(plain)
    assert not nat_findings(run_program(EXISTING.replace("EXTRA", ", cloud_nat=True")))


# --- private nodes and Cloud NAT -------------------------------------------------------------------------------


def test_the_gcp_template_s_private_nodes_without_nat_are_a_finding_naming_the_registries() -> None:
    preview = run_preview("dev", UPSTREAM / "kubernetes-gcp-python")
    [finding] = nat_findings(preview)
    assert all(registry in finding for registry in PUBLIC_REGISTRIES)
    assert "cloud_nat=True" in finding and "ImagePullBackOff" in finding
    # Its cluster has a workload pool: its GPU node pools ask for the GKE metadata server, and run as the
    # template's own node service account (an Output of its Account).
    pools = gpu_pools(preview)
    assert {p.inputs["nodeConfig"]["workloadMetadataConfig"]["mode"] for p in pools} == {"GKE_METADATA"}
    assert {p.inputs["nodeConfig"]["serviceAccount"] for p in pools} == {
        "gke-cluster-np-1-sa@acme-ml.iam.gserviceaccount.com"
    }


def test_the_gcp_template_set_up_right_has_no_nat_finding(tmp_path: Path) -> None:
    nat = (
        '\nrouter = gcp.compute.Router("gke-router", network=gke_network.id, region=gcp_region)\n'
        'gcp.compute.RouterNat("gke-nat", router=router.name, region=gcp_region, nat_ip_allocate_option="AUTO_ONLY",\n'
        '                      source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",\n'
        '                      subnetworks=[{"name": gke_subnet.id, "source_ip_ranges_to_nats": ["ALL_IP_RANGES"]}])\n'
    )
    program = upstream_copy(
        "kubernetes-gcp-python",
        tmp_path,
        ("# --- elastic-gpu: the lines a user adds", nat + "# --- elastic-gpu: the lines a user adds"),
        ("node_service_account=gke_nodepool_sa.email)", "node_service_account=gke_nodepool_sa.email, cloud_nat=True)"),
    )
    assert nat_findings(run_preview("dev", program)) == []


def test_public_nodes_are_no_nat_finding() -> None:
    assert nat_findings(run_preview("dev", UPSTREAM / "gcp-py-gke")) == []


OWN = """
from elastic_gpu import GkeCluster, GkeClusterArgs
GkeCluster("c", GkeClusterArgs(cluster_name="c1", project="acme-ml", region="us-central1", zones=["us-central1-a"],
                               kubernetes_version="1.35", private_nodes=True EXTRA))
"""


def test_an_owned_network_gets_a_nat_for_its_own_subnetwork_only(run_program) -> None:
    preview = run_program(OWN.replace("EXTRA", ""))
    [nat] = preview.of_type(NAT)
    [subnet] = preview.of_type("gcp:compute/subnetwork:Subnetwork")
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    # the subnetwork the cluster created, by its id
    assert nat.inputs["subnetworks"] == [{"name": subnet.id, "sourceIpRangesToNats": ["ALL_IP_RANGES"]}]
    assert nat_findings(preview) == []


def test_a_joined_network_gets_no_router_or_nat_and_a_finding_until_one_is_said_to_exist(run_program) -> None:
    joined = run_program(OWN.replace("EXTRA", ', network="shared-vpc", subnetwork="gpu-nodes"'))
    assert joined.of_type(ROUTER) == [] and joined.of_type(NAT) == []
    [finding] = nat_findings(joined)
    assert finding.startswith("GkeCluster 'c': ") and "cloud_nat=True (stack config cluster.cloudNat: true)" in finding
    told = run_program(OWN.replace("EXTRA", ', network="shared-vpc", subnetwork="gpu-nodes", cloud_nat=True'))
    assert told.of_type(NAT) == [] and nat_findings(told) == []


def test_a_network_without_its_subnetwork_is_refused_naming_both(run_program) -> None:
    with pytest.raises(ConfigError) as exc:
        run_program(OWN.replace("EXTRA", ', network="shared-vpc"'))
    assert "GkeClusterArgs.network: 'shared-vpc' needs subnetwork" in str(exc.value)
    assert "(got network without subnetwork)" in str(exc.value)


# --- the nodes' service account --------------------------------------------------------------------------------

FROM_CLUSTER = """
import pulumi, pulumi_gcp as gcp
from elastic_gpu import GkeCluster, SpotGpuPool, SpotGpuPoolArgs
sa = gcp.serviceaccount.Account("sa", account_id="gpu-nodes", project="acme-ml")
cluster = gcp.container.Cluster("k", location="us-central1", project="acme-ml", initial_node_count=1,
                                node_config={"service_account": NODE_SA})
c = GkeCluster.from_cluster("g", cluster, zones=["us-central1-a"], private_nodes=False EXTRA)
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=c, instance_types=["g2-standard-4"], max_size=2))
"""


def test_from_cluster_takes_the_node_account_from_the_cluster_or_the_program(run_program) -> None:
    declared = run_program(FROM_CLUSTER.replace("NODE_SA", "sa.email").replace("EXTRA", ""))
    [pool] = gpu_pools(declared)
    assert pool.inputs["nodeConfig"]["serviceAccount"] == "gpu-nodes@acme-ml.iam.gserviceaccount.com"
    given = run_program(FROM_CLUSTER.replace("NODE_SA", "None").replace("EXTRA", ", node_service_account=sa.email"))
    [pool2] = gpu_pools(given)
    assert pool2.inputs["nodeConfig"]["serviceAccount"] == "gpu-nodes@acme-ml.iam.gserviceaccount.com"
    # An account known only as an Output is marked in the name's digest, the same whichever Output it is.
    assert pool.inputs["name"] == pool2.inputs["name"] and stem(pool.inputs["name"]) == "l4-spot"
    # A plain email is in the digest itself: another email, another name (GKE replaces the pool by a new one).
    plain = run_program(
        FROM_CLUSTER.replace("NODE_SA", "None").replace(
            "EXTRA", ", node_service_account='other@acme-ml.iam.gserviceaccount.com'"
        )
    )
    [pool3] = gpu_pools(plain)
    assert pool3.inputs["nodeConfig"]["serviceAccount"] == "other@acme-ml.iam.gserviceaccount.com"
    assert pool3.inputs["name"] != pool.inputs["name"]
    # Neither declared on the cluster nor given: GKE's default.
    neither = run_program(FROM_CLUSTER.replace("NODE_SA", "None").replace("EXTRA", ""))
    assert gpu_pools(neither)[0].inputs["nodeConfig"].get("serviceAccount") is None


# --- the stack file -----------------------------------------------------------------------------------------------


def test_a_stack_joining_a_network_says_whether_it_has_a_nat(program_dir) -> None:
    from conftest import stack_values

    def preview(**cluster: object) -> Preview:
        values = stack_values("gcp-prod")  # private nodes
        values["elastic-gpu:cluster"] = {**values["elastic-gpu:cluster"], **cluster}
        return run_preview("test", program_dir(values))

    joined = preview(network="shared-vpc", subnetwork="gpu-nodes")
    assert joined.of_type(ROUTER) == [] and joined.of_type(NAT) == []
    [finding] = nat_findings(joined)
    assert "cluster.cloudNat: true" in finding
    assert nat_findings(preview(network="shared-vpc", subnetwork="gpu-nodes", cloudNat=True)) == []
