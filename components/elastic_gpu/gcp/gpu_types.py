"""A GCE machine type's GPU as Compute Engine describes it (machineTypes.list through
`gcp.compute.get_machine_types`: `accelerators` [guestAcceleratorType, guestAcceleratorCount], `guestCpus`,
`memoryMb`): the preview's answer for a type the catalog lacks, and the offline mock's answer from the catalog.

Only machine types with GPUs attached by the type itself (A2, A3, A4, G2, ...) describe them; N1 types take
GPUs as guest accelerators of the node pool, so they describe none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from elastic_gpu.gpu_catalog import GPU_INSTANCE_TYPES, GPU_MODELS, GpuSpec, gpu_instance_types

#: MB of machineTypes' memoryMb per GiB (the API's "MB" is MiB: n1-standard-4's 15 GB is memoryMb 15360).
MB_PER_GIB = 1024


def _models_by_accelerator() -> dict[str, str]:
    """GKE accelerator type -> catalog GPU key: the models' own labels and the catalog rows' (A3 Mega's H100)."""
    models = {m.accelerator_label: m.key for m in GPU_MODELS.values()}
    return models | {r.accelerator: r.gpu for r in gpu_instance_types("gcp") if r.accelerator}


def spec_of(accelerators: Sequence[dict[str, Any]], guest_cpus: int | None, memory_mb: int | None) -> GpuSpec | str:
    """The catalog spec of a machine type's accelerators, guest CPUs and memory, or why not."""
    if not accelerators:
        return "Compute Engine describes no GPU on it (an N1 type takes GPUs as the node pool's guest accelerators)"
    if len(accelerators) > 1 or not guest_cpus or not memory_mb:
        return f"Compute Engine describes {list(accelerators)}, {guest_cpus} vCPU, {memory_mb} MB: not one GPU model"
    kind = str(accelerators[0].get("guest_accelerator_type", ""))
    model = _models_by_accelerator().get(kind)
    if model is None:
        return f"Compute Engine names its GPU {kind!r}, which the catalog does not know"
    count = int(accelerators[0].get("guest_accelerator_count") or 0)
    return GpuSpec(model, count, int(guest_cpus), int(memory_mb) // MB_PER_GIB)


def resolve_gpu(machine_type: str, zones: Sequence[str]) -> GpuSpec | str:
    """The GPU Compute Engine describes for `machine_type` in the first of `zones` (at preview, with the
    program's credentials and the provider's project), or why it gave none."""
    import pulumi_gcp as gcp

    if not zones:
        return "no zone to ask Compute Engine in"
    try:
        found = gcp.compute.get_machine_types(zone=zones[0], filter=f'name = "{machine_type}"').machine_types or []
    except Exception as exc:  # the provider's error, whatever its class
        return str(exc) or type(exc).__name__
    match = [m for m in found if m.name == machine_type]
    if not match:
        return f"Compute Engine offers no machine type {machine_type!r} in {zones[0]}"
    m = match[0]
    accelerators = [
        {"guest_accelerator_type": a.guest_accelerator_type, "guest_accelerator_count": a.guest_accelerator_count}
        for a in m.accelerators or []
    ]
    return spec_of(accelerators, m.guest_cpus, m.memory_mb)


def described_machine_type(machine_type: str) -> dict[str, Any]:
    """How machineTypes.list describes `machine_type` (the mock's answer): a catalog type's accelerators (none
    for N1, whose GPUs the node pool attaches), vCPUs and memory; only the name for a type the catalog lacks
    (the mock knows no more of it; a program's offline_mocks.py INVOKES can describe it)."""
    row = GPU_INSTANCE_TYPES.get(("gcp", machine_type))
    if row is None:
        return {"name": machine_type}
    attached = [] if row.gpu_counts else [{"guestAcceleratorType": row.accelerator, "guestAcceleratorCount": row.gpus}]
    return {
        "name": machine_type,
        "guestCpus": row.vcpus,
        "memoryMb": row.memory_gib * MB_PER_GIB,
        "accelerators": attached,
    }
