"""A library user's program with one mistake each: `python -m elastic_gpu preview --program DIR` exits 2
with a message naming the argument as the program wrote it, and nothing of the erring component is declared."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pulumi
import pytest

from elastic_gpu.__main__ import main
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.scheduling import AWS_ACCELERATOR_LABEL, POOL_LABEL
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.tools.simulation import simulate
from elastic_gpu.workload import job_manifest
from tests.conftest import ROOT, stack_values

#: A user's program on an EKS cluster it already runs: a spot L4 pool with fallback, the device plugin
#: and the autoscaler. Each case below replaces one piece of it.
PROGRAM = """
import pulumi
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster, NvidiaDevicePlugin,
                         NvidiaDevicePluginArgs, SpotGpuPool, SpotGpuPoolArgs)

TAGS = {"project": "ml-platform", "cost-center": "research"}
# the cluster's own on-demand nodes, where the autoscaler runs
SYSTEM = {"node-role": "system", "elastic-gpu.io/capacity": "on-demand"}

cluster = EksCluster.existing(
    "ml",
    cluster_name="ml",
    kubernetes_version="1.35",
    node_role_arn="arn:aws:iam::123456789012:role/ml-nodes",
    subnet_ids=SUBNETS,
    oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC",
    oidc_provider_url="https://oidc.eks.us-east-1.amazonaws.com/id/ABC",
    REGION
    tags=TAGS,
)
l4 = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=TYPES, max_size=MAX, on_demand_fallback=True,
                                       tags=TAGS, POOL))
NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=cluster.provider, gpu_pools=[l4]))
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=cluster, gpu_pools=[l4], node_selector=SYSTEM, AUTOSCALER))
"""
GOOD = {
    "SUBNETS": '{"us-east-1a": "subnet-1", "us-east-1b": "subnet-2"}',
    "TYPES": '["g6.xlarge"]',
    "MAX": "4",
    "AUTOSCALER": "",
    "POOL": "",
    "REGION": 'region="us-east-1",',
}


#: The cluster's own nodes (SYSTEM), which the program does not declare, described to the gate
#: (controllers-schedulable.nodeGroups): a selector no declared or described node carries fails it.
POLICY_CONFIG = (
    "controllers-schedulable:\n  nodeGroups:\n    - name: system\n"
    "      labels: {node-role: system, elastic-gpu.io/capacity: on-demand}\n"
)


def write(tmp_path: Path, config: str = "config: {}\n", **change: str) -> Path:
    source = PROGRAM
    for key, value in (GOOD | change).items():
        source = source.replace(key, value)
    (tmp_path / "Pulumi.yaml").write_text("name: consumer\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(config)
    (tmp_path / "__main__.py").write_text(source)
    (tmp_path / "policy-config.yaml").write_text(POLICY_CONFIG)
    return tmp_path


def described(program: Path, flag: str = "--policy-config") -> list[str]:
    """The gate's arguments describing the program's system nodes."""
    return [flag, str(program / "policy-config.yaml")]


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(type, name) of every resource the program registers."""
    seen: list[tuple[str, str]] = []
    real = pulumi.Resource.__init__

    def record(self, t, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((t, name))
        return real(self, t, name, *args, **kwargs)

    monkeypatch.setattr(pulumi.Resource, "__init__", record)
    return seen


def test_the_program_without_mistakes_previews_and_passes_the_gate(tmp_path, registered, capsys) -> None:
    assert main(["preview", "--program", str(write(tmp_path)), "--stack", "dev", *described(tmp_path)]) == 0
    assert main(["policy", "--program", str(tmp_path), "--stack", "dev", *described(tmp_path, "--config")]) == 0
    # undescribed, nothing says a node carries the autoscaler's labels: it would stay Pending
    assert main(["policy", "--program", str(tmp_path), "--stack", "dev"]) == 1
    assert ("elastic-gpu:index:ClusterAutoscaler", "ca") in registered


MISTAKES = {
    # ClusterAutoscalerArgs was never checked: all three reached the Deployment.
    "expander typo": (
        {"AUTOSCALER": 'expander=["priorty"]'},
        "ClusterAutoscalerArgs.expander[0]: 'priorty' is not allowed; did you mean 'priority'? allowed: priority, "
        "least-waste, most-pods, random, price",
        "ca",
    ),
    "fallback without priority": (
        {"AUTOSCALER": 'expander=["least-waste"]'},
        "ClusterAutoscalerArgs.expander: SpotGpuPool 'l4' (on_demand_fallback=True) needs `priority` in the "
        "expander chain",
        "ca",
    ),
    "duration in words": (
        {"AUTOSCALER": 'scale_down_unneeded_time="10 minutes"'},
        "ClusterAutoscalerArgs.scale_down_unneeded_time: '10 minutes' is not allowed; allowed: a Go duration "
        "such as 90s, 14m30s, 1h30m or 1.5h",
        "ca",
    ),
    "zero duration": (
        {"AUTOSCALER": 'max_node_provision_time="0s"'},
        "ClusterAutoscalerArgs.max_node_provision_time: must be longer than 0 (got '0s')",
        "ca",
    ),
    # Numbers were compared before their type was known.
    "size as text": (
        {"MAX": '"4"'},
        "SpotGpuPool 'l4': SpotGpuPoolArgs.max_size: must be an integer, got str '4'",
        "l4",
    ),
    "fractional size": (
        {"MAX": "4.5"},
        "SpotGpuPool 'l4': SpotGpuPoolArgs.max_size: must be an integer (a fraction is never rounded), got float 4.5",
        "l4",
    ),
    # One pool, two GPU models: every node was labelled with the first one's.
    "two GPU models": (
        {"TYPES": '["g5.xlarge", "g6.xlarge"]'},
        "SpotGpuPoolArgs.instance_types: a pool's nodes carry one GPU model (its accelerator label says which, and "
        "a pod that asks for one model must not land on another); got NVIDIA A10G: g5.xlarge; NVIDIA L4: g6.xlarge. "
        "Make one pool per model, or set mixed_gpu_models=True",
        "l4",
    ),
    # A setting of another cloud was silently ignored (the stack config refused it).
    "another cloud's setting": (
        {"POOL": "queued_provisioning=True"},
        "SpotGpuPool 'l4': SpotGpuPoolArgs.queued_provisioning: a GCP-only setting; remove it for cloud 'aws' "
        "(got True)",
        "l4",
    ),
    # Zones are checked against the region (they were only compared with the subnet map's own keys).
    "zone of another region": (
        {"SUBNETS": '{"us-east-1a": "subnet-1", "eu-central-1b": "subnet-2"}'},
        "EksCluster.existing 'ml': subnet_ids['eu-central-1b']: 'eu-central-1b' is not a zone of region 'us-east-1'",
        "ml",
    ),
    "availability-zone id": (
        {"SUBNETS": '{"use1-az1": "subnet-1"}'},
        "EksCluster.existing 'ml': subnet_ids['use1-az1']: 'use1-az1' is an availability-zone id; EC2 and EKS take "
        "the zone's name",
        "ml",
    ),
    # A list where a map is expected printed the Outputs' reprs.
    "subnet list": (
        {"SUBNETS": '[pulumi.Output.from_input("subnet-1"), pulumi.Output.from_input("subnet-2")]'},
        "EksCluster.existing 'ml': subnet_ids: must map each zone to a private subnet id, e.g. "
        '{"us-east-1a": "subnet-0abc..."} (a list has no zones: the node groups are per zone), got a list of 2 values',
        "ml",
    ),
}


@pytest.mark.parametrize("case", MISTAKES)
def test_a_mistake_exits_2_naming_the_argument(case: str, tmp_path, registered, capsys) -> None:
    change, message, component = MISTAKES[case]
    assert main(["preview", "--program", str(write(tmp_path, **change)), "--stack", "dev"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err and "<pulumi.output" not in err
    # refused before the component registered anything
    assert [n for _, n in registered if n == component or n.startswith(f"{component}-")] == []


def test_any_of_these_gpus_is_asked_for_and_then_no_model_label_is_set(tmp_path, capsys) -> None:
    program = write(tmp_path, TYPES='["g5.xlarge", "g6.xlarge"]', POOL="mixed_gpu_models=True")
    preview = run_preview("dev", program)
    groups = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    assert len(groups) == 4
    for g in groups:
        assert g.inputs["instanceTypes"] == ["g5.xlarge", "g6.xlarge"]
        assert AWS_ACCELERATOR_LABEL not in g.inputs["labels"]  # it would be wrong on half the nodes
        assert g.inputs["labels"][POOL_LABEL] == "l4"
    # The pool's own Job selects what every node shares (the pool), and reaches spot first.
    [own] = simulate(preview)
    assert own.reaches and own.first_choice is not None and "spot" in own.first_choice
    # A pod that asks for one model fits no group of this pool, instead of landing on the other model.
    job = job_manifest(own_contract(preview))
    job["spec"]["template"]["spec"]["nodeSelector"][AWS_ACCELERATOR_LABEL] = "nvidia-l4"
    [l4_only] = simulate(preview, job)
    assert not l4_only.reaches and AWS_ACCELERATOR_LABEL in (l4_only.reason or "")
    assert main(["policy", "--program", str(program), "--stack", "dev", *described(program, "--config")]) == 0


def own_contract(preview):  # type: ignore[no-untyped-def]
    from elastic_gpu.tools.simulation.run import pool_contracts

    [contract] = pool_contracts(preview)
    return contract


def test_the_stack_config_asks_for_any_of_these_gpus_in_its_own_words() -> None:
    values = stack_values("aws-dev")
    pool = values["elastic-gpu:gpuPools"][0]
    del pool["gpu"]
    pool["instanceTypes"] = ["g5.xlarge", "g6.xlarge"]
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    assert "gpuPools[0].instanceTypes: a pool's nodes carry one GPU model" in str(exc.value)
    assert "set mixedGpuModels: true to accept any of these GPUs" in str(exc.value)
    pool["mixedGpuModels"] = True
    assert load_stack_config(values).gpu_pools[0].mixed_gpu_models


def test_zones_are_checked_against_the_aws_provider_s_region(tmp_path, capsys) -> None:
    """No `region` argument: the region is the AWS provider's `aws:region`, known before deployment."""
    program = write(tmp_path, config="config:\n  aws:region: eu-central-1\n", REGION="")
    assert main(["preview", "--program", str(program), "--stack", "dev"]) == 2
    assert "subnet_ids['us-east-1a']: 'us-east-1a' is not a zone of region 'eu-central-1'" in capsys.readouterr().err
    program = write(tmp_path, config="config:\n  aws:region: us-east-1\n", REGION="")
    assert main(["preview", "--program", str(program), "--stack", "dev", *described(program)]) == 0


def test_an_eks_cluster_s_zones_belong_to_its_region(run_program) -> None:
    source = """
from elastic_gpu import EksCluster, EksClusterArgs
zones = ["eu-central-1a", "us-east-1b", "euc1-az2"]
EksCluster("c", EksClusterArgs(cluster_name="c", region="eu-central-1", zones=zones, kubernetes_version="1.35"))
"""
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    assert exc.value.problems == [
        "EksCluster 'c': EksClusterArgs.zones[1]: 'us-east-1b' is not a zone of region 'eu-central-1'; allowed: "
        "eu-central-1a, eu-central-1b, ...",
        "EksCluster 'c': EksClusterArgs.zones[2]: 'euc1-az2' is an availability-zone id; EC2 and EKS take the zone's "
        "name, such as eu-central-1a (`aws ec2 describe-availability-zones --zone-ids euc1-az2` shows it)",
    ]


GKE = """
from elastic_gpu import GkeCluster
GkeCluster.existing("g", cluster_name="g", project="my-project-1", location=LOCATION, zones=ZONES,
                    kubernetes_version="1.35", private_nodes=True)
"""


@pytest.mark.parametrize(
    ("location", "zones", "problem"),
    [
        ('"europe-west4"', '["us-central1-a"]', "zones[0]: 'us-central1-a' is not a zone of region 'europe-west4'"),
        ('"europe-west4-a"', '["europe-west4-b", "europe-west1-b"]', "zones[1]: 'europe-west1-b' is not a zone of"),
        ('"europe-west4-a"', '["europe-west4-b"]', None),  # a zonal cluster's pools may use the region's zones
    ],
)
def test_a_gke_zone_belongs_to_the_cluster_s_location(run_program, location: str, zones: str, problem) -> None:
    source = GKE.replace("LOCATION", location).replace("ZONES", zones)
    if problem is None:
        run_program(source)
        return
    with pytest.raises(ConfigError, match=re.escape(f"GkeCluster.existing 'g': {problem}")):
        run_program(source)


def test_a_pulumi_eks_cluster_without_an_oidc_provider_exits_2_naming_create_oidc_provider(
    tmp_path, registered, capsys
) -> None:
    """pulumi-eks reports oidcProviderArn "" without create_oidc_provider=True (cluster.ts), known at preview: the
    autoscaler refuses it before its IRSA role would trust `"Federated": ""` (the gate passed it before)."""
    import shutil

    example = ROOT / "examples" / "existing-eks"
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml"):
        shutil.copy(example / name, tmp_path / name)
    source = (example / "__main__.py").read_text()
    assert "create_oidc_provider=True," in source
    (tmp_path / "__main__.py").write_text(source.replace("create_oidc_provider=True,", ""))
    assert main(["preview", "--program", str(tmp_path), "--stack", "dev"]) == 2
    err = capsys.readouterr().err
    assert (
        "ClusterAutoscaler 'autoscaler': the cluster has no IAM OIDC provider (its oidc_provider_arn is ''), so the "
        'autoscaler\'s IRSA role would trust `"Federated": ""` and its pod could never assume it: build the '
        "pulumi_eks.Cluster with create_oidc_provider=True (EksCluster.from_pulumi_eks), or give the handle "
        "create_oidc_provider=True (from_pulumi_eks, from_cluster) to declare one, or pass "
        "EksCluster.existing(oidc_provider_arn=...) the ARN of the cluster's IAM OIDC provider"
    ) in err
    assert "Traceback" not in err
    assert main(["policy", "--program", str(tmp_path), "--stack", "dev"]) == 2
    assert main(["policy", "--program", str(example), "--stack", "dev"]) == 0


KARPENTER_ON_PULUMI_EKS = """
import pulumi_eks as eks
from elastic_gpu import EksCluster, GeneralPool, GeneralPoolArgs
from elastic_gpu.aws.karpenter.controller import Karpenter, KarpenterArgs

cluster = eks.Cluster("ml", name="ml", vpc_id="vpc-1", private_subnet_ids=["subnet-a"], authentication_mode="API",
                      skip_default_node_group=True, version="1.35" OIDC)
handle = EksCluster.from_pulumi_eks("h", cluster, subnet_ids={"us-west-2a": "subnet-a"},
                                    node_role_arn="arn:aws:iam::123456789012:role/gpu")
general = GeneralPool("general", GeneralPoolArgs(cluster=handle, instance_types=["m6i.large"], max_size=2))
Karpenter("karpenter", KarpenterArgs(cluster=handle, general_pool=general))
"""


def test_karpenter_on_a_pulumi_eks_cluster_without_an_oidc_provider_names_create_oidc_provider(run_program) -> None:
    """The controller's IRSA role is refused as the autoscaler's is: with `"Federated": ""` `up` would fail."""
    with pytest.raises(ConfigError) as exc:
        run_program(KARPENTER_ON_PULUMI_EKS.replace(" OIDC", ""))
    assert exc.value.problems == [
        "Karpenter 'karpenter': the cluster has no IAM OIDC provider (its oidc_provider_arn is ''), so the "
        'Karpenter controller\'s IRSA role would trust `"Federated": ""` and its pod could never assume it: build '
        "the pulumi_eks.Cluster with create_oidc_provider=True (EksCluster.from_pulumi_eks), or give the handle "
        "create_oidc_provider=True (from_pulumi_eks, from_cluster) to declare one, or pass "
        "EksCluster.existing(oidc_provider_arn=...) the ARN of the cluster's IAM OIDC provider"
    ]
    preview = run_program(KARPENTER_ON_PULUMI_EKS.replace(" OIDC", ", create_oidc_provider=True"))
    trust = json.loads(preview.one("aws:iam/role:Role", "karpenter-controller-role").inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"]["Federated"].startswith("arn:aws:iam::")


def test_a_plain_empty_oidc_provider_arn_is_refused_by_the_handle(tmp_path, registered, capsys) -> None:
    program = write(tmp_path)
    arn = '"arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"'
    (program / "__main__.py").write_text((program / "__main__.py").read_text().replace(arn, '""'))
    assert main(["preview", "--program", str(program), "--stack", "dev"]) == 2
    assert "EksCluster.existing 'ml': oidc_provider_arn: must not be empty" in capsys.readouterr().err
    assert [n for _, n in registered if n == "ml" or n.startswith("ca")] == []


def test_private_nodes_is_named_where_it_matters(run_program) -> None:
    """GkeCluster.existing without private_nodes: the policy that fires and help() both name it."""
    import pydoc

    from elastic_gpu import GkeCluster
    from elastic_gpu.tools.offline.policy_run import run_policies

    doc = pydoc.render_doc(GkeCluster.existing, renderer=pydoc.plaintext)
    assert "`private_nodes`: set True when the cluster's nodes are private" in doc and "no-public-node-ips" in doc
    source = GKE.replace("LOCATION", '"europe-west4"').replace("ZONES", '["europe-west4-a"]')
    source = source.replace('GkeCluster.existing("g"', 'cluster = GkeCluster.existing("g"')
    source += "from elastic_gpu import SpotGpuPool, SpotGpuPoolArgs\n"
    source += 'SpotGpuPool("t4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g2-standard-4"], max_size=2))\n'
    public = run_policies(run_program(source.replace("private_nodes=True", "private_nodes=None")))
    messages = [v.message for v in public.violations if v.policy == "no-public-node-ips"]
    assert messages and all("GkeCluster.existing(..., private_nodes=True)" in m for m in messages)
    private = run_policies(run_program(source))
    assert not [v for v in private.violations if v.policy == "no-public-node-ips"]


def test_a_missing_extra_says_which_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    import elastic_gpu
    from elastic_gpu.clouds import get_cloud

    monkeypatch.setitem(sys.modules, "pulumi_aws", None)  # as if `pip install elastic-gpu` without [aws]
    monkeypatch.delitem(sys.modules, "elastic_gpu.aws.cluster", raising=False)
    with pytest.raises(ModuleNotFoundError) as exc:
        elastic_gpu.EksCluster  # noqa: B018 - `from elastic_gpu import EksCluster`
    assert str(exc.value) == (
        "elastic_gpu.EksCluster needs the pulumi_aws package, which the [aws] extra installs: "
        "pip install 'elastic-gpu[aws]'"
    )
    monkeypatch.setitem(sys.modules, "pulumi_gcp", None)
    monkeypatch.delitem(sys.modules, "elastic_gpu.gcp.stack", raising=False)
    with pytest.raises(ConfigError, match=re.escape("pip install 'elastic-gpu[gcp]'")):
        get_cloud("gcp").stack_builder()


def test_hints_speak_to_a_program_too(tmp_path) -> None:
    """The policies' hints name the argument a program sets, not only the stack file's key."""
    from elastic_gpu.tools.offline.policy_run import run_policies

    main_py = write(tmp_path) / "__main__.py"
    source = main_py.read_text().replace('TAGS = {"project": "ml-platform", "cost-center": "research"}', "TAGS = {}")
    main_py.write_text(source.replace("on_demand_fallback=True", "on_demand_fallback=False"))
    report = run_policies(run_preview("dev", tmp_path))
    tags = {v.message for v in report.violations if v.policy == "cost-allocation-tags"}
    assert tags and all("`tags=` of the components (SpotGpuPoolArgs.tags" in m for m in tags)
    fallback = {v.message for v in report.violations if v.policy == "spot-gpu-pool-on-demand-fallback"}
    want = "SpotGpuPoolArgs.on_demand_fallback=True in a program, onDemandFallback: true in a stack file"
    assert fallback and all(want in m for m in fallback)


def test_a_price_gap_names_the_config_key_any_program_reads() -> None:
    from elastic_gpu.tools.cost import NodePrice, price_hints

    [hint] = price_hints([(NodePrice("g9.xlarge", (), (), ("g9.xlarge",)), "us-east-1", True)])
    assert hint == (
        "no price for g9.xlarge (us-east-1): set `elastic-gpu:prices.<item>.onDemand` (USD per hour) in the stack's "
        "config, which any program using elastic-gpu reads, or add a row to elastic_gpu/data/prices.csv in the "
        "repository"
    )


@pytest.mark.parametrize(
    ("pool", "problem"),
    [
        (
            'instance_types=["g2-standard-4", "g2-standard-8"], max_size=2',
            "SpotGpuPoolArgs.instance_types: a GKE node pool has one machine type (got ['g2-standard-4', "
            "'g2-standard-8']); allowed: a list of one",
        ),
        (
            'instance_types=["g2-standard-4"], max_size=2, queued_provisioning=True',
            "SpotGpuPoolArgs.spot: a queued-provisioning pool uses flex-start capacity, not spot",
        ),
    ],
)
def test_gke_pool_rules_of_the_stack_config_hold_for_a_program(run_program, pool: str, problem: str) -> None:
    """A GKE node pool took only the first machine type, silently; the stack config refused it."""
    source = GKE.replace("LOCATION", '"europe-west4"').replace("ZONES", '["europe-west4-a"]')
    source = source.replace('GkeCluster.existing("g"', 'cluster = GkeCluster.existing("g"')
    source += "from elastic_gpu import SpotGpuPool, SpotGpuPoolArgs\n"
    source += f"SpotGpuPool('l4', SpotGpuPoolArgs(cluster=cluster, {pool}))\n"
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    assert f"SpotGpuPool 'l4': {problem}" in str(exc.value)


def test_aks_cluster_args_are_type_checked_first(run_program) -> None:
    source = """
from elastic_gpu import AksCluster, AksClusterArgs
AksCluster("c", AksClusterArgs(cluster_name="c", location="westeurope", zones=["1"], kubernetes_version="1.35",
                               system_min_size="1", expander=["priority", "least-wast"]))
"""
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    # in the Args' field order: the settings a stack file shares (the autoscaler's expander), then the Args' own
    assert exc.value.problems == [
        "AksCluster 'c': AksClusterArgs.expander[1]: 'least-wast' is not allowed; did you mean 'least-waste'? "
        "allowed: priority, least-waste, most-pods, random, price",
        "AksCluster 'c': AksClusterArgs.system_min_size: must be an integer, got str '1'",
    ]


def test_an_eks_cluster_s_nat_gateways_is_one_of_its_two_values_before_any_resource(run_program) -> None:
    source = """
from elastic_gpu import EksCluster, EksClusterArgs
EksCluster("c", EksClusterArgs(cluster_name="c", region="us-west-2", zones=["us-west-2a"], kubernetes_version="1.35",
                               nat_gateways="perzone"))
"""
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    assert exc.value.problems == [
        "EksCluster 'c': EksClusterArgs.nat_gateways: 'perzone' is not allowed; did you mean 'perZone'? "
        "allowed: perZone, single"
    ]


def test_an_eks_cluster_s_region_is_the_aws_provider_s(tmp_path, capsys) -> None:
    source = """
import pulumi, pulumi_aws as aws
from elastic_gpu import EksCluster, EksClusterArgs
args = EksClusterArgs(cluster_name="c", region="eu-west-1", zones=["eu-west-1a"], kubernetes_version="1.35",
                      tags={"project": "p", "cost-center": "c"})
EksCluster("c", args, opts=OPTS)
"""
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text("name: consumer\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (tmp_path / "__main__.py").write_text(source.replace("OPTS", "None"))
    assert main(["preview", "--program", str(tmp_path), "--stack", "dev"]) == 2
    assert (
        "EksCluster 'c': EksClusterArgs.region: 'eu-west-1', but the AWS provider deploys to 'us-east-1' (aws:region)"
        in capsys.readouterr().err
    )
    # A provider the program passes decides the region itself.
    explicit = 'pulumi.ResourceOptions(providers={"aws": aws.Provider("eu", region="eu-west-1")})'
    (tmp_path / "__main__.py").write_text(source.replace("OPTS", explicit))
    assert main(["preview", "--program", str(tmp_path), "--stack", "dev"]) == 0
