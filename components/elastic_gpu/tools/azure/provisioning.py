"""`simulate` for AKS node auto-provisioning (provisioner karpenter): the outcome of a pod under the
preview's NodePools with an AKSNodeClass, or None when the preview has none (the autoscaler's model runs)."""

from __future__ import annotations

from elastic_gpu.tools.azure.node_provisioning.simulation import MODEL
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation import karpenter
from elastic_gpu.tools.simulation.pod import PodShape
from elastic_gpu.tools.simulation.run import PoolOutcome


def simulate_pod(
    preview: Preview, pod: PodShape, region: str | None, pool: str | None, promise: float | None
) -> PoolOutcome | None:
    outcome: PoolOutcome | None = karpenter.simulate_pod(preview, pod, region, pool, promise, MODEL)
    return outcome
