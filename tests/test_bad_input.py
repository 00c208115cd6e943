"""Bad input of every kind: one ConfigError (exit 2) naming the file or field, never a traceback,
never a resource registered first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from elastic_gpu.__main__ import main
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.files import read_stack_file
from elastic_gpu.tools.offline.policy_run import policy_config_problems
from elastic_gpu.tools.offline.runner import run_preview
from tests.conftest import ROOT, stack_values

P = "elastic-gpu:"


def config_errors(stack: str, mutate) -> str:
    values = stack_values(stack)
    mutate(values)
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return str(exc.value)


def write_program(tmp_path: Path, stack_text: str | bytes, stack: str = "t") -> Path:
    (tmp_path / "stacks").mkdir(exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (tmp_path / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    target = tmp_path / "stacks" / f"Pulumi.{stack}.yaml"
    target.write_bytes(stack_text if isinstance(stack_text, bytes) else stack_text.encode())
    return tmp_path


# --- the front door: files ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("config:\n\telastic-gpu:cloud: aws\n", ":2:1: found character '\\t' that cannot start any token (a tab"),
        ("config:\n  elastic-gpu:cluster: {name: [a\n", ":3:1:"),
        ("- a\n- b\n", "the stack file must be a mapping of keys to values (got a list)"),
        ("config: [1, 2]\n", "`config:` must be a mapping of `namespace:key` to value (got a list)"),
        ("config:\n  1: aws\n", ":2:3: key 1 is a int, not a string; quote it"),
        (
            "config:\n  elastic-gpu:cloud: aws\n  elastic-gpu:cloud: gcp\n",
            ":3:3: duplicate key 'elastic-gpu:cloud' (first at line 2)",
        ),
        (b"config:\n  elastic-gpu:cloud: \xff\n", ":2:22: not UTF-8 text (byte 0xff)"),
        # found by the property test: a tag that does not fit its value raised a bare ValueError
        (
            "config:\n  elastic-gpu:tags: {project: !!int project}\n",
            ":2:31: cannot read 'project' as tag:yaml.org,2002:int",
        ),
        ("config:\n  elastic-gpu:cloud: a\0ws\n", ":2:23: a NUL character"),
    ],
)
def test_broken_stack_files_name_file_line_and_column(tmp_path, capsys, text, expected) -> None:
    program = write_program(tmp_path, text)
    for command in (["preview"], ["cost", "--gpu-hours", "10"], ["policy"]):
        assert main([*command, "--stack", "t", "--program", str(program)]) == 2
        err = capsys.readouterr().err
        assert f"{program / 'stacks' / 'Pulumi.t.yaml'}" in err
        assert expected in err
        assert "Traceback" not in err


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
@pytest.mark.parametrize("path", sorted((ROOT / "stacks").glob("Pulumi.*.yaml")), ids=lambda p: p.name)
def test_libyaml_reads_each_shipped_stack_as_pyyaml_does_and_as_strictly(path) -> None:
    """Stack files are parsed by libyaml where PyYAML has it (a large stack's file in a hundredth of the time);
    what it reads must be what PyYAML's own parser reads, with the same refusals."""
    from elastic_gpu import files

    text = path.read_text()
    assert yaml.load(text, Loader=files._FastStrictLoader) == yaml.load(text, Loader=files._StrictLoader)
    first_key = next(line for line in text.splitlines() if line.startswith("  ") and ":" in line)
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key"):
        yaml.load(text.replace(first_key, f"{first_key}\n{first_key}", 1), Loader=files._FastStrictLoader)


def test_stack_file_that_is_a_directory(tmp_path) -> None:
    program = write_program(tmp_path, "config: {}\n")
    (program / "stacks" / "Pulumi.d.yaml").mkdir()
    with pytest.raises(ConfigError, match=r"Pulumi\.d\.yaml: is a directory; expected the stack file"):
        run_preview("d", program)


def test_project_file_without_name_and_program_without_main(tmp_path) -> None:
    program = write_program(tmp_path, "config: {}\n")
    (program / "Pulumi.yaml").write_text("")
    with pytest.raises(ConfigError, match="got an empty file"):
        run_preview("t", program)
    (program / "Pulumi.yaml").write_text("runtime: python\n")
    with pytest.raises(ConfigError, match="`name:` must be the project's name"):
        run_preview("t", program)
    (program / "Pulumi.yaml").write_text("name: p\nstackConfigDir: stacks\n")
    (program / "__main__.py").unlink()
    with pytest.raises(ConfigError, match=r"__main__\.py: not found"):
        run_preview("t", program)


def test_a_program_that_raises_is_reported_with_its_line_not_a_traceback(tmp_path, capsys) -> None:
    program = write_program(tmp_path, "config: {}\n")
    (program / "__main__.py").write_text("import pulumi\n\nraise KeyError('boom')\n")
    assert main(["policy", "--stack", "t", "--program", str(program)]) == 2
    err = capsys.readouterr().err
    assert "the program raised KeyError at" in err and "__main__.py:3" in err and "Traceback" not in err


def test_merge_keys_still_work_and_duplicates_through_them_are_seen(tmp_path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("base: &b {x: 1}\nconfig:\n  a:b:\n    <<: *b\n    y: 2\n")
    assert read_stack_file(path) == {"a:b": {"x": 1, "y": 2}}


# --- the config layer -------------------------------------------------------------------------


def test_misspelt_namespace_and_missing_namespace_say_did_you_mean() -> None:
    def mutate(v):
        v["elasticgpu:tags"] = v.pop(P + "tags")
        v["elastic_gpu:autoscaler"] = v.pop(P + "autoscaler")
        v["devicePlugin"] = v.pop(P + "devicePlugin")

    msg = config_errors("aws-dev", mutate)
    assert "elasticgpu:tags: unknown namespace 'elasticgpu'; did you mean 'elastic-gpu:tags'?" in msg
    assert "elastic_gpu:autoscaler: unknown namespace 'elastic_gpu'; did you mean 'elastic-gpu:autoscaler'?" in msg
    assert "devicePlugin: a config key needs a namespace" in msg
    # provider namespaces are not ours and not typos
    assert load_stack_config(stack_values("aws-dev") | {"aws:region": "us-east-1"}).cloud == "aws"


@pytest.mark.parametrize(
    ("cidr", "expected"),
    [
        (
            "10.0.0.1/16",
            "'10.0.0.1/16' is not a network address (10.0.0.1/16 has host bits set); did you mean '10.0.0.0/16'?",
        ),
        ("10.0.0.0/8", "allowed: an IPv4 range from /16 to /24"),
        ("fd00::/64", "allowed: an IPv4 range from /16 to /24"),
        ("banana", "'banana' is not a network address"),
    ],
)
def test_network_cidr_is_strict(cidr, expected) -> None:
    msg = config_errors("aws-prod", lambda v: v[P + "cluster"].update({"networkCidr": cidr}))
    assert f"cluster.networkCidr: {expected}" in msg or f"cluster.networkCidr: {cidr!r}: {expected}" in msg


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 10**400])
def test_non_finite_and_huge_numbers_are_errors(value) -> None:
    msg = config_errors("azure-prod", lambda v: v[P + "gpuPools"][1].update({"spotMaxPrice": value}))
    assert "gpuPools[1].spotMaxPrice:" in msg


@pytest.mark.parametrize(
    ("stack", "mutate", "expected"),
    [
        (
            "gcp-dev",
            lambda v: v.update({P + "autoscaler": {"expander": ["least-waste"]}}),
            "autoscaler: does nothing on gcp",
        ),
        (
            "gcp-dev",
            # GKE stacks create their network from networkCidr, unless the stack brings one.
            lambda v: v[P + "cluster"].update({"networkCidr": "10.1.0.0/16", "network": "vpc"}),
            "cluster.networkCidr: sizes the network the stack creates, and cluster.network brings one",
        ),
        (
            "azure-dev",
            lambda v: v[P + "cluster"].update({"networkCidr": "10.1.0.0/16"}),
            "cluster.networkCidr: does nothing on azure",
        ),
    ],
)
def test_settings_that_do_nothing_on_the_cloud_are_errors(stack, mutate, expected) -> None:
    assert expected in config_errors(stack, mutate)


def test_contradictions_are_errors() -> None:
    msg = config_errors("aws-prod", lambda v: v[P + "autoscaler"].update({"expander": ["least-waste"]}))
    assert "autoscaler.expander: gpuPools[0].onDemandFallback needs `priority` in the expander chain" in msg
    msg = config_errors("aws-prod", lambda v: v[P + "gpuPools"][0].update({"gpusPerNode": 1}))
    assert "gpuPools[0].gpusPerNode: only picks instance types from `gpu`" in msg
    msg = config_errors("aws-prod", lambda v: v[P + "gpuPools"][0].update({"instanceTypes": ["g4dn.xlarge"] * 2}))
    assert "gpuPools[0].instanceTypes: each type may appear once (repeated: g4dn.xlarge)" in msg


def test_messages_blame_the_right_field() -> None:
    msg = config_errors("azure-dev", lambda v: v[P + "gpuPools"][0].update({"gpu": "l4", "instanceTypes": None}))
    assert "gpuPools[0].gpu: 'l4' is not offered on azure" in msg and "gpusPerNode" not in msg
    msg = config_errors("aws-dev", lambda v: v[P + "cluster"].update({"region": ""}))
    assert "cluster.region: String should have at least 1 character" in msg and "zones" not in msg
    msg = config_errors("aws-dev", lambda v: v[P + "cluster"].update({"region": "us-central1"}))
    assert "cluster.region: 'us-central1' is not an AWS region" in msg and "zones" not in msg


def test_compound_durations_are_valid_and_zero_is_not() -> None:
    values = stack_values("aws-dev")
    values[P + "autoscaler"]["maxNodeProvisionTime"] = "1h30m"
    assert load_stack_config(values).autoscaler.max_node_provision_time == "1h30m"
    msg = config_errors("aws-dev", lambda v: v[P + "autoscaler"].update({"maxNodeProvisionTime": "0m"}))
    assert "autoscaler.maxNodeProvisionTime: must be longer than 0" in msg
    # a zero scale-down wait is valid (AKS documents scale-down-delay-after-add=0m)
    values[P + "autoscaler"].update({"scaleDownUnneededTime": "0m", "scaleDownDelayAfterAdd": "0m"})
    assert load_stack_config(values).autoscaler.scale_down_delay_after_add == "0m"
    msg = config_errors("aws-dev", lambda v: v[P + "autoscaler"].update({"scaleDownUnneededTime": "5 min"}))
    assert "'5 min' is not allowed; allowed: a Go duration such as 90s, 14m30s" in msg


# --- what the clouds reject -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stack", "tags", "expected"),
    [
        ("aws-dev", {f"k{i}": "v" for i in range(48)}, "tags: at most 47 tags"),
        ("aws-dev", {"k" * 129: "v"}, "tag key is 129 characters; allowed: at most 128"),
        ("aws-dev", {"": "v"}, "a tag key may not be empty"),
        ("aws-dev", {"AWS:owner": "me"}, "the tag key prefix 'aws:' is reserved"),
        ("aws-dev", {"Name": "x"}, "the components set the tag 'Name' themselves"),
        ("azure-dev", {"cost%center": "v"}, "tag key may not contain %"),
        ("azure-dev", {"a/b": "v"}, "tag key may not contain /"),
        ("azure-dev", {f"k{i}": "v" for i in range(51)}, "tags: at most 50 tags"),
        ("gcp-dev", {"Team": "ml"}, "label key 'Team' is not allowed"),
        ("gcp-dev", {"team": "ML Platform"}, "label value 'ML Platform' is not allowed"),
        ("gcp-dev", {"1team": "ml"}, "keys start with a lowercase letter"),
    ],
)
def test_tags_and_labels_follow_the_clouds_rules(stack, tags, expected) -> None:
    assert expected in config_errors(stack, lambda v: v.update({P + "tags": tags}))


@pytest.mark.parametrize(
    ("stack", "mutate", "expected"),
    [
        (
            "aws-dev",
            lambda v: v[P + "generalPool"].update({"diskSizeGib": 20000}),
            "generalPool.diskSizeGib: 20000 GiB is out of range; allowed: 20 to 16384",
        ),
        (
            "azure-dev",
            lambda v: v[P + "gpuPools"][0].update({"diskSizeGib": 4096}),
            "gpuPools[0].diskSizeGib: 4096 GiB is out of range; allowed: 20 to 2048",
        ),
        (
            "azure-dev",
            lambda v: v[P + "gpuPools"][0].update({"maxSize": 5000, "perZone": False}),
            "at most 1000 per agent pool",
        ),
        ("gcp-dev", lambda v: v[P + "gpuPools"][0].update({"maxSize": 5000}), "at most 1000 per zone of the node pool"),
        (
            "aws-dev",
            lambda v: v[P + "generalPool"].update({"instanceTypes": ["e2-standard-4"]}),
            "generalPool.instanceTypes[0]: 'e2-standard-4' looks like a gcp type",
        ),
        (
            "gcp-dev",
            lambda v: v[P + "generalPool"].update({"instanceTypes": ["m5.large"]}),
            "'m5.large' looks like a aws type",
        ),
        (
            "gcp-dev",
            lambda v: v[P + "cluster"].update({"project": "My Project"}),
            "cluster.project: 'My Project' cannot be a GCP project id",
        ),
        (
            "azure-dev",
            lambda v: v[P + "cluster"].update({"region": "moon"}),
            "cluster.region: 'moon' is not an Azure region",
        ),
    ],
)
def test_limits_of_the_cloud_apis(stack, mutate, expected) -> None:
    assert expected in config_errors(stack, mutate)


def test_gke_per_zone_limits_are_totals_and_aks_split_is_checked_in_config() -> None:
    values = stack_values("gcp-dev")
    values[P + "gpuPools"][0].update({"perZone": True, "maxSize": 1})
    assert load_stack_config(values).gpu_pools[0].max_size == 1  # one GKE pool spans the zones
    msg = config_errors("azure-prod", lambda v: v[P + "gpuPools"][0].update({"maxSize": 2, "perZone": True}))
    assert "gpuPools[0].maxSize: with perZone the total max is split across 3 zones" in msg


def test_eks_node_group_quota_is_a_warning(tmp_path, capsys) -> None:
    values = stack_values("aws-prod")
    values[P + "gpuPools"] = [
        {"name": f"p{i}", "gpu": "t4", "instanceTypes": ["g4dn.xlarge"], "maxSize": 3} for i in range(10)
    ]
    program = write_program(tmp_path, yaml.safe_dump({"config": values}))
    assert main(["preview", "--stack", "t", "--program", str(program)]) == 0
    err = capsys.readouterr().err
    # read from the account by the preflight (a new account's quota: 30)
    assert "need 31 node groups of 'Managed node groups per cluster' (L-6D54EA21) at their max" in err
    assert "the account has 30: short by 1" in err


# --- component Args before registration -----------------------------------------------------


def test_component_problems_are_found_before_anything_is_registered(tmp_path, monkeypatch) -> None:
    from elastic_gpu import compose

    registered = []
    monkeypatch.setattr(compose, "args_problems", lambda cfg, _: ["gpuPools[0] (SpotGpuPool 'x': boom)"])
    values = stack_values("aws-dev")
    program = write_program(tmp_path, yaml.safe_dump({"config": values}))
    import pulumi

    real = pulumi.ComponentResource.__init__
    monkeypatch.setattr(pulumi.ComponentResource, "__init__", lambda *a, **k: registered.append(a) or real(*a, **k))
    with pytest.raises(ConfigError, match=r"gpuPools\[0\] \(SpotGpuPool 'x': boom\)"):
        run_preview("t", program)
    assert [a[1] for a in registered if a[1] != "pulumi:pulumi:Stack"] == []


def test_args_checks_name_the_config_path() -> None:
    from elastic_gpu.aws.stack import pool_args
    from elastic_gpu.compose import args_problems, plan_pools

    cfg = load_stack_config(stack_values("aws-prod"))
    tagged = cfg.model_copy(update={"tags": {"aws:x": "y"}})
    problems = args_problems(tagged, plan_pools(tagged, lambda p: pool_args(cfg, p)))
    text = "\n".join(problems)
    # the stack file's path first, then the component and the argument a library user would have written
    assert "tags (SpotGpuPool 'training': SpotGpuPoolArgs.tags.aws:x: the tag key prefix 'aws:' is reserved" in text


# --- the policy gate -------------------------------------------------------------------------


def test_policy_config_typos_are_errors() -> None:
    problems = policy_config_problems(
        {
            "gpu-pool-noschedule-taint": "mandtory",
            "gpu-pool-max-size-capp": "mandatory",
            "gpu-pool-max-size-cap": {"maxNodesPerPool": "ten", "maxNodes": 3},
            "gpu-monthly-cost-ceiling": {"monthlyBudgetUsd": float("inf")},
            "all": "advisory",
        }
    )
    text = "\n".join(problems)
    assert "gpu-pool-noschedule-taint: unknown enforcement level 'mandtory'; did you mean 'mandatory'?" in text
    assert "gpu-pool-max-size-capp: unknown policy; did you mean 'gpu-pool-max-size-cap'?" in text
    assert "gpu-pool-max-size-cap.maxNodesPerPool: must be an integer (got 'ten')" in text
    assert "gpu-pool-max-size-cap.maxNodes: unknown setting; did you mean 'maxNodesPerPool'?" in text
    assert "gpu-monthly-cost-ceiling.monthlyBudgetUsd: must be a finite number" in text
    assert len(problems) == 5


def test_policy_gate_fails_on_a_bad_config_file_no_stack_or_no_resource(tmp_path, capsys) -> None:
    cfg = tmp_path / "policy.yaml"
    cfg.write_text("gpu-pool-noschedule-taint: mandtory\n")
    assert main(["policy", "--stack", "aws-dev", "--program", str(ROOT), "--config", str(cfg)]) == 2
    assert "unknown enforcement level 'mandtory'" in capsys.readouterr().err
    assert main(["policy", "--stack", "aws-dev", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml: not found" in capsys.readouterr().err

    empty = tmp_path / "empty"
    (empty / "stacks").mkdir(parents=True)
    (empty / "Pulumi.yaml").write_text("name: p\nruntime: python\nstackConfigDir: stacks\n")
    (empty / "__main__.py").write_text("")
    assert main(["policy", "--program", str(empty)]) == 2
    assert "no stack file" in capsys.readouterr().err
    (empty / "stacks" / "Pulumi.s.yaml").write_text("config: {}\n")
    assert main(["policy", "--program", str(empty)]) == 2
    assert "stack 's': the program declared no resource" in capsys.readouterr().err


def test_all_entry_sets_every_level(tmp_path, capsys) -> None:
    cfg = tmp_path / "policy.json"
    cfg.write_text(json.dumps({"all": "disabled"}))
    assert main(["policy", "--stack", "aws-dev", "--config", str(cfg), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["aws-dev"]["violations"] == []


def test_cost_rejects_non_finite_numbers_and_json_is_strict(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["cost", "--stack", "aws-dev", "--gpu-hours", "inf"])
    assert exc.value.code == 2
    assert "must be a finite number" in capsys.readouterr().err
    assert main(["cost", "--stack", "aws-dev", "--gpu-hours", "1e300", "--json"]) == 0
    out = capsys.readouterr().out
    assert "Infinity" not in out and "NaN" not in out
    json.loads(out)


def test_cluster_args_are_checked_with_the_pools_before_any_resource() -> None:
    from elastic_gpu.compose import build_stack

    cfg = load_stack_config(stack_values("azure-dev"))
    bad = cfg.model_copy(update={"cluster": cfg.cluster.model_copy(update={"zones": ["4"]})})
    with pytest.raises(ConfigError) as exc:
        build_stack(bad)  # raises before the provider: no engine needed
    assert "cluster (AksCluster 'gpu-dev': zones: ['4'] are not Azure zones; allowed: 1, 2, 3)" in str(exc.value)


# --- what a fuzzer and a new user got through -----------------------------------------------------


def _set(section: str, key: str, value, index: int | None = None):
    def mutate(values: dict) -> None:
        target = values.setdefault(P + section, {})
        if index is not None:
            target = target[index]
        target[key] = value

    return mutate


@pytest.mark.parametrize(
    ("stack", "mutate", "expected"),
    [
        # numbers bounded before any arithmetic, the bound and its reason named
        (
            "aws-dev",
            _set("generalPool", "maxSize", 10**6),
            "generalPool.maxSize: Input should be less than or equal to 5000 (got 1000000); "
            "Kubernetes supports at most 5,000 nodes per cluster",
        ),
        ("gcp-dev", _set("gpuPools", "maxSize", 10**400, 0), "gpuPools[0].maxSize: Input should be less than or "
         "equal to 5000 (got a 401-digit number)"),
        ("aws-dev", _set("devicePlugin", "timeSlicingReplicas", 10**6), "devicePlugin.timeSlicingReplicas: Input "
         "should be less than or equal to 1000 (got 1000000)"),
        ("aws-dev", _set("devicePlugin", "timeSlicingReplicas", 200), "devicePlugin.timeSlicingReplicas: 200 is out "
         "of range; allowed: 2 to 110 (Kubernetes supports at most 110 pods per node)"),
        ("gcp-dev", _set("devicePlugin", "timeSlicingReplicas", 49), "devicePlugin.timeSlicingReplicas: 49 is out of "
         "range; allowed: 2 to 48 (GKE maxSharedClientsPerGpu is 2 to 48)"),
        # autoscaler durations within the cloud's bounds
        ("aws-dev", _set("autoscaler", "scaleDownDelayAfterAdd", "999999h"), "autoscaler.scaleDownDelayAfterAdd: "
         "'999999h' is out of range; allowed: 1s to 24h"),
        ("aws-dev", _set("autoscaler", "maxNodeProvisionTime", "1s"), "autoscaler.maxNodeProvisionTime: '1s' is out "
         "of range; allowed: 5m to 2h"),
        ("azure-dev", _set("autoscaler", "scaleDownUnneededTime", "2000m"), "autoscaler.scaleDownUnneededTime: "
         "'2000m' is out of range; allowed: 1m to 24h"),
        # duplicates
        ("aws-dev", _set("autoscaler", "expander", ["priority", "priority"]), "autoscaler.expander: each value may "
         "appear once (repeated: priority)"),
        ("aws-dev", _set("generalPool", "instanceTypes", ["m6i.large", "m5.large", "m6i.large"]), "generalPool."
         "instanceTypes: each value may appear once (repeated: m6i.large)"),
        ("aws-dev", _set("cluster", "apiAccess", {"publicCidrs": ["203.0.113.0/24", "203.0.113.0/24"]}), "cluster."
         "apiAccess.publicCidrs: each value may appear once (repeated: 203.0.113.0/24)"),
        # AWS tag characters (\p{L}\p{Z}\p{N} and _ . : / = + - @)
        ("aws-dev", _set("tags", "a<b", "x"), "tags.a<b: tag key may not contain '<'; allowed: letters, digits, "
         "spaces and _ . : / = + - @"),
        ("aws-dev", _set("tags", "team", "ml;ops"), "tags.team: tag value may not contain ';'"),
        # strict CIDR
        ("aws-dev", _set("cluster", "networkCidr", "10.0.0.0/016"), "cluster.networkCidr: '10.0.0.0/016' is not "
         "written canonically (no leading zeros or spaces); did you mean '10.0.0.0/16'?"),
        # machine types of the cloud, known, one where the pool takes one
        ("azure-dev", _set("cluster", "systemPool", {"vmSize": "m6i.large"}), "cluster.systemPool.vmSize: "
         "'m6i.large' looks like a aws type; allowed: a azure type such as Standard_D4s_v5"),
        ("azure-dev", _set("cluster", "systemPool", {"maxSize": 5000}), "cluster.systemPool.maxSize: 5000 is out of "
         "range; allowed: 1 to 1000 (AKS System pool count, ARM API)"),
        ("gcp-dev", _set("generalPool", "instanceTypes", ["not-a-machine"]), "generalPool.instanceTypes[0]: "
         "'not-a-machine' is not a gcp machine type we know"),
        ("gcp-dev", _set("generalPool", "instanceTypes", ["e2-standard-4", "e2-standard-8"]), "generalPool."
         "instanceTypes: a GKE node pool has one machine type, so a second one would be ignored; give one"),
        ("aws-dev", _set("generalPool", "instanceTypes", ["m6i.lrage"]), "generalPool.instanceTypes[0]: 'm6i.lrage' "
         "is not a aws machine type we know"),
    ],
)  # fmt: skip
def test_issue_18_classes_are_refused_by_field(stack, mutate, expected) -> None:
    assert expected in config_errors(stack, mutate)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (_set("generalPool", "maxSize", 10**400), "generalPool.maxSize: Input should be less than or equal to 5000"),
        (_set("gpuPools", "maxSize", 10**400, 0), "gpuPools[0].maxSize: Input should be less than or equal to 5000"),
        (
            lambda v: v.update({P + "cloud": '"aws"'}),
            "cloud: Input should be 'aws', 'azure' or 'gcp' (got '\"aws\"'); the value carries its own quotes: "
            "write 'aws' without them",
        ),
    ],
)
def test_issue_18_tracebacks_end_in_the_one_exit_2_format(tmp_path, capsys, mutate, expected) -> None:
    """10**400 raised OverflowError in the program; a quoted cloud passed the program (which decoded it) and
    then escaped the preview's cost report as a ConfigError traceback."""
    values = stack_values("aws-dev")
    mutate(values)
    program = write_program(tmp_path, yaml.safe_dump({"config": values}))
    for command in (["preview"], ["cost", "--gpu-hours", "10"], ["simulate"], ["policy"]):
        assert main([*command, "--stack", "t", "--program", str(program)]) == 2, command
        err = capsys.readouterr().err
        assert err.startswith("error: invalid ") and expected in err and "Traceback" not in err, err
