"""A pending pod as the scheduler sees it: requests, tolerations, node selector, required affinity."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from elastic_gpu.errors import ConfigError

#: Kubernetes quantity suffixes (apimachinery resource.Quantity).
_SUFFIX = {
    "": 1,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
}
_QUANTITY = re.compile(r"^([0-9.]+(?:e[0-9]+)?)([a-zA-Z]*)$")


def quantity(text: Any) -> float:
    """'500m' -> 0.5, '4Gi' -> 4294967296, 2 -> 2."""
    match = _QUANTITY.match(str(text).strip())
    if not match or match[2] not in _SUFFIX:
        raise ValueError(f"not a Kubernetes quantity: {text!r}")
    return float(match[1]) * _SUFFIX[match[2]]


@dataclass(frozen=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""


@dataclass(frozen=True)
class Requirement:
    """One matchExpression of a required node-affinity term."""

    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: tuple[str, ...] = ()


@dataclass
class PodShape:
    name: str
    requests: dict[str, float]
    tolerations: list[Toleration] = field(default_factory=list)
    node_selector: dict[str, str] = field(default_factory=dict)
    #: required node affinity: terms ORed, requirements within a term ANDed
    affinity_terms: list[list[Requirement]] = field(default_factory=list)


def _requests(container: dict[str, Any]) -> dict[str, float]:
    """A container's requests; a resource with only a limit requests the limit (API defaulting)."""
    res = container.get("resources") or {}
    merged = {**(res.get("limits") or {}), **(res.get("requests") or {})}
    return {k: quantity(v) for k, v in merged.items()}


def pod_requests(spec: dict[str, Any]) -> dict[str, float]:
    """Effective requests: the sum over containers, at least the largest init container."""
    total: dict[str, float] = {}
    for c in spec.get("containers") or []:
        for k, v in _requests(c).items():
            total[k] = total.get(k, 0.0) + v
    for c in spec.get("initContainers") or []:
        for k, v in _requests(c).items():
            total[k] = max(total.get(k, 0.0), v)
    return total


def pod_spec_of(manifest: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(name, pod spec) of a Pod, Job, Deployment (or other template-holding workload) manifest."""
    kind = manifest.get("kind")
    name = (manifest.get("metadata") or {}).get("name", "pod")
    if kind == "Pod":
        return name, manifest.get("spec") or {}
    template = (manifest.get("spec") or {}).get("template")
    if kind in ("Job", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet") and template:
        return name, template.get("spec") or {}
    raise ConfigError([f"--pod: kind {kind!r} has no pod template; allowed: Pod, Job, Deployment"], source="pod")


def pod_shape(manifest: dict[str, Any]) -> PodShape:
    name, spec = pod_spec_of(manifest)
    required = (
        ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        or {}
    ).get("nodeSelectorTerms") or []
    return PodShape(
        name=name,
        requests=pod_requests(spec),
        tolerations=[
            Toleration(t.get("key", ""), t.get("operator", "Equal"), str(t.get("value", "")), t.get("effect", ""))
            for t in spec.get("tolerations") or []
        ],
        node_selector={k: str(v) for k, v in (spec.get("nodeSelector") or {}).items()},
        affinity_terms=[
            [
                Requirement(e["key"], e["operator"], tuple(str(v) for v in e.get("values") or ()))
                for e in term.get("matchExpressions") or []
            ]
            for term in required
        ],
    )
