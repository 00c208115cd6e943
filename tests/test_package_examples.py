"""The YAML and TypeScript examples of the component package (examples/package/) use only what the schema
declares: each property they set exists with its type, each required input is set, each output they read
exists. (No Pulumi CLI or TypeScript compiler here: the programs are read, not run.)"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from elastic_gpu.package.schema import PACKAGE, SCHEMA_FILE
from tests.conftest import ROOT
from tests.docs_pages import page

EXAMPLES = ROOT / "examples" / "package"
INTERPOLATION = re.compile(r"^\$\{([^}]+)\}$")


def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ROOT / SCHEMA_FILE).read_text(encoding="utf-8"))
    return loaded


def _token(type_: str) -> str:
    """A YAML type as the schema's token (`elastic-gpu:SpotGpuPool` is short for `elastic-gpu:index:SpotGpuPool`)."""
    parts = type_.split(":")
    return f"{parts[0]}:index:{parts[1]}" if len(parts) == 2 else type_


# --- Pulumi YAML ---------------------------------------------------------------------------------------------


def yaml_problems(program: dict[str, Any]) -> list[str]:
    """Each way the YAML program departs from the schema (empty when it uses only what the schema declares)."""
    pkg = schema()
    resources = program.get("resources", {})
    types = {name: _token(r["type"]) for name, r in resources.items()}
    config = set(program.get("config", {}))
    problems: list[str] = []

    def check(value: Any, spec: dict[str, Any], where: str) -> None:
        if isinstance(value, str) and (m := INTERPOLATION.match(value)):
            ref = spec.get("$ref", "")
            target = m.group(1)
            if ref.startswith("#/resources/"):
                if types.get(target) != ref[len("#/resources/") :]:
                    problems.append(f"{where}: {value} is not a {ref[len('#/resources/') :]} of this program")
            elif spec.get("plain") and target not in config:
                problems.append(f"{where}: must be plain (a literal or a config value), got {value}")
            elif target.split(".")[0] not in resources and target not in config:
                problems.append(f"{where}: {value} names nothing in the program")
            return
        ref = spec.get("$ref", "")
        if ref.startswith("#/types/"):
            obj = pkg["types"][ref[len("#/types/") :]]
            check_object(value, obj["properties"], obj.get("required", []), where)
        elif ref.startswith("#/resources/"):
            problems.append(f"{where}: a resource reference must be ${{<resource>}}, got {value!r}")
        elif "oneOf" in spec:
            errors_before = len(problems)
            for option in spec["oneOf"]:
                del problems[errors_before:]
                check(value, option, where)
                if len(problems) == errors_before:
                    return
        elif spec.get("type") == "array":
            if not isinstance(value, list):
                problems.append(f"{where}: must be a list, got {value!r}")
            else:
                for i, item in enumerate(value):
                    check(item, spec["items"], f"{where}[{i}]")
        elif spec.get("type") == "object":
            if not isinstance(value, dict):
                problems.append(f"{where}: must be a map, got {value!r}")
            else:
                for key, item in value.items():
                    check(item, spec.get("additionalProperties", {"type": "string"}), f"{where}.{key}")
        else:
            kinds: dict[str, type | tuple[type, ...]] = {
                "string": str,
                "integer": int,
                "number": (int, float),
                "boolean": bool,
            }
            python = kinds[spec["type"]]
            if not isinstance(value, python) or (spec["type"] != "boolean" and isinstance(value, bool)):
                problems.append(f"{where}: must be a {spec['type']}, got {value!r}")

    def check_object(value: Any, properties: dict[str, Any], required: list[str], where: str) -> None:
        if not isinstance(value, dict):
            problems.append(f"{where}: must be an object, got {value!r}")
            return
        for key, item in value.items():
            if key not in properties:
                problems.append(f"{where}.{key}: not in the schema; allowed: {', '.join(properties)}")
            else:
                check(item, properties[key], f"{where}.{key}")
        problems.extend(f"{where}.{key}: required" for key in required if key not in value)

    for name, resource in resources.items():
        token = types[name]
        if not token.startswith(f"{PACKAGE}:"):
            continue
        if token not in pkg["resources"]:
            problems.append(f"resources.{name}.type: {token} is not in the schema")
            continue
        spec = pkg["resources"][token]
        check_object(
            resource.get("properties", {}), spec["inputProperties"], spec["requiredInputs"], f"{name}.properties"
        )
    for key, value in (program.get("outputs") or {}).items():
        m = INTERPOLATION.match(str(value))
        if m and "." in m.group(1):
            resource, prop = m.group(1).split(".", 1)
            token = types.get(resource, "")
            if token.startswith(f"{PACKAGE}:") and prop.split(".")[0] not in pkg["resources"][token]["properties"]:
                problems.append(f"outputs.{key}: {token} has no output {prop!r}")
    return problems


def test_the_yaml_example_uses_only_what_the_schema_declares() -> None:
    program = yaml.safe_load((EXAMPLES / "yaml-eks" / "Pulumi.yaml").read_text())
    assert {_token(r["type"]) for r in program["resources"].values()} >= {
        "elastic-gpu:index:ExistingEksCluster",
        "elastic-gpu:index:SpotGpuPool",
    }
    assert yaml_problems(program) == []


def test_the_yaml_example_of_a_created_cluster_uses_only_what_the_schema_declares() -> None:
    """A pool's `cluster` may be the EKS cluster the program creates; its settings are plain."""
    program = yaml.safe_load((EXAMPLES / "yaml-eks-cluster" / "Pulumi.yaml").read_text())
    assert _token(program["resources"]["cluster"]["type"]) == "elastic-gpu:index:EksCluster"
    assert program["resources"]["l4"]["properties"]["cluster"] == "${cluster}"
    assert yaml_problems(program) == []
    program["resources"]["cluster"]["properties"]["region"] = "${l4.poolName}"
    assert yaml_problems(program) == [
        "cluster.properties.region: must be plain (a literal or a config value), got ${l4.poolName}"
    ]


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda p: p["resources"]["l4"]["properties"].update(maxSzie=4), "l4.properties.maxSzie: not in the schema"),
        (lambda p: p["resources"]["l4"]["properties"].update(maxSize="4"), "l4.properties.maxSize: must be a integer"),
        (lambda p: p["resources"]["l4"]["properties"].pop("instanceTypes"), "l4.properties.instanceTypes: required"),
        (lambda p: p["resources"]["l4"]["properties"].update(cluster="prod-a"), "a resource reference must be"),
        (lambda p: p["resources"]["l4"]["properties"]["extraTaints"][0].update(efect="NoSchedule"), "efect: not in"),
        (lambda p: p["outputs"].update(bad="${l4.nodeGroupName}"), "has no output 'nodeGroupName'"),
    ],
)
def test_the_yaml_check_catches_a_departure(edit: Any, problem: str) -> None:
    program = yaml.safe_load((EXAMPLES / "yaml-eks" / "Pulumi.yaml").read_text())
    edit(program)
    assert any(problem in p for p in yaml_problems(program)), yaml_problems(program)


# --- TypeScript ----------------------------------------------------------------------------------------------


def _balanced(text: str, start: int) -> int:
    """The index after the bracket that closes the one at `start` (strings skipped)."""
    depth, i, quote = 0, start, ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'`":
            quote = c
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced")


def _top_level_keys(literal: str) -> list[str]:
    """The keys of an object literal `{ a: ..., b, "c-d": ... }` at its top level."""
    keys, i, body = [], 1, literal
    while i < len(body) - 1:
        m = re.compile(r"\s*(?:\"([^\"]+)\"|([A-Za-z_$][\w$]*))\s*(:|,|})").match(body, i)
        if not m:
            break
        keys.append(m.group(1) or m.group(2))
        i = m.end()
        if m.group(3) == ":":
            j = i
            while j < len(body) - 1 and body[j] != ",":
                j = _balanced(body, j) if body[j] in "{[(" else (_skip_string(body, j) if body[j] in "\"'`" else j + 1)
            i = j + 1
    return keys


def _skip_string(text: str, start: int) -> int:
    quote, i = text[start], start + 1
    while text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def ts_problems(source: str, alias: str = "elasticGpu") -> list[str]:
    pkg = schema()
    problems: list[str] = []
    variables: dict[str, str] = {}
    for m in re.finditer(rf"(?:const (\w+) = )?new {alias}\.(\w+)\(\s*\"[^\"]+\",\s*", source):
        token = f"{PACKAGE}:index:{m.group(2)}"
        if token not in pkg["resources"]:
            problems.append(f"{m.group(2)}: not a resource of the schema")
            continue
        if m.group(1):
            variables[m.group(1)] = token
        literal = source[m.end() : _balanced(source, m.end())]
        keys = _top_level_keys(literal)
        spec = pkg["resources"][token]
        problems += [f"{m.group(2)}.{k}: not in the schema" for k in keys if k not in spec["inputProperties"]]
        problems += [f"{m.group(2)}.{k}: required" for k in spec["requiredInputs"] if k not in keys]
    for variable, token in variables.items():
        for prop in re.findall(rf"\b{variable}\.(\w+)", source):
            if prop not in pkg["resources"][token]["properties"]:
                problems.append(f"{variable}.{prop}: {token} has no output {prop!r}")
    return problems


def test_the_typescript_example_uses_only_what_the_schema_declares() -> None:
    source = (EXAMPLES / "ts-eks" / "index.ts").read_text()
    assert 'from "@pulumi/elastic-gpu"' in source
    assert ts_problems(source) == []
    assert len(re.findall(r"new elasticGpu\.", source)) == 5


def test_the_typescript_example_of_a_created_cluster_uses_only_what_the_schema_declares() -> None:
    source = (EXAMPLES / "ts-gke-cluster" / "index.ts").read_text()
    assert "new elasticGpu.GkeCluster(" in source and "cluster: cluster," in source
    assert ts_problems(source) == []
    assert ts_problems(source.replace("cluster.kubeconfig", "cluster.kubeConfig")) == [
        "cluster.kubeConfig: elastic-gpu:index:GkeCluster has no output 'kubeConfig'"
    ]


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("maxSize: 4,", "maxSzie: 4,", "SpotGpuPool.maxSzie: not in the schema"),
        ("    maxSize: 4,\n", "", "SpotGpuPool.maxSize: required"),
        ("l4.nodeGroupNames", "l4.nodeGroupName", "has no output 'nodeGroupName'"),
        ("cluster.provider", "cluster.k8sProvider", "has no output 'k8sProvider'"),
        ("new elasticGpu.GeneralPool", "new elasticGpu.CpuPool", "CpuPool: not a resource"),
    ],
)
def test_the_typescript_check_catches_a_departure(old: str, new: str, problem: str) -> None:
    source = (EXAMPLES / "ts-eks" / "index.ts").read_text()
    assert old in source
    assert any(problem in p for p in ts_problems(source.replace(old, new, 1)))


def test_the_examples_name_the_plugin_directory() -> None:
    for program in sorted(EXAMPLES.glob("*/Pulumi.yaml")):
        source = yaml.safe_load(program.read_text())["packages"][PACKAGE]
        plugin = (program.parent / source).resolve()
        assert (plugin / "PulumiPlugin.yaml").exists() and plugin == ROOT / "provider", program


def test_the_examples_are_not_offline_programs() -> None:
    """The offline tools run Python programs (examples/<name>/): the package's examples sit one level down."""
    assert not (EXAMPLES / "Pulumi.yaml").exists()


# --- docs/other-languages.md -----------------------------------------------------------------------------------


def _readme_section() -> str:
    return page("other-languages.md")


def test_the_readme_example_is_the_yaml_examples_and_uses_only_the_schema() -> None:
    section = _readme_section()
    (excerpt,) = re.findall(r"```yaml\n(.*?)```", section, re.S)
    program = yaml.safe_load((EXAMPLES / "yaml-eks" / "Pulumi.yaml").read_text())
    shown = yaml.safe_load(excerpt)
    for name, resource in shown["resources"].items():
        assert resource["type"] == program["resources"][name]["type"]
        for key, value in resource["properties"].items():
            assert program["resources"][name]["properties"][key] == value, (name, key)
    assert yaml_problems({"config": program["config"], **shown}) == []


def test_the_readme_command_names_the_plugin_and_the_generator() -> None:
    section = _readme_section()
    (command,) = re.findall(r"^pulumi package add <path to this repository>/(\S+)", section, re.M)
    assert (ROOT / command / "PulumiPlugin.yaml").exists()
    assert yaml.safe_load((ROOT / command / "PulumiPlugin.yaml").read_text())["runtime"]["name"] == "python"
    assert f"python -m elastic_gpu schema package -o {SCHEMA_FILE}" in section
    components = ("ExistingEksCluster", "ExistingAksCluster", "ExistingGkeCluster", "SpotGpuPool", "GeneralPool")
    for component in (*components, "NvidiaDevicePlugin", "ClusterAutoscaler", "EksCluster", "AksCluster", "GkeCluster"):
        assert f"`{component}`" in section and f"{PACKAGE}:index:{component}" in schema()["resources"]
