"""Trim an upstream CRD (or a JSON schema made from one) to the test data in this folder.

    python tests/data/crds/trim.py crd  <CRD.yaml>  <version> <out.yaml> "<source>" [<node class group>]
    python tests/data/crds/trim.py json <schema.json> <group> <version> <kind> <out.yaml> "<source>"

Keeps the openAPIV3Schema of one version without `status` and without descriptions (a property
named `description` stays); everything the API server validates (types, enums, patterns, limits,
list types, defaults, x-kubernetes-validations) is kept as upstream has it. SOURCE.md says where
each file came from. A karpenter.sh CRD differs per provider (its CEL rules list the provider's
labels): the optional last argument records the node class group (`karpenter.azure.com`) whose
objects it checks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml


def strip(node: Any) -> Any:
    if isinstance(node, list):
        return [strip(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "description":
            continue
        out[key] = {name: strip(sub) for name, sub in value.items()} if key == "properties" else strip(value)
    return out


def trimmed(schema: dict[str, Any]) -> dict[str, Any]:
    schema = dict(schema)
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "status"}
    return strip(schema)


def write(out: str, head: dict[str, Any], schema: dict[str, Any], source: str) -> None:
    body = yaml.safe_dump({**head, "openAPIV3Schema": trimmed(schema)}, sort_keys=True, width=120)
    Path(out).write_text(f"# {source}\n# Trimmed by tests/data/crds/trim.py; see SOURCE.md.\n{body}")


def main(argv: list[str]) -> None:
    if argv[0] == "crd":
        _, path, version, out, source, *variant = argv
        crd = yaml.safe_load(Path(path).read_text())
        [v] = [v for v in crd["spec"]["versions"] if v["name"] == version]
        head = {"group": crd["spec"]["group"], "version": version, "kind": crd["spec"]["names"]["kind"]}
        if variant:
            head["nodeClassGroup"] = variant[0]
        write(out, {**head, "scope": crd["spec"]["scope"]}, v["schema"]["openAPIV3Schema"], source)
    else:
        _, path, group, version, kind, out, source = argv
        head = {"group": group, "version": version, "kind": kind, "scope": None}
        write(out, head, json.loads(Path(path).read_text()), source)


if __name__ == "__main__":
    main(sys.argv[1:])
