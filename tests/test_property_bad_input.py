"""Property: whatever a careless user writes, a run ends in a schema-valid preview or in one ConfigError
whose every line names a field (or the file), never in a traceback, never after a resource was registered.

Configs are generated from the shipped stacks of all three clouds and mutated: fields set to odd values
(None, negatives, huge and non-finite numbers, text, another cloud's names), keys dropped, misspelt or
added, namespaces bent, tags drawn at random, pools cloned. Stack files are also edited as text (tabs,
NUL, bad bytes, duplicated lines, cut-off brackets).

A second property draws from the classes a hidden fuzzer and new users got through: huge numbers
(10**400, 1e30), duplicates, scalars written with their own quotes, another cloud's machine names (general,
GPU and AKS System pools), out-of-range durations and ones AKS cannot take, non-canonical CIDRs, tag
characters a cloud refuses, time-slicing replicas over the cloud's bound. Each edit alone on a shipped stack
must be refused by a message starting with its field and saying what is wrong; after other mutations it must
still never preview. tests/test_bad_input_classes.py holds one fixed regression case per class.

The budget is fixed and derandomized so the suite stays fast and repeatable; for a longer hunt:
    ELASTIC_GPU_PROPERTY_EXAMPLES=2000 .venv/bin/python -m pytest -q tests/test_property_bad_input.py
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

pytest.importorskip("hypothesis", reason="pinned in requirements-dev.txt: pip install -r requirements-dev.txt")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elastic_gpu.config import TOP_LEVEL_KEYS, StackConfig
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline import runner
from elastic_gpu.tools.offline.runner import ProgramError, run_preview
from tests.conftest import ROOT, stack_values
from tests.test_stacks_common import is_builtin_kind

#: Cases per property: the suite's budget keeps it to a few seconds (a previewed config costs ~0.5 s,
#: a rejected one or a broken file a few ms); the env var raises both for a hunt.
EXAMPLES = int(os.environ.get("ELASTIC_GPU_PROPERTY_EXAMPLES", "12"))
FILE_EXAMPLES = int(os.environ.get("ELASTIC_GPU_PROPERTY_EXAMPLES", "25"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    derandomize=True,  # the same cases every run
    database=None,  # no .hypothesis/ directory
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
STACKS = ("aws-dev", "aws-prod", "azure-dev", "azure-prod", "gcp-dev", "gcp-prod")
P = "elastic-gpu:"
ROOT_TYPE = "pulumi:pulumi:Stack"

#: Values that hit the rules: other clouds' names, boundary numbers, odd text.
ODD_STRINGS = [
    "", " ", "UPPER", "has space", "aws:x", "a/b", "%", "1h30m", "0m", "5 min", "us-east-1", "eastus",
    "us-central1", "moon", "10.0.0.1/16", "10.0.0.0/16", "10.0.0.0/8", "g4dn.xlarge", "m5.large",
    "Standard_NC4as_T4_v3", "Standard_D4s_v5", "n1-standard-4", "e2-standard-4", "a2-highgpu-1g", "t4", "l4",
    "a100", "h100", "priority", "least-waste", "1.33", "1.20", "x" * 70, "ünïcode",
    '"aws"', "'gcp'", '"1.33"', '"t4"', "10.0.0.0/016", "a<b", "not-a-machine", "999999h", "1s",
]  # fmt: skip
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([0, 1, 2, 3, 31, 450, 1001, 5001, 20000, 10**7, 2**63, 10**400, -(10**400)]),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from(ODD_STRINGS),
    st.text(max_size=8),
    st.lists(st.sampled_from(ODD_STRINGS), max_size=3),
    st.sampled_from(ODD_STRINGS).map(lambda x: [x, x]),  # a duplicate
    st.dictionaries(st.sampled_from(ODD_STRINGS), st.sampled_from(ODD_STRINGS), max_size=2),
)


#: (section, field, value) edits that keep a shipped config valid on every cloud.
BENIGN = [
    ("gpuPools[0]", "maxSize", 6),
    ("gpuPools[0]", "minSize", 0),
    ("gpuPools[0]", "diskSizeGib", 150),
    ("gpuPools[0]", "perZone", False),
    ("generalPool", "maxSize", 5),
    ("tags", "team", "ml-platform"),
]


def _fields(model: type) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


SECTIONS = {
    "cluster": _fields(StackConfig.model_fields["cluster"].annotation),
    "generalPool": _fields(StackConfig.model_fields["general_pool"].annotation),
    "autoscaler": _fields(StackConfig.model_fields["autoscaler"].annotation),
    "devicePlugin": _fields(StackConfig.model_fields["device_plugin"].annotation),
}
GPU_POOL_FIELDS = _fields(StackConfig.model_fields["gpu_pools"].annotation.__args__[0])


@st.composite
def mutation(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(
        st.sampled_from(["set", "set", "set", "drop", "rename", "namespace", "tags", "clone", "unknown", "benign"])
    )
    if kind == "benign":  # edits every cloud accepts, so valid configs keep coming (and get previewed)
        return kind, draw(st.sampled_from(BENIGN))
    if kind in ("set", "drop"):
        section = draw(st.sampled_from([*SECTIONS, "gpuPools[0]", "gpuPools[0]"]))
        fields = GPU_POOL_FIELDS if section.startswith("gpuPools") else SECTIONS[section]
        return kind, (section, draw(st.sampled_from(fields)), draw(VALUES))
    if kind == "rename":
        key = draw(st.sampled_from(TOP_LEVEL_KEYS))
        return kind, (key, draw(st.sampled_from([key[:-1], key.upper(), key + "s", key.replace("P", "p")])))
    if kind == "namespace":
        return kind, (draw(st.sampled_from(TOP_LEVEL_KEYS)), draw(st.sampled_from(["elasticgpu:", "elastic_gpu:", ""])))
    if kind == "tags":
        keys = st.one_of(st.sampled_from(ODD_STRINGS), st.text(max_size=6))
        return kind, draw(st.dictionaries(keys, st.one_of(st.sampled_from(ODD_STRINGS), VALUES), max_size=4))
    if kind == "clone":
        return kind, (draw(st.sampled_from(["t4", "x", "Bad_Name", "t4-2"])), draw(VALUES))
    return kind, (draw(st.sampled_from(["cluster", "generalPool", "gpuPools[0]", "top"])), draw(st.text(max_size=6)))


def apply(config: dict[str, Any], kind: str, arg: Any) -> None:
    def section(name: str) -> dict[str, Any] | None:
        if name.startswith("gpuPools"):
            pools = config.get(P + "gpuPools")
            return pools[0] if isinstance(pools, list) and pools and isinstance(pools[0], dict) else None
        value = config.setdefault(P + name, {})
        return value if isinstance(value, dict) else None

    if kind in ("set", "drop"):
        name, field, value = arg
        target = section(name)
        if target is None:
            return
        if kind == "set":
            target[field] = value
        else:
            target.pop(field, None)
    elif kind == "rename":
        old, new = arg
        if P + old in config:
            config[P + new] = config.pop(P + old)
    elif kind == "namespace":
        key, namespace = arg
        if P + key in config:
            config[namespace + key] = config.pop(P + key)
    elif kind == "benign":
        name, field, value = arg
        target = section(name)
        if target is not None:
            target[field] = value
    elif kind == "tags":
        config[P + "tags"] = arg
    elif kind == "clone":
        pools = config.get(P + "gpuPools")
        if isinstance(pools, list) and pools and isinstance(pools[0], dict):
            pools.append(copy.deepcopy(pools[0]) | {"name": arg[0], "maxSize": arg[1]})
    else:
        where, key = arg
        target = config if where == "top" else section(where)
        if target is not None:
            target[(P + key) if where == "top" else key] = 1


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("prop")
    (d / "stacks").mkdir()
    (d / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (d / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    return d


@pytest.fixture(scope="module")
def registered() -> list[str]:
    """Types of every resource the mock engine registers (reset per case)."""
    seen: list[str] = []
    original = runner._CapturingMonitor.RegisterResource

    def record(self: Any, request: Any) -> Any:
        seen.append(request.type)
        return original(self, request)

    runner._CapturingMonitor.RegisterResource = record
    yield seen
    runner._CapturingMonitor.RegisterResource = original


def check_outcome(program: Path, registered: list[str], heads: list[str]) -> tuple[str, list[str]]:
    """Run the preview; assert the property; return "ok" or "error", and the problems."""
    registered.clear()
    try:
        preview = run_preview("prop", program)
    except ProgramError as exc:  # our own code raised: a traceback in the making
        pytest.fail(f"the program crashed instead of a ConfigError: {exc}")
    except ConfigError as exc:
        assert exc.problems, "a ConfigError without problems"
        for problem in exc.problems:
            assert any(problem.startswith(h) for h in heads), f"problem names no field or file: {problem!r}"
        assert [t for t in registered if t != ROOT_TYPE] == [], f"registered before the error: {registered[:5]}"
        return "error", exc.problems
    json.dumps(preview.to_json(), allow_nan=False)  # strict JSON
    version = next(
        (v["kubernetesVersion"] for k, v in preview.config.items() if k == P + "cluster"), "1.33"
    )  # the config parsed, so this is the stack's minor
    for r in preview.resources:
        if r.custom and r.type.startswith("kubernetes:") and is_builtin_kind(r.inputs.get("apiVersion", "x.io/v1")):
            key = (version, json.dumps(r.inputs, sort_keys=True))
            if key not in VALIDATED:  # most cases repeat the same objects; the schema check is the slow part
                kubernetes_validate.validate(r.inputs, version, strict=True)
                VALIDATED.add(key)
    return "ok", []


VALIDATED: set[tuple[str, str]] = set()


OUTCOMES: dict[str, int] = {"ok": 0, "error": 0, "file-error": 0, "file-ok": 0}


@SETTINGS
@given(stack=st.sampled_from(STACKS), mutations=st.lists(mutation(), min_size=0, max_size=3))
def test_mutated_configs_end_in_a_preview_or_a_named_error(program, registered, stack, mutations) -> None:
    config = stack_values(stack)
    for kind, arg in mutations:
        apply(config, kind, arg)
    path = program / "stacks" / "Pulumi.prop.yaml"
    path.write_text(yaml.safe_dump({"config": config}, allow_unicode=True))
    heads = [*TOP_LEVEL_KEYS, *(str(k) for k in config), *(str(k).split(":", 1)[-1] for k in config), str(path)]
    OUTCOMES[check_outcome(program, registered, heads)[0]] += 1


TEXT_EDITS = st.sampled_from(["\t", "\0", "\n  - ", "{", "]", ": :", "\n", "  ", "#", "'", "&a", "*a", "!!int "])


@settings(SETTINGS, max_examples=FILE_EXAMPLES)
@given(
    stack=st.sampled_from(STACKS),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.one_of(TEXT_EDITS, st.binary(max_size=2)), st.booleans()), min_size=1, max_size=3
    ),
)
def test_edited_stack_files_end_in_a_preview_or_a_named_error(program, registered, stack, edits) -> None:
    data = (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_bytes()
    for where, text, duplicate_line in edits:
        at = int(where * len(data))
        if duplicate_line:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at) + 1 or len(data)
            data = data[:end] + data[start:end] + data[end:]
        else:
            data = data[:at] + (text.encode() if isinstance(text, str) else text) + data[at:]
    path = program / "stacks" / "Pulumi.prop.yaml"
    path.write_bytes(data)
    try:
        config = yaml.safe_load(data.decode("utf-8")) or {}
        keys = [str(k) for k in (config.get("config") or {})] if isinstance(config, dict) else []
    except Exception:  # only for the list of keys a message may name
        keys = []
    heads = [*TOP_LEVEL_KEYS, *keys, *(k.split(":", 1)[-1] for k in keys), str(path)]
    OUTCOMES["file-" + check_outcome(program, registered, heads)[0]] += 1


#: Another cloud's names (and a typo) for each stack's cloud: CPU types, GPU types, a System-pool VM size.
OTHER_CLOUD_TYPES = {
    "aws": ["e2-standard-4", "Standard_D4s_v5", "n1-standard-4", "Standard_NC4as_T4_v3", "not-a-machine"],
    "azure": ["m6i.large", "e2-standard-4", "g4dn.xlarge", "a2-highgpu-1g", "m6i.lrage"],
    "gcp": ["m6i.large", "Standard_D4s_v5", "g4dn.xlarge", "Standard_NC4as_T4_v3", "not-a-machine"],
}
#: A GPU type of each cloud, to repeat in a pool's instanceTypes.
GPU_TYPES = {"aws": "g4dn.xlarge", "azure": "Standard_NC4as_T4_v3", "gcp": "n1-standard-4"}
#: Numbers over every bound: Kubernetes' 5,000 nodes, every cloud's largest disk (65,536 GiB), 1,000 time-slicing
#: replicas; 10**400 overflows a float; floats (YAML `1.0e+30`) are no counts at all.
HUGE = st.one_of(
    st.integers(min_value=65537, max_value=10**30),
    st.sampled_from([10**400, 2**63, 2**64 + 1, 1e6, 1e30, 5001.0]),
).flatmap(lambda n: st.sampled_from([n, -n]))
HUGE_FIELDS = [
    ("generalPool", "maxSize"), ("generalPool", "minSize"), ("generalPool", "diskSizeGib"), ("gpuPools[0]", "maxSize"),
    ("gpuPools[0]", "minSize"), ("gpuPools[0]", "diskSizeGib"), ("gpuPools[0]", "gpusPerNode"),
    ("devicePlugin", "timeSlicingReplicas"),
]  # fmt: skip
DURATION_FIELDS = ["maxNodeProvisionTime", "scaleDownDelayAfterAdd", "scaleDownUnneededTime"]
#: Refused on every cloud with an autoscaler section (GKE has none: the section itself is refused there).
BAD_DURATIONS = ["999999h", "25h", "86401s"]
#: Refused for the provision time only: a zero scale-down wait is valid (the AKS docs' bursty profile).
BAD_PROVISION_TIMES = ["0s", "0m", "1s", "4m59s"]
#: AKS takes whole minutes written as such (ManagedClusterPropertiesAutoScalerProfile).
BAD_AKS_DURATIONS = ["90s", "1h", "0s", "1h30m"]


def _cloud(config: dict[str, Any]) -> str:
    return str(config[P + "cloud"])


@st.composite
def known_bad(draw: st.DrawFn, cloud: str) -> tuple[str, str, Any, tuple[str, ...]]:
    """(section, field, value, fragments) of a class that got through before; section "" is a top-level key.
    A refusal must name `section.field` and contain one of `fragments`."""
    kinds = ["huge", "duplicate", "quoted", "machine", "tag", "replicas"]
    if cloud != "gcp":  # GKE has no autoscaler section
        kinds += ["duration", "expander"]
    if cloud == "aws":  # the only cloud with a networkCidr
        kinds.append("cidr")
    if cloud == "azure":  # the only cloud with a System pool
        kinds.append("system")
    kind = draw(st.sampled_from(kinds))
    if kind == "huge":
        section, field = draw(st.sampled_from(HUGE_FIELDS))
        return (
            section,
            field,
            draw(HUGE),
            ("less than or equal", "greater than or equal", "valid integer", "out of range"),
        )
    if kind == "duplicate":
        section, field = draw(
            st.sampled_from([("generalPool", "instanceTypes"), ("gpuPools[0]", "instanceTypes"), ("cluster", "zones")])
        )
        return section, field, "duplicate", ("appear once", "distinct", "one VM size", "one machine type")
    if kind == "expander":
        return "autoscaler", "expander", ["priority", "priority"], ("appear once",)
    if kind == "quoted":
        quote = draw(st.sampled_from(['"', "'"]))
        section, field = draw(
            st.sampled_from(
                [("", "cloud"), ("cluster", "kubernetesVersion"), ("cluster", "region"), ("gpuPools[0]", "gpu")]
            )
        )
        return section, field, ("quote", quote), ()  # the fragment is the quoted value (apply_bad)
    if kind == "machine":
        name = draw(st.sampled_from(OTHER_CLOUD_TYPES[cloud]))
        section = draw(st.sampled_from(["generalPool", "gpuPools[0]"]))
        return section, "instanceTypes", [name], (repr(name),)
    if kind == "duration":
        field = draw(st.sampled_from(DURATION_FIELDS))
        values = BAD_DURATIONS + (BAD_PROVISION_TIMES if field == "maxNodeProvisionTime" else [])
        if cloud == "azure":
            values += BAD_AKS_DURATIONS
        return "autoscaler", field, draw(st.sampled_from(values)), ("out of range", "not allowed", "longer than 0")
    if kind == "cidr":
        cidr = draw(st.sampled_from(["10.0.0.0/016", "010.0.0.0/16", "10.0.0.1/16", "fd00::/64", "10.0.0.0/8"]))
        return "cluster", "networkCidr", cidr, (repr(cidr),)
    if kind == "system":
        if draw(st.booleans()):
            name = draw(st.sampled_from(OTHER_CLOUD_TYPES[cloud]))
            return "cluster.systemPool", "vmSize", name, (repr(name),)
        size = draw(st.one_of(st.integers(1001, 10**30), HUGE))
        return (
            "cluster.systemPool",
            "maxSize",
            size,
            ("less than or equal", "greater than or equal", "valid integer", "out of range"),
        )
    if kind == "tag":
        key = draw(st.sampled_from(["a<b", "x>y", "50%", "a&b", "q?", "a\\b", "Name" if cloud == "aws" else "a/b"]))
        return "tags", key, "v", ("key",)
    replicas = draw(st.sampled_from([10**6, 1001, 251, 111, 49, 0, 1, -1]))
    if cloud == "azure" and replicas in (111, 49):  # AKS allows up to 250 (maxPods)
        replicas = 251
    if cloud == "aws" and replicas == 49:  # up to 110 pods per node
        replicas = 111
    return "devicePlugin", "timeSlicingReplicas", replicas, ("out of range", "than or equal")


def apply_bad(config: dict[str, Any], bad: tuple[str, str, Any, tuple[str, ...]]) -> tuple[str, tuple[str, ...]]:
    """Apply a known_bad edit; return the field path a refusal must start with and the fragments it may contain.
    A section another mutation broke (renamed, not a mapping) is left so: the config is refused for that."""
    section, field, value, fragments = bad
    if section == "":
        target: Any = config
        key = P + field
    elif section.startswith("gpuPools"):
        pools = config.get(P + "gpuPools")
        target, key = (pools[0] if isinstance(pools, list) and pools else None), field
    else:
        top, _, sub = section.partition(".")
        target, key = config.setdefault(P + top, {}), field
        if sub and isinstance(target, dict):
            target = target.setdefault(sub, {})
    head = f"{section}.{field}" if section else field
    if not isinstance(target, dict):
        return head, fragments
    if value == "duplicate":
        current = target.get(key)
        if not (isinstance(current, list) and current and all(isinstance(x, str) for x in current)):
            current = [GPU_TYPES[_cloud(config)]] if section.startswith("gpuPools") else ["x"]
        value = [current[0], *current]
        if section.startswith("gpuPools"):
            target.pop("gpusPerNode", None)  # with instanceTypes, gpusPerNode is refused for its own reason
    elif isinstance(value, tuple) and value[0] == "quote":
        current = target.get(key, "t4")
        value = f"{value[1]}{current}{value[1]}"
        fragments = (value,)
        if field == "gpu":
            target.pop("instanceTypes", None)
    target[key] = value
    return head, fragments


def _write(program: Path, config: dict[str, Any]) -> list[str]:
    path = program / "stacks" / "Pulumi.prop.yaml"
    path.write_text(yaml.safe_dump({"config": config}, allow_unicode=True))
    return [*TOP_LEVEL_KEYS, *(str(k) for k in config), *(str(k).split(":", 1)[-1] for k in config), str(path)]


BAD_EXAMPLES = int(os.environ.get("ELASTIC_GPU_PROPERTY_EXAMPLES", "40"))


@settings(SETTINGS, max_examples=BAD_EXAMPLES)
@given(stack=st.sampled_from(STACKS), data=st.data())
def test_known_bad_classes_are_refused_by_name(program, registered, stack, data) -> None:
    """One edit of a class that got through before, alone on a shipped stack: refused, naming its field."""
    config = stack_values(stack)
    head, fragments = apply_bad(config, data.draw(known_bad(_cloud(config))))
    outcome, problems = check_outcome(program, registered, _write(program, config))
    assert outcome == "error", f"accepted: {config}"
    assert any(p.startswith(head) and any(f in p for f in fragments) for p in problems), (head, fragments, problems)


@settings(SETTINGS, max_examples=BAD_EXAMPLES)
@given(stack=st.sampled_from(STACKS), mutations=st.lists(mutation(), max_size=2), data=st.data())
def test_known_bad_classes_stay_refused_under_other_mutations(program, registered, stack, mutations, data) -> None:
    """Other mutations first (so none of them undoes the bad edit), then the bad edit: never a preview."""
    config = stack_values(stack)
    for kind, arg in mutations:
        apply(config, kind, arg)
    cloud = config.get(P + "cloud")
    apply_bad(config, data.draw(known_bad(cloud if cloud in GPU_TYPES else "aws")))
    outcome, _ = check_outcome(program, registered, _write(program, config))
    assert outcome == "error", f"accepted: {config}"


def test_the_property_runs_saw_both_outcomes() -> None:
    """The generators are not degenerate: some cases preview, some fail (run after the two above)."""
    if EXAMPLES < 10 or sum(OUTCOMES.values()) == 0:
        pytest.skip("needs the property tests above in the same run")
    assert OUTCOMES["error"] > 0 and OUTCOMES["file-error"] > 0
    assert OUTCOMES["ok"] + OUTCOMES["file-ok"] > 0, OUTCOMES
    print(f"property cases: {OUTCOMES}")


def test_heads_cover_the_problem_format() -> None:
    """The 'names a field' check itself: a message about an unnamed thing would fail it."""
    assert not any("something went wrong".startswith(h) for h in TOP_LEVEL_KEYS)
    assert re.match(r"gpuPools\[0\]", "gpuPools[0].maxSize: must be >= 1")
