"""Output a person can read, and a gate that scales: a message repeated on many resources is one entry,
program warnings once each, long node-group names keep their zone, colour only on a terminal; the simulation
behind the fallback-promise rule does per pool only the work of that pool."""

from __future__ import annotations

import io

from elastic_gpu.aws.node_groups import MAX_NODE_GROUP_NAME, eks_node_group_name
from elastic_gpu.tools.offline import terminal
from elastic_gpu.tools.offline.policy_run import render_report, run_policies
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.tools.simulation import expanders, run
from elastic_gpu.tools.simulation.fit import NodeTemplate
from elastic_gpu.tools.simulation.pod import PodShape
from elastic_gpu.tools.simulation.templates import node_templates
from tests.conftest import stack_preview, stack_values

P = "elastic-gpu:"


def test_one_message_on_many_resources_is_one_entry():
    config = {"cost-allocation-tags": {"requiredKeys": ["project", "owner"]}}
    report = run_policies(stack_preview("aws-prod"), config=config)
    tagged = report.of("cost-allocation-tags")
    assert len(tagged) > 12
    text = render_report(report)
    assert text.count("Missing cost-allocation key(s) owner") == 1
    assert f"cost-allocation-tags ({len(tagged)} resources: " in text and " more)" in text
    assert f"{len(report.mandatory)} mandatory" in text  # the count is still of violations


def test_program_warnings_are_printed_once_each():
    assert terminal.once_each(["a", "b", "a", "a"]) == ["a (3 times)", "b"]


def test_colour_only_on_a_terminal(monkeypatch):
    monkeypatch.setattr(terminal.sys, "stdout", io.StringIO())
    assert terminal.paint("x", "red") == "x"

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(terminal.sys, "stdout", Tty())
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert terminal.paint("x", "red") == "\033[31mx\033[0m"
    monkeypatch.setenv("NO_COLOR", "1")
    assert terminal.paint("x", "red") == "x"


def test_a_long_node_group_name_is_cut_before_its_kind_and_zone():
    base = "gpu-production-cluster-a-very-long-inference-pool-name-fallback-us-east-1a"
    name = eks_node_group_name(base, {"clusterName": "c"}, keep="-fallback-us-east-1a")
    assert len(name) <= MAX_NODE_GROUP_NAME
    assert name[: -len("-abcdef")].endswith("-fallback-us-east-1a")
    short = "gpu-dev-t4-spot-us-west-2a"  # a name that fits is not touched
    assert eks_node_group_name(short, {"clusterName": "c"}, keep="-spot-us-west-2a").startswith(short + "-")


def test_every_per_zone_group_of_a_long_named_stack_keeps_its_zone(program_dir):
    values = stack_values("aws-dev")
    values[P + "cluster"]["name"] = "gpu-research-prod-ea"  # 20 characters, the most allowed
    values[P + "gpuPools"][0]["name"] = "inference-large-t4xx"
    preview = run_preview("test", program_dir(values))
    names = [r.inputs["nodeGroupName"] for r in preview.of_type("aws:eks/nodeGroup:NodeGroup")]
    zonal = [n for n in names if "-spot-" in n or "-fallback-" in n]
    assert len(zonal) == 4 and all(len(n) <= MAX_NODE_GROUP_NAME for n in names)
    assert all(n[:-7].endswith(("-us-west-2a", "-us-west-2b")) for n in zonal), zonal


def test_each_pool_is_fitted_only_against_the_groups_its_selector_picks(monkeypatch):
    """With a pod per pool, fitting each pod to every group grew with pools x groups (the fallback gate of
    200 pools took minutes); the pod's nodeSelector picks its candidates from an index instead."""
    preview = stack_preview("aws-prod")
    templates = node_templates(preview)
    calls: list[str] = []
    misfit = run.misfit
    monkeypatch.setattr(run, "misfit", lambda pod, t: calls.append(t.name) or misfit(pod, t))
    outcomes = run.simulate(preview)
    assert outcomes and all(o.reaches for o in outcomes)
    assert len(calls) < len(templates) * len(outcomes) / 2
    assert len(calls) == sum(len([t for t in templates if t.pool == o.pool]) for o in outcomes)


def test_priority_regexes_compile_once_per_level_past_the_re_cache(monkeypatch):
    """A regex per node group: past `re`'s 512 cached patterns, a re.search per regex recompiled them all on
    every call. The levels compile once, and rank them as the priority expander does."""
    groups = [
        NodeTemplate(f"g{i}", f"g{i}", f"asg-{i}", "p", "spot", "t", {}, [], {"cpu": 4.0}, 0, 1) for i in range(600)
    ]
    priorities = {50: [f"^asg-{i}$" for i in range(0, 600, 2)], 10: [f"^asg-{i}$" for i in range(1, 600, 2)]}
    compiled: list[str] = []
    real_compile = expanders.re.compile

    class Re:
        def __getattr__(self, name: str):
            if name in ("search", "match", "fullmatch"):
                raise AssertionError(f"re.{name} per regex recompiles past the cache")
            return getattr(expanders.__dict__["_re"], name)

        @staticmethod
        def compile(pattern: str, *args):
            compiled.append(pattern)
            return real_compile(pattern, *args)

    monkeypatch.setitem(expanders.__dict__, "_re", expanders.re)
    monkeypatch.setattr(expanders, "re", Re())
    expanders._any_of.cache_clear()
    tiers = expanders.rank(PodShape("p", {"cpu": 1.0}), groups, ["priority"], priorities)
    assert [len(t) for t in tiers] == [300, 300]
    assert {g.autoscaler_name for g in tiers[0]} == {f"asg-{i}" for i in range(0, 600, 2)}
    assert len(compiled) == 2


def test_structured_and_multi_line_outputs_are_blocks_and_secrets_stay_masked():
    import json

    import yaml

    from elastic_gpu.tools.offline.report import output_lines
    from elastic_gpu.tools.offline.runner import StackOutput

    config = {"apiVersion": "v1", "clusters": [{"name": "c", "cluster": {"server": "https://x"}}]}
    block = output_lines("kubeconfig", StackOutput(config, secret=False))
    assert block[0] == "  kubeconfig:" and all(line.startswith("    ") for line in block[1:])
    assert yaml.safe_load("\n".join(line[4:] for line in block[1:])) == config  # YAML, not a Python dict
    assert "{'" not in "\n".join(block)
    text = "apiVersion: v1\nkind: Config\n"
    assert output_lines("kc", StackOutput(text, secret=False)) == ["  kc: |", "    apiVersion: v1", "    kind: Config"]
    as_json = output_lines("kcJson", StackOutput(json.dumps(config), secret=False))
    assert as_json[0] == "  kcJson: (JSON)" and json.loads("\n".join(as_json[1:])) == config
    assert output_lines("groups", StackOutput(["a", "b"], secret=False)) == ["  groups:", "    - a", "    - b"]
    assert output_lines("name", StackOutput("gpu", secret=False)) == ["  name: gpu"]
    assert output_lines("kubeconfig", StackOutput(config, secret=True)) == ["  kubeconfig: [secret]"]


def test_the_eks_kubeconfig_output_prints_as_a_yaml_block():
    from elastic_gpu.tools.offline.report import render_text
    from tests.conftest import ROOT

    text = render_text(run_preview("dev", ROOT / "tests" / "data" / "upstream" / "managed-nodegroups-py"))
    outputs = text[text.index("Outputs:") :]
    assert "  kubeconfig:\n    apiVersion: v1\n" in outputs and "{'apiVersion'" not in outputs


def test_checks_that_cannot_run_while_a_value_is_unknown_are_one_entry():
    from tests.conftest import ROOT

    # aws-py-eks's cluster sets no version: the version rules and those reading the autoscaler image wait for it.
    report = run_policies(run_preview("dev", ROOT / "tests" / "data" / "upstream" / "aws-py-eks"))
    notes = [v for v in report.violations if v.unknown is not None]
    assert len({v.policy for v in notes}) >= 3
    text = render_report(report)
    assert "can't run policy" not in text  # not one advisory per policy and resource
    assert text.count("check(s) can't run during preview while a value is unknown") == 1
    for policy in {v.policy for v in notes}:
        assert policy in text
    assert "unknown: string value at .spec.template.spec.containers.0.image; string value at .kubernetesVersion" in text
    assert f"{len(report.violations) - len(report.mandatory)} advisory violation(s)" in text  # still counted


def test_the_gate_prints_a_warning_once_naming_every_stack_it_concerns(tmp_path, capsys):
    import shutil

    from elastic_gpu.tools.offline.policy_gate import gate
    from tests.conftest import ROOT

    program = tmp_path / "p"
    shutil.copytree(ROOT / "examples" / "existing-eks-plain", program)
    shutil.copy(program / "Pulumi.dev.yaml", program / "Pulumi.prod.yaml")
    assert gate(str(program), None, None) == 0
    err = capsys.readouterr().err
    assert err.count("eks:DescribeNodegroup") == 1
    assert "warning: dev, prod: ClusterAutoscaler 'autoscaler': scaling a GPU group up from zero" in err
