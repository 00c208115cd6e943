"""Which input changes make the engine replace a resource, and the names that let it create first.

One table per resource type (each cloud's rows in components/<cloud>/replacement.py) of the inputs
whose change forces a replacement (the provider marks them ForceNew, or the cloud API refuses to change
them in place). The node-pool builders
put the values of those fields into the pool's name (`pool_name`), so a change that forces a
replacement also gives the replacement a new name: the engine then creates the new pool before
it deletes the old one (`delete_before_replace=False`), and the cluster never loses its general
pool. The `diff` command reads the same table to say which changes replace a resource.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from elastic_gpu.clouds import ReplaceRule, all_clouds

__all__ = ["ReplaceRule"]  # the clouds' rows' type (components/clouds.py)

#: Hex digits of the digest appended to a node-pool name: 16^6 = 16.7M values.
DIGEST_LEN = 6


#: Node-pool resources: the fields that force replacement, per cloud (shown in the README), in cloud order.
POOL_REPLACE_FIELDS: dict[str, ReplaceRule] = {
    t: rule for c in all_clouds() for t, rule in c.replacement.POOL_REPLACE_FIELDS.items()
}

#: Other resources whose replacement the diff should name (same sources: the providers' ForceNew fields).
OTHER_REPLACE_FIELDS: dict[str, ReplaceRule] = {
    t: rule for c in all_clouds() for t, rule in c.replacement.OTHER_REPLACE_FIELDS.items()
}

REPLACE_FIELDS: dict[str, ReplaceRule] = POOL_REPLACE_FIELDS | OTHER_REPLACE_FIELDS

#: The input that is a pool's cloud name. Replacing a pool whose name stays the same cannot create the
#: new pool first (the name is taken): the provider deletes first (pulumi-terraform-bridge
#: nameRequiresDeleteBeforeReplace; azure-native replaces on the same URL). Hence the digest in names.
POOL_NAME_FIELD: dict[str, str] = {t: f for c in all_clouds() for t, f in c.replacement.POOL_NAME_FIELD.items()}


def short_digest(values: Mapping[str, Any]) -> str:
    """A stable short digest of `values` (JSON, sorted keys): equal inputs, equal digest."""
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LEN]


def pool_name(base: str, forcing: Mapping[str, Any], *, max_len: int, sep: str = "-") -> str:
    """`<base><sep><digest>`: the digest covers the base and the replacement-forcing values, so a change
    that forces a replacement also renames the pool (create the new one, then delete the old one).
    A base too long for `max_len` is cut; the digest still tells pools apart."""
    digest = short_digest({"base": base, **forcing})
    return f"{base[: max_len - len(sep) - DIGEST_LEN]}{sep}{digest}"


def replacing_paths(resource_type: str, changed: list[str]) -> list[str]:
    """The changed input paths that force `resource_type` to be replaced (empty: updated in place)."""
    rule = REPLACE_FIELDS.get(resource_type)
    if rule is None:
        return []
    return [p for p in changed if any(p == f or p.startswith(f"{f}.") or p.startswith(f"{f}[") for f in rule.fields)]


def replace_table_markdown() -> str:
    """The README's table of pool fields that force a replacement."""
    rows = ["| Resource | Fields that force a replacement | Source |", "| --- | --- | --- |"]
    for type_, rule in POOL_REPLACE_FIELDS.items():
        rows.append(f"| `{type_}` | {', '.join(f'`{f}`' for f in rule.fields)} | {rule.source} |")
    return "\n".join(rows)
