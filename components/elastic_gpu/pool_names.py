"""Node-pool names that change with every input whose change replaces the pool.

The node-pool builders put the values of the fields that force a replacement (each cloud's rows in
elastic_gpu/<cloud>/replacement.py) into the pool's name (`pool_name`), so a change that forces a replacement
also gives the replacement a new name: the engine then creates the new pool before it deletes the old one
(`delete_before_replace=False`), and the cluster never loses its general pool. The `diff` command reads the same
rows, merged over the clouds (elastic_gpu/tools/replacement.py), to say which changes replace a resource.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

#: Hex digits of the digest appended to a node-pool name: 16^6 = 16.7M values.
DIGEST_LEN = 6


def short_digest(values: Mapping[str, Any]) -> str:
    """A stable short digest of `values` (JSON, sorted keys): equal inputs, equal digest."""
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LEN]


def pool_name(base: str, forcing: Mapping[str, Any], *, max_len: int, sep: str = "-", keep: str = "") -> str:
    """`<base><sep><digest>`: the digest covers the base and the replacement-forcing values, so a change
    that forces a replacement also renames the pool (create the new one, then delete the old one).
    A base too long for `max_len` is cut in the middle, before `keep` (the zone a per-zone group ends
    with), so the name still says where its nodes run; the digest still tells pools apart."""
    digest = short_digest({"base": base, **forcing})
    room = max_len - len(sep) - DIGEST_LEN
    if len(base) > room and keep and base.endswith(keep) and len(keep) < room // 2:
        cut = base[: room - len(keep)].rstrip("-_") + keep
    else:
        cut = base[:room]
    return f"{cut}{sep}{digest}"
