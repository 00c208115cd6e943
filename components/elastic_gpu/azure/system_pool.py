"""The AKS System pool: what a change AKS refuses on it takes by hand, and who can reach a private cluster.

Plain text and values only (no azure-native import), so `diff` and the config can use them on any cloud.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

#: The fewest nodes AKS documents for a System pool: "System pools must contain at least two nodes" (AKS
#: docs use-system-pools.md, Limitations; three recommended in production). AKS still creates one with a
#: single node, so fewer is a warning, not an error: a dev cluster may take the risk.
SYSTEM_POOL_MIN_NODES = 2


def system_pool_size_warning(min_size: int) -> str | None:
    """What a System pool below SYSTEM_POOL_MIN_NODES loses, or None."""
    if min_size >= SYSTEM_POOL_MIN_NODES:
        return None
    return (
        f"system_min_size {min_size} (stack config cluster.systemPool.minSize) is below the {SYSTEM_POOL_MIN_NODES} "
        "nodes AKS documents for a System pool (use-system-pools.md: 'System pools must contain at least two "
        "nodes'). On one node every system pod (CoreDNS, metrics-server, konnectivity-agent) shares one VM: "
        "its failure or an unplanned reboot leaves the cluster without DNS and without kubectl logs/exec "
        "until a replacement node is Ready, and an upgrade moves them all at once. "
        f"Set minSize: {SYSTEM_POOL_MIN_NODES} (3 for production) unless a dev cluster accepts this."
    )


#: AKS agent-pool names: at most 12 lowercase letters and digits (azure/pools.py AGENT_POOL_NAME_PATTERN).
MAX_AGENT_POOL_NAME = 12


def node_count_flags(wanted: Mapping[str, Any]) -> list[str]:
    """`--node-count` (and the autoscaler's bounds) for `az aks nodepool add`: az defaults --node-count to 3 and
    refuses one outside --min-count..--max-count (azure-cli acs custom.py aks_agentpool_add `node_count=3`,
    agentpool_decorator.py "node-count is not in the range of min-count and max-count"), so it is always
    given: the pool's count, else its minimum, within its bounds."""
    count = wanted.get("count")
    if not wanted.get("enableAutoScaling"):
        return [f"--node-count {count if isinstance(count, int) else '<count>'}"]
    lo, hi = wanted.get("minCount"), wanted.get("maxCount")
    if not (isinstance(lo, int) and isinstance(hi, int)):
        return [f"--node-count <count> --enable-cluster-autoscaler --min-count {lo} --max-count {hi}"]
    nodes = min(max(count if isinstance(count, int) else lo, lo), hi)
    return [f"--node-count {nodes} --enable-cluster-autoscaler --min-count {lo} --max-count {hi}"]


def _pairs(values: Mapping[str, Any]) -> str:
    return " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(values.items()))


def system_pool_rotation_steps(pool: str, cluster: Mapping[str, Any], wanted: Mapping[str, Any]) -> str:
    """The hand-made rotation terraform-provider-azurerm does for a default node pool (a temporary System
    pool, the old pool deleted, recreated with the new settings, the temporary one deleted), as az commands."""
    rg, name = cluster.get("resourceGroupName"), cluster.get("resourceName")
    target = (
        f"--resource-group {rg if isinstance(rg, str) else '<resource-group>'} "
        f"--cluster-name {name if isinstance(name, str) else '<cluster>'}"
    )
    flags = ["--mode System"]
    if wanted.get("vmSize"):
        flags.append(f"--node-vm-size {wanted['vmSize']}")
    if wanted.get("availabilityZones"):
        flags.append(f"--zones {' '.join(map(str, wanted['availabilityZones']))}")
    if wanted.get("osDiskSizeGB"):
        flags.append(f"--node-osdisk-size {wanted['osDiskSizeGB']}")
    flags += node_count_flags(wanted)
    if wanted.get("nodeLabels"):
        flags.append("--labels " + _pairs(wanted["nodeLabels"]))
    if isinstance(wanted.get("tags"), Mapping) and wanted["tags"]:
        flags.append("--tags " + _pairs(wanted["tags"]))
    if wanted.get("nodeTaints"):
        flags.append(f"--node-taints {','.join(wanted['nodeTaints'])}")
    tmp = f"{pool[: MAX_AGENT_POOL_NAME - 3]}tmp"
    add = f"az aks nodepool add {target} {' '.join(flags)}"
    return (
        "AKS cannot change this on the existing pool, and an update of the cluster cannot rename it "
        "(the engine would update it in place and AKS refuse). Rotate it by hand, as terraform-provider-azurerm's "
        "temporary_name_for_rotation does, then refresh:\n"
        f"  1. {add} --name {tmp}\n"
        f"  2. az aks nodepool delete {target} --name {pool}   (AKS moves its system pods to {tmp})\n"
        f"  3. {add} --name {pool}\n"
        f"  4. az aks nodepool delete {target} --name {tmp}\n"
        "  5. pulumi refresh, then pulumi up"
    )
