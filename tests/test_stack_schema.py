"""The stack file's JSON Schema (schema/stack.schema.json): generated from the config models, shipped up to
date, accepting every shipped stack file and refusing what the loader refuses by type or key."""

from __future__ import annotations

import copy
import fnmatch
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic import BaseModel

from elastic_gpu import config as config_models
from elastic_gpu.__main__ import main
from elastic_gpu.args_doc import field_docs
from elastic_gpu.config import PROJECT, StackConfig, load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.files import json_text
from elastic_gpu.tools.stack_schema import SCHEMA_FILE, stack_file_schema
from tests.conftest import ROOT, stack_values
from tests.docs_pages import page

P = f"{PROJECT}:"
SHIPPED = ROOT / SCHEMA_FILE


def validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(json.loads(SHIPPED.read_text(encoding="utf-8")))


def stack_files() -> list[Path]:
    """Every stack settings file the repository ships: its stacks, the examples' and the upstream programs'."""
    files = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))
    for folder in ("examples", "tests/data/upstream"):
        files += sorted(p for p in (ROOT / folder).rglob("Pulumi.*.yaml") if p.name != "Pulumi.yaml")
    return files


def test_the_shipped_schema_is_the_generated_one(tmp_path: Path) -> None:
    expected = json_text(stack_file_schema())
    assert SHIPPED.read_text(encoding="utf-8") == expected, (
        f"{SCHEMA_FILE} is stale: run `python -m elastic_gpu schema stack -o {SCHEMA_FILE}`"
    )
    out = tmp_path / "stack.schema.json"
    assert main(["schema", "stack", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == expected


def test_the_schema_is_draft_07() -> None:
    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    text = SHIPPED.read_text(encoding="utf-8")
    assert "$defs" not in text  # draft-07 keeps its definitions in `definitions`

    def refs_alone(node: Any) -> None:  # draft-07 ignores a $ref's siblings (a description, a default)
        if isinstance(node, dict):
            assert "$ref" not in node or len(node) == 1, node
            for value in node.values():
                refs_alone(value)
        elif isinstance(node, list):
            for value in node:
                refs_alone(value)

    refs_alone(schema)


@pytest.mark.parametrize("path", stack_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_stack_file_validates(path: Path) -> None:
    errors = [e.message for e in validator().iter_errors(yaml.safe_load(path.read_text()))]
    assert errors == []


def test_the_stack_files_found_include_every_kind() -> None:
    names = {str(p.relative_to(ROOT)) for p in stack_files()}
    assert "stacks/Pulumi.aws-dev.yaml" in names and "examples/existing-eks-plain/Pulumi.dev.yaml" in names
    assert "examples/package/yaml-eks/Pulumi.dev.yaml" in names
    assert len(names) >= 15


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set `elastic-gpu:<section>.<key>...` (list indexes as numbers) in a stack's config map."""

    def mutate(values: dict[str, Any]) -> None:
        first, *rest = path.split(".")
        node: Any = values
        key: Any = P + first
        for part in rest:
            node = node[key]
            key = int(part) if part.isdigit() else part
        node[key] = value

    return mutate


def _rename(old: str, new: str) -> Callable[[dict[str, Any]], None]:
    def mutate(values: dict[str, Any]) -> None:
        values[new] = values.pop(old)

    return mutate


#: Mistakes of type or key: the loader refuses each, and so does the schema (as you type, in the editor).
MISTAKES = [
    ("top-level key typo", "aws-dev", _rename(P + "gpuPools", P + "gpuPool")),
    ("nested key typo", "aws-dev", _set("gpuPools.0.maxSzie", 4)),
    ("cluster key typo", "gcp-dev", _set("cluster.kubernetesVerison", "1.33")),
    ("unquoted Kubernetes minor", "aws-dev", _set("cluster.kubernetesVersion", 1.35)),
    ("number as a string", "aws-dev", _set("gpuPools.0.maxSize", "4")),
    ("bool as a string", "azure-dev", _set("gpuPools.0.spot", "yes")),
    ("unknown cloud", "aws-dev", _set("cloud", "oci")),
    ("unknown provisioner", "aws-dev", _set("provisioner", "kapenter")),
    ("bad duration", "aws-dev", _set("autoscaler.scaleDownUnneededTime", "5 minutes")),
    ("expander typo", "aws-dev", _set("autoscaler.expander", ["priority", "least_waste"])),
    ("negative size", "gcp-prod", _set("generalPool.maxSize", -1)),
    ("above the bound", "aws-dev", _set("gpuPools.0.gpusPerNode", 17)),
    ("empty pool list", "aws-dev", _set("gpuPools", [])),
    ("tag value a number", "aws-dev", _set("tags.team", 7)),
    ("price key typo", "aws-dev", _set("prices", {"g4dn.xlarge": {"onDemnad": 0.5}})),
    ("required key missing", "aws-dev", lambda v: v.pop(P + "generalPool")),
    ("pool name missing", "aws-dev", lambda v: v[P + "gpuPools"][0].pop("name")),
    ("key without a namespace", "aws-dev", _rename(P + "tags", "tags")),
]


@pytest.mark.parametrize(("stack", "mutate"), [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES])
def test_a_mistake_the_loader_refuses_the_schema_refuses(stack: str, mutate: Callable[[dict[str, Any]], None]) -> None:
    values = stack_values(stack)
    mutate(values)
    with pytest.raises(ConfigError):
        load_stack_config(values)
    assert list(validator().iter_errors({"config": values})) != []


#: Valid variants the loader accepts: the schema must not flag them.
VARIANTS = [
    ("defaults left out", "aws-dev", lambda v: [v.pop(P + k) for k in ("autoscaler", "devicePlugin", "tags")]),
    ("a provider's own key", "aws-dev", lambda v: v.update({"aws:region": "us-west-2", "pulumi:tags": {"a": "b"}})),
    ("a float minutes bound", "aws-dev", _set("gpuPools.0.maxMinutesToFallback", 7.5)),
    ("an integer where a float goes", "aws-dev", _set("prices", {"g4dn.xlarge": {"onDemand": 1}})),
    ("an explicit null", "gcp-dev", _set("gpuPools.0.fallbackMaxSize", None)),
    ("Go duration", "aws-dev", _set("autoscaler.maxNodeProvisionTime", "14m30s")),
]


@pytest.mark.parametrize(("stack", "mutate"), [m[1:] for m in VARIANTS], ids=[m[0] for m in VARIANTS])
def test_a_variant_the_loader_accepts_the_schema_accepts(stack: str, mutate: Callable[[dict[str, Any]], None]) -> None:
    values = stack_values(stack)
    mutate(values)
    load_stack_config(values)
    assert [e.message for e in validator().iter_errors({"config": values})] == []


def test_stack_settings_keys() -> None:
    """Pulumi's own top-level keys pass; a misspelt one does not (Pulumi would drop it without a word)."""
    base = {"config": stack_values("aws-dev")}
    ok = base | {
        "secretsprovider": "awskms://alias/pulumi",
        "encryptedkey": "AQICAHh...",
        "encryptionsalt": "v1:abc",
        "environment": ["acme/dev"],
    }
    assert list(validator().iter_errors(ok)) == []
    assert list(validator().iter_errors(base | {"secretprovider": "passphrase"})) != []
    assert list(validator().iter_errors({"config": None})) == []  # `config:` with nothing under it


def test_a_program_that_only_uses_the_components_sets_prices_alone() -> None:
    alone = {"config": {"aws:region": "eu-west-1", P + "prices": {"g5.xlarge": {"onDemand": 1.0}}}}
    assert list(validator().iter_errors(alone)) == []
    # ... but one key of a stack of this project makes it one: then every required key is needed.
    partial = {"config": {P + "cloud": "aws"}}
    missing = sorted(str(e.message) for e in validator().iter_errors(partial))
    assert missing == [f"'{P}{k}' is a required property" for k in ("cluster", "generalPool", "gpuPools")]
    assert StackConfig.model_json_schema(by_alias=True)["required"] == ["cloud", "cluster", "generalPool", "gpuPools"]


def _models() -> list[type[BaseModel]]:
    return [
        m
        for m in vars(config_models).values()
        if isinstance(m, type) and issubclass(m, BaseModel) and m.__module__ == config_models.__name__
    ]


def _definition(schema: dict[str, Any], model: type[BaseModel]) -> dict[str, Any] | None:
    if model is StackConfig:
        return {
            "properties": {k[len(P) :]: v for k, v in schema["properties"]["config"]["properties"].items()},
        }
    defs: dict[str, Any] = schema["definitions"]
    return defs.get(model.__name__)


def test_field_docstrings_are_the_descriptions() -> None:
    """Each field's docstring (what an editor shows on hover) is its description in the schema."""
    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    checked = 0
    for model in _models():
        definition = _definition(schema, model)
        if definition is None:
            continue
        # A field's docstring is where it is declared: the model, or a settings model it shares
        # (elastic_gpu/settings.py, a cloud's options.py); the most derived declaration wins.
        docs: dict[str, str] = {}
        for base in reversed(model.__mro__):
            if isinstance(base, type) and issubclass(base, BaseModel) and base is not BaseModel:
                docs |= field_docs(base)
        for name, doc in docs.items():
            if name not in model.model_fields:
                continue
            info = model.model_fields[name]
            # the stack file's key: a field read under another name than it is written (kueue.namespaces) has it
            # as its validation alias
            alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias or name
            prop = definition["properties"][alias]
            assert prop.get("description") == re.sub(r"(?<!\n)\n(?!\n)", " ", doc), f"{model.__name__}.{name}"
            checked += 1
    assert checked >= 60


def test_descriptions_in_the_editor_name_the_defaults() -> None:
    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    pool = schema["definitions"]["GpuPoolConfig"]["properties"]
    assert pool["minSize"]["default"] == 0
    assert pool["minSize"]["description"].startswith("Default 0: the pool scales to zero")
    assert pool["maxSize"]["maximum"] == config_models.MAX_NODES


# --- the README's editor settings ----------------------------------------------------------------


def _readme_section() -> str:
    readme = page("stack-config.md")
    start = readme.index("## Editor support: the stack file's JSON Schema")
    return readme[start:]


def test_the_readme_settings_name_the_shipped_schema_and_the_stack_files() -> None:
    section = _readme_section()
    blocks = re.findall(r"```json\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    schemas = json.loads(blocks[0])["yaml.schemas"]
    shipped = {str(p.relative_to(ROOT)) for p in (ROOT / "stacks").glob("Pulumi.*.yaml")}
    assert shipped
    for schema_path, globs in schemas.items():
        assert (ROOT / schema_path).resolve() == SHIPPED.resolve()
        patterns = [globs] if isinstance(globs, str) else globs
        assert {f for f in shipped if any(fnmatch.fnmatch(f, g) for g in patterns)} == shipped
    (modeline,) = re.findall(r"^# yaml-language-server: \$schema=(\S+)$", section, re.M)
    assert (ROOT / "stacks" / modeline).resolve() == SHIPPED.resolve()  # relative to the stack file
    assert f"python -m elastic_gpu schema stack -o {SCHEMA_FILE}" in section


def test_a_stack_file_with_the_modeline_still_loads(tmp_path: Path) -> None:
    """The modeline is a YAML comment: the offline tools read the file as before."""
    (modeline,) = re.findall(r"^(# yaml-language-server: .*)$", _readme_section(), re.M)
    text = modeline + "\n" + (ROOT / "stacks" / "Pulumi.aws-dev.yaml").read_text()
    data = yaml.safe_load(text)
    assert load_stack_config(copy.deepcopy(data["config"])).cloud == "aws"
    assert list(validator().iter_errors(data)) == []
