"""EKS behaviour checked against upstream source (issue 16): what a real `pulumi up` would do."""

from __future__ import annotations

import pytest

from elastic_gpu.errors import ConfigError
from elastic_gpu.simulation.run import simulate
from tests.test_components_aws import program


def _command(preview, name: str = "ca-deployment") -> list[str]:
    dep = preview.one("kubernetes:apps/v1:Deployment", name).inputs
    return dep["spec"]["template"]["spec"]["containers"][0]["command"]


def test_autoscaler_in_its_own_namespace_reads_its_priorities_there(run_program) -> None:
    source = program().replace("gpu_pools=pools))", 'gpu_pools=pools, namespace="autoscaling"))')
    preview = run_program(source)
    # The priority ConfigMap, status ConfigMap and lease live in --namespace (flag default kube-system).
    assert "--namespace=autoscaling" in _command(preview)
    cm = preview.one("kubernetes:core/v1:ConfigMap", "ca-priorities").inputs
    assert cm["metadata"]["namespace"] == "autoscaling"
    # The default namespace needs no flag (the Deployment of existing stacks does not change).
    assert not [f for f in _command(run_program(program())) if f.startswith("--namespace")]


# --- pulumi-eks: the offline mock refuses what pulumi-eks refuses; from_pulumi_eks ------------------

PULUMI_EKS_PROGRAM = """
import pulumi
import pulumi_eks as eks
from elastic_gpu import EksCluster, SpotGpuPool, SpotGpuPoolArgs

cluster = eks.Cluster("ml", name="ml", vpc_id="vpc-1", private_subnet_ids=["subnet-a"], authentication_mode="API",
                      create_oidc_provider=True, {cluster_args})
handle = EksCluster.from_pulumi_eks("h", cluster, subnet_ids={{"us-west-2a": "subnet-a"}}, kubernetes_version="1.33"
                                    {handle_args})
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=handle, instance_types=["g6.xlarge"], max_size=2))
"""


def pulumi_eks_program(cluster_args: str, handle_args: str = "") -> str:
    return PULUMI_EKS_PROGRAM.format(cluster_args=cluster_args, handle_args=handle_args)


@pytest.mark.parametrize(
    ("cluster_args", "message"),
    [
        (
            'instance_type="m6i.large", node_group_options=eks.ClusterNodeGroupOptionsArgs(min_size=1)',
            "Setting nodeGroupOptions, and any set of singular node group option(s) on the cluster, is mutually "
            "exclusive. Choose a single approach. (singular options set: instanceType)",
        ),
        (
            'subnet_ids=["subnet-a"]',
            "subnetIds, and the use of publicSubnetIds and/or privateSubnetIds are mutually exclusive",
        ),
        (
            'endpoint_public_access=False, public_access_cidrs=["10.0.0.0/8"]',
            "`publicAccessCidrs` can only be set when `endpointPublicAccess` is true",
        ),
    ],
)
def test_the_pulumi_eks_mock_refuses_what_pulumi_eks_refuses(run_program, cluster_args: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        run_program(pulumi_eks_program(cluster_args))
    assert f"PulumiEksError: pulumi-eks Cluster 'ml': {message}" in str(err.value)


def test_pulumi_eks_options_it_accepts_still_run(run_program) -> None:
    # JavaScript truthiness: min_size=0 and node_associate_public_ip_address=False count as unset.
    preview = run_program(
        pulumi_eks_program(
            "min_size=0, node_associate_public_ip_address=False, "
            'node_group_options=eks.ClusterNodeGroupOptionsArgs(instance_type="m6i.large")'
        )
    )
    assert preview.of_type("aws:eks/nodeGroup:NodeGroup")


def test_from_pulumi_eks_without_instance_roles_asks_for_node_role_arn(run_program) -> None:
    with pytest.raises(ConfigError) as err:
        run_program(pulumi_eks_program("skip_default_node_group=True"))
    assert "EksCluster.from_pulumi_eks 'h': node_role_arn: the pulumi-eks cluster has no instance role" in str(
        err.value
    )
    assert "IndexError" not in str(err.value)
    preview = run_program(
        pulumi_eks_program("skip_default_node_group=True", ', node_role_arn="arn:aws:iam::123456789012:role/gpu"')
    )
    groups = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    assert {g.inputs["nodeRoleArn"] for g in groups} == {"arn:aws:iam::123456789012:role/gpu"}
    assert not [w for w in preview.warnings if "node_role_arn" in w]


def test_from_pulumi_eks_warns_when_gpu_groups_share_the_self_managed_role(run_program) -> None:
    preview = run_program(pulumi_eks_program("node_group_options=eks.ClusterNodeGroupOptionsArgs(min_size=1)"))
    groups = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    assert {g.inputs["nodeRoleArn"] for g in groups} == {"arn:aws:mock::123456789012:role/ml-instanceRole-role"}
    [warning] = [w for w in preview.warnings if "node_role_arn" in w]
    assert warning.startswith("EksCluster.from_pulumi_eks 'h': node_role_arn: not given")
    assert "self-managed nodes using it go NotReady" in warning
    assert "delete-managed-node-group.html" in warning


# --- which groups the autoscaler scales (issue 16; issue 20: only the library's groups) -------------


def _cpu_pod(selector: dict[str, str]) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "cpu"},
        "spec": {
            "nodeSelector": selector,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
        },
    }


def test_the_simulation_never_scales_a_group_the_autoscaler_does_not_list() -> None:
    from tests.test_examples import example

    preview = example("existing-eks-plain")
    # The user's own "system" group fits the pod, but the program's autoscaler lists only its GPU groups.
    [outcome] = simulate(preview, _cpu_pod({"node-role": "system"}))
    assert not outcome.reaches
    assert outcome.reason.startswith("fits no node group")
    assert "system: not a group the autoscaler lists (--nodes)" in outcome.reason


def test_unranked_groups_come_last_not_never() -> None:
    # AKS's managed autoscaler sees every pool, the System pool too; the priority list ranks only the
    # library's pools, and priority.go BestOptions falls back to the unranked ones when no ranked one fits.
    from tests.conftest import stack_preview

    preview = stack_preview("azure-dev")
    [outcome] = simulate(preview, _cpu_pod({}))
    assert [[g.resource for g in tier] for tier in outcome.tiers] == [["general-pool"], ["gpu-dev-aks[0]"]]
    assert outcome.tiers[-1][0].group == "system"
