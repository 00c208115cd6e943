"""A policy judges what a pool is, with what the stack says around it.

- `gpu-pool-max-size-cap` judges a pool's total: on EKS a pool is one node group per zone plus a fallback
  group per zone, each under the cap while the pool is not.
- Scope limits what is judged, not what is read: a library pool on a private GKE cluster the program
  declares itself (out of scope) has private nodes; on a public one it does not.
"""

from __future__ import annotations

from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import stack_values

P = "elastic-gpu:"


def test_the_gpu_cap_judges_a_pools_total_over_zones_and_fallback(program_dir) -> None:
    values = stack_values("aws-dev")
    values[P + "cluster"]["zones"] = ["us-west-2a", "us-west-2b", "us-west-2c"]
    base = values[P + "gpuPools"][0]
    values[P + "gpuPools"] = [
        base | {"name": "zonal", "maxSize": 21, "onDemandFallback": False},  # 3 groups of 7
        base | {"name": "split", "maxSize": 12, "onDemandFallback": True},  # 3 x 4 spot + 3 x 4 fallback
        base | {"name": "fits", "maxSize": 9, "onDemandFallback": True, "fallbackMaxSize": 9},  # 18
    ]
    preview = run_preview("test", program_dir(values))
    groups = [r for r in preview.of_type("aws:eks/nodeGroup:NodeGroup") if "general" not in r.name]
    assert len(groups) == 15 and max(g.inputs["scalingConfig"]["maxSize"] for g in groups) == 7  # each under 20
    messages = sorted(v.message for v in run_policies(preview).of("gpu-pool-max-size-cap"))
    assert len(messages) == 2, messages
    assert messages[0].startswith("GPU pool 'split' may grow to 24 nodes over its 6 node groups (")
    assert messages[1].startswith("GPU pool 'zonal' may grow to 21 nodes over its 3 node groups (")
    assert "above the cap of 20" in messages[0] and "fallbackMaxSize" in messages[0]


PRIVATE_GKE = """
import pulumi_gcp as gcp
from elastic_gpu import GkeCluster, SpotGpuPool, SpotGpuPoolArgs

raw = gcp.container.Cluster(
    "ml-raw", name="ml", location="us-central1", initial_node_count=1, remove_default_node_pool=True,
    private_cluster_config={"enable_private_nodes": PRIVATE, "master_ipv4_cidr_block": "172.16.0.0/28"},
)
cluster = GkeCluster.existing("ml", cluster_name=raw.name, project="acme-ml", location="us-central1",
                              zones=["us-central1-a"], kubernetes_version="1.35")
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g2-standard-4"], max_size=2,
                                  on_demand_fallback=True))
"""


def test_a_library_pool_on_a_private_cluster_of_the_program_passes_and_on_a_public_one_fails(run_program) -> None:
    private = run_policies(run_program(PRIVATE_GKE.replace("PRIVATE", "True")))
    assert private.of("no-public-node-ips") == []
    public = run_policies(run_program(PRIVATE_GKE.replace("PRIVATE", "False")))
    flagged = sorted(v.name for v in public.of("no-public-node-ips"))
    assert [n.split("-")[:2] for n in flagged] == [["l4", "fallback"], ["l4", "spot"]], flagged
    # the cluster itself is context, not judged: nothing is reported on it
    assert not [v for v in public.violations if v.name == "ml-raw"]
