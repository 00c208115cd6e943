"""Which VM sizes a GPU pool may take under node auto-provisioning.

An AKS agent pool has one VM size; a Karpenter NodePool may list every size with the pool's GPU and
GPU count, and NAP picks the cheapest offering still available. The requirement names the sizes
(`karpenter.azure.com/sku-name`), not `sku-gpu-name`: the provider reads that label from the size's
name (pkg/providers/instancetype/instancetype.go:249, skewer's AcceleratorType), which says "A100"
for the 40 GB and the 80 GB parts alike, so only the catalog knows a pool's GPU exactly.
"""

from __future__ import annotations

from elastic_gpu.gpu_catalog import gpu_instance_type, gpu_instance_types

#: The catalog's Azure sizes that NAP installs the NVIDIA driver on with its Ubuntu images: every one
#: is listed with `gpu: nvidia` and "ubuntu" in Azure/karpenter-provider-azure v1.14.2
#: pkg/utils/supported-gpus.yaml (utils.IsNvidiaEnabledSKU). A size missing there gets no GPU driver. NCv3 is
#: listed there too but retired (elastic_gpu/gpu_catalog.py RETIRED_TYPES): NAP never offers it.
NAP_GPU_SKUS: frozenset[str] = frozenset(
    {
        "Standard_NC4as_T4_v3",
        "Standard_NC8as_T4_v3",
        "Standard_NC16as_T4_v3",
        "Standard_NC64as_T4_v3",
        "Standard_NC24ads_A100_v4",
        "Standard_NC48ads_A100_v4",
        "Standard_NC96ads_A100_v4",
        "Standard_NC40ads_H100_v5",
        "Standard_NC80adis_H100_v5",
        "Standard_NV36ads_A10_v5",
        # standardNDSH100v5Family and standardNDSH200v5Family, both with "ubuntu" (supported-gpus.yaml at
        # Azure/karpenter-provider-azure 021c778)
        "Standard_ND96isr_H100_v5",
        "Standard_ND96isr_H200_v5",
    }
)


def eligible_skus(instance_types: list[str]) -> list[str]:
    """Every catalog size NAP supports with a GPU model and GPU count of the pool's sizes, sorted by
    (vCPUs, memory, name): the pool's own sizes and the sizes the cluster-autoscaler could not mix
    into one agent pool."""
    rows = [r for r in (gpu_instance_type("azure", t) for t in instance_types) if r is not None]
    shapes = {(r.gpu, r.gpus) for r in rows}
    found = [r for r in gpu_instance_types("azure") if (r.gpu, r.gpus) in shapes and r.name in NAP_GPU_SKUS]
    return [r.name for r in sorted(found, key=lambda r: (r.vcpus, r.memory_gib, r.name))]
