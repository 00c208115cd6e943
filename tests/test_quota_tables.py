"""The quota each pool's VMs really draw on, read from one dated table per cloud, and what the finding asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, stack_values

from elastic_gpu.aws.quotas import ec2_quota
from elastic_gpu.clouds import get_cloud
from elastic_gpu.config import PROJECT
from elastic_gpu.preflight import FINDINGS_INPUT, TYPE_TOKEN
from elastic_gpu.tools.offline.account import described_account
from elastic_gpu.tools.offline.runner import Preview, run_preview


def preview(stack: str, account: dict[str, Any] | None = None, program: Path = ROOT) -> Preview:
    return run_preview(stack, program, described_account(account))


def findings(p: Preview, check: str | None = None) -> list[dict[str, Any]]:
    [component] = p.of_type(TYPE_TOKEN)
    return [f for f in component.inputs[FINDINGS_INPUT] if check is None or f["check"] == check]


# --- EKS ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("instance_type", ["p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge"])
def test_p5_spot_draws_on_the_p5_spot_quota(instance_type: str) -> None:
    spot = ec2_quota(instance_type, spot=True)
    assert spot is not None and (spot.code, spot.name) == ("L-C4BD4855", "All P5 Spot Instance Requests")
    on_demand = ec2_quota(instance_type, spot=False)
    assert on_demand is not None and on_demand.code == "L-417A185B"


@pytest.mark.parametrize("instance_type", ["p3.2xlarge", "p4d.24xlarge"])
def test_p2_to_p4_spot_keeps_its_own_quota(instance_type: str) -> None:
    spot = ec2_quota(instance_type, spot=True)
    assert spot is not None and spot.code == "L-7212CCBC"


def test_a_p5_spot_pool_asks_for_the_p5_spot_quota(program_dir: Any) -> None:
    values = stack_values("aws-prod")
    values[f"{PROJECT}:gpuPools"] = [
        {"name": "h100", "gpu": "h100", "instanceTypes": ["p5.48xlarge"], "maxSize": 3, "onDemandFallback": False}
    ]
    [spot] = findings(preview("test", None, program_dir(values)), "spot-quota")
    assert "need 576 vCPUs of 'All P5 Spot Instance Requests' (L-C4BD4855) in us-east-1" in spot["message"]
    assert "--quota-code L-C4BD4855 --desired-value 576" in spot["fix"]
    enough = preview("test", {"aws": {"quotas": {"L-C4BD4855": 576}}}, program_dir(values))
    assert findings(enough, "spot-quota") == []


# --- GKE ----------------------------------------------------------------------------------------------

GCP_ENOUGH_CPUS = {"CPUS-per-project-region": 96, "CPUS-ALL-REGIONS-per-project": 720}


def gcp_quota_findings(p: Preview) -> dict[str, dict[str, Any]]:
    checks = ("spot-quota", "on-demand-quota", "flex-start-quota", "gpu-quota")
    return {f["message"].split(" of ")[1].split(" at ")[0]: f for f in findings(p) if f["check"] in checks}


def test_a_flex_start_pool_is_checked_against_the_preemptible_gpu_quota() -> None:
    # gcp-prod's training pool: queued provisioning (DWS flex-start), 4 x a2-highgpu-1g
    quotas = {"NVIDIA-A100-GPUS-per-project-region": 8, "PREEMPTIBLE-NVIDIA-A100-GPUS-per-project-region": 2}
    found = gcp_quota_findings(preview("gcp-prod", {"gcp": {"quotas": {**quotas, **GCP_ENOUGH_CPUS}}}))
    dws = found["PREEMPTIBLE-NVIDIA-A100-GPUS-per-project-region in us-central1"]
    assert dws["check"] == "flex-start-quota" and "(training 4); the account has 2: short by 2" in dws["message"]
    assert "NVIDIA-A100-GPUS-per-project-region in us-central1" not in found


def test_a_spot_pool_without_preemptible_quota_draws_on_the_standard_quota() -> None:
    # gcp-prod's inference pool: 9 spot g2-standard-8 and a 9-node on-demand fallback, 1 L4 each
    quotas = {"NVIDIA-L4-GPUS-per-project-region": 18, "PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region": 0}
    found = gcp_quota_findings(preview("gcp-prod", {"gcp": {"quotas": {**quotas, **GCP_ENOUGH_CPUS}}}))
    assert not any(k.startswith("PREEMPTIBLE-NVIDIA-L4") or k.startswith("NVIDIA-L4") for k in found), found
    short = gcp_quota_findings(
        preview("gcp-prod", {"gcp": {"quotas": {**quotas, "NVIDIA-L4-GPUS-per-project-region": 10}}})
    )
    standard = short["NVIDIA-L4-GPUS-per-project-region in us-central1"]
    assert "(inference 18); the account has 10: short by 8" in standard["message"]
    assert (
        "spot VMs draw on it while the project has no PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region"
        in (standard["message"])
    )
    # once a preemptible quota is granted, spot VMs draw on it and the fallback alone on the standard one
    granted = {"NVIDIA-L4-GPUS-per-project-region": 9, "PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region": 5}
    split = gcp_quota_findings(preview("gcp-prod", {"gcp": {"quotas": {**granted, **GCP_ENOUGH_CPUS}}}))
    assert (
        "(inference 9); the account has 5: short by 4"
        in (split["PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region in us-central1"]["message"])
    )
    assert "NVIDIA-L4-GPUS-per-project-region in us-central1" not in split


def test_every_quota_request_carries_the_contact_email_cloud_quotas_requires() -> None:
    requests = [f["fix"] for f in findings(preview("gcp-prod")) if "quotas preferences create" in f["fix"]]
    assert requests
    for fix in requests:
        assert fix.startswith("gcloud beta quotas preferences create --service=compute.googleapis.com --quota-id=")
        assert ' --email="$(gcloud config get-value account)" ' in fix


def test_an_enabled_services_read_refused_is_an_unread_finding_not_a_crash() -> None:
    p = preview("gcp-prod", {"gcp": {"services": None}})
    unread = [f for f in findings(p, "unread") if "has enabled" in f["message"]]
    assert [f["message"].split(" could not be read")[0] for f in unread] == [
        "whether the project elastic-gpu-prod has enabled compute.googleapis.com",
        "whether the project elastic-gpu-prod has enabled container.googleapis.com",
    ]
    assert "googleapi: Error 403: Permission denied to get service [compute.googleapis.com]" in unread[0]["message"]
    assert unread[0]["fix"].startswith("allow serviceusage.services.get")
    assert findings(p, "service") == []


def test_a_node_role_granted_to_a_group_is_not_read_as_missing(program_dir: Any) -> None:
    email = "gpu-nodes@elastic-gpu-prod.iam.gserviceaccount.com"
    values = stack_values("gcp-prod")
    values[f"{PROJECT}:cluster"] = {**values[f"{PROJECT}:cluster"], "nodeServiceAccount": email}
    bindings = {"roles/container.defaultNodeServiceAccount": ["group:gke-nodes@example.com"]}
    p = preview("test", {"gcp": {"iamBindings": bindings}}, program_dir(values))
    assert findings(p, "node-service-account") == []
    [unread] = [f for f in findings(p, "unread") if "node role" in f["message"]]
    assert "through group:gke-nodes@example.com" in unread["message"]
    assert "troubleshoot-policy iam" in unread["fix"] and f"--principal-email={email}" in unread["fix"]


# --- AKS ----------------------------------------------------------------------------------------------


def aks_findings(p: Preview) -> dict[str, dict[str, Any]]:
    return {f["message"].split(" of '")[1].split("'")[0]: f for f in findings(p, "unread") if " of '" in f["message"]}


def test_an_nd_h100_pool_and_the_regional_total_and_the_cpu_pools_are_checked(program_dir: Any) -> None:
    values = stack_values("azure-prod")
    values[f"{PROJECT}:gpuPools"] = [
        {
            "name": "h100",
            "gpu": "h100",
            "instanceTypes": ["Standard_ND96isr_H100_v5"],
            "maxSize": 2,
            "spot": False,
            "perZone": False,
        }
    ]
    found = aks_findings(preview("test", None, program_dir(values)))
    h100 = found["Standard NDSH100v5 Family vCPUs"]
    assert "need 192 vCPUs" in h100["message"] and "--resource-name standardNDSH100v5Family" in h100["fix"]
    # azure-prod's general pool: 6 x Standard_D8s_v5; its System pool: 5 x Standard_D4s_v5
    dsv5 = found["Standard DSv5 Family vCPUs"]
    assert "(general 48, system 20)" in dsv5["message"] and "--resource-name standardDSv5Family" in dsv5["fix"]
    total = found["Total Regional vCPUs"]
    assert "need 260 vCPUs" in total["message"] and "(h100 192, general 48, system 20)" in total["message"]
    assert "--resource-name cores " in total["fix"] and "--resource-type dedicated" in total["fix"]


def test_a_size_without_a_family_row_is_reported_not_skipped(program_dir: Any) -> None:
    values = stack_values("azure-prod")
    values[f"{PROJECT}:generalPool"] = {**values[f"{PROJECT}:generalPool"], "instanceTypes": ["Standard_E8s_v6"]}
    p = preview("test", None, program_dir(values))
    [missing] = [f for f in findings(p, "unread") if "Standard_E8s_v6" in f["message"]]
    assert missing["pool"] == "general" and "was not checked" in missing["message"]


# --- retired sizes ------------------------------------------------------------------------------------

RETIRED = ["Standard_NC6s_v3", "Standard_NC12s_v3", "Standard_NC24s_v3"]


@pytest.mark.parametrize("size", RETIRED)
def test_a_retired_ncv3_size_is_refused_naming_its_successor(program_dir: Any, size: str) -> None:
    from elastic_gpu.errors import ConfigError

    values = stack_values("azure-dev")
    values[f"{PROJECT}:gpuPools"][0] = {**values[f"{PROJECT}:gpuPools"][0], "gpu": "v100", "instanceTypes": [size]}
    with pytest.raises(ConfigError) as exc:
        preview("test", None, program_dir(values))
    [problem] = [p for p in exc.value.problems if size in p]
    assert f"gpuPools[0].instanceTypes[0]: {size!r} was retired by the cloud on 2025-09-30" in problem
    assert "use its successor 'Standard_NC" in problem
    if size == "Standard_NC6s_v3":
        assert "'Standard_NC24ads_A100_v4'" in problem


def test_v100_is_not_offered_on_azure_nor_under_nap_nor_given_a_quota_request() -> None:
    from elastic_gpu.azure.node_provisioning.skus import NAP_GPU_SKUS
    from elastic_gpu.azure.quotas import family_quota
    from elastic_gpu.gpu_catalog import default_instance_types, gpu_instance_type

    assert default_instance_types(get_cloud("azure"), "v100") == []
    assert not set(RETIRED) & NAP_GPU_SKUS
    assert all(gpu_instance_type("azure", s) is None and family_quota(s) is None for s in RETIRED)


def test_a_retired_size_is_refused_on_the_library_path_too() -> None:
    from elastic_gpu.validation import gpu_instance_type_problems

    [problem] = gpu_instance_type_problems("SpotGpuPool 'v': ", get_cloud("azure"), ["Standard_NC6s_v3"])
    assert "retired by the cloud on 2025-09-30" in problem and "Standard_NC24ads_A100_v4" in problem


# --- boot disks ---------------------------------------------------------------------------------------

NODE_POOL = "gcp:container/nodePool:NodePool"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
CLUSTER = "gcp:container/cluster:Cluster"


@pytest.mark.parametrize(("machine", "gpu"), [("a3-ultragpu-8g", "h200"), ("a4-highgpu-8g", "b200")])
def test_a_hyperdisk_only_series_gets_a_hyperdisk_boot_disk_in_node_pools(
    program_dir: Any, machine: str, gpu: str
) -> None:
    values = stack_values("gcp-dev")
    values[f"{PROJECT}:gpuPools"][0] = {
        **values[f"{PROJECT}:gpuPools"][0],
        "gpu": gpu,
        "instanceTypes": [machine],
    }
    values[f"{PROJECT}:gpuPools"][0].pop("gpusPerNode")
    p = run_preview("test", program_dir(values), described_account(None))
    disks = {r.inputs["nodeConfig"]["machineType"]: r.inputs["nodeConfig"]["diskType"] for r in p.of_type(NODE_POOL)}
    assert disks[machine] == "hyperdisk-balanced"
    assert {d for m, d in disks.items() if m != machine} == {"pd-balanced"}


def test_a_hyperdisk_only_series_gets_a_hyperdisk_boot_disk_in_its_compute_class(program_dir: Any) -> None:
    values = stack_values("gcp-autoprovision")
    values[f"{PROJECT}:gpuPools"] = [
        {"name": "h200", "gpu": "h200", "instanceTypes": ["a3-ultragpu-8g"], "maxSize": 1, "spot": True}
    ]
    values.pop(f"{PROJECT}:kueue", None)
    values[f"{PROJECT}:cluster"]["nodeAutoProvisioning"] = True
    p = run_preview("test", program_dir(values), described_account(None))
    [cc] = p.of_type(COMPUTE_CLASS)
    assert {pr["storage"]["bootDiskType"] for pr in cc.inputs["spec"]["priorities"]} == {"hyperdisk-balanced"}
    # node auto-provisioning's cluster-wide default covers the general pool's e2 machines too, so it keeps their type
    [cluster] = p.of_type(CLUSTER)
    assert cluster.inputs["clusterAutoscaling"]["autoProvisioningDefaults"]["diskType"] == "pd-balanced"


def test_nap_defaults_take_hyperdisk_when_every_machine_it_may_create_does() -> None:
    from elastic_gpu.config import parse_stack_config
    from elastic_gpu.gcp.autoprovisioning.cluster import limits_for

    values = {k.split(":", 1)[1]: v for k, v in stack_values("gcp-autoprovision").items() if k.startswith(PROJECT)}
    values["gpuPools"] = [{"name": "b200", "gpu": "b200", "instanceTypes": ["a4-highgpu-8g"], "maxSize": 1}]
    values.pop("kueue", None)
    values["generalPool"] = {**values["generalPool"], "instanceTypes": ["a4-highgpu-8g"]}
    assert limits_for(parse_stack_config(values)).disk_type == "hyperdisk-balanced"


# --- partitions ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("region", "name"), [("us-gov-west-1", "aws-us-gov"), ("cn-north-1", "aws-cn")])
def test_an_eks_stack_outside_the_aws_partition_is_refused_naming_the_field(
    program_dir: Any, region: str, name: str
) -> None:
    from elastic_gpu.errors import ConfigError

    values = stack_values("aws-dev")
    values[f"{PROJECT}:cluster"] = {**values[f"{PROJECT}:cluster"], "region": region, "zones": [f"{region}a"]}
    with pytest.raises(ConfigError) as exc:
        preview("test", None, program_dir(values))
    assert exc.value.problems == [
        f"cluster.region: {region!r} is in the AWS partition {name}, whose ARNs (arn:{name}:...) and service "
        "principals differ from the ones this library writes (arn:aws:iam::aws:policy/..., elastic_gpu/aws/iam.py); "
        "allowed: a region of the aws partition"
    ]


def test_every_shipped_aws_region_has_a_partition() -> None:
    from elastic_gpu.aws.config_rules import REGIONS
    from elastic_gpu.aws.partitions import partition

    assert {r: getattr(partition(r), "name", None) for r in REGIONS if partition(r) is None} == {}
    assert partition("us-east-1").name == "aws" and partition("us-gov-east-1").name == "aws-us-gov"  # type: ignore[union-attr]


def test_the_aks_request_asks_for_usage_plus_need_where_the_usage_is_read() -> None:
    # azure-prod's spot pools need 108 low-priority vCPUs; the subscription already runs 20 of its 100
    usages = {"lowPriorityCores": [20, 100], "cores": [0, 1000], "standardDSv5Family": [0, 1000]}
    usages |= {"standardNCASv3_T4Family": [0, 1000]}
    p = preview("azure-prod", {"azure": {"usages": usages, "subscriptionId": "1111-2222"}})
    [spot] = findings(p, "spot-quota")
    assert "the subscription uses 20 of its 100: short by 28" in spot["message"]
    assert spot["fix"].startswith(
        "az quota update --resource-name lowPriorityCores --scope /subscriptions/1111-2222/providers/"
        "Microsoft.Compute/locations/eastus2 --resource-type lowPriority --limit-object value=128 "
    )
    assert findings(p, "on-demand-quota") == [] and not [f for f in findings(p, "unread") if " of '" in f["message"]]
    enough = preview("azure-prod", {"azure": {"usages": {**usages, "lowPriorityCores": [20, 128]}}})
    assert findings(enough, "spot-quota") == []
