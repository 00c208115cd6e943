"""The GKE stacks under the mock engine: exact types, names and key inputs."""

from __future__ import annotations

import json

import kubernetes_validate
import pytest

from elastic_gpu.gcp.kueue import ADMISSION_CHECK, CLUSTER_QUEUE, LOCAL_QUEUE, PROVISIONING_CONFIG
from elastic_gpu.gcp.versions import KUEUE_CHART, KUEUE_VERSION
from elastic_gpu.scheduling import GKE_GPU_TAINT, GPU_NODE_LABEL, POOL_LABEL
from elastic_gpu.tools.offline.report import pool_rows
from tests.conftest import ROOT, run_preview, stack_preview, stem

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"


def test_dev_cluster_inputs() -> None:
    c = stack_preview("gcp-dev").one(CLUSTER, "gpu-dev-gke").inputs
    assert c["location"] == "us-central1-c"  # zonal: zones[0]
    assert c["removeDefaultNodePool"] is True and c["initialNodeCount"] == 1
    # Node auto-provisioning off, said: the provider keeps a dropped `enabled` (gcp/replacement.py KEPT_WHEN_DROPPED).
    assert c["clusterAutoscaling"] == {"enabled": False, "autoscalingProfile": "OPTIMIZE_UTILIZATION"}
    assert c["workloadIdentityConfig"] == {"workloadPool": "elastic-gpu-dev.svc.id.goog"}
    assert c["releaseChannel"] == {"channel": "REGULAR"}
    assert c["minMasterVersion"] == "1.35"
    assert c["deletionProtection"] is False and c["privateClusterConfig"]["enablePrivateNodes"] is True


def test_prod_cluster_regional_private_protected() -> None:
    p = stack_preview("gcp-prod")
    r = p.one(CLUSTER, "gpu-prod-gke")
    assert r.protect is True and r.inputs["deletionProtection"] is True
    assert r.inputs["location"] == "us-central1"
    assert r.inputs["privateClusterConfig"]["enablePrivateNodes"] is True
    assert p.one("gcp:compute/routerNat:RouterNat", "gpu-prod-nat").inputs["natIpAllocateOption"] == "AUTO_ONLY"


def test_dev_spot_gpu_pool() -> None:
    r = stack_preview("gcp-dev").one(NODE_POOL, "t4-spot")
    nc = r.inputs["nodeConfig"]
    assert stem(r.inputs["name"]) == "t4-spot" and r.inputs["cluster"] == "gpu-dev"
    assert len(r.inputs["name"]) <= 40 and r.delete_before_replace is False
    assert nc["spot"] is True and nc["machineType"] == "n1-standard-4"
    assert nc["guestAccelerators"] == [
        {"type": "nvidia-tesla-t4", "count": 1, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}
    ]
    assert r.inputs["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 3, "locationPolicy": "ANY"}
    assert r.inputs["nodeLocations"] == ["us-central1-c"]
    assert nc["taints"] == [{"key": GKE_GPU_TAINT.key, "value": GKE_GPU_TAINT.value, "effect": "NO_SCHEDULE"}]
    assert nc["labels"][GPU_NODE_LABEL] == "true" and nc["labels"][POOL_LABEL] == "t4"
    assert "nodeCount" in r.ignore_changes and "initialNodeCount" in r.ignore_changes
    assert r.inputs["initialNodeCount"] == 0


def test_dev_general_pool_is_small_spot_system_pool() -> None:
    r = stack_preview("gcp-dev").one(NODE_POOL, "general-np")
    assert r.inputs["nodeConfig"]["spot"] is True
    assert r.inputs["autoscaling"]["totalMinNodeCount"] == 1
    assert "guestAccelerators" not in r.inputs["nodeConfig"]


@pytest.mark.parametrize("stack", ["gcp-dev", "gcp-prod"])
def test_no_device_plugin_or_autoscaler_workload_on_gke(stack: str) -> None:
    p = stack_preview(stack)
    types = {r.type for r in p.resources}
    assert "kubernetes:apps/v1:DaemonSet" not in types  # GKE manages the device plugin
    assert "kubernetes:apps/v1:Deployment" not in types  # GKE manages the autoscaler
    assert "kubernetes:core/v1:ConfigMap" not in types  # no priority expander on GKE


def test_compute_class_ranks_spot_before_on_demand() -> None:
    p = stack_preview("gcp-prod")
    cc = p.one(COMPUTE_CLASS, "inference-compute-class").inputs
    assert cc["metadata"]["name"] == "inference-spot-first"
    spot_name, fallback_name = (p.one(NODE_POOL, n).inputs["name"] for n in ("inference-spot", "inference-fallback"))
    # The class names the generated pool names, so a replaced pool is ranked the same.
    assert cc["spec"]["priorities"] == [{"nodepools": [spot_name]}, {"nodepools": [fallback_name]}]
    assert (stem(spot_name), stem(fallback_name)) == ("inference-spot", "inference-fallback")
    assert cc["spec"]["nodePoolAutoCreation"] == {"enabled": False}
    assert cc["spec"]["whenUnsatisfiable"] == "DoNotScaleUp"
    spot, fallback = p.one(NODE_POOL, "inference-spot").inputs, p.one(NODE_POOL, "inference-fallback").inputs
    assert spot["nodeConfig"]["spot"] is True and fallback["nodeConfig"]["spot"] is False
    for pool in (spot, fallback):  # manual pools serve the class by label and taint
        assert pool["nodeConfig"]["labels"]["cloud.google.com/compute-class"] == "inference-spot-first"
        assert {"key": "cloud.google.com/compute-class", "value": "inference-spot-first", "effect": "NO_SCHEDULE"} in (
            pool["nodeConfig"]["taints"]
        )


def test_queued_provisioning_pool() -> None:
    r = stack_preview("gcp-prod").one(NODE_POOL, "training-dws").inputs
    assert r["queuedProvisioning"] == {"enabled": True}
    assert r["nodeConfig"]["spot"] is False
    assert r["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert r["autoscaling"]["totalMinNodeCount"] == 0 and r["autoscaling"]["locationPolicy"] == "ANY"
    assert r["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-tesla-a100"


def test_kueue_release_and_dws_objects() -> None:
    p = stack_preview("gcp-prod")
    release = p.one("kubernetes:helm.sh/v3:Release", "kueue-kueue")
    assert release.inputs["chart"] == KUEUE_CHART and release.inputs["version"] == KUEUE_VERSION
    prc = p.one(f"{KUEUE}:ProvisioningRequestConfig", "kueue-prov-config")
    assert prc.inputs["spec"] == {
        "provisioningClassName": "queued-provisioning.gke.io",
        "managedResources": ["nvidia.com/gpu"],
    }
    ac = p.one(f"{KUEUE}:AdmissionCheck", "kueue-admission-check").inputs
    assert ac["spec"]["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    assert ac["spec"]["parameters"]["name"] == PROVISIONING_CONFIG
    cq = p.one(f"{KUEUE}:ClusterQueue", "kueue-cluster-queue").inputs
    assert cq["metadata"]["name"] == CLUSTER_QUEUE
    # v1beta2: the checks are named in admissionChecksStrategy (spec.admissionChecks is v1beta1 only)
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": ADMISSION_CHECK}]}
    assert "admissionChecks" not in cq["spec"]
    for ns in ("default", "ml-training"):  # the stack config's namespaces
        lq = p.one(f"{KUEUE}:LocalQueue", f"kueue-local-queue-{ns}")
        assert lq.inputs["metadata"] == {"name": LOCAL_QUEUE, "namespace": ns}
        assert lq.inputs["spec"] == {"clusterQueue": CLUSTER_QUEUE}
    created = p.one("kubernetes:core/v1:Namespace", "kueue-ns-ml-training")
    assert created.inputs["metadata"]["name"] == "ml-training"
    assert created.urn in p.one(f"{KUEUE}:LocalQueue", "kueue-local-queue-ml-training").depends_on
    assert not [r for r in p.of_type("kubernetes:core/v1:Namespace") if r.inputs["metadata"]["name"] == "default"]
    p.one(f"{KUEUE}:ResourceFlavor", "kueue-flavor")
    for kind in ("ProvisioningRequestConfig", "AdmissionCheck", "ClusterQueue", "LocalQueue", "ResourceFlavor"):
        for r in p.of_type(f"{KUEUE}:{kind}"):
            assert release.urn in r.depends_on, r.name
    assert not stack_preview("gcp-dev").of_type("kubernetes:helm.sh/v3:Release")  # no queued pool in dev


@pytest.mark.parametrize("stack", ["gcp-dev", "gcp-prod"])
def test_kubeconfig_is_secret_and_uses_gke_auth_plugin(stack: str) -> None:
    out = stack_preview(stack).outputs["kubeconfig"]
    assert out.secret is True
    kubeconfig = json.loads(out.value)
    assert kubeconfig["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert kubeconfig["clusters"][0]["cluster"]["server"].startswith("https://")


#: API groups of CRDs (GKE's ComputeClass, Kueue): not in the Kubernetes schema; checked against their CRDs
#: in test_crds.py.
CRD_TYPE_PREFIXES = ("kubernetes:cloud.google.com/", "kubernetes:kueue.x-k8s.io/", "kubernetes:helm.sh/")


@pytest.mark.parametrize("stack", ["gcp-dev", "gcp-prod"])
def test_every_resource_under_a_component_and_builtin_objects_validate(stack: str) -> None:
    p = stack_preview(stack)
    for r in p.resources:
        if r.custom and not r.type.startswith("pulumi:providers:") and r.name != "gcp":
            assert r.parent and "elastic-gpu:index:" in r.parent, r.name
        if r.type.startswith("kubernetes:") and not r.type.startswith(CRD_TYPE_PREFIXES):
            # Built-in objects (none on GKE today) validate strictly against the schema.
            kubernetes_validate.validate(r.inputs, "1.33", strict=True)


def test_pool_report_rows() -> None:
    rows = {stem(p.node_group): p for p in pool_rows(stack_preview("gcp-prod"))}
    assert rows["inference-spot"].capacity == "spot" and rows["inference-fallback"].capacity == "on-demand"
    assert rows["training-dws"].zones == ["us-central1-a", "us-central1-b", "us-central1-c"]


def test_two_runs_identical() -> None:
    first = stack_preview("gcp-prod").to_json()
    assert run_preview("gcp-prod", ROOT).to_json() == first


def test_default_priority_expander_declares_no_configmap_on_gke(program_dir) -> None:
    from tests.conftest import stack_values

    values = stack_values("gcp-dev")
    assert "elastic-gpu:autoscaler" not in values  # an error on GKE; the default chain starts with "priority"
    p = run_preview("test", program_dir(values))
    assert not p.of_type("kubernetes:core/v1:ConfigMap")
    assert p.one("elastic-gpu:index:ClusterAutoscaler", "cluster-autoscaler")
