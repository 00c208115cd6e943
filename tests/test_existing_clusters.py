"""Pools and add-ons on clusters this library did not create, on every cloud, through the handle alone."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.mocks import MOCK_UUID
from elastic_gpu.tools.offline.runner import Preview
from tests.conftest import stack_preview, stem

OUTPUT_TEXT = ("Calling __str__", "Output[", "<pulumi.output")

EKS_PROGRAM = """
import pulumi, pulumi_aws as aws
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster, NvidiaDevicePlugin,
                         NvidiaDevicePluginArgs, SpotGpuPool, SpotGpuPoolArgs)

# The user's own cluster: its name is an Output, as from a StackReference or another resource.
theirs = aws.eks.Cluster("theirs", name="prod-a", role_arn="arn:aws:iam::123456789012:role/eks",
                         vpc_config={"subnet_ids": ["subnet-1", "subnet-2"]})
cluster = EksCluster.existing(
    "prod-a",
    cluster_name=theirs.name,
    kubernetes_version="1.33",
    node_role_arn="arn:aws:iam::123456789012:role/prod-a-nodes",
    subnet_ids={"us-east-1a": "subnet-1", "us-east-1b": "subnet-2"},
    oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC",
    oidc_provider_url=theirs.identities.apply(lambda ids: ids[0].oidcs[0].issuer),
    REGION
)
l4 = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g6.xlarge"], max_size=4,
                                       on_demand_fallback=True))
NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=cluster.provider, gpu_pools=[l4]))
ca = ClusterAutoscaler("ca", ClusterAutoscalerArgs(
    cluster=cluster, gpu_pools=[l4], node_selector={"eks.amazonaws.com/capacityType": "ON_DEMAND"},
    tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}]))
pulumi.export("names", l4.node_group_names)
pulumi.export("ids", l4.node_group_ids)
pulumi.export("asgs", l4.cloud_outputs["asg_names"])
pulumi.export("lts", l4.cloud_outputs["launch_template_ids"])
pulumi.export("role", ca.role_arn)
pulumi.export("sa", ca.service_account_name)
"""


def _no_output_text(preview: Preview) -> None:
    text = json.dumps(preview.to_json())
    for marker in OUTPUT_TEXT:
        assert marker not in text, f"{marker!r} in the preview JSON"


@pytest.fixture(scope="module")
def eks(tmp_path_factory) -> Preview:
    from elastic_gpu.tools.offline.runner import run_preview

    d = tmp_path_factory.mktemp("eks")
    (d / "Pulumi.yaml").write_text("name: consumer\nruntime: python\n")
    (d / "Pulumi.test.yaml").write_text("config: {}\n")
    (d / "__main__.py").write_text(EKS_PROGRAM.replace("REGION", ""))
    return run_preview("test", d)


def test_existing_eks_names_carry_the_real_cluster_name(eks: Preview) -> None:
    _no_output_text(eks)
    groups = {stem(r.inputs["nodeGroupName"]): r for r in eks.of_type("aws:eks/nodeGroup:NodeGroup")}
    assert set(groups) == {
        "prod-a-l4-spot-us-east-1a",
        "prod-a-l4-spot-us-east-1b",
        "prod-a-l4-fallback-us-east-1a",
        "prod-a-l4-fallback-us-east-1b",
    }
    for g in groups.values():
        assert g.inputs["clusterName"] == "prod-a"
        assert g.inputs["nodeRoleArn"] == "arn:aws:iam::123456789012:role/prod-a-nodes"
    assert groups["prod-a-l4-spot-us-east-1a"].inputs["subnetIds"] == ["subnet-1"]
    # EKS sets the auto-discovery tags on managed groups itself, and the autoscaler reads the rest
    # from the node group (eks:DescribeNodegroup): no Tag resource on any ASG
    assert not eks.of_type("aws:autoscaling/tag:Tag")
    assert all(
        "k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage" in g.inputs["tags"]
        for g in groups.values()
    )
    [policy] = eks.of_type("aws:iam/rolePolicy:RolePolicy")
    condition = json.loads(policy.inputs["policy"])["Statement"][1]["Condition"]["StringEquals"]
    assert condition == {"aws:ResourceTag/k8s.io/cluster-autoscaler/prod-a": "owned"}
    [cm] = eks.of_type("kubernetes:core/v1:ConfigMap")
    ranks = yaml.safe_load(cm.inputs["data"]["priorities"])
    # the regexes name the generated node-group names (stem + digest)
    assert ranks[50] == [
        f"^eks-{re.escape(groups[f'prod-a-l4-spot-us-east-1{z}'].inputs['nodeGroupName'])}-[0-9a-f-]+$" for z in "ab"
    ]
    assert ranks[10] == [
        f"^eks-{re.escape(groups[f'prod-a-l4-fallback-us-east-1{z}'].inputs['nodeGroupName'])}-[0-9a-f-]+$"
        for z in "ab"
    ]


def test_existing_eks_autoscaler_runs_where_told_without_a_general_pool(eks: Preview) -> None:
    assert not eks.of_type("elastic-gpu:index:GeneralPool")
    [dep] = eks.of_type("kubernetes:apps/v1:Deployment")
    spec = dep.inputs["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"eks.amazonaws.com/capacityType": "ON_DEMAND"}
    assert spec["tolerations"] == [{"key": "CriticalAddonsOnly", "operator": "Exists"}]
    flags = spec["containers"][0]["command"]
    assert sorted(f for f in flags if f.startswith("--nodes=")) == sorted(
        f"--nodes=0:{g.inputs['scalingConfig']['maxSize']}:eks-{g.inputs['nodeGroupName']}-{MOCK_UUID}"
        for g in eks.of_type("aws:eks/nodeGroup:NodeGroup")
    )
    # No region given: the AWS provider's (aws.getRegion).
    assert spec["containers"][0]["env"] == [{"name": "AWS_REGION", "value": "us-east-1"}]


def test_existing_eks_builds_a_secret_kubeconfig_from_get_cluster(eks: Preview) -> None:
    [provider] = [r for r in eks.of_type("pulumi:providers:kubernetes") if r.name == "prod-a-k8s"]
    assert provider.inputs["kubeconfig"] == "[secret]"
    [handle] = eks.of_type("elastic-gpu:index:ExistingEksCluster")
    assert provider.parent == handle.urn
    # Every Kubernetes object goes through that provider, never the ambient kubeconfig.
    for r in eks.resources:
        if r.type.startswith("kubernetes:"):
            assert r.provider and r.provider.startswith(provider.urn), r.name


def test_existing_eks_pool_and_addon_outputs(eks: Preview) -> None:
    out = {k: v.value for k, v in eks.outputs.items()}
    assert [stem(n) for n in out["names"]] == [
        "prod-a-l4-spot-us-east-1a",
        "prod-a-l4-spot-us-east-1b",
        "prod-a-l4-fallback-us-east-1a",
        "prod-a-l4-fallback-us-east-1b",
    ]
    assert len(out["ids"]) == 4 and all(out["ids"])
    assert out["asgs"] == [f"eks-{n}-00000000-0000-0000-0000-000000000000" for n in out["names"]]
    assert len(out["lts"]) == 4 and all(i.startswith("launchtemplate-") for i in out["lts"])
    assert out["role"].startswith("arn:aws:") and out["sa"] == "cluster-autoscaler"


def test_the_kubeconfig_built_for_an_existing_eks_cluster(run_program) -> None:
    source = """
import pulumi
from elastic_gpu import EksCluster
c = EksCluster.existing("x", cluster_name="prod-a", kubernetes_version="1.33", node_role_arn="arn:r",
    subnet_ids={"eu-west-1a": "subnet-1"}, oidc_provider_arn="arn:o", oidc_provider_url="https://o", region="eu-west-1")
pulumi.export("kubeconfig", pulumi.Output.unsecret(c.kubeconfig))
"""
    preview = run_program(source)
    kubeconfig = json.loads(preview.outputs["kubeconfig"].value)
    assert kubeconfig["clusters"][0]["cluster"]["server"] == "https://prod-a.gr7.example.eks.amazonaws.com"
    exec_ = kubeconfig["users"][0]["user"]["exec"]
    assert exec_["command"] == "aws"
    assert exec_["args"] == ["eks", "get-token", "--cluster-name", "prod-a", "--region", "eu-west-1"]


AKS_PROGRAM = """
import pulumi
from elastic_gpu import (AksCluster, ClusterAutoscaler, ClusterAutoscalerArgs, NvidiaDevicePlugin,
                         NvidiaDevicePluginArgs, SpotGpuPool, SpotGpuPoolArgs)
name = pulumi.Output.from_input("prod-aks").apply(lambda n: n)
cluster = AksCluster.existing("prod", cluster_name=name, resource_group_name="prod-rg", location="westeurope",
                              zones=["1", "2"], kubernetes_version="1.33")
t4 = SpotGpuPool("t4", SpotGpuPoolArgs(cluster=cluster, instance_types=["Standard_NC4as_T4_v3"], max_size=2,
                                       on_demand_fallback=True))
NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=cluster.provider, gpu_pools=[t4],
                                                    daemonset_name="gpu-plugin-elastic"))
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=cluster, gpu_pools=[t4]))
pulumi.export("identity", t4.cloud_outputs["kubelet_identity_object_id"])
"""


def test_existing_aks_pools_join_the_named_cluster(run_program, caplog) -> None:
    preview = run_program(AKS_PROGRAM)
    _no_output_text(preview)
    pools = preview.of_type("azure-native:containerservice:AgentPool")
    names = {p.inputs["agentPoolName"] for p in pools}
    # perZone unset on AKS: one spot agent pool across the cluster's zones (and the on-demand fallback)
    assert len(names) == 2 and sorted(n[:3] for n in names) == ["t4o", "t4s"]
    assert {(p.inputs["resourceName"], p.inputs["resourceGroupName"]) for p in pools} == {("prod-aks", "prod-rg")}
    assert not preview.of_type("azure-native:containerservice:ManagedCluster")
    [ds] = preview.of_type("kubernetes:apps/v1:DaemonSet")
    assert ds.inputs["metadata"]["name"] == "gpu-plugin-elastic"
    assert ds.inputs["spec"]["selector"]["matchLabels"] == {"name": "gpu-plugin-elastic"}
    [provider] = [r for r in preview.of_type("pulumi:providers:kubernetes") if r.name == "prod-k8s"]
    assert provider.inputs["kubeconfig"] == "[secret]"
    # The identity the nodes act as, read from the cluster (getManagedCluster's identityProfile).
    identity = preview.outputs["identity"].value
    assert isinstance(identity, str) and len(identity) == 36


def test_existing_aks_with_fallback_warns_with_the_az_command(run_program) -> None:
    preview = run_program(AKS_PROGRAM)
    [warning] = [w for w in preview.warnings if "expander" in w]
    assert (
        "az aks update --resource-group prod-rg --name prod-aks --cluster-autoscaler-profile expander=priority"
        in warning
    )
    # az aks show needs the cluster too (-g/-n), or it fails with "the following arguments are required"
    assert (
        "Check with `az aks show --resource-group prod-rg --name prod-aks --query autoScalerProfile.expander`"
        in warning
    )
    without_fallback = run_program(AKS_PROGRAM.replace("on_demand_fallback=True", "on_demand_fallback=False"))
    assert not [w for w in without_fallback.warnings if "expander" in w]


def test_an_owned_aks_cluster_with_fallback_needs_the_priority_expander(run_program) -> None:
    source = """
from elastic_gpu import (AksCluster, AksClusterArgs, ClusterAutoscaler, ClusterAutoscalerArgs, SpotGpuPool,
                         SpotGpuPoolArgs)
c = AksCluster("c", AksClusterArgs(cluster_name="c", location="westeurope", zones=["1"], kubernetes_version="1.33",
                                   expander=["least-waste"]))
t4 = SpotGpuPool("t4", SpotGpuPoolArgs(cluster=c, instance_types=["Standard_NC4as_T4_v3"], max_size=2,
                                       on_demand_fallback=True))
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=c, gpu_pools=[t4], expander=["least-waste"]))
"""
    with pytest.raises(ConfigError, match=r"ClusterAutoscalerArgs.expander: SpotGpuPool 't4' \(on_demand_fallback"):
        run_program(source)
    # the component asks for priority, the cluster's profile does not: the profile is named
    with pytest.raises(ConfigError, match="expander: spot pools with an on-demand fallback need the AKS autoscaler"):
        run_program(source.replace('gpu_pools=[t4], expander=["least-waste"]', 'gpu_pools=[t4], expander=["priority"]'))


GKE_PROGRAM = """
import pulumi
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, GkeCluster, SpotGpuPool, SpotGpuPoolArgs)
name = pulumi.Output.from_input("ml").apply(lambda n: n)
cluster = GkeCluster.existing("ml", cluster_name=name, project="acme-ml", location="us-central1",
                              zones=["us-central1-a", "us-central1-b"], kubernetes_version="1.33")
l4 = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g2-standard-4"], max_size=2,
                                       on_demand_fallback=True))
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=cluster, gpu_pools=[l4]))
"""


def test_existing_gke_pools_join_the_named_cluster(run_program) -> None:
    preview = run_program(GKE_PROGRAM)
    _no_output_text(preview)
    pools = preview.of_type("gcp:container/nodePool:NodePool")
    assert {stem(p.inputs["name"]) for p in pools} == {"l4-spot", "l4-fallback"}
    assert {(p.inputs["cluster"], p.inputs["location"], p.inputs["project"]) for p in pools} == {
        ("ml", "us-central1", "acme-ml")
    }
    assert not preview.of_type("gcp:container/cluster:Cluster")
    [cc] = preview.of_type("kubernetes:cloud.google.com/v1:ComputeClass")
    [provider] = [r for r in preview.of_type("pulumi:providers:kubernetes") if r.name == "ml-k8s"]
    assert cc.provider.startswith(provider.urn)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "EksCluster.existing('x', cluster_name='c', kubernetes_version='1.33', node_role_arn='r', "
            "subnet_ids=['subnet-1'], oidc_provider_arn='a', oidc_provider_url='u')",
            "EksCluster.existing 'x': subnet_ids: must map each zone to a private subnet id",
        ),
        (
            "EksCluster.existing('x', cluster_name='c', kubernetes_version='1.33', node_role_arn='r', "
            "subnet_ids={}, oidc_provider_arn='a', oidc_provider_url='u')",
            "subnet_ids: must map each zone to a private subnet id",
        ),
        (
            "EksCluster.existing('x', cluster_name=3, kubernetes_version=1.33, node_role_arn='r', "
            "subnet_ids={'a': 'subnet-1'}, oidc_provider_arn='a', oidc_provider_url=None)",
            "cluster_name: must be a string or an Output, got int 3",
        ),
        (
            "EksCluster.existing('x', cluster_name='c', kubernetes_version=1.33, node_role_arn='r', "
            "subnet_ids={'a': 'subnet-1'}, oidc_provider_arn='a', oidc_provider_url=None)",
            "kubernetes_version: must be a plain Kubernetes minor",
        ),
        (
            "EksCluster.existing('x', cluster_name='c', kubernetes_version='1.33', node_role_arn='r', "
            "subnet_ids={'a': 'subnet-1'}, oidc_provider_arn='a', oidc_provider_url=None)",
            "oidc_provider_url: required",
        ),
        (
            "EksCluster.from_pulumi_eks('x', object(), subnet_ids={'a': 's'}, kubernetes_version='1.33')",
            "cluster: must be a pulumi_eks.Cluster, got object",
        ),
        (
            "AksCluster.existing('x', cluster_name='c', resource_group_name='rg', location='westeurope', "
            "zones='123', kubernetes_version='1.33')",
            "AksCluster.existing 'x': zones: must be a list of zone names ([]: no zone, regional pools), got '123'",
        ),
        (
            "AksCluster.existing('x', cluster_name='c', resource_group_name='rg', location='westeurope', "
            "zones=['4'], kubernetes_version='1.33')",
            "zones: ['4'] are not allowed; allowed: 1, 2, 3",
        ),
        (
            "GkeCluster.existing('x', cluster_name='c', project=None, location='us-central1', "
            "zones=['us-central1-a'], kubernetes_version='1.33', k8s_provider='kubeconfig')",
            "project: required",
        ),
        (
            "GkeCluster.existing('x', cluster_name='c', project='p', location='us-central1', "
            "zones=['us-central1-a'], kubernetes_version='1.33', k8s_provider='kubeconfig')",
            "k8s_provider: must be a pulumi_kubernetes.Provider, got str",
        ),
    ],
)
def test_bad_input_to_the_existing_constructors_names_the_argument(run_program, call: str, message: str) -> None:
    source = f"from elastic_gpu import AksCluster, EksCluster, GkeCluster\n{call}\n"
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    assert message in str(exc.value)


def test_a_zone_not_in_the_subnet_map_is_an_error(run_program) -> None:
    source = """
from elastic_gpu import EksCluster, SpotGpuPool, SpotGpuPoolArgs
c = EksCluster.existing("x", cluster_name="c", kubernetes_version="1.33", node_role_arn="r",
    subnet_ids={"us-east-1a": "subnet-1"}, oidc_provider_arn="a", oidc_provider_url="u", region="us-east-1")
SpotGpuPool("p", SpotGpuPoolArgs(cluster=c, instance_types=["g6.xlarge"], max_size=2, zones=["us-east-1b"]))
"""
    with pytest.raises(ConfigError, match=r"zones: \['us-east-1b'\] are not zones of the cluster"):
        run_program(source)


def test_a_plain_provider_cluster_is_refused_with_the_way_in(run_program) -> None:
    source = """
import pulumi_aws as aws
from elastic_gpu import SpotGpuPool, SpotGpuPoolArgs
c = aws.eks.Cluster("c", role_arn="r", vpc_config={"subnet_ids": ["s"]})
SpotGpuPool("p", SpotGpuPoolArgs(cluster=c, instance_types=["g6.xlarge"], max_size=2))
"""
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    assert "SpotGpuPool 'p': SpotGpuPoolArgs.cluster: Cluster is not a cluster handle" in str(exc.value)
    assert "EksCluster.existing(...)" in str(exc.value)


def test_the_autoscaler_needs_a_place_to_run_on_eks(run_program) -> None:
    source = """
from elastic_gpu import ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster
c = EksCluster.existing("x", cluster_name="c", kubernetes_version="1.33", node_role_arn="r",
    subnet_ids={"us-east-1a": "subnet-1"}, oidc_provider_arn="a", oidc_provider_url="u", region="us-east-1")
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=c, gpu_pools=[]))
"""
    with pytest.raises(ConfigError, match="general_pool / node_selector: the autoscaler pod needs a place to run"):
        run_program(source)


def test_a_renamed_autoscaler_gets_its_own_lease_and_status_map(run_program) -> None:
    source = """
from elastic_gpu import ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster
c = EksCluster.existing("x", cluster_name="c", kubernetes_version="1.33", node_role_arn="r",
    subnet_ids={"us-east-1a": "subnet-1"}, oidc_provider_arn="a", oidc_provider_url="u", region="us-east-1")
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=c, gpu_pools=[], node_selector={},
                                              workload_name="gpu-autoscaler"))
"""
    preview = run_program(source)
    [dep] = preview.of_type("kubernetes:apps/v1:Deployment")
    assert dep.inputs["metadata"]["name"] == "gpu-autoscaler"
    spec = dep.inputs["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "gpu-autoscaler"
    assert "nodeSelector" not in spec
    flags = spec["containers"][0]["command"]
    assert "--leader-elect-resource-name=gpu-autoscaler" in flags
    assert "--status-config-map-name=gpu-autoscaler-status" in flags
    [role] = preview.of_type("kubernetes:rbac.authorization.k8s.io/v1:Role")
    names = {n for rule in role.inputs["rules"] for n in rule.get("resourceNames", [])}
    assert names == {"gpu-autoscaler-status", "cluster-autoscaler-priority-expander"}
    [cr] = preview.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
    lease = [r for r in cr.inputs["rules"] if r.get("resourceNames") and "leases" in r["resources"]]
    assert lease[0]["resourceNames"] == ["gpu-autoscaler"]


RENAMED = """
from elastic_gpu import ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster
c = EksCluster.existing("x", cluster_name="c", kubernetes_version="1.33", node_role_arn="r",
    subnet_ids={"us-east-1a": "subnet-1"}, oidc_provider_arn="a", oidc_provider_url="u", region="us-east-1")
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=c, gpu_pools=[], node_selector={},
                                              workload_name="gpu-autoscaler" NAMESPACE))
"""


def test_a_renamed_autoscaler_gets_its_own_namespace_and_priority_config_map(run_program) -> None:
    """The priority expander reads `cluster-autoscaler-priority-expander` by name from its --namespace: a
    second autoscaler in kube-system would share the cluster's own autoscaler's list."""
    preview = run_program(RENAMED.replace(" NAMESPACE", ""))
    namespace = preview.one("kubernetes:core/v1:Namespace", "ca-namespace")
    assert namespace.inputs["metadata"]["name"] == "gpu-autoscaler"
    cm = preview.one("kubernetes:core/v1:ConfigMap", "ca-priorities")
    assert (cm.inputs["metadata"]["name"], cm.inputs["metadata"]["namespace"]) == (
        "cluster-autoscaler-priority-expander",
        "gpu-autoscaler",
    )
    dep = preview.one("kubernetes:apps/v1:Deployment", "ca-deployment")
    assert dep.inputs["metadata"]["namespace"] == "gpu-autoscaler"
    assert "--namespace=gpu-autoscaler" in dep.inputs["spec"]["template"]["spec"]["containers"][0]["command"]
    for type_ in (
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:rbac.authorization.k8s.io/v1:Role",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
        "kubernetes:policy/v1:PodDisruptionBudget",
    ):
        [obj] = preview.of_type(type_)
        assert obj.inputs["metadata"]["namespace"] == "gpu-autoscaler", type_
        assert namespace.urn in obj.depends_on, type_
    assert namespace.urn in cm.depends_on and namespace.urn in dep.depends_on
    trust = preview.one("aws:iam/role:Role", "ca-role").inputs["assumeRolePolicy"]
    assert "system:serviceaccount:gpu-autoscaler:gpu-autoscaler" in trust
    # the upstream-named autoscaler stays in kube-system, with no namespace of its own
    default = stack_preview("aws-dev")
    assert not default.of_type("kubernetes:core/v1:Namespace")
    cm = default.one("kubernetes:core/v1:ConfigMap", "cluster-autoscaler-priorities")
    assert cm.inputs["metadata"]["namespace"] == "kube-system"
    dep = default.one("kubernetes:apps/v1:Deployment", "cluster-autoscaler-deployment")
    assert dep.inputs["metadata"]["namespace"] == "kube-system"


def test_a_renamed_autoscaler_told_to_share_kube_system_is_refused(run_program) -> None:
    with pytest.raises(ConfigError) as exc:
        run_program(RENAMED.replace(" NAMESPACE", ', namespace="kube-system"'))
    assert exc.value.problems == [
        "ClusterAutoscaler 'ca': ClusterAutoscalerArgs.namespace: 'kube-system' with workload_name='gpu-autoscaler': "
        "the priority expander reads the ConfigMap 'cluster-autoscaler-priority-expander' by that fixed name from "
        "its --namespace, where the cluster's own autoscaler reads it too; leave namespace unset (the autoscaler "
        "gets its own namespace 'gpu-autoscaler') or give another namespace"
    ]
    # a namespace of the user's is used as given, not created
    preview = run_program(RENAMED.replace(" NAMESPACE", ', namespace="autoscaling"'))
    assert not preview.of_type("kubernetes:core/v1:Namespace")
    assert preview.one("kubernetes:core/v1:ConfigMap", "ca-priorities").inputs["metadata"]["namespace"] == "autoscaling"


def test_unknown_names_stay_unknown_for_the_policies(run_program) -> None:
    """A cluster name known only after deployment: the policies see an unknown, never the text "[unknown]"."""
    from elastic_gpu.tools.offline.policy_run import run_policies

    source = EKS_PROGRAM.replace("cluster_name=theirs.name", "cluster_name=theirs.platform_version").replace(
        "REGION", 'region="us-east-1",'
    )
    preview = run_program(source)
    [group] = [r for r in preview.of_type("aws:eks/nodeGroup:NodeGroup") if r.name == "l4-fallback-us-east-1a"]
    assert group.to_json()["inputs"]["nodeGroupName"] == "[unknown]"  # shown as unknown ...
    report = run_policies(preview)
    assert not [v for v in report.violations if "[unknown]" in v.message]  # ... never judged as that text
    # The autoscaler tags' keys follow the unknown name: that rule cannot run, it does not fail.
    assert [v.level for v in report.of("eks-autoscaler-asg-tags")] == ["advisory"]
    assert "can't run policy" in report.of("eks-autoscaler-asg-tags")[0].message


def test_a_program_s_own_object_following_the_handle_protocol_works(run_program) -> None:
    """The documented protocol is enough: no subclass of EksCluster, no private attributes."""
    source = """
import pulumi, pulumi_kubernetes as k8s
from elastic_gpu import ClusterAutoscaler, ClusterAutoscalerArgs, EksClusterHandle, SpotGpuPool, SpotGpuPoolArgs

class MyCluster:
    cloud = "aws"
    zones = ["us-east-1a"]
    kubernetes_version = "1.33"
    def __init__(self):
        self.cluster_name = pulumi.Output.from_input("mine")
        self.provider = k8s.Provider("mine-k8s", kubeconfig="{}")
        self.tags = {}
        self.region = pulumi.Output.from_input("us-east-1")
        self.node_role_arn = pulumi.Output.from_input("arn:aws:iam::123456789012:role/mine")
        self.subnet_ids = {"us-east-1a": "subnet-1"}
        self.oidc_provider_arn = pulumi.Output.from_input("arn:oidc")
        self.oidc_issuer_url = pulumi.Output.from_input("https://oidc.example/id/X")
        self.node_dependencies = []

c = MyCluster()
assert isinstance(c, EksClusterHandle)
p = SpotGpuPool("p", SpotGpuPoolArgs(cluster=c, instance_types=["g6.xlarge"], max_size=2))
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=c, gpu_pools=[p], node_selector={}))
"""
    preview = run_program(source)
    [group] = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    assert group.inputs["clusterName"] == "mine" and group.inputs["nodeGroupName"].startswith("mine-p-spot-us-east-1a")
    assert preview.of_type("kubernetes:apps/v1:Deployment")


def test_an_owned_aks_cluster_s_pools_export_the_kubelet_identity(run_program) -> None:
    source = """
import pulumi
from elastic_gpu import AksCluster, AksClusterArgs, SpotGpuPool, SpotGpuPoolArgs
c = AksCluster("c", AksClusterArgs(cluster_name="c", location="westeurope", zones=["1"], kubernetes_version="1.33"))
t4 = SpotGpuPool("t4", SpotGpuPoolArgs(cluster=c, instance_types=["Standard_NC4as_T4_v3"], max_size=2))
pulumi.export("identity", t4.cloud_outputs["kubelet_identity_object_id"])
"""
    identity = run_program(source).outputs["identity"].value
    assert isinstance(identity, str) and len(identity) == 36
