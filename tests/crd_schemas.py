"""Custom resources checked as the API server would check them against their CRD (tests/data/crds).

For a create: structural defaults are applied first, then the OpenAPI v3 schema strictly (an unknown
field is an error, as with `kubectl apply --validate=strict`; types, enums, patterns, limits,
x-kubernetes-int-or-string, list-type set/map uniqueness), then every `x-kubernetes-validations` CEL
rule, evaluated with the `common-expression-language` package (plus what Karpenter's CRDs use of the
API server's libraries: the regex library's `find`, the strings extension's `split`). Transition rules (those reading
`oldSelf`) only run on updates and are skipped. Metadata: a DNS-1123 name (a namespace is the
provider's default when left out, and the API server clears it on a cluster-scoped object).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import cel
import jsonschema
import yaml

CRD_DIR = Path(__file__).resolve().parent / "data" / "crds"
#: DNS-1123 subdomain (apimachinery validation.IsDNS1123Subdomain): every object name here.
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True)
class Crd:
    group: str
    version: str
    kind: str
    schema: dict[str, Any]
    source: str
    #: a karpenter.sh CRD as one provider ships it (its CEL rules list that provider's labels): the
    #: node class group whose objects it checks; None for a CRD with one schema everywhere
    node_class_group: str | None = None


@cache
def crds() -> dict[tuple[str, str, str | None], Crd]:
    """(apiVersion, kind, node class group or None) -> its CRD, for every file in tests/data/crds."""
    out = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        text = path.read_text()
        data = yaml.safe_load(text)
        source = text.splitlines()[0].removeprefix("# ")
        crd = Crd(
            data["group"], data["version"], data["kind"], data["openAPIV3Schema"], source, data.get("nodeClassGroup")
        )
        out[(f"{crd.group}/{crd.version}", crd.kind, crd.node_class_group)] = crd
    return out


def node_class_group(obj: dict[str, Any]) -> str | None:
    """The group of the node class a Karpenter object references (spec.template.spec.nodeClassRef)."""
    ref = ((((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef")) or {}
    return ref.get("group") if isinstance(ref, dict) else None


def python_pattern(pattern: str) -> str:
    """Go's RE2 takes flags after the anchor (`^(?i)...`, kueue's AdmissionCheck controllerName);
    Python wants global flags first."""
    return re.sub(r"^\^\(\?([a-zA-Z]+)\)", r"(?\1)^", pattern)


def json_schema(node: dict[str, Any]) -> dict[str, Any]:
    """A structural OpenAPI v3 schema as a strict JSON Schema (unknown fields refused)."""
    out: dict[str, Any] = {}
    for key in (
        "type", "enum", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minProperties",
        "maxProperties", "required", "multipleOf",
    ):  # fmt: skip
        if key in node:
            out[key] = node[key]
    if "pattern" in out:
        out["pattern"] = python_pattern(out["pattern"])
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    for key in ("anyOf", "allOf", "oneOf"):
        if key in node:
            out.setdefault("allOf", []).append({key: [json_schema(n) for n in node[key]]})
    if "not" in node:
        out["not"] = json_schema(node["not"])
    if "items" in node:
        out["items"] = json_schema(node["items"])
    if "properties" in node:
        out["properties"] = {k: json_schema(v) for k, v in node["properties"].items()}
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = json_schema(node["additionalProperties"])
    elif "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    if node.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    return out


def with_defaults(node: dict[str, Any], value: Any) -> Any:
    """Structural defaulting (apiextensions-apiserver): a missing property with a `default` gets it."""
    if isinstance(value, dict):
        props = node.get("properties") or {}
        for name, sub in props.items():
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                value[name] = with_defaults(sub, value[name])
        if isinstance(node.get("additionalProperties"), dict):
            for name in value:
                if name not in props:
                    value[name] = with_defaults(node["additionalProperties"], value[name])
    elif isinstance(value, list) and "items" in node:
        return [with_defaults(node["items"], v) for v in value]
    return value


def _list_map_errors(node: dict[str, Any], value: list[Any], path: str) -> list[str]:
    keys = node.get("x-kubernetes-list-map-keys") or []
    if node.get("x-kubernetes-list-type") != "map" or not keys:
        return []
    seen: set[tuple[Any, ...]] = set()
    errors = []
    for item in value:
        key = tuple(item.get(k) for k in keys) if isinstance(item, dict) else (item,)
        if key in seen:
            errors.append(f"{path}: Duplicate value: {dict(zip(keys, key, strict=True))}")
        seen.add(key)
    return errors


def _find(value: str, pattern: str) -> str:
    """Kubernetes' CEL `<string>.find(<regex>)` (k8s.io/apiserver/pkg/cel/library/regex.go): the first
    match, or "" when there is none."""
    found = re.search(python_pattern(pattern), value)
    return found.group(0) if found else ""


def _split(value: str, separator: str, limit: int = -1) -> list[str]:
    """cel-go's strings extension `<string>.split(<sep>[, <n>])`, which the API server enables
    (k8s.io/apiserver/pkg/cel/environment/base.go ext.Strings): n < 0 all parts, n == 0 none."""
    if limit == 0:
        return []
    return value.split(separator, limit - 1 if limit > 0 else -1)


#: CEL functions the API server has beyond the standard library (the ones the CRDs here use).
KUBERNETES_CEL_FUNCTIONS = {"find": _find, "split": _split}


def _rule_errors(node: dict[str, Any], value: Any, path: str) -> list[str]:
    """x-kubernetes-validations and list-map keys, at this node and below (where the object has values)."""
    errors = []
    for rule in node.get("x-kubernetes-validations") or []:
        expr = rule["rule"]
        if "oldSelf" in expr:
            continue  # a transition rule: only on update
        try:
            ok = cel.evaluate(expr, cel.Context({"self": value}, KUBERNETES_CEL_FUNCTIONS))
        except Exception as exc:  # the API server reports an evaluation error as invalid too
            ok = False
            expr = f"{expr} ({exc})"
        if ok is not True:
            errors.append(f"{path}: Invalid value: {rule.get('message') or 'failed rule: ' + expr}")
    if isinstance(value, dict):
        props = node.get("properties") or {}
        for name, sub in value.items():
            child = props.get(name) or (node.get("additionalProperties") if name not in props else None)
            if isinstance(child, dict):
                errors += _rule_errors(child, sub, f"{path}.{name}")
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        errors += _list_map_errors(node, value, path)
        for i, item in enumerate(value):
            errors += _rule_errors(node["items"], item, f"{path}[{i}]")
    return errors


def validate(obj: dict[str, Any]) -> list[str]:
    """Every reason the API server would refuse to create `obj` (empty: it would accept it)."""
    key = (obj.get("apiVersion", ""), obj.get("kind", ""))
    crd = crds().get((*key, node_class_group(obj))) or crds().get((*key, None))
    if crd is None:
        return [f"{key[0]} {key[1]}: no CRD schema in tests/data/crds (add the upstream one)"]
    where = f"{crd.kind} {(obj.get('metadata') or {}).get('name')!r}"
    obj = with_defaults(crd.schema, copy.deepcopy(obj))
    validator = jsonschema.Draft7Validator(json_schema(crd.schema))
    errors = [
        f"{where}: {'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
        for e in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    ]
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if not isinstance(name, str) or len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
        errors.append(f"{where}: metadata.name: must be a DNS-1123 subdomain (got {name!r})")
    if errors:
        return errors  # CEL rules assume a structurally valid object, as the API server does
    return [f"{where}: {e}" for e in _rule_errors(crd.schema, obj, "<root>")]
