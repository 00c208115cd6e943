"""AKS: the Kubernetes minors it accepts (elastic_gpu/versions.py merges them)."""

from __future__ import annotations

from datetime import date

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_EXISTING_CLUSTER, AKS_MANAGED_CLUSTER
from elastic_gpu.clouds import HANDLE_VERSION_INPUT, MinorSupport

_SOURCE = (
    "AKS release calendar, MicrosoftDocs/azure-aks-docs articles/aks/supported-kubernetes-versions.md "
    "(commit fb060ab of 2026-08-21): End of life column, the last day of the month it names"
)
#: After End of life only AKS's paid Long Term Support (Premium tier) continues, which this library does not
#: enable, so end of standard support is end of life. AKS 1.37 (GA planned Oct 2026 in the AKS calendar) needs
#: no autoscaler image: AKS runs its own.
_NOTE = "AKS LTS (Premium tier) would extend it one more year; not enabled by this library"
KUBERNETES_SUPPORT = (
    MinorSupport("1.32", date(2026, 3, 31), date(2026, 3, 31), _SOURCE, _NOTE),
    MinorSupport("1.33", date(2026, 7, 31), date(2026, 7, 31), _SOURCE, _NOTE),
    MinorSupport("1.34", date(2026, 11, 30), date(2026, 11, 30), _SOURCE, _NOTE),
    MinorSupport("1.35", date(2027, 3, 31), date(2027, 3, 31), _SOURCE, _NOTE),
    MinorSupport("1.36", date(2027, 6, 30), date(2027, 6, 30), _SOURCE, _NOTE),
    MinorSupport(
        "1.37",
        date(2027, 10, 31),
        date(2027, 10, 31),
        _SOURCE,
        _NOTE + "; GA planned Oct 2026, not re-checked",
    ),
)

#: Its cluster resource and the input that carries its Kubernetes version, and the handle on a cluster this
#: library did not create, whose minor its node groups follow (the version policy rules judge both).
VERSION_INPUTS = {AKS_MANAGED_CLUSTER: "kubernetesVersion", AKS_EXISTING_CLUSTER: HANDLE_VERSION_INPUT}

#: Its node-pool resource and the input that carries the nodes' Kubernetes version (`diff`: version skew
#: between control plane and nodes). Unset, the nodes follow the control plane.
NODE_VERSION_INPUTS = {AKS_AGENT_POOL: "orchestratorVersion"}
