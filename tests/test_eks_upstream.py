"""EKS behaviour checked against upstream source: what a real `pulumi up` would do."""

from __future__ import annotations

import pytest
import yaml

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.aws.node_groups import eks_node_group_name
from elastic_gpu.eks_cluster import SHARED_NODE_ROLE_RISK
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.aws.mocks import pulumi_eks_cluster_problems
from elastic_gpu.tools.offline.diff import build_diff
from elastic_gpu.tools.replacement import POOL_REPLACE_FIELDS
from elastic_gpu.tools.simulation.run import simulate
from tests.conftest import stack_preview, stem
from tests.test_components_aws import program
from tests.test_diff import side


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
    default = stack_preview("aws-dev").one("kubernetes:apps/v1:Deployment", "cluster-autoscaler-deployment")
    assert not [f for f in default.inputs["spec"]["template"]["spec"]["containers"][0]["command"] if "namespace" in f]


# --- pulumi-eks: the offline mock refuses what pulumi-eks refuses; from_pulumi_eks ------------------

PULUMI_EKS_PROGRAM = """
import pulumi
import pulumi_eks as eks
from elastic_gpu import EksCluster, SpotGpuPool, SpotGpuPoolArgs

cluster = eks.Cluster("ml", name="ml", vpc_id="vpc-1", private_subnet_ids=["subnet-a"], authentication_mode="API",
                      create_oidc_provider=True, {cluster_args})
handle = EksCluster.from_pulumi_eks("h", cluster, subnet_ids={{"us-west-2a": "subnet-a"}}, kubernetes_version="1.33",
                                    {handle_args})
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=handle, instance_types=["g6.xlarge"], max_size=2))
"""


OWN_ROLE = 'node_role_arn="arn:aws:iam::123456789012:role/gpu"'


def pulumi_eks_program(cluster_args: str, handle_args: str = OWN_ROLE) -> str:
    return PULUMI_EKS_PROGRAM.format(cluster_args=cluster_args, handle_args=handle_args)


def test_the_pulumi_eks_mock_refuses_what_pulumi_eks_refuses(run_program) -> None:
    # A program fails as `pulumi up` would (pulumi-eks throws before it declares anything) ...
    with pytest.raises(ConfigError) as err:
        run_program(
            pulumi_eks_program('instance_type="m6i.large", node_group_options=eks.ClusterNodeGroupOptionsArgs()')
        )
    assert (
        "PulumiEksError: pulumi-eks Cluster 'ml': Setting nodeGroupOptions, and any set of singular node group "
        "option(s) on the cluster, is mutually exclusive. Choose a single approach. (singular options set: "
        "instanceType)"
    ) in str(err.value)
    # ... and each of cluster.ts createCore's checks, on the inputs as the engine hands them over.
    ngo = {"nodeGroupOptions": {"instanceType": "m6i.large"}}
    assert pulumi_eks_cluster_problems("c", {"subnetIds": ["s"], "privateSubnetIds": ["s"]}) == [
        "pulumi-eks Cluster 'c': subnetIds, and the use of publicSubnetIds and/or privateSubnetIds are mutually "
        "exclusive. Choose a single approach."
    ]
    assert pulumi_eks_cluster_problems("c", {"endpointPublicAccess": False, "publicAccessCidrs": ["10.0.0.0/8"]}) == [
        "pulumi-eks Cluster 'c': `publicAccessCidrs` can only be set when `endpointPublicAccess` is true"
    ]
    assert "mutually exclusive" in pulumi_eks_cluster_problems("c", {"instanceRole": "r", "instanceRoles": ["r"]})[0]
    assert "Auto Mode" in pulumi_eks_cluster_problems("c", {"autoMode": {"enabled": True}})[0]
    # JavaScript truthiness: 0 and false are unset, so these pass next to nodeGroupOptions.
    assert pulumi_eks_cluster_problems("c", ngo | {"minSize": 0, "nodeAssociatePublicIpAddress": False}) == []
    assert pulumi_eks_cluster_problems("c", ngo | {"desiredCapacity": 2})[0].endswith(
        "(singular options set: desiredCapacity)"
    )


def test_from_pulumi_eks_requires_node_role_arn_and_says_what_sharing_costs(run_program) -> None:
    """EKS removes a role's aws-auth mapping when the last managed node group using it is deleted, and
    self-managed nodes on that role go NotReady (EKS User Guide, delete-managed-node-group): the GPU groups no
    longer default to the cluster's instance role (pulumi-eks's ManagedNodeGroup takes no default either)."""
    for cluster_args in (
        "node_group_options=eks.ClusterNodeGroupOptionsArgs(min_size=1)",
        "skip_default_node_group=True",
    ):
        with pytest.raises(ConfigError) as err:
            run_program(pulumi_eks_program(cluster_args, handle_args=""))
        [problem] = err.value.problems
        assert problem == (
            "EksCluster.from_pulumi_eks 'h': node_role_arn: required; without it the GPU node groups would share the "
            "pulumi-eks cluster's instance role with its self-managed nodes. When the last managed node group using "
            "a node IAM role is deleted, EKS removes that role from the aws-auth ConfigMap, and self-managed nodes "
            'using the same role move to NotReady (EKS User Guide, "Delete a managed node group from your cluster", '
            "https://docs.aws.amazon.com/eks/latest/userguide/delete-managed-node-group.html). Scaling to zero "
            "deletes no group; removing the last pool on the role does, and so does moving the groups to another "
            "role later (node-group names carry a digest of the fields EKS replaces on, node role included, so the "
            "new group is created and the old one deleted; a replacement that keeps the role leaves it in use). "
            "pass node_role_arn= a role of the GPU nodes' own (AmazonEKSWorkerNodePolicy, AmazonEKS_CNI_Policy, "
            "AmazonEC2ContainerRegistryReadOnly; examples/existing-eks), or share the instance role knowingly (e.g. "
            "GPU groups already deployed on it, which moving would delete): "
            "node_role_arn=cluster.instance_roles.apply(lambda roles: roles[0].arn)"
        )
    # A role of their own: used, and nothing to warn about.
    preview = run_program(pulumi_eks_program("skip_default_node_group=True"))
    groups = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    assert {g.inputs["nodeRoleArn"] for g in groups} == {"arn:aws:iam::123456789012:role/gpu"}
    assert not [w for w in preview.warnings if "node_role_arn" in w]


def test_from_pulumi_eks_warns_when_gpu_groups_share_the_self_managed_role_knowingly(run_program) -> None:
    shared = "node_role_arn=cluster.instance_roles.apply(lambda roles: roles[0].arn)"
    preview = run_program(pulumi_eks_program("node_group_options=eks.ClusterNodeGroupOptionsArgs(min_size=1)", shared))
    groups = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    assert {g.inputs["nodeRoleArn"] for g in groups} == {"arn:aws:mock::123456789012:role/ml-instanceRole-role"}
    [warning] = [w for w in preview.warnings if "node_role_arn" in w]
    assert warning == (
        "EksCluster.from_pulumi_eks 'h': node_role_arn: the pulumi-eks cluster's instance role, which its "
        f"self-managed nodes use too. {SHARED_NODE_ROLE_RISK}"
    )


# --- which groups the autoscaler scales (only the library's groups) ---------------------------------


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
    assert outcome.tiers[-1][0].name == "system"


# --- a replacement renames the node group, so it is created first ------------------------------------

EXISTING_PROGRAM = """
import pulumi
from elastic_gpu import EksCluster, SpotGpuPool, SpotGpuPoolArgs

cluster = EksCluster.existing(
    "prod-a", cluster_name="prod-a", kubernetes_version="1.33", region="us-east-1",
    node_role_arn="{role}", subnet_ids={{"us-east-1a": "{subnet_a}", "us-east-1b": "subnet-b"}},
    oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/x", oidc_provider_url="https://x")
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g6.xlarge"], max_size=2))
"""
ROLE = "arn:aws:iam::123456789012:role/nodes"


def _existing(run_program, role: str = ROLE, subnet_a: str = "subnet-a"):
    return run_program(EXISTING_PROGRAM.format(role=role, subnet_a=subnet_a))


@pytest.mark.parametrize(
    ("change", "field", "replaced"),
    [
        ({"subnet_a": "subnet-a2"}, "subnetIds", {"l4-spot-us-east-1a"}),
        (
            {"role": "arn:aws:iam::123456789012:role/gpu-nodes"},
            "nodeRoleArn",
            {"l4-spot-us-east-1a", "l4-spot-us-east-1b"},
        ),
    ],
)
def test_a_field_the_provider_replaces_on_renames_the_group_so_diff_says_create_first(
    run_program, change: dict[str, str], field: str, replaced: set[str]
) -> None:
    base = _existing(run_program)
    head = _existing(run_program, **change)
    diff = build_diff(side(base), side(head))
    groups = [c for c in diff.of("replace") if c.type == "aws:eks/nodeGroup:NodeGroup"]
    assert {c.name for c in groups} == replaced
    for c in groups:
        # a new name: the engine creates the new group, then deletes the old one (EKS refuses a second
        # group of the same name, so under a kept name the provider would have to delete first)
        assert field in c.forced_by and "nodeGroupName" in c.changed and not c.delete_first, c
    # the autoscaler-facing names follow (the digest differs, the stem stays)
    before = {r.name: r.inputs["nodeGroupName"] for r in base.of_type("aws:eks/nodeGroup:NodeGroup")}
    after = {r.name: r.inputs["nodeGroupName"] for r in head.of_type("aws:eks/nodeGroup:NodeGroup")}
    for name in replaced:
        assert stem(before[name]) == stem(after[name]) and before[name] != after[name]


def test_the_name_digest_covers_every_replacing_field_of_the_table() -> None:
    base = {
        "clusterName": "c",
        "nodeRoleArn": ROLE,
        "subnetIds": ["subnet-a", "subnet-b"],
        "instanceTypes": ["g6.xlarge"],
        "capacityType": "SPOT",
        "amiType": "AL2023_x86_64_NVIDIA",
        "launchTemplate.id": "lt-1",
    }
    name = eks_node_group_name("c-l4-spot", base)
    fields = [f for f in POOL_REPLACE_FIELDS[EKS_NODE_GROUP].fields if f != "nodeGroupName"]
    for f in fields:  # every field of the one table changes the name, the ones the builder leaves unset too
        assert eks_node_group_name("c-l4-spot", base | {f: "changed"}) != name, f
    # the subnets are a set in the provider: their order is no change
    assert eks_node_group_name("c-l4-spot", base | {"subnetIds": ["subnet-b", "subnet-a"]}) == name
    with pytest.raises(ValueError, match="labels"):
        eks_node_group_name("c-l4-spot", base | {"labels": {}})


# --- scale-from-zero calls the EKS API: an interface endpoint in prod, a warning on existing clusters --


def test_prod_declares_an_eks_interface_endpoint_beside_ecr() -> None:
    from tests.conftest import stack_preview

    prod = stack_preview("aws-prod")
    endpoints = {r.inputs["serviceName"]: r.inputs for r in prod.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")}
    region = prod.config["elastic-gpu:cluster"]["region"]
    eks = endpoints[f"com.amazonaws.{region}.eks"]
    assert eks["vpcEndpointType"] == "Interface" and eks["privateDnsEnabled"] is True
    assert eks["subnetIds"] == endpoints[f"com.amazonaws.{region}.ecr.api"]["subnetIds"]
    assert not [w for w in prod.warnings if "eks:DescribeNodegroup" in w]


def test_an_existing_cluster_gets_the_endpoint_warning() -> None:
    from tests.test_examples import example

    [warning] = [w for w in example("existing-eks-plain").warnings if "eks:DescribeNodegroup" in w]
    assert warning.startswith("ClusterAutoscaler 'autoscaler': scaling a GPU group up from zero needs")
    assert "`eks` interface endpoint (com.amazonaws.<region>.eks" in warning


# --- a resize must not reset the node count the autoscaler set -----------------------------------------


def test_the_project_refreshes_before_every_update() -> None:
    from tests.conftest import ROOT

    for project in [ROOT / "Pulumi.yaml", *sorted((ROOT / "examples").glob("*/Pulumi.yaml"))]:
        assert yaml.safe_load(project.read_text())["options"] == {"refresh": "always"}, project


def test_a_program_without_refresh_is_warned_that_a_resize_drains_the_group(run_program) -> None:
    preview = run_program(program())  # run_program's Pulumi.yaml has no options
    [warning] = [w for w in preview.warnings if "refresh" in w]
    assert warning.startswith("Pulumi.yaml: add `options: {refresh: always}`: 4 node pool(s) leave their size")
    assert "(ignore_changes: scalingConfig.desiredSize)" in warning and "0 for a GPU group" in warning
    # the node groups themselves still keep the size out of the diff
    assert all(
        g.ignore_changes == ["scalingConfig.desiredSize"] for g in preview.of_type("aws:eks/nodeGroup:NodeGroup")
    )


def test_the_shipped_stacks_and_examples_are_not_warned_about_refresh() -> None:
    from tests.conftest import stack_preview
    from tests.test_examples import example

    previews = [stack_preview("aws-dev"), example("existing-eks"), example("existing-eks-plain")]
    assert not [w for p in previews for w in p.warnings if "refresh" in w]
