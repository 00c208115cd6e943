"""`simulate` for Karpenter on EKS: the AWS side of the cloud-neutral NodePool simulation
(elastic_gpu.tools.simulation.karpenter): EC2NodeClass root volumes, `node.kubernetes.io/instance-type`, and
`model`'s timings (elastic_gpu/tools/simulation/run.py asks the stack's cloud for this through
`elastic_gpu.aws.provisioning`)."""

from __future__ import annotations

from elastic_gpu.aws.karpenter import model
from elastic_gpu.aws.karpenter.release import NODE_CLASS_API
from elastic_gpu.karpenter_core import INSTANCE_TYPE_KEY
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.karpenter import KarpenterModel, after_failures
from elastic_gpu.tools.simulation.pod import quantity
from elastic_gpu.tools.simulation.timings import Evidence

NODE_CLASS_TYPE = f"kubernetes:{NODE_CLASS_API}:EC2NodeClass"


def root_volume(preview: Preview, node_class: str) -> float | None:
    """Bytes of the root volume the EC2NodeClass gives its nodes: their ephemeral storage."""
    for r in preview.of_type(NODE_CLASS_TYPE):
        if (r.inputs.get("metadata") or {}).get("name") == node_class:
            for device in (r.inputs.get("spec") or {}).get("blockDeviceMappings") or []:
                if device.get("rootVolume") and (size := (device.get("ebs") or {}).get("volumeSize")):
                    return quantity(str(size))
    return None


MODEL = KarpenterModel(
    cloud="aws",
    type_key=INSTANCE_TYPE_KEY,
    disk=root_volume,
    first_node=model.first_node,
    to_fallback=lambda _spot_types, _one_node_pool: after_failures(1),  # one CreateFleet covers every type
    source=model.SOURCE,
    # The Karpenter this library deploys, as is.
    evidence=Evidence("source", model.SOURCE),
)
