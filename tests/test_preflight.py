"""The account preflight (elastic_gpu/preflight.py): what a first `pulumi up` meets in the account, read at preview
through the providers' invokes and answered offline from a described account (a new one by default)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, stack_values

from elastic_gpu.__main__ import main
from elastic_gpu.config import PROJECT
from elastic_gpu.errors import ConfigError
from elastic_gpu.preflight import FINDINGS_INPUT, TYPE_TOKEN, documentation_range
from elastic_gpu.tools.offline.account import described_account, load_account
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import Preview, run_preview

AMPLE = ROOT / "examples" / "account.yaml"


def preview(stack: str, account: dict[str, Any] | None = None, program: Path = ROOT) -> Preview:
    return run_preview(stack, program, described_account(account))


def findings(p: Preview, check: str | None = None) -> list[dict[str, Any]]:
    [component] = p.of_type(TYPE_TOKEN)
    return [f for f in component.inputs[FINDINGS_INPUT] if check is None or f["check"] == check]


# --- AWS ----------------------------------------------------------------------------------------------


def test_a_new_aws_account_lacks_the_g_family_spot_and_on_demand_vcpus() -> None:
    p = preview("aws-prod")
    [spot] = findings(p, "spot-quota")
    assert spot["pool"] == "inference, training"
    # inference: 9 x g4dn.xlarge (4 vCPUs); training: 6 x g5.2xlarge (8 vCPUs)
    assert "need 84 vCPUs of 'All G and VT Spot Instance Requests' (L-3819A6DF) in us-east-1" in spot["message"]
    assert "(inference 36, training 48); the account has 0: short by 84" in spot["message"]
    assert spot["fix"] == (
        "aws service-quotas request-service-quota-increase --service-code ec2 --quota-code L-3819A6DF "
        "--desired-value 84 --region us-east-1"
    )
    [on_demand] = findings(p, "on-demand-quota")  # the inference fallback only
    assert on_demand["pool"] == "inference" and "L-DB2E81BA" in on_demand["message"]
    assert "short by 36" in on_demand["message"] and spot["level"] == on_demand["level"] == "warning"
    assert any("preflight: inference, training:" in w and "L-3819A6DF" in w for w in p.warnings)


def test_an_account_with_the_quota_has_no_quota_finding() -> None:
    enough = preview("aws-prod", {"aws": {"quotas": {"L-3819A6DF": 84, "L-DB2E81BA": 36}}})
    assert findings(enough, "spot-quota") == findings(enough, "on-demand-quota") == []
    short = preview("aws-prod", {"aws": {"quotas": {"L-3819A6DF": 80}}})
    assert "the account has 80: short by 4" in findings(short, "spot-quota")[0]["message"]


def test_a_new_aws_account_lacks_the_general_pools_standard_vcpus() -> None:
    # aws-prod's general pool: 6 x m6i.xlarge (4 vCPUs) on-demand against the new account's 5
    [general] = findings(preview("aws-prod"), "cpu-quota")
    assert general["pool"] == "general" and general["level"] == "warning"
    assert (
        "need 24 vCPUs of 'Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances' (L-1216C47A) in "
        "us-east-1 at their max (general 24); the account has 5: short by 19"
    ) in general["message"]
    assert general["fix"] == (
        "aws service-quotas request-service-quota-increase --service-code ec2 --quota-code L-1216C47A "
        "--desired-value 24 --region us-east-1"
    )
    assert findings(preview("aws-prod", {"aws": {"quotas": {"L-1216C47A": 24}}}), "cpu-quota") == []


def test_the_managed_node_group_quota_is_read_from_the_account() -> None:
    # aws-prod: general 1, inference 3 spot + 3 fallback, training 3 = 10 managed node groups
    [few] = findings(preview("aws-prod", {"aws": {"quotas": {"L-6D54EA21": 8}}}), "node-group-quota")
    assert "need 10 node groups of 'Managed node groups per cluster' (L-6D54EA21)" in few["message"]
    assert "(general 1, inference 6, training 3); the account has 8: short by 2" in few["message"]
    assert few["fix"].startswith("aws service-quotas request-service-quota-increase --service-code eks ")
    assert findings(preview("aws-prod"), "node-group-quota") == []  # the default 30


def test_the_described_accounts_spot_role_decides_whether_the_stack_declares_it() -> None:
    # The role is no finding: the stack creates it in a new account and adopts the account's own.
    spot_role = "aws:iam/serviceLinkedRole:ServiceLinkedRole"
    new = preview("aws-karpenter")
    assert findings(new, "spot-role") == []
    assert [r.name for r in new.of_type(spot_role)] == ["karpenter-spot-role"]
    assert preview("aws-karpenter", {"aws": {"spotServiceLinkedRole": True}}).of_type(spot_role) == []


def test_a_zone_that_offers_none_of_a_pools_types_fails_the_preview() -> None:
    account = {"aws": {"offerings": {"g5.2xlarge": ["us-east-1a", "us-east-1b"]}}}
    with pytest.raises(ConfigError) as exc:
        preview("aws-prod", account)
    assert exc.value.source == "account (preflight)"
    [problem] = exc.value.problems
    assert problem.startswith("training: us-east-1c offers none of g5.2xlarge: its node group there can never")
    assert "aws ec2 describe-instance-type-offerings --location-type availability-zone" in problem
    assert findings(preview("aws-prod"), "zone-offering") == []


def test_a_pool_across_zones_only_warns_when_one_zone_lacks_its_type(program_dir: Any) -> None:
    values = stack_values("aws-prod")
    values[f"{PROJECT}:gpuPools"][1]["perZone"] = False
    account = {"aws": {"offerings": {"g5.2xlarge": ["us-east-1a", "us-east-1b"]}}}
    [zone] = findings(preview("test", account, program_dir(values)), "zone-offering")
    assert zone["level"] == "warning" and zone["pool"] == "training"


# --- GCP ----------------------------------------------------------------------------------------------


def test_a_new_gcp_project_lacks_the_services_and_the_gpu_quotas() -> None:
    p = preview("gcp-prod")
    assert [f["fix"] for f in findings(p, "service")] == [
        "gcloud services enable compute.googleapis.com --project=elastic-gpu-prod",
        "gcloud services enable container.googleapis.com --project=elastic-gpu-prod",
    ]
    quota_checks = ("spot-quota", "on-demand-quota", "flex-start-quota", "gpu-quota")
    quotas = {f["message"].split(" of ")[1].split(" at ")[0]: f for f in findings(p) if f["check"] in quota_checks}
    # A new project has no preemptible quota: its spot VMs draw on the standard one, with the fallback's
    l4 = quotas["NVIDIA-L4-GPUS-per-project-region in us-central1"]
    assert "(inference 18); the account has 0: short by 18" in l4["message"]
    assert "--quota-id=NVIDIA-L4-GPUS-per-project-region --preferred-value=18" in l4["fix"]
    assert "--dimensions=region=us-central1" in l4["fix"]
    assert "PREEMPTIBLE-NVIDIA-L4-GPUS-per-project-region in us-central1" not in quotas
    a100 = quotas["NVIDIA-A100-GPUS-per-project-region in us-central1"]
    assert "(training 4)" in a100["message"] and a100["check"] == "flex-start-quota"
    every = quotas["GPUS-ALL-REGIONS-per-project"]
    assert "need 22 GPUs" in every["message"] and "(inference 18, training 4)" in every["message"]


def test_a_gcp_project_with_the_services_and_quotas_has_no_finding() -> None:
    p = run_preview("gcp-prod", ROOT, load_account(AMPLE))
    assert [f["check"] for f in findings(p)] == ["api-access"]
    only_services = preview("gcp-prod", {"gcp": {"services": ["compute.googleapis.com"]}})
    assert [f["message"].split(" has not enabled ")[1][:24] for f in findings(only_services, "service")] == [
        "container.googleapis.com"
    ]


def test_a_gcp_projects_vcpu_quotas_cover_every_pool_at_its_max() -> None:
    few = {"CPUS-per-project-region": 20, "CPUS-ALL-REGIONS-per-project": 200}
    short = {
        f["message"].split(" of ")[1].split(" at ")[0]: f
        for f in findings(preview("gcp-prod", {"gcp": {"quotas": few}}), "cpu-quota")
    }
    # general 6 x e2-standard-4 in the region; every region adds the GPU pools' machines at max
    regional = short["CPUS-per-project-region in us-central1"]
    assert (
        "need 24 vCPUs" in regional["message"] and "(general 24); the account has 20: short by 4" in regional["message"]
    )
    assert "--quota-id=CPUS-per-project-region --preferred-value=24 --dimensions=region=us-central1" in regional["fix"]
    every = short["CPUS-ALL-REGIONS-per-project"]
    assert "need 216 vCPUs" in every["message"] and every["pool"] == "general, inference, training"
    assert "--dimensions" not in every["fix"]
    assert "GPU" not in every["fix"]  # the request is for the pools' vCPUs, general pool included
    enough = {"CPUS-per-project-region": 24, "CPUS-ALL-REGIONS-per-project": 216}
    assert findings(preview("gcp-prod", {"gcp": {"quotas": enough}}), "cpu-quota") == []
    # a new project's are not documented: reported unread until described
    unread = [f["message"] for f in findings(preview("gcp-prod"), "unread")]
    assert any(m.startswith("CPUS-per-project-region in us-central1 (the pools need 24 vCPUs)") for m in unread)


def test_a_gke_zone_without_the_machine_type_fails_the_preview() -> None:
    with pytest.raises(ConfigError) as exc:
        preview("gcp-prod", {"gcp": {"machineTypes": {"a2-highgpu-1g": ["us-central1-a"]}}})
    [problem] = exc.value.problems
    assert problem.startswith("training: us-central1-b, us-central1-c offer none of a2-highgpu-1g: GKE refuses")
    assert "gcloud compute machine-types list --zones=us-central1-b,us-central1-c" in problem


# --- Azure (no invoke reads the subscription's usage) ---------------------------------------------------


def test_aks_findings_say_what_the_pools_need_and_the_command_that_shows_the_limit() -> None:
    p = preview("azure-prod")
    by_quota = {f["message"].split(" of '")[1].split("'")[0]: f for f in findings(p, "unread")}
    assert sorted(by_quota) == [
        "Standard DSv5 Family vCPUs",  # the general and System pools (on-demand)
        "Standard NCASv3_T4 Family vCPUs",
        "Total Regional Low-priority vCPUs",
        "Total Regional vCPUs",  # every on-demand VM
    ]
    spot = by_quota["Total Regional Low-priority vCPUs"]
    # inference: 9 x NC4as_T4_v3 (4 vCPUs); training: 3 x NC24ads_A100_v4 (24 vCPUs); spot only
    assert "need 108 vCPUs" in spot["message"] and "(inference 36, training 72)" in spot["message"]
    assert "az vm list-usage --location eastus2 -o table" in spot["message"]
    assert "Microsoft.Compute/locations/usages/read" in spot["message"]  # a new account's usage is not described
    assert "--resource-name lowPriorityCores" in spot["fix"] and "value=<usage + 108>" in spot["fix"]
    assert "(inference 36)" in by_quota["Standard NCASv3_T4 Family vCPUs"]["message"]


# --- the API server's allow-list (every cloud) ----------------------------------------------------------


@pytest.mark.parametrize("stack", ["aws-prod", "azure-prod", "gcp-prod"])
def test_a_documentation_range_allow_list_is_flagged_at_preview_and_in_the_gate(stack: str) -> None:
    p = preview(stack)
    [api] = findings(p, "api-access")
    assert "holds only documentation ranges (203.0.113.0/24" in api["message"]
    assert api["fix"].startswith("set `publicCidrs: [<your runner's and operators' ranges>]` under `cluster.apiAccess`")
    assert any(w.startswith("preflight: cluster: the API server's allow-list") for w in p.warnings)
    gate = run_policies(p)
    assert not gate.mandatory
    assert any("API server's allow-list" in v.message for v in gate.of("account-preflight"))


def test_a_reachable_allow_list_is_not_flagged(program_dir: Any) -> None:
    values = stack_values("aws-prod")
    values[f"{PROJECT}:cluster"]["apiAccess"]["publicCidrs"] = ["203.0.113.0/24", "198.18.0.0/15"]
    assert findings(preview("test", None, program_dir(values)), "api-access") == []
    assert findings(preview("aws-dev"), "api-access") == []  # no allow-list: anywhere


def test_documentation_ranges() -> None:
    assert [documentation_range(c) for c in ("192.0.2.0/25", "198.51.100.7/32", "2001:db8:1::/48")] == [True] * 3
    assert [documentation_range(c) for c in ("203.0.112.0/23", "10.0.0.0/8", "2001:db9::/32", "x")] == [False] * 4


# --- the gate and the described account -----------------------------------------------------------------


def test_the_gate_reports_findings_as_advisory_and_stays_green(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "--stack", "aws-prod"]) == 0
    out = capsys.readouterr().out
    assert "[advisory]  elastic-gpu  account-preflight" in out and "L-3819A6DF" in out
    assert main(["policy", "--stack", "aws-dev", "--account", str(AMPLE)]) == 0
    assert "account-preflight" not in capsys.readouterr().out


def test_an_account_file_names_what_it_gets_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "account.yaml"
    bad.write_text("aws:\n  quota: {}\n  spotServiceLinkedRole: yes-please\nazur: {}\n")
    assert main(["preview", "--stack", "aws-dev", "--account", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "aws.quota: unknown key; allowed: quotas, spotServiceLinkedRole, offerings" in err
    assert "aws.spotServiceLinkedRole: must be a bool like the new account's False (got 'yes-please')" in err
    assert "azur: not a cloud; allowed: aws, azure, gcp" in err


# --- no-public-node-ips reads the subnets (EKS) -----------------------------------------------------------

#: pulumi/examples aws-py-eks (at 40c09b266: vpc.py's subnets, one per zone, map public IPs), cut to the VPC and
#: cluster, with a GPU pool on the cluster in those subnets.
AWS_PY_EKS = """
import json
import pulumi
from pulumi_aws import ec2, eks, get_availability_zones, iam
from elastic_gpu import EksCluster, SpotGpuPool, SpotGpuPoolArgs

vpc = ec2.Vpc("eks-vpc", cidr_block="10.100.0.0/16", enable_dns_hostnames=True, enable_dns_support=True)
zones = get_availability_zones()
subnets = {}
for zone in zones.names:
    subnets[zone] = ec2.Subnet(
        f"vpc-subnet-{zone}",
        vpc_id=vpc.id,
        map_public_ip_on_launch=MAP_PUBLIC,
        cidr_block=f"10.100.{len(subnets)}.0/24",
        availability_zone=zone,
    )
trust = {"Version": "2012-10-17", "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow",
         "Principal": {"Service": "eks.amazonaws.com"}}]}
eks_role = iam.Role("eks-iam-role", assume_role_policy=json.dumps(trust))
ec2_role = iam.Role("ec2-nodegroup-iam-role", assume_role_policy=json.dumps(trust).replace("eks.", "ec2."))
cluster = eks.Cluster(
    "eks-cluster",
    role_arn=eks_role.arn,
    vpc_config=eks.ClusterVpcConfigArgs(subnet_ids=[s.id for s in subnets.values()]),
)
handle = EksCluster.existing(
    "eks",
    cluster_name=cluster.name,
    kubernetes_version="1.35",
    node_role_arn=ec2_role.arn,
    subnet_ids={z: s.id for z, s in subnets.items()},
    oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/X",
    oidc_provider_url="https://oidc.eks.us-east-1.amazonaws.com/id/X",
    region="us-east-1",
)
SpotGpuPool("t4", SpotGpuPoolArgs(cluster=handle, instance_types=["g4dn.xlarge"], max_size=3,
                                  on_demand_fallback=True))
"""


def test_a_gpu_pool_in_the_public_subnets_of_aws_py_eks_fails_the_gate(run_program: Any) -> None:
    gate = run_policies(run_program(AWS_PY_EKS.replace("MAP_PUBLIC", "True")))
    flagged = gate.of("no-public-node-ips")
    assert flagged and all(v.level == "mandatory" for v in flagged)
    # one per node group: a spot and a fallback group in each of the three zones
    assert len(flagged) == 6
    assert "runs in subnet(s) vpc-subnet-us-east-1a that give every instance a public IP" in flagged[0].message


def test_a_gpu_pool_in_private_subnets_passes(run_program: Any) -> None:
    assert run_policies(run_program(AWS_PY_EKS.replace("MAP_PUBLIC", "False"))).of("no-public-node-ips") == []


EXISTING = """
from elastic_gpu import EksCluster, SpotGpuPool, SpotGpuPoolArgs
handle = EksCluster.existing(
    "eks", cluster_name="prod", kubernetes_version="1.35", node_role_arn="arn:aws:iam::123456789012:role/nodes",
    subnet_ids={"us-east-1a": "subnet-0public", "us-east-1b": "subnet-0private"},
    oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/x", oidc_provider_url="https://x", region="us-east-1")
SpotGpuPool("t4", SpotGpuPoolArgs(cluster=handle, instance_types=["g4dn.xlarge"], max_size=2))
"""


def test_an_existing_clusters_subnets_are_read_through_get_subnet(tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text("name: consumer\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks" / "Pulumi.test.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(EXISTING)
    public = run_policies(preview("test", {"aws": {"publicSubnets": ["subnet-0public"]}}, tmp_path))
    [flagged] = public.of("no-public-node-ips")
    assert "subnet(s) subnet-0public that give every instance a public IP" in flagged.message
    assert run_policies(preview("test", None, tmp_path)).of("no-public-node-ips") == []


def test_a_quota_the_credentials_cannot_read_is_a_warning_not_a_failed_preview() -> None:
    [aws_unread] = findings(preview("aws-prod", {"aws": {"quotas": {"L-3819A6DF": None}}}), "unread")
    assert aws_unread["pool"] == "inference, training" and "(L-3819A6DF) (the pools need 84)" in aws_unread["message"]
    assert "AccessDeniedException" in aws_unread["message"]
    assert aws_unread["fix"].startswith("allow servicequotas:GetServiceQuota, or read it: aws service-quotas get")
    cpus = {"CPUS-per-project-region": 96, "CPUS-ALL-REGIONS-per-project": 96}
    gcp = findings(preview("gcp-dev", {"gcp": {"quotas": {"GPUS-ALL-REGIONS-per-project": None, **cpus}}}), "unread")
    assert [f["message"].split(" (the pools")[0] for f in gcp] == ["GPUS-ALL-REGIONS-per-project"]
    assert "gcloud services enable cloudquotas.googleapis.com --project=elastic-gpu-dev" in gcp[0]["fix"]


def test_under_karpenter_the_need_is_the_largest_type_its_node_pools_may_launch() -> None:
    [spot] = findings(preview("aws-karpenter"), "spot-quota")
    # inference: 9 x g4dn.8xlarge (32 vCPUs, the largest 1-GPU T4 type); training: 6 x g5.8xlarge (32)
    assert "(inference 288, training 192); the account has 0: short by 480" in spot["message"]
    assert [f["check"] for f in findings(run_preview("aws-karpenter", ROOT, load_account(AMPLE)))] == ["api-access"]


def test_the_example_account_leaves_only_what_no_account_can_fix_offline() -> None:
    # Every shipped stack: no finding but the allow-list (a stack-file line).
    aws, gcp = ("aws-dev", "aws-prod", "aws-karpenter"), ("gcp-dev", "gcp-prod", "gcp-autoprovision")
    for stack in (*aws, *gcp, "azure-dev", "azure-prod", "azure-karpenter"):
        left = {f["check"] for f in findings(run_preview(stack, ROOT, load_account(AMPLE)))}
        assert left <= {"api-access"}, (stack, left)


def test_the_general_pools_vcpus_are_read_from_ec2(program_dir) -> None:
    """DescribeInstanceTypes' DefaultVCpus (aws.ec2.get_instance_type), not the size's name: a program's
    offline_mocks.py that describes m6i.xlarge with 8 vCPUs doubles aws-prod's need (6 nodes x 8)."""
    directory = program_dir(stack_values("aws-prod"))
    (directory / "offline_mocks.py").write_text(
        "INVOKES = {'aws:ec2/getInstanceType:getInstanceType': lambda args: "
        "{'instanceType': args['instanceType'], 'defaultVcpus': 8, 'memorySize': 32768, 'gpuses': []}}\n"
    )
    [general] = findings(run_preview("test", directory, described_account(None)), "cpu-quota")
    assert "need 48 vCPUs of 'Running On-Demand Standard" in general["message"]


def test_a_general_type_ec2_does_not_describe_leaves_its_vcpus_unread(program_dir) -> None:
    values = stack_values("aws-prod")
    values["elastic-gpu:generalPool"] = {**values["elastic-gpu:generalPool"], "instanceTypes": ["c7i.xlarge"]}
    p = run_preview("test", program_dir(values), described_account(None))
    assert findings(p, "cpu-quota") == []
    [unread] = [f for f in findings(p, "unread") if f["pool"] == "general"]
    assert "the vCPUs of c7i.xlarge could not be read" in unread["message"]
    assert "aws ec2 describe-instance-types --instance-types c7i.xlarge --region us-east-1" in unread["fix"]
