"""AKS: where one `up` can take a cluster's control plane from the minor its program declares (`diff`).

AKS upgrades a supported cluster one minor at a time, with one exception: "Skipping multiple versions can only be
done when upgrading from an unsupported version back into the minimum supported version", and such an upgrade "is
performed without any guarantee of functionality and is excluded from the service-level agreements and limited
warranty" (MicrosoftDocs/azure-aks-docs articles/aks/supported-kubernetes-versions.md, "Can I skip multiple AKS
versions during cluster upgrade?"). AKS answers any other skip with OperationNotAllowed "Upgrading Kubernetes
version 1.24.9 to 1.26.6 is not allowed. Available upgrades: [1.29.15 ...]" (learn.microsoft.com troubleshoot
azure-kubernetes error-codes aks-upgrade-blocked). "Unsupported" is past the End of life column of the AKS
calendar (elastic_gpu/azure/versions.py; the library does not enable LTS).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from elastic_gpu.azure.versions import KUBERNETES_SUPPORT
from elastic_gpu.cloud_facts import UpgradeReach
from elastic_gpu.clouds import minor_key, next_minor

_SOURCE = "MicrosoftDocs/azure-aks-docs articles/aks/supported-kubernetes-versions.md"


def upgrade_reach(minor: str, props: Mapping[str, Any], on: date) -> UpgradeReach:
    """From `minor` on the day `on`: one minor on, or, from an unsupported minor, the minimum supported one (the only
    target AKS offers then; a target below it is past its end of life too, which the version policy refuses)."""
    supported = [r for r in KUBERNETES_SUPPORT if r.end_of_life >= on]
    if not supported:
        return UpgradeReach(minor, next_minor(minor))
    oldest = min(supported, key=lambda r: minor_key(r.minor))
    if minor_key(minor) >= minor_key(oldest.minor) or minor_key(next_minor(minor)) >= minor_key(oldest.minor):
        return UpgradeReach(minor, next_minor(minor))
    why = (
        f"AKS skips minors only from an unsupported one back into the minimum supported minor: on "
        f"{on.isoformat()} {minor} is past its end of life and {oldest.minor} is the oldest minor AKS supports (until "
        f"{oldest.end_of_life.isoformat()}); such an upgrade has no guarantee of functionality and is excluded from "
        f"the SLA, and AKS advises re-creating a cluster that is far behind ({_SOURCE})"
    )
    return UpgradeReach(minor, oldest.minor, why)
