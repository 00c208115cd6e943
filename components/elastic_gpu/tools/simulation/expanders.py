"""Which node group the autoscaler picks among those a pod fits: ranked tiers, ties kept as ties.

- priority (cluster-autoscaler expander/priority): a group takes the highest priority whose
  regexes match its name (Go regexp MatchString: unanchored unless the regex anchors); only the
  best-priority groups go on. A group no regex matches is dropped while a ranked group is an
  option; when none is, every option goes on ("No options filtered", priority.go BestOptions),
  so unranked groups come last.
- least-waste: the least unused CPU + memory share of one new node; equal waste is a tie.
- random (and the end of every chain): what is still tied is drawn at random, reported as a tie.
- GKE ComputeClass: a pod that selects a class may only use that class's node pools, in the
  order of its `priorities`; GKE creates no other pool (nodePoolAutoCreation disabled).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from elastic_gpu.tools.simulation.fit import NodeTemplate
from elastic_gpu.tools.simulation.pod import PodShape

Tier = list[NodeTemplate]


@lru_cache(maxsize=64)
def _any_of(regexes: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled pattern that matches where any of `regexes` does. Compiled once per priority level: a
    stack lists a regex per node group, and past `re`'s cache of 512 patterns a `re.search` per regex
    recompiles each one on every call."""
    return re.compile("|".join(f"(?:{rx})" for rx in regexes))


def _priority_of(group: NodeTemplate, levels: dict[int, re.Pattern[str]]) -> int | None:
    matched = [p for p, pattern in levels.items() if pattern.search(group.autoscaler_name)]
    return max(matched) if matched else None


def _waste(pod: PodShape, group: NodeTemplate) -> float:
    total = 0.0
    for resource in ("cpu", "memory"):
        have = group.allocatable.get(resource, 0.0)
        if have and have != float("inf"):
            total += (have - pod.requests.get(resource, 0.0)) / have
    return total


def _highest_first(level: dict[str, int | None]) -> Callable[[NodeTemplate], float]:
    """The key that puts the groups of the highest priority level first."""
    return lambda g: -(level[g.autoscaler_name] or 0)


def _split(tier: Tier, key: Callable[[NodeTemplate], float]) -> list[Tier]:
    values = sorted({key(g) for g in tier})
    return [[g for g in tier if key(g) == v] for v in values]


def rank(
    pod: PodShape,
    groups: Sequence[NodeTemplate],
    expanders: Sequence[str],
    priorities: dict[int, list[str]],
    class_order: Sequence[str] = (),
) -> list[Tier]:
    """The groups in the order the autoscaler would try them, as tiers of equals."""
    tiers: list[Tier] = [list(groups)]
    if class_order:
        position = {name: i for i, name in enumerate(class_order)}
        tiers = _split([g for g in groups if g.name in position], lambda g: position[g.name])
    for expander in expanders:
        if expander == "priority":
            out: list[Tier] = []
            levels = {p: _any_of(tuple(regexes)) for p, regexes in priorities.items() if regexes}
            for tier in tiers:
                level = {g.autoscaler_name: _priority_of(g, levels) for g in tier}
                known = [g for g in tier if level[g.autoscaler_name] is not None]
                out += _split(known, _highest_first(level))
                out.append([g for g in tier if level[g.autoscaler_name] is None])
            tiers = out
        elif expander == "least-waste":
            tiers = [sub for tier in tiers for sub in _split(tier, lambda g: round(_waste(pod, g), 6))]
        # random, most-pods, price: no further ordering modelled; ties stay ties.
    return [t for t in tiers if t]
