"""The JSON Schema of a stack file (`stacks/Pulumi.<stack>.yaml`), generated from the config models.

Editors validate and complete the stack file with it (docs/stack-config.md's "Editor support" shows how), so it
says what `elastic_gpu.config.load_stack_config` accepts: the project's keys (`elastic-gpu:<key>`, one
per `StackConfig` field, each with the model's own types, bounds, defaults and field docstrings), any
other namespace's keys (`aws:region`; they belong to their providers), and the stack settings file's
own top-level keys. It is generated, never written by hand: `python -m elastic_gpu schema stack -o
schema/stack.schema.json` writes the shipped copy, and a test fails when that copy is stale.

The schema is JSON Schema draft-07, the draft the VS Code YAML extension (redhat.vscode-yaml) validates
with; pydantic writes 2020-12, so `draft07` moves `$defs` to `definitions` and wraps a `$ref` that has
siblings (draft-07 ignores them) in `allOf`. The checks the models make in code (a Kubernetes minor the
cloud supports, zones of the region, cross-field rules) stay with the loader: the schema catches typos
and wrong types as you write, `python -m elastic_gpu preview` everything.
"""

from __future__ import annotations

import json
import re
from typing import Any

from elastic_gpu.config import PROJECT, StackConfig

#: Where the repository ships the schema (relative to its root); docs/stack-config.md's editor settings name it.
SCHEMA_FILE = "schema/stack.schema.json"

DRAFT_07 = "http://json-schema.org/draft-07/schema#"

#: The stack settings file's own top-level keys besides `config`, as Pulumi reads them (pulumi/pulumi
#: v3.259.0 sdk/go/common/workspace/project.go:1229 ProjectStack; docs: "Stack settings file reference").
STACK_SETTINGS: dict[str, dict[str, Any]] = {
    "secretsprovider": {
        "type": "string",
        "description": "The secrets provider that encrypts this stack's secret config values.",
    },
    "encryptedkey": {
        "type": "string",
        "description": "The KMS-encrypted data key for secrets (cloud-based secrets providers only).",
    },
    "encryptionsalt": {
        "type": "string",
        "description": "The stack's base64 encoded encryption salt (passphrase secrets provider only).",
    },
    "environment": {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "object"}],
        "description": "Pulumi ESC environments to import (a list of names), or an environment definition.",
    },
}

#: A key of another namespace (`aws:region`, `pulumi:tags`, an example program's own keys): any value.
OTHER_NAMESPACE = f"^(?!{re.escape(PROJECT)}:)[^:]+:.+$"
#: The one project key a program that only uses the components reads (elastic_gpu.config.PRICES_KEY):
#: its stack file sets it alone, without the keys that make a stack of this project.
LIBRARY_KEYS = ("prices",)


def config_schema() -> dict[str, Any]:
    """`StackConfig`'s JSON Schema (by alias, as the stack file spells its keys), made draft-07."""
    raw = StackConfig.model_json_schema(by_alias=True, mode="validation")
    out = draft07(raw)
    assert isinstance(out, dict)
    return out


def stack_file_schema() -> dict[str, Any]:
    """The whole stack settings file: `config` with this project's keys namespaced, other namespaces free."""
    model = config_schema()
    keys = list(model["properties"])
    required = list(model.get("required", []))
    # A stack of this project sets its own keys; a program that only uses the components may set `prices` alone.
    stack_keys = [k for k in keys if k not in LIBRARY_KEYS]
    config = {
        "type": ["object", "null"],  # `config:` with nothing under it is an empty config
        "description": (
            f"Config values: this project's keys are `{PROJECT}:<key>`; keys of other namespaces (such as "
            "`aws:region`) belong to their providers. A stack of this project sets "
            + ", ".join(f"`{PROJECT}:{k}`" for k in required)
            + f"; a program that only uses the components may set `{PROJECT}:prices` alone."
        ),
        "properties": {f"{PROJECT}:{k}": model["properties"][k] for k in keys},
        "patternProperties": {OTHER_NAMESPACE: {}},
        # An unknown key of this project, or a key without a namespace (the offline tools refuse both).
        "additionalProperties": False,
        "if": {"anyOf": [{"required": [f"{PROJECT}:{k}"]} for k in stack_keys]},
        "then": {"required": [f"{PROJECT}:{k}" for k in required]},
    }
    return {
        "$schema": DRAFT_07,
        "title": f"{PROJECT} stack settings file (Pulumi.<stack>.yaml)",
        "description": (
            "Generated from elastic_gpu.config.StackConfig by `python -m elastic_gpu schema stack`; do not edit."
        ),
        "type": "object",
        "properties": {"config": config, **STACK_SETTINGS},
        "additionalProperties": False,
        "definitions": model.get("definitions", {}),
    }


def draft07(node: Any) -> Any:
    """A pydantic (2020-12) schema as draft-07: `definitions`, no siblings beside `$ref`, no generated titles,
    and descriptions as paragraphs (a docstring's line breaks inside a sentence become spaces)."""
    if isinstance(node, list):
        return [draft07(item) for item in node]
    if isinstance(node, str):  # a discriminator's mapping names definitions too
        return node.replace("#/$defs/", "#/definitions/", 1) if node.startswith("#/$defs/") else node
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("default", "enum", "const", "examples"):
            out[key] = value  # values, not schemas
        elif key == "title":
            continue  # pydantic's titles are the attribute names run together ("Scaledownunneededtime")
        elif key == "$defs":
            out["definitions"] = {name: draft07(sub) for name, sub in value.items()}
        elif key == "description" and isinstance(value, str):
            out[key] = re.sub(r"(?<!\n)\n(?!\n)", " ", value)
        elif key in ("properties", "definitions", "patternProperties"):
            out[key] = {name: draft07(sub) for name, sub in value.items()}
        else:
            out[key] = draft07(value)
    if "$ref" in out and len(out) > 1:
        ref = out.pop("$ref")
        out = {"allOf": [{"$ref": ref}], **out}
    return out


def render(schema: dict[str, Any]) -> str:
    """The file's text: stable key order as generated, two-space indent, a final newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
