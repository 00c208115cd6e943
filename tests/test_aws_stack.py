"""What the aws-dev and aws-prod stacks would create, and with which properties."""

from __future__ import annotations

import json
import re

import pytest

from elastic_gpu.aws.asg_tags import AUTO_DISCOVERY_ENABLED_KEY, NODE_TEMPLATE_PREFIX
from elastic_gpu.scheduling import AWS_ACCELERATOR_LABEL, GPU_NODE_LABEL, POOL_LABEL
from elastic_gpu.tools.offline.mocks import MOCK_UUID
from tests.conftest import stack_preview, stem

NG = "aws:eks/nodeGroup:NodeGroup"
TAG = "aws:autoscaling/tag:Tag"


@pytest.fixture(scope="module")
def dev():
    return stack_preview("aws-dev")


@pytest.fixture(scope="module")
def prod():
    return stack_preview("aws-prod")


def node_groups(preview, pool: str):
    return sorted(
        (r for r in preview.of_type(NG) if r.inputs["labels"].get(POOL_LABEL) == pool),
        key=lambda r: r.inputs["nodeGroupName"],
    )


def asg_tags(preview, node_group) -> dict[str, str]:
    """Tags declared on this node group's ASG (the Tag resources named after it)."""
    tags = [r for r in preview.of_type(TAG) if r.name.startswith(node_group.name + "-")]
    asg = f"eks-{node_group.inputs['nodeGroupName']}-{MOCK_UUID}"
    assert all(t.inputs["autoscalingGroupName"] == asg for t in tags)
    return {t.inputs["tag"]["key"]: t.inputs["tag"]["value"] for t in tags}


def test_cluster_has_no_default_node_group_and_uses_access_entries(dev) -> None:
    cluster = dev.one("aws:eks/cluster:Cluster", "gpu-dev-eks")
    assert cluster.inputs["name"] == "gpu-dev"
    assert cluster.inputs["version"] == "1.35"
    assert cluster.inputs["accessConfig"]["authenticationMode"] == "API"
    assert not cluster.protect
    # every node group is one of ours: general + 2 spot zones + 2 fallback zones
    assert sorted(stem(r.inputs["nodeGroupName"]) for r in dev.of_type(NG)) == [
        "gpu-dev-general",
        "gpu-dev-t4-fallback-us-west-2a",
        "gpu-dev-t4-fallback-us-west-2b",
        "gpu-dev-t4-spot-us-west-2a",
        "gpu-dev-t4-spot-us-west-2b",
    ]


def test_prod_protects_the_cluster(prod) -> None:
    assert prod.one("aws:eks/cluster:Cluster", "gpu-prod-eks").protect


def test_irsa_oidc_provider_and_secret_kubeconfig(dev) -> None:
    oidc = dev.one("aws:iam/openIdConnectProvider:OpenIdConnectProvider", "gpu-dev-oidc")
    assert oidc.inputs["url"].startswith("https://oidc.eks.")
    assert oidc.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    kubeconfig = dev.outputs["kubeconfig"]
    assert kubeconfig.secret
    user = json.loads(kubeconfig.value)["users"][0]["user"]["exec"]
    assert user["args"] == ["eks", "get-token", "--cluster-name", "gpu-dev", "--region", "us-west-2"]
    provider = dev.one("pulumi:providers:kubernetes", "gpu-dev-k8s")
    k8s_objects = [r for r in dev.resources if r.type.startswith("kubernetes:")]
    assert k8s_objects and all(r.provider.startswith(provider.urn) for r in k8s_objects)


def test_spot_gpu_groups_one_per_zone(dev) -> None:
    spot = [g for g in node_groups(dev, "t4") if g.inputs["capacityType"] == "SPOT"]
    assert [stem(g.inputs["nodeGroupName"]) for g in spot] == [
        "gpu-dev-t4-spot-us-west-2a",
        "gpu-dev-t4-spot-us-west-2b",
    ]
    subnets = dev.by_id()
    for g, zone in zip(spot, ["us-west-2a", "us-west-2b"], strict=True):
        assert [subnets[s].inputs["availabilityZone"] for s in g.inputs["subnetIds"]] == [zone]
        assert g.inputs["amiType"] == "AL2023_x86_64_NVIDIA"
        assert g.inputs["instanceTypes"] == ["g4dn.xlarge"]  # the catalog's default: one shape
        assert g.inputs["scalingConfig"] == {"desiredSize": 0, "minSize": 0, "maxSize": 2}
        assert g.inputs["labels"][GPU_NODE_LABEL] == "true"
        assert g.inputs["labels"][AWS_ACCELERATOR_LABEL] == "nvidia-tesla-t4"
        assert g.inputs["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
        assert g.ignore_changes == ["scalingConfig.desiredSize"]


def test_on_demand_fallback_group(dev, prod) -> None:
    # One fallback group per zone, sharing the fallback's total (fallbackMaxSize, default maxSize 4).
    subnets = dev.by_id()
    for zone in ("us-west-2a", "us-west-2b"):
        fallback = dev.one(NG, f"t4-fallback-{zone}")
        assert fallback.inputs["capacityType"] == "ON_DEMAND"
        assert fallback.inputs["scalingConfig"]["minSize"] == 0
        assert fallback.inputs["scalingConfig"]["maxSize"] == 2
        assert [subnets[s].inputs["availabilityZone"] for s in fallback.inputs["subnetIds"]] == [zone]
    assert [g.inputs["capacityType"] for g in node_groups(prod, "training")] == ["SPOT"] * 3  # opted out


def test_scale_from_zero_tags_on_every_gpu_asg(dev, prod) -> None:
    for preview, gpus in ((dev, "2"), (prod, "1")):  # dev time-slices each T4 two ways
        for g in [g for g in preview.of_type(NG) if g.inputs["amiType"].endswith("NVIDIA")]:
            tags = asg_tags(preview, g)
            cluster = preview.config["elastic-gpu:cluster"]["name"]
            # EKS sets the auto-discovery tags itself; re-declaring them would strip them on removal.
            assert AUTO_DISCOVERY_ENABLED_KEY not in tags and f"k8s.io/cluster-autoscaler/{cluster}" not in tags
            # The autoscaler reads the group's labels, valued taints and node-template resources tags through
            # eks:DescribeNodegroup: they live on the node group, and its ASG needs no Tag resource.
            assert not tags
            assert g.inputs["tags"][f"{NODE_TEMPLATE_PREFIX}/resources/nvidia.com/gpu"] == gpus
            assert g.inputs["tags"][f"{NODE_TEMPLATE_PREFIX}/resources/ephemeral-storage"].endswith("Gi")
            assert {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"} in g.inputs["taints"]
            assert g.inputs["labels"]["nvidia.com/gpu.present"] == "true"


def test_prod_pools_split_max_over_three_zones(prod) -> None:
    maxes = {stem(g.inputs["nodeGroupName"]): g.inputs["scalingConfig"]["maxSize"] for g in prod.of_type(NG)}
    assert [maxes[f"gpu-prod-training-spot-us-east-1{z}"] for z in "abc"] == [2, 2, 2]
    assert [maxes[f"gpu-prod-inference-spot-us-east-1{z}"] for z in "abc"] == [3, 3, 3]


def test_general_pool_launch_template_is_encrypted_gp3_with_imdsv2(dev) -> None:
    general = dev.one(NG, "general-ng")
    assert general.inputs["capacityType"] == "ON_DEMAND"
    assert general.inputs["scalingConfig"]["minSize"] == 1
    assert general.inputs["amiType"] == "AL2023_x86_64_STANDARD"
    assert general.inputs["instanceTypes"] == ["m6i.large", "m6a.large", "m5.large"]
    assert general.inputs.get("taints", []) == []
    for lt in dev.of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        ebs = lt.inputs["blockDeviceMappings"][0]["ebs"]
        assert ebs["volumeType"] == "gp3" and ebs["encrypted"] == "true"
        assert lt.inputs["metadataOptions"]["httpTokens"] == "required"


def test_nodes_live_in_private_subnets_without_public_ips(dev) -> None:
    subnets = dev.by_id()
    for g in dev.of_type(NG):
        assert all("private" in subnets[s].name for s in g.inputs["subnetIds"])
    assert all(s.inputs["mapPublicIpOnLaunch"] is False for s in dev.of_type("aws:ec2/subnet:Subnet"))


def test_cost_tags_on_taggable_resources(prod) -> None:
    for r in prod.resources:
        if r.type.startswith("aws:") and "tags" in r.inputs:
            assert r.inputs["tags"]["cost-center"] == "ml-platform", r.name


# --- NVIDIA device plugin --------------------------------------------------------


def test_device_plugin_daemonset(dev) -> None:
    ds = dev.one("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin-ds").inputs
    assert ds["metadata"] == {"labels": {}, "name": "nvidia-device-plugin-daemonset", "namespace": "kube-system"}
    pod = ds["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {GPU_NODE_LABEL: "true"}
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["priorityClassName"] == "system-node-critical"
    ctr = pod["containers"][0]
    assert ctr["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
    assert ctr["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert {
        "name": "device-plugin",
        "hostPath": {"path": "/var/lib/kubelet/device-plugins", "type": "Directory"},
    } in pod["volumes"]


def test_time_slicing_only_where_configured(dev, prod) -> None:
    cm = dev.one("kubernetes:core/v1:ConfigMap", "nvidia-device-plugin-config").inputs
    assert "replicas: 2" in cm["data"]["config.yaml"]
    assert "sharing:" in cm["data"]["config.yaml"]
    env = dev.one("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin-ds").inputs["spec"]["template"]["spec"]
    assert {"name": "CONFIG_FILE", "value": "/etc/nvidia-device-plugin/config.yaml"} in env["containers"][0]["env"]
    assert not [r for r in prod.of_type("kubernetes:core/v1:ConfigMap") if r.name == "nvidia-device-plugin-config"]


# --- cluster autoscaler -----------------------------------------------------------


def ca_command(preview) -> list[str]:
    dep = preview.one("kubernetes:apps/v1:Deployment", "cluster-autoscaler-deployment").inputs
    return dep["spec"]["template"]["spec"]["containers"][0]["command"]


def test_autoscaler_flags_follow_the_config(dev, prod) -> None:
    cmd = ca_command(dev)
    assert cmd[0] == "./cluster-autoscaler"
    for flag in (
        "--cloud-provider=aws",
        "--expander=priority,least-waste",
        "--max-node-provision-time=15m",  # the default: a cold GPU node's start-up
        "--scale-down-unneeded-time=5m",
        "--scale-down-delay-after-add=5m",
    ):
        assert flag in cmd
    # Exactly the stack's own groups, by ASG name with their bounds: no tag auto-discovery, which would also
    # find every other managed group of the cluster (EKS tags them all).
    assert not [f for f in cmd if f.startswith("--node-group-auto-discovery")]
    groups = dev.of_type(NG)
    assert sorted(f for f in cmd if f.startswith("--nodes=")) == sorted(
        f"--nodes={g.inputs['scalingConfig']['minSize']}:{g.inputs['scalingConfig']['maxSize']}:"
        f"eks-{g.inputs['nodeGroupName']}-{MOCK_UUID}"
        for g in groups
    )
    assert len(groups) == 5
    assert "--max-node-provision-time=15m" in ca_command(prod)
    assert "--scale-down-unneeded-time=10m" in ca_command(prod)


def test_autoscaler_image_matches_kubernetes_minor(dev) -> None:
    dep = dev.one("kubernetes:apps/v1:Deployment", "cluster-autoscaler-deployment").inputs
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == (
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.2"
    )


def test_autoscaler_pod_is_hardened_and_stays_on_general_on_demand_nodes(dev) -> None:
    pod = dev.one("kubernetes:apps/v1:Deployment", "cluster-autoscaler-deployment").inputs["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {
        "elastic-gpu.io/node-class": "general",
        "elastic-gpu.io/pool": "general",
        "elastic-gpu.io/capacity": "on-demand",
    }
    assert "tolerations" not in pod
    assert pod["priorityClassName"] == "system-cluster-critical"
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 65534
    sc = pod["containers"][0]["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    general_labels = dev.one(NG, "general-ng").inputs["labels"]
    assert pod["nodeSelector"].items() <= general_labels.items()
    assert dev.one("kubernetes:policy/v1:PodDisruptionBudget", "cluster-autoscaler-pdb")


def test_priority_expander_ranks_spot_above_on_demand(dev) -> None:
    import yaml

    cm = dev.one("kubernetes:core/v1:ConfigMap", "cluster-autoscaler-priorities").inputs
    assert cm["metadata"]["name"] == "cluster-autoscaler-priority-expander"
    assert cm["metadata"]["namespace"] == "kube-system"
    ranks = yaml.safe_load(cm["data"]["priorities"])

    names = {stem(g.inputs["nodeGroupName"]): g.inputs["nodeGroupName"] for g in dev.of_type(NG)}

    def rank(ng_name: str) -> int:
        asg = f"eks-{names.get(ng_name, ng_name)}-{MOCK_UUID}"
        return max((p for p, regexes in ranks.items() if any(re.fullmatch(rx, asg) for rx in regexes)), default=None)

    assert rank("gpu-dev-t4-spot-us-west-2a") == rank("gpu-dev-t4-spot-us-west-2b") == 50
    assert rank("gpu-dev-t4-fallback-us-west-2a") == rank("gpu-dev-t4-fallback-us-west-2b") == 10
    assert rank("gpu-dev-general") == 10
    # No catch-all: a group the stack did not declare is not ranked (the expander uses unranked groups only
    # when no ranked one can take the pod, priority.go BestOptions).
    assert rank("someone-elses-group") is None
    assert ".*" not in [rx for regexes in ranks.values() for rx in regexes]
    # The regexes follow the generated names: the stem alone (an older group) is not ranked as ours.
    assert rank("gpu-dev-t4-spot-us-west-2a-000000") is None


def test_autoscaler_iam_scopes_mutations_to_its_own_groups(dev) -> None:
    policy = json.loads(dev.one("aws:iam/rolePolicy:RolePolicy", "cluster-autoscaler-policy").inputs["policy"])
    describe, scale = policy["Statement"]
    assert describe["Resource"] == "*"
    assert "eks:DescribeNodegroup" in describe["Action"]
    assert "autoscaling:SetDesiredCapacity" not in describe["Action"]
    assert scale["Action"] == ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"]
    assert scale["Condition"] == {"StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/gpu-dev": "owned"}}
    # ... and only on the ASGs it lists (cloudprovider/aws/README.md, "Minimal IAM Permissions Policy").
    arn = "arn:*:autoscaling:us-west-2:*:autoScalingGroup:*:autoScalingGroupName/eks-{}-" + MOCK_UUID
    assert sorted(scale["Resource"]) == sorted(arn.format(g.inputs["nodeGroupName"]) for g in dev.of_type(NG))
    trust = json.loads(dev.one("aws:iam/role:Role", "cluster-autoscaler-role").inputs["assumeRolePolicy"])
    cond = trust["Statement"][0]["Condition"]["StringEquals"]
    assert "system:serviceaccount:kube-system:cluster-autoscaler" in cond.values()
    sa = dev.one("kubernetes:core/v1:ServiceAccount", "cluster-autoscaler-sa").inputs
    assert sa["metadata"]["annotations"]["eks.amazonaws.com/role-arn"].endswith("cluster-autoscaler-role")
