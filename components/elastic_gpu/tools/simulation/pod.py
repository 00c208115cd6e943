"""A pending pod as the scheduler sees it: requests, tolerations, node selector, required affinity."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from elastic_gpu.errors import ConfigError

#: Kubernetes quantity suffixes (apimachinery pkg/api/resource/suffix.go): binary and decimal SI.
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
#: <signedNumber><suffix>, suffix = binarySI | decimalExponent (e|E signedNumber) | decimalSI
#: (apimachinery quantity.go, "Serialization format"); "1E" is one exa, "1E3" is a thousand.
_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$"
)


def parse_quantity(text: Any) -> Decimal:
    """A Kubernetes quantity, exactly: '500m' -> 0.5, '4Gi' -> 4294967296, '1e3' -> 1000, 2 -> 2.

    The grammar of apimachinery's resource.Quantity (what kubernetes' python client
    utils.quantity.parse_quantity also reads); anything else raises ValueError."""
    if isinstance(text, bool):
        raise ValueError(f"not a Kubernetes quantity: {text!r}")
    match = _QUANTITY.match(str(text).strip()) if isinstance(text, str | int | float | Decimal) else None
    if not match:
        raise ValueError(f"not a Kubernetes quantity: {text!r}")
    number = Decimal(match["num"])
    if match["exp"]:
        return number.scaleb(int(match["exp"][1:]))
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * Decimal(1024) ** _BINARY[suffix]
    return number.scaleb(_DECIMAL[suffix])


def quantity(text: Any) -> float:
    """`parse_quantity` as a float, for the simulation's arithmetic."""
    return float(parse_quantity(text))


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
    #: the workload's own labels (a Job's, not its pods'): Kueue reads its queue-name label there
    labels: dict[str, str] = field(default_factory=dict)
    namespace: str = "default"
    #: pods that run at once (a Job's parallelism, capped by completions): Kueue admits them together
    count: int = 1


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


def pod_count(manifest: dict[str, Any]) -> int:
    """A Job's pods at once: parallelism (default 1), at most completions (Kueue's Job PodSet count)."""
    if manifest.get("kind") != "Job":
        return 1
    spec = manifest.get("spec") or {}
    parallelism = int(spec.get("parallelism", 1))
    completions = spec.get("completions")
    return min(parallelism, int(completions)) if completions is not None else parallelism


def pod_shape(manifest: dict[str, Any]) -> PodShape:
    name, spec = pod_spec_of(manifest)
    metadata = manifest.get("metadata") or {}
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
        labels={k: str(v) for k, v in (metadata.get("labels") or {}).items()},
        namespace=metadata.get("namespace") or "default",
        count=pod_count(manifest),
    )
