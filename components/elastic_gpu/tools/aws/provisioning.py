"""`simulate` for the provisioners of EKS other than the cluster-autoscaler (Karpenter): the outcome of a
pod under the NodePools of the preview, or None when the preview has none (the autoscaler's model runs)."""

from __future__ import annotations

from elastic_gpu.tools.aws.karpenter.simulate import MODEL
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation import karpenter
from elastic_gpu.tools.simulation.pod import PodShape
from elastic_gpu.tools.simulation.run import PoolOutcome


def simulate_pod(
    preview: Preview, pod: PodShape, region: str | None, pool: str | None, promise: float | None
) -> PoolOutcome | None:
    outcome: PoolOutcome | None = karpenter.simulate_pod(preview, pod, region, pool, promise, MODEL)
    return outcome
