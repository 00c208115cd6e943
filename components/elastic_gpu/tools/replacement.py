"""Which input changes make the engine replace a resource, merged over every cloud (`diff`, docs' tables).

One table per resource type (each cloud's rows in elastic_gpu/<cloud>/replacement.py) of the inputs
whose change forces a replacement (the provider marks them ForceNew, or the cloud API refuses to change
them in place). The node-pool builders put the values of those fields into the pool's name
(elastic_gpu/pool_names.py `pool_name`, re-exported here), so a change that forces a replacement also gives the
replacement a new name: the engine then creates the new pool before it deletes the old one
(`delete_before_replace=False`), and the cluster never loses its general pool. The `diff` command reads these
tables to say which changes replace a resource.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elastic_gpu.clouds import InlinePoolRule, KeptRule, ReplaceRule
from elastic_gpu.pool_names import DIGEST_LEN, pool_name, short_digest
from elastic_gpu.tools.clouds import all_clouds

#: the clouds' rows' type (elastic_gpu/clouds.py), and the names the pool builders give (elastic_gpu/pool_names.py)
__all__ = ["DIGEST_LEN", "InlinePoolRule", "KeptRule", "ReplaceRule", "pool_name", "short_digest"]

#: Node-pool resources: the fields that force replacement, per cloud (docs/day-two.md's table), in cloud order.
POOL_REPLACE_FIELDS: dict[str, ReplaceRule] = {
    t: rule for c in all_clouds() for t, rule in c.replacement().pool_replace_fields.items()
}

#: Other resources whose replacement the diff should name (same sources: the providers' ForceNew fields).
OTHER_REPLACE_FIELDS: dict[str, ReplaceRule] = {
    t: rule for c in all_clouds() for t, rule in c.replacement().other_replace_fields.items()
}

REPLACE_FIELDS: dict[str, ReplaceRule] = POOL_REPLACE_FIELDS | OTHER_REPLACE_FIELDS

#: Node-pool inputs whose in-place update replaces every node of the pool (a version bump): `diff` marks it.
NODE_ROLLING_FIELDS: dict[str, ReplaceRule] = {
    t: rule for c in all_clouds() for t, rule in c.replacement().node_rolling_fields.items()
}

#: Inputs a provider keeps at their last value when the program drops them: no change in the engine's plan.
KEPT_WHEN_DROPPED: dict[str, KeptRule] = {
    t: rule for c in all_clouds() for t, rule in c.replacement().kept_when_dropped.items()
}


def kept_by_provider(resource_type: str, path: str, old: Any, new: Any) -> bool:
    """The engine plans no change for this input: the program dropped an input the provider keeps, or gives one
    it never gave the value the provider stored for it at creation."""
    rule = KEPT_WHEN_DROPPED.get(resource_type)
    if rule is None or not rule.covers(path):
        return False
    return new is None or (old is None and path in rule.created_as and rule.created_as[path] == new)


#: The input that is a pool's cloud name. Replacing a pool whose name stays the same cannot create the
#: new pool first (the name is taken): the provider deletes first (pulumi-terraform-bridge
#: nameRequiresDeleteBeforeReplace; azure-native replaces on the same URL). Hence the digest in names.
POOL_NAME_FIELD: dict[str, str] = {t: f for c in all_clouds() for t, f in c.replacement().pool_name_field.items()}


#: Inline pools whose change is refused, not replaced: the cluster resource updates in place (the provider
#: marks none of these ForceNew), the cloud refuses the change, and renaming the inline pool is no way out
#: either. `diff` refuses such a change (exit 2) with the steps that do it (inline_pool_refusals).
INLINE_POOL_REFUSED_FIELDS: dict[str, InlinePoolRule] = {
    t: rule for c in all_clouds() for t, rule in c.replacement().inline_pool_refused_fields.items()
}


def inline_pool_refusals(
    resource_type: str, resource_name: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> list[str]:
    """What an update of `resource_type` would ask of its inline pools that the cloud refuses, each with
    the way to do it by hand (empty: nothing refused)."""
    rule = INLINE_POOL_REFUSED_FIELDS.get(resource_type)
    if rule is None:
        return []
    before = {p.get(rule.key): p for p in old.get(rule.list_field) or [] if isinstance(p, Mapping)}
    after = {p.get(rule.key): p for p in new.get(rule.list_field) or [] if isinstance(p, Mapping)}
    where = f"{resource_type} {resource_name}: {rule.list_field}"
    problems = [
        f"{where}[{n}]: a new inline pool; an update of the cluster cannot add or rename one "
        f"(was: {', '.join(sorted(map(str, before))) or 'none'}); add it as its own agent pool"
        for n in after
        if n not in before and before
    ]
    for n, pool in after.items():
        if n not in before:
            continue
        changed = [f for f in rule.fields if before[n].get(f) != pool.get(f)]
        if changed:
            moves = ", ".join(f"{where}[{n}].{f}: {before[n].get(f)!r} -> {pool.get(f)!r}" for f in changed)
            problems.append(f"{moves}. {rule.way_out(str(n), new, pool)}")
    return problems


def replacing_paths(resource_type: str, changed: list[str]) -> list[str]:
    """The changed input paths that force `resource_type` to be replaced (empty: updated in place)."""
    rule = REPLACE_FIELDS.get(resource_type)
    if rule is None:
        return []
    return [p for p in changed if any(p == f or p.startswith(f"{f}.") or p.startswith(f"{f}[") for f in rule.fields)]


def replace_table_markdown() -> str:
    """docs/day-two.md's table of pool fields that force a replacement."""
    rows = ["| Resource | Fields that force a replacement | Source |", "| --- | --- | --- |"]
    for type_, rule in POOL_REPLACE_FIELDS.items():
        rows.append(f"| `{type_}` | {', '.join(f'`{f}`' for f in rule.fields)} | {rule.source} |")
    return "\n".join(rows)


def inline_pool_table_markdown() -> str:
    """docs/day-two.md's table of inline-pool fields whose change `diff` refuses."""
    rows = ["| Resource | Inline-pool fields whose change is refused | Source |", "| --- | --- | --- |"]
    for type_, rule in INLINE_POOL_REFUSED_FIELDS.items():
        fields = ", ".join(f"`{rule.list_field}[].{f}`" for f in rule.fields)
        rows.append(f"| `{type_}` | {fields} | {rule.source} |")
    return "\n".join(rows)
