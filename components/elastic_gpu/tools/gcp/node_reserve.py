"""What a GKE node keeps of its machine for the system, so what its pods can have: the reserve the cluster
autoscaler's GCE node template subtracts (the simulation's GKE node pools, tools/gcp/autoscaler_templates.py, and the
node pools GKE auto-creates, tools/gcp/autoprovisioning/simulation.py)."""

from __future__ import annotations

from elastic_gpu.tools.simulation.templates import EVICTION_HARD_MEMORY, GIB, MIB, tiered_cpu_reserve

GKE_RESERVE_SOURCE = "GKE kube-reserved, kernel reserve and 100Mi eviction (cloudprovider/gce templates.go:69-135)"


def gke_reserve(allocatable: dict[str, float]) -> dict[str, float]:
    """What the GCE template subtracts and a GKE node keeps (kubernetes/autoscaler cluster-autoscaler-1.33.6
    cloudprovider/gce templates.go:69-135 BuildCapacity/CalculateAllocatable): the kernel's memory
    (gce_reserved.go:90-129, COS), kube-reserved as GKE sets it in kube-env (GKE docs, "Plan node sizes":
    memory 255 MiB under 1 GiB, else 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of
    the next 112, 2% above; CPU by tiers) and the 100Mi hard eviction (gce_reserved.go:48)."""
    cpu, memory = allocatable.get("cpu", 0.0), allocatable.get("memory", 0.0)
    if cpu == float("inf") or memory == float("inf"):
        return {}
    kernel = memory / 64 + 16 * MIB + (64 * MIB if memory > 3 * GIB else 0) + (8 * MIB if memory <= 8 * GIB else 0)
    kernel += min(0.00175 * memory, 248 * MIB)
    kube: float
    if memory < GIB:
        kube = 255 * MIB
    else:
        kube, rest = 0.0, memory
        for size, share in ((4 * GIB, 0.25), (4 * GIB, 0.2), (8 * GIB, 0.1), (112 * GIB, 0.06), (float("inf"), 0.02)):
            part = min(rest, size)
            kube += part * share
            rest -= part
            if rest <= 0:
                break
    return {"cpu": tiered_cpu_reserve(cpu), "memory": kernel + kube + EVICTION_HARD_MEMORY}
