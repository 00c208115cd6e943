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
