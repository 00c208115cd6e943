"""The cluster autoscaler (and the Karpenter controller) must be able to run: a selector that matches no node
pool fails the gate, naming the selector, and `simulate` says so instead of giving figures."""

from __future__ import annotations

from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.simulation import simulate

#: A user's own EKS program: their cluster and their system node group (no labels of ours), GPU pools from
#: the library, and the autoscaler placed by SELECTOR.
PROGRAM = """
import pulumi_aws as aws
from elastic_gpu import ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster, SpotGpuPool, SpotGpuPoolArgs

TAGS = {"project": "p", "cost-center": "cc"}
theirs = aws.eks.Cluster("theirs", name="prod-a", role_arn="arn:aws:iam::123456789012:role/eks", version="1.35",
                         vpc_config={"subnet_ids": ["subnet-1", "subnet-2"]}, tags=TAGS)
aws.eks.NodeGroup("system", cluster_name=theirs.name, node_group_name="system",
                  node_role_arn="arn:aws:iam::123456789012:role/nodes", subnet_ids=["subnet-1"],
                  instance_types=["m6i.large"], scaling_config={"min_size": 2, "max_size": 3, "desired_size": 2},
                  tags=TAGS)
cluster = EksCluster.existing(
    "prod-a", cluster_name=theirs.name, kubernetes_version="1.35",
    node_role_arn="arn:aws:iam::123456789012:role/prod-a-nodes",
    subnet_ids={"us-east-1a": "subnet-1", "us-east-1b": "subnet-2"},
    oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC",
    oidc_provider_url="https://oidc.eks.us-east-1.amazonaws.com/id/ABC", region="us-east-1", tags=TAGS)
l4 = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g6.xlarge"], max_size=4,
                                       on_demand_fallback=True, tags=TAGS))
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=cluster, gpu_pools=[l4], node_selector=SELECTOR))
"""

#: The policy's own hint, which the user's node group does not carry.
NOWHERE = {"elastic-gpu.io/capacity": "on-demand"}


def test_an_autoscaler_whose_selector_matches_no_node_group_fails_the_gate(run_program) -> None:
    preview = run_program(PROGRAM.replace("SELECTOR", repr(NOWHERE)))
    report = run_policies(preview)
    [violation] = report.of("controllers-schedulable")
    assert violation in report.mandatory
    assert violation.name == "ca-deployment"
    assert "nodeSelector elastic-gpu.io/capacity=on-demand" in violation.message
    assert "stays Pending" in violation.message
    # the user's node group is named with the labels it has (EKS's own), so the fix is plain
    assert "system (labels eks.amazonaws.com/capacityType=ON_DEMAND, eks.amazonaws.com/nodegroup=system" in (
        violation.message
    )
    # simulate: no figures, the reason instead
    outcomes = simulate(preview)
    assert outcomes and all(not o.reaches for o in outcomes)
    assert all("elastic-gpu.io/capacity=on-demand" in (o.reason or "") for o in outcomes)
    assert all(o.minutes_to_fallback is None and o.first_choice is None for o in outcomes)


def test_an_autoscaler_on_the_labels_eks_gives_the_node_group_passes(run_program) -> None:
    preview = run_program(PROGRAM.replace("SELECTOR", repr({"eks.amazonaws.com/capacityType": "ON_DEMAND"})))
    assert run_policies(preview).of("controllers-schedulable") == []
    outcomes = simulate(preview)
    assert outcomes and all(o.reaches and o.minutes_to_fallback is not None for o in outcomes)


def test_nodes_declared_elsewhere_are_named_in_the_policy_config(run_program) -> None:
    preview = run_program(PROGRAM.replace("SELECTOR", repr(NOWHERE)))
    named = {"name": "elsewhere", "labels": {"elastic-gpu.io/capacity": "on-demand"}}
    assert (
        run_policies(preview, config={"controllers-schedulable": {"nodeGroups": [named]}}).of("controllers-schedulable")
        == []
    )
    # a named group the autoscaler does not tolerate does not count
    tainted = {**named, "taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]}
    [violation] = run_policies(preview, config={"controllers-schedulable": {"nodeGroups": [tainted]}}).of(
        "controllers-schedulable"
    )
    assert "elsewhere (named" in violation.message


#: The same program on a cluster whose own nodes the program does not declare (another stack's cluster).
ELSEWHERE = PROGRAM[: PROGRAM.index('aws.eks.NodeGroup("system"')] + PROGRAM[PROGRAM.index("cluster = EksCluster") :]


def test_a_selector_no_declared_or_described_node_carries_fails_with_how_to_label_the_users_nodes(
    run_program,
) -> None:
    # The gate's own advice (elastic-gpu.io/capacity=on-demand) on a cluster whose nodes are declared elsewhere:
    # no node is known to carry it, and the Deployment would stay Pending.
    preview = run_program(ELSEWHERE.replace("SELECTOR", repr(NOWHERE)))
    assert not [r for r in preview.resources if r.type == "aws:eks/nodeGroup:NodeGroup" and r.name == "system"]
    [violation] = run_policies(preview).of("controllers-schedulable")
    assert violation.level == "mandatory"
    assert "needs nodes labelled elastic-gpu.io/capacity=on-demand" in violation.message
    # how to label them on EKS, managed and self-managed
    assert "--labels addOrUpdateLabels={elastic-gpu.io/capacity=on-demand}" in violation.message
    assert "pulumi-eks NodeGroupV2" in violation.message and "controllers-schedulable.nodeGroups" in violation.message
    assert "AgentPool" not in violation.message  # its cloud's advice only
    # described in the policy config: passes
    named = {"name": "system", "labels": {"elastic-gpu.io/capacity": "on-demand"}}
    config = {"controllers-schedulable": {"nodeGroups": [named]}}
    assert run_policies(preview, config=config).of("controllers-schedulable") == []


def test_a_selector_on_labels_every_node_has_is_not_judged_on_nodes_declared_elsewhere(run_program) -> None:
    preview = run_program(ELSEWHERE.replace("SELECTOR", repr({"kubernetes.io/os": "linux"})))
    assert run_policies(preview).of("controllers-schedulable") == []
