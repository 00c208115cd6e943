"""One row per class of bad input a fuzzer or a new user got through, written as a user writes it: a line
of a shipped stack file edited as text, run through `python -m elastic_gpu preview`. Each must end in the one
exit-2 message naming the field, the value and what is allowed, with no traceback and no resource declared
first. The policy half (GPU cap per pool total, scope reads context) is judged by the gate itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elastic_gpu.__main__ import main
from elastic_gpu.azure.stack import cluster_args, cluster_problems
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline import runner
from tests.conftest import ROOT, stack_values
from tests.test_policy_totals_and_context import PRIVATE_GKE

HUGE = "1" + "0" * 400  # 10**400: an OverflowError (int too large to convert to float) unless checked first

#: (stack, text in the shipped stack file, its replacement, the message expected).
CLASSES = {
    "general-maxSize-10**400": (
        "aws-dev", "    maxSize: 3\n", f"    maxSize: {HUGE}\n",
        "generalPool.maxSize: Input should be less than or equal to 5000 (got a 401-digit number); "
        "Kubernetes supports at most 5,000 nodes per cluster",
    ),
    "gpu-maxSize-10**400-aws": (
        "aws-dev", "      maxSize: 4\n", f"      maxSize: {HUGE}\n",
        "gpuPools[0].maxSize: Input should be less than or equal to 5000 (got a 401-digit number)",
    ),
    "gpu-maxSize-10**400-azure": (
        "azure-dev", "      maxSize: 4\n", f"      maxSize: {HUGE}\n",
        "gpuPools[0].maxSize: Input should be less than or equal to 5000 (got a 401-digit number)",
    ),
    "gpu-maxSize-10**400-gcp": (
        "gcp-dev", "      maxSize: 3\n      spot", f"      maxSize: {HUGE}\n      spot",
        "gpuPools[0].maxSize: Input should be less than or equal to 5000 (got a 401-digit number)",
    ),
    "quoted-cloud": (
        "aws-dev", "elastic-gpu:cloud: aws", "elastic-gpu:cloud: '\"aws\"'",
        "cloud: Input should be 'aws', 'azure' or 'gcp' (got '\"aws\"'); the value carries its own quotes: "
        "write 'aws' without them",
    ),
    "general-maxSize-1e6": (
        "aws-dev", "    maxSize: 3\n", "    maxSize: 1000000\n",
        "generalPool.maxSize: Input should be less than or equal to 5000 (got 1000000); "
        "Kubernetes supports at most 5,000 nodes per cluster",
    ),
    # YAML 1.1 reads `1e30` as text and `1.0e+30` as a float: neither is a node count
    "general-maxSize-1e30-text": (
        "aws-dev", "    maxSize: 3\n", "    maxSize: 1e30\n",
        "generalPool.maxSize: Input should be a valid integer (got '1e30')",
    ),
    "general-maxSize-1e30-float": (
        "aws-dev", "    maxSize: 3\n", "    maxSize: 1.0e+30\n",
        "generalPool.maxSize: Input should be a valid integer (got 1e+30)",
    ),
    "timeSlicingReplicas-1e6": (
        "aws-dev", "timeSlicingReplicas: 2", "timeSlicingReplicas: 1000000",
        "devicePlugin.timeSlicingReplicas: Input should be less than or equal to 1000 (got 1000000); "
        "each replica is a pod on the node",
    ),
    "scaleDownDelayAfterAdd-999999h": (
        "aws-dev", "scaleDownDelayAfterAdd: 5m", "scaleDownDelayAfterAdd: 999999h",
        "autoscaler.scaleDownDelayAfterAdd: '999999h' is out of range; allowed: 1s to 24h",
    ),
    "maxNodeProvisionTime-1s": (
        "aws-dev", "scaleDownDelayAfterAdd: 5m", "scaleDownDelayAfterAdd: 5m\n    maxNodeProvisionTime: 1s",
        "autoscaler.maxNodeProvisionTime: '1s' is out of range; allowed: 5m to 2h",
    ),
    # found by the property hunt: AKS takes whole minutes only; refused by AksClusterArgs under
    # `cluster (AksCluster ...)` before, not by the field the user wrote
    "aks-duration-0s": (
        "azure-dev", "scaleDownDelayAfterAdd: 5m", "scaleDownDelayAfterAdd: 0s",
        "autoscaler.scaleDownDelayAfterAdd: '0s' is not allowed; allowed: whole minutes, an integer followed by "
        "'m' such as 10m or 60m (AKS)",
    ),
    "aks-duration-1h": (
        "azure-dev", "scaleDownUnneededTime: 5m", "scaleDownUnneededTime: 1h",
        "autoscaler.scaleDownUnneededTime: '1h' is not allowed; allowed: whole minutes",
    ),
    "aks-duration-90s": (
        "azure-dev", "scaleDownDelayAfterAdd: 5m", "scaleDownDelayAfterAdd: 5m\n    maxNodeProvisionTime: 90s",
        "autoscaler.maxNodeProvisionTime: '90s' is not allowed; allowed: whole minutes",
    ),
    "duplicated-expander": (
        "aws-dev", "expander: [priority, least-waste]", "expander: [priority, priority]",
        "autoscaler.expander: each value may appear once (repeated: priority)",
    ),
    "aws-tag-key-<": (
        "aws-dev", "cost-center: ml-research", "'a<b': ml-research",
        "tags.a<b: tag key may not contain '<'; allowed: letters, digits, spaces and _ . : / = + - @",
    ),
    "duplicate-general-types": (
        "aws-dev", "instanceTypes: [m6i.large, m6a.large, m5.large]", "instanceTypes: [m6i.large, m5.large, m6i.large]",
        "generalPool.instanceTypes: each value may appear once (repeated: m6i.large)",
    ),
    "duplicate-gpu-types": (
        "aws-dev", "      gpu: t4 ", "      instanceTypes: [g4dn.xlarge, g4dn.xlarge]\n      gpu: t4 ",
        "gpuPools[0].instanceTypes: each type may appear once (repeated: g4dn.xlarge)",
    ),
    "networkCidr-/016": (
        "aws-dev", "natGateways: single", "natGateways: single\n    networkCidr: 10.0.0.0/016",
        "cluster.networkCidr: '10.0.0.0/016' is not written canonically (no leading zeros or spaces); "
        "did you mean '10.0.0.0/16'?",
    ),
    "aks-system-vmSize-aws-type": (
        "azure-dev", "vmSize: Standard_D4s_v5", "vmSize: m6i.large",
        "cluster.systemPool.vmSize: 'm6i.large' looks like a aws type; allowed: a azure type such as Standard_D4s_v5",
    ),
    "aks-system-maxSize-5000": (
        "azure-dev", "      maxSize: 2\n", "      maxSize: 5000\n",
        "cluster.systemPool.maxSize: 5000 is out of range; allowed: 1 to 1000 (AKS System pool count, ARM API)",
    ),
    "gke-general-not-a-machine": (
        "gcp-dev", "instanceTypes: [e2-standard-2]", "instanceTypes: [not-a-machine]",
        "generalPool.instanceTypes[0]: 'not-a-machine' is not a gcp machine type we know; allowed: a type of a "
        "known family such as e2-standard-4",
    ),
    "gke-general-second-type": (
        "gcp-dev", "instanceTypes: [e2-standard-2]", "instanceTypes: [e2-standard-2, e2-standard-4]",
        "generalPool.instanceTypes: a GKE node pool has one machine type, so a second one would be ignored; give one "
        "(got ['e2-standard-2', 'e2-standard-4'])",
    ),
}  # fmt: skip


def write_program(directory: Path, stack_text: str, stack: str = "t") -> Path:
    (directory / "stacks").mkdir(exist_ok=True)
    (directory / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (directory / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    (directory / "stacks" / f"Pulumi.{stack}.yaml").write_text(stack_text)
    return directory


@pytest.fixture
def registered(monkeypatch) -> list[str]:
    """Types of every resource the mock engine registers."""
    seen: list[str] = []
    original = runner._CapturingMonitor.RegisterResource

    def record(self: Any, request: Any) -> Any:
        seen.append(request.type)
        return original(self, request)

    monkeypatch.setattr(runner._CapturingMonitor, "RegisterResource", record)
    return seen


@pytest.mark.parametrize(("stack", "old", "new", "expected"), CLASSES.values(), ids=CLASSES.keys())
def test_each_class_is_refused_by_field_with_exit_2(tmp_path, capsys, registered, stack, old, new, expected) -> None:
    text = (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    assert text.count(old) == 1, f"the edit must hit one line of {stack}: {old!r}"
    program = write_program(tmp_path, text.replace(old, new))
    assert main(["preview", "--stack", "t", "--program", str(program)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: invalid stack config (1 problem(s)):\n  - "), err
    assert expected in err and "Traceback" not in err, err
    assert [t for t in registered if t != "pulumi:pulumi:Stack"] == []


def test_the_unedited_stacks_load_so_each_row_is_about_its_edit() -> None:
    for stack in sorted({row[0] for row in CLASSES.values()}):
        assert load_stack_config(stack_values(stack)).cloud == stack.split("-")[0]


def test_aks_durations_in_whole_minutes_pass() -> None:
    """The AKS rule refuses what AKS refuses, no more: 0m (the AKS docs' bursty profile) and 60m pass, and the
    AksCluster takes them as written."""
    values = stack_values("azure-dev")
    values["elastic-gpu:autoscaler"].update({"scaleDownDelayAfterAdd": "0m", "maxNodeProvisionTime": "60m"})
    cfg = load_stack_config(values)
    assert cluster_args(cfg).scale_down_delay_after_add == "0m" and cluster_problems(cfg) == []


# --- the policy gate ----------------------------------------------------------------------------------


def test_the_gate_fails_on_a_21_node_aws_pool_split_over_three_zones_and_a_fallback(tmp_path, capsys) -> None:
    text = (ROOT / "stacks" / "Pulumi.aws-dev.yaml").read_text()
    text = text.replace("zones: [us-west-2a, us-west-2b]", "zones: [us-west-2a, us-west-2b, us-west-2c]")
    program = write_program(tmp_path, text.replace("      maxSize: 4\n", "      maxSize: 21\n"))
    # 3 spot groups of 7 and 3 fallback groups of 7, each under the cap of 20
    assert main(["policy", "--stack", "t", "--program", str(program)]) == 1
    out = capsys.readouterr().out
    assert "GPU pool 't4' may grow to 42 nodes over its 6 node groups (" in out and "above the cap of 20" in out
    program = write_program(tmp_path, text.replace("      maxSize: 4\n", "      maxSize: 10\n"))  # 2 x 10 = 20
    assert main(["policy", "--stack", "t", "--program", str(program)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize(("private", "exit_code"), [("True", 0), ("False", 1)])
def test_the_gate_on_a_library_pool_next_to_a_cluster_of_the_program(tmp_path, capsys, private, exit_code) -> None:
    write_program(tmp_path, "config: {}\n", stack="test")
    (tmp_path / "Pulumi.yaml").write_text("name: consumer\nruntime: python\nstackConfigDir: stacks\n")
    tagged = PRIVATE_GKE.replace(
        "on_demand_fallback=True", 'on_demand_fallback=True, tags={"project": "p", "cost-center": "c"}'
    )
    (tmp_path / "__main__.py").write_text(tagged.replace("PRIVATE", private))  # the tags: cost-allocation-tags passes
    assert main(["policy", "--program", str(tmp_path)]) == exit_code
    out = capsys.readouterr().out
    assert ("no-public-node-ips" in out) == (private == "False"), out


# --- the same classes from a library user's program -----------------------------------------------------

LIBRARY_POOL = """
from elastic_gpu import GeneralPool, GeneralPoolArgs, GkeCluster, SpotGpuPool, SpotGpuPoolArgs

cluster = GkeCluster.existing("ml", cluster_name="ml", project="acme-ml", location="us-central1",
                              zones=["us-central1-a"], kubernetes_version="1.33", private_nodes=True)
GeneralPool("cpu", GeneralPoolArgs(cluster=cluster, instance_types=["e2-standard-4"], max_size=GENERAL))
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g2-standard-4"], max_size=GPU,
                                  on_demand_fallback=True, fallback_max_size=FALLBACK))
"""


@pytest.mark.parametrize(
    ("general", "gpu", "fallback", "expected"),
    [
        ("3", "10**400", "None", "SpotGpuPool 'l4': SpotGpuPoolArgs.max_size: a 401-digit number is out of range; "
         "allowed: 0 to 5000 (Kubernetes supports at most 5,000 nodes per cluster)"),
        ("3", "2", "10**400", "SpotGpuPool 'l4': SpotGpuPoolArgs.fallback_max_size: a 401-digit number is out of "
         "range; allowed: 0 to 5000"),
        ("10**6", "2", "None", "GeneralPool 'cpu': GeneralPoolArgs.max_size: 1000000 is out of range; allowed: 0 to "
         "5000"),
    ],
)  # fmt: skip
def test_library_pool_sizes_are_bounded_before_any_resource(run_program, registered, general, gpu, fallback, expected):
    """10**400 passed the Args checks and overflowed in the engine's serialization of the pool's node pool
    ("the program raised OverflowError"), after the pool was declared."""
    source = LIBRARY_POOL.replace("GENERAL", general).replace("GPU", gpu).replace("FALLBACK", fallback)
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    assert expected in str(exc.value) and "OverflowError" not in str(exc.value)
    component = expected.split(" ", 1)[0]  # the component refused: not declared, so none of its node pools
    assert f"elastic-gpu:index:{component}" not in registered, registered


def test_a_number_past_pythons_int_to_text_limit_is_named_not_printed() -> None:
    """A 5,001-digit count raised ValueError (int-to-text limit) while the message was written."""
    values = stack_values("aws-dev")
    values["elastic-gpu:generalPool"]["maxSize"] = 10**5000
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    assert exc.value.problems == [
        "generalPool.maxSize: Input should be less than or equal to 5000 (got a number of more than 4300 digits); "
        "Kubernetes supports at most 5,000 nodes per cluster"
    ]
