"""The AKS stacks under the mock engine: exact resources, key inputs, Kubernetes objects."""

from __future__ import annotations

import json
import re

import kubernetes_validate
import pytest
import yaml

from elastic_gpu.config import load_stack_config
from elastic_gpu.scheduling import AKS_SPOT_LABEL, CAPACITY_LABEL, GPU_NODE_LABEL, NODE_CLASS_LABEL, POOL_LABEL
from elastic_gpu.tools.offline.report import pool_rows, to_json
from elastic_gpu.tools.offline.runner import Preview, run_preview
from tests.conftest import ROOT, stack_preview, stack_values, write_program_dir

P = "elastic-gpu:"
AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTER = "azure-native:containerservice:ManagedCluster"
RESOURCE_GROUP = "azure-native:resources:ResourceGroup"
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
GPU_TAINT = "nvidia.com/gpu=true:NoSchedule"
AZURE_STACKS = ("azure-dev", "azure-prod")


@pytest.fixture(scope="module")
def dev() -> Preview:
    return stack_preview("azure-dev")


@pytest.fixture(scope="module")
def prod() -> Preview:
    return stack_preview("azure-prod")


@pytest.fixture(scope="module")
def zonal(tmp_path_factory: pytest.TempPathFactory) -> Preview:
    """azure-dev with `perZone: true`: one spot agent pool per zone (the shipped stack spans both)."""
    values = stack_values("azure-dev")
    values[P + "gpuPools"][0]["perZone"] = True
    values[P + "gpuPools"][0]["maxMinutesToFallback"] = 95  # two zonal pools take turns in backoff
    return run_preview("zonal", write_program_dir(tmp_path_factory.mktemp("zonal"), values, "zonal"))


def test_dev_declares_exactly_these_azure_resources(dev: Preview) -> None:
    declared = sorted((r.type, r.name) for r in dev.resources if r.type.startswith("azure-native:"))
    assert declared == [
        (AGENT_POOL, "general-pool"),
        (AGENT_POOL, "t4-t4o0"),
        (AGENT_POOL, "t4-t4s0"),
        ("azure-native:containerservice:MaintenanceConfiguration", "gpu-dev-node-os-maintenance"),
        (CLUSTER, "gpu-dev-aks"),
        (RESOURCE_GROUP, "gpu-dev-rg"),
    ]
    components = sorted((r.type, r.name) for r in dev.resources if r.type.startswith("elastic-gpu:"))
    assert components == [
        ("elastic-gpu:index:AksCluster", "gpu-dev"),
        ("elastic-gpu:index:ClusterAutoscaler", "cluster-autoscaler"),
        ("elastic-gpu:index:GeneralPool", "general"),
        ("elastic-gpu:index:NvidiaDevicePlugin", "nvidia-device-plugin"),
        ("elastic-gpu:index:Preflight", "preflight"),
        ("elastic-gpu:index:SpotGpuPool", "t4"),
    ]
    # On AKS the autoscaler is the managed one: no Deployment, no identity of ours.
    assert not dev.of_type("kubernetes:apps/v1:Deployment")


def test_cluster_has_system_pool_identity_rbac_network_and_autoscaler_profile(dev: Preview) -> None:
    c = dev.one(CLUSTER, "gpu-dev-aks")
    i = c.inputs
    assert i["resourceName"] == "gpu-dev"
    assert i["resourceGroupName"] == "gpu-dev-rg"
    assert i["location"] == "westeurope"
    assert i["kubernetesVersion"] == "1.35"
    assert i["enableRBAC"] is True
    assert i["identity"] == {"type": "SystemAssigned"}
    net = i["networkProfile"]
    assert (net["networkPlugin"], net["networkPluginMode"], net["loadBalancerSku"]) == ("azure", "overlay", "standard")
    [system] = i["agentPoolProfiles"]
    assert system["mode"] == "System"
    assert system.get("scaleSetPriority") in (None, "Regular")  # on-demand
    assert (system["enableAutoScaling"], system["minCount"], system["maxCount"]) == (True, 1, 2)
    assert system["vmSize"] == "Standard_D4s_v5"
    assert system["availabilityZones"] == ["1", "2"]
    assert i["autoScalerProfile"] == {
        "expander": "priority",
        "scaleDownUnneededTime": "5m",
        "scaleDownDelayAfterAdd": "5m",
        "maxNodeProvisionTime": "15m",
        "balanceSimilarNodeGroups": "false",
        "skipNodesWithLocalStorage": "false",
    }
    assert i["tags"] == {"project": "elastic-gpu", "environment": "dev", "cost-center": "ml-research"}
    assert c.ignore_changes == ["agentPoolProfiles[0].count"]
    assert not c.protect


def ap_name(preview: Preview, resource_name: str) -> str:
    return preview.one(AGENT_POOL, resource_name).inputs["agentPoolName"]


def test_dev_spot_pool_is_one_agent_pool_across_both_zones(dev: Preview) -> None:
    spot = dev.one(AGENT_POOL, "t4-t4s0").inputs
    assert spot["scaleSetPriority"] == "Spot" and spot["availabilityZones"] == ["1", "2"]
    assert (spot["minCount"], spot["maxCount"]) == (0, 4)


def test_spot_gpu_agent_pools(zonal: Preview) -> None:
    names = set()
    for zone in ("1", "2"):
        r = zonal.one(AGENT_POOL, f"t4-t4s0{zone}")
        i = r.inputs
        # <stem><kind><digest of the fields that force a replacement>, <= 12 characters
        assert re.fullmatch(r"t4s[0-9a-f]{6}", i["agentPoolName"])
        names.add(i["agentPoolName"])
        assert (i["resourceName"], i["resourceGroupName"]) == ("gpu-dev", "gpu-dev-rg")
        assert i["mode"] == "User"
        assert i["vmSize"] == "Standard_NC4as_T4_v3"
        assert i["scaleSetPriority"] == "Spot"
        assert i["scaleSetEvictionPolicy"] == "Delete"
        assert i["spotMaxPrice"] == -1
        assert (i["enableAutoScaling"], i["minCount"], i["maxCount"]) == (True, 0, 2)
        assert i["availabilityZones"] == [zone]
        assert sorted(i["nodeTaints"]) == [SPOT_TAINT, GPU_TAINT]
        assert i["nodeLabels"][AKS_SPOT_LABEL] == "spot"
        assert i["nodeLabels"][POOL_LABEL] == "t4"
        assert i["nodeLabels"][CAPACITY_LABEL] == "spot"
        assert i["nodeLabels"][GPU_NODE_LABEL] == "true"
        assert i["tags"]["cost-center"] == "ml-research"
        assert r.ignore_changes == ["count"]
    assert len(names) == 2  # the zone is in the digest


def test_on_demand_fallback_and_general_pools(dev: Preview) -> None:
    fb = dev.one(AGENT_POOL, "t4-t4o0").inputs
    assert fb["scaleSetPriority"] == "Regular"
    assert "scaleSetEvictionPolicy" not in fb and "spotMaxPrice" not in fb
    assert (fb["minCount"], fb["maxCount"], fb["availabilityZones"]) == (0, 4, ["1", "2"])
    assert fb["nodeTaints"] == [GPU_TAINT]
    assert AKS_SPOT_LABEL not in fb["nodeLabels"] and fb["nodeLabels"][CAPACITY_LABEL] == "on-demand"
    gp = dev.one(AGENT_POOL, "general-pool")
    assert gp.inputs["mode"] == "User" and gp.inputs["scaleSetPriority"] == "Regular"
    assert (gp.inputs["minCount"], gp.inputs["maxCount"], gp.inputs["vmSize"]) == (1, 3, "Standard_D4s_v5")
    assert gp.inputs["nodeLabels"][NODE_CLASS_LABEL] == "general"
    assert "nodeTaints" not in gp.inputs
    assert gp.ignore_changes == ["count"]


def test_priority_configmap_ranks_spot_pools_above_on_demand(zonal: Preview) -> None:
    cm = zonal.one("kubernetes:core/v1:ConfigMap", "cluster-autoscaler-priorities").inputs
    assert cm["metadata"] == {"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"}
    ranks = yaml.safe_load(cm["data"]["priorities"])

    def rank(vmss: str) -> int | None:
        return max((p for p, regexes in ranks.items() if any(re.fullmatch(rx, vmss) for rx in regexes)), default=None)

    s1, s2, od, general = (ap_name(zonal, n) for n in ("t4-t4s01", "t4-t4s02", "t4-t4o0", "general-pool"))
    # AKS names each pool's scale set aks-<pool>-<number>-vmss.
    assert rank(f"aks-{s1}-12345678-vmss") == rank(f"aks-{s2}-87654321-vmss") == 50
    assert rank(f"aks-{od}-12345678-vmss") == rank(f"aks-{general}-12345678-vmss") == 10
    # The System pool autoscales too: ranked lowest, below the general pool, so the expander knows every group
    # it is offered (one it does not know is logged PriorityConfigMapNotMatchedGroup every loop, priority.go).
    assert rank("aks-system-12345678-vmss") == 1
    assert ranks[min(ranks)] == ["^aks-system-[0-9]+-vmss$"]  # no catch-all: only the groups the stack declares
    assert rank(f"aks-{s1}1-12345678-vmss") is None  # anchored: no prefix collisions
    assert rank("aks-t4s01-12345678-vmss") is None  # the regexes follow the generated names


def test_device_plugin_tolerates_the_aks_spot_taint(dev: Preview) -> None:
    ds = dev.one("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin-ds").inputs
    tolerations = ds["spec"]["template"]["spec"]["tolerations"]
    assert {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Exists", "effect": "NoSchedule"} in tolerations
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in tolerations
    assert ds["spec"]["template"]["spec"]["nodeSelector"] == {GPU_NODE_LABEL: "true"}


def test_kubeconfig_is_a_secret_output_and_feeds_the_kubernetes_provider(dev: Preview) -> None:
    assert dev.outputs["kubeconfig"].secret
    assert "azmk8s.io" in dev.outputs["kubeconfig"].value  # decoded from base64
    k8s_resources = [r for r in dev.resources if r.custom and r.type.startswith("kubernetes:")]
    providers = {r.provider for r in k8s_resources}
    assert len(providers) == 1 and "gpu-dev-k8s" in providers.pop()


def test_prod_protects_the_cluster_and_sets_its_spot_cap(prod: Preview) -> None:
    assert prod.one(CLUSTER, "gpu-prod-aks").protect
    assert prod.one(RESOURCE_GROUP, "gpu-prod-rg").protect
    [system] = prod.one(CLUSTER, "gpu-prod-aks").inputs["agentPoolProfiles"]
    assert system["minCount"] == 3 and system["nodeTaints"] == ["CriticalAddonsOnly=true:NoSchedule"]
    training = prod.one(AGENT_POOL, "training-trainings0").inputs
    assert training["spotMaxPrice"] == 2.5 and training["availabilityZones"] == ["1", "2", "3"]
    names = [r.inputs["agentPoolName"] for r in prod.of_type(AGENT_POOL)]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-z][a-z0-9]{0,11}", n) for n in names)
    # inference: perZone false, one VM size (its promise of ~15 min to the fallback), spot and fallback
    assert sorted(n[:6] for n in names if n.startswith("infer")) == ["infero", "infers"]


def test_existing_resource_group_is_used_not_created(program_dir) -> None:
    values = stack_values("azure-dev")
    values[P + "cluster"]["resourceGroup"] = {"name": "shared-rg", "create": False}
    preview = run_preview("test", program_dir(values))
    assert not preview.of_type(RESOURCE_GROUP)
    assert preview.one(CLUSTER, "gpu-dev-aks").inputs["resourceGroupName"] == "shared-rg"
    assert {r.inputs["resourceGroupName"] for r in preview.of_type(AGENT_POOL)} == {"shared-rg"}


def test_pool_table_shows_aks_pools(zonal: Preview) -> None:
    rows = {p.node_group: p for p in pool_rows(zonal)}
    s1, s2, od, general = (ap_name(zonal, n) for n in ("t4-t4s01", "t4-t4s02", "t4-t4o0", "general-pool"))
    assert set(rows) == {"system", general, od, s1, s2}  # the System pool is inline in the cluster
    assert rows[s1].capacity == "spot" and rows[s1].zones == ["1"]
    assert rows[od].capacity == "on-demand"
    assert (rows["system"].instance_types, rows["system"].min_size, rows["system"].max_size) == (
        ["Standard_D4s_v5"],
        1,
        2,
    )


@pytest.mark.parametrize("stack", AZURE_STACKS)
def test_kubernetes_objects_pass_the_schema_check(stack: str) -> None:
    version = load_stack_config(stack_values(stack)).cluster.kubernetes_version
    objects = [r.inputs for r in stack_preview(stack).resources if r.custom and r.type.startswith("kubernetes:")]
    objects = [o for o in objects if "apiVersion" in o]
    assert objects
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)


@pytest.mark.parametrize("stack", AZURE_STACKS)
def test_two_runs_are_identical(stack: str) -> None:
    first = json.dumps(to_json(run_preview(stack, ROOT)), sort_keys=True)
    assert first == json.dumps(to_json(stack_preview(stack)), sort_keys=True)
