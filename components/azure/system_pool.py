"""The AKS System pool: what a change AKS refuses on it takes by hand, and who can reach a private cluster.

Plain text and values only (no azure-native import), so `diff` and the config can use them on any cloud.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: AKS agent-pool names: at most 12 lowercase letters and digits (azure/pools.py AGENT_POOL_NAME_PATTERN).
MAX_AGENT_POOL_NAME = 12


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
    if wanted.get("enableAutoScaling"):
        flags.append(
            f"--enable-cluster-autoscaler --min-count {wanted.get('minCount')} --max-count {wanted.get('maxCount')}"
        )
    if wanted.get("nodeLabels"):
        flags.append("--labels " + " ".join(f"{k}={v}" for k, v in sorted(wanted["nodeLabels"].items())))
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
