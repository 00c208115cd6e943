"""The workload contract of a GPU pool: what a pod needs to land there, and a Job built from it.

Each cloud's `pools.workload_contract(name, args)` computes it from the pool's arguments (the
same taints its builder puts on the nodes); `SpotGpuPool` exposes it as `.workload` and records
it as its `workloadContract` input, so the offline `simulate` and `workload` commands read it
from the captured resources. The GPU workload section of docs/simulate.md is rendered from it too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from elastic_gpu.scheduling import GPU_RESOURCE, Taint, tolerations_for

#: A small CUDA base image (NVIDIA NGC); `nvidia-smi` proves the GPU is there.
CUDA_IMAGE = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
#: Modest CPU, memory and scratch requests so the example fits the smallest GPU node of any pool.
EXAMPLE_REQUESTS = {"cpu": "1", "memory": "4Gi", "ephemeral-storage": "10Gi"}
#: The component input the contract is recorded under (read back by the simulator).
CONTRACT_INPUT = "workloadContract"


@dataclass(frozen=True)
class WorkloadContract:
    """What a pod must carry to be scheduled on a pool's nodes (and nowhere else)."""

    pool: str
    #: every taint any node of the pool carries, including those the cloud adds itself
    taints: tuple[Taint, ...]
    #: labels the pod selects: our pool label, plus e.g. GKE's ComputeClass
    node_selector: dict[str, str]
    #: labels on the Job itself, e.g. Kueue's queue name for queued provisioning
    job_labels: dict[str, str] = field(default_factory=dict)
    #: Kueue admits (unsuspends) a queued Job; it must be created suspended
    suspend: bool = False
    #: annotations on the Job's pods, e.g. Karpenter's do-not-disrupt (karpenter_core.DO_NOT_DISRUPT): under
    #: Karpenter or AKS node auto-provisioning a running job's node is not replaced for a new node image
    pod_annotations: dict[str, str] = field(default_factory=dict)

    @property
    def tolerations(self) -> list[dict[str, str]]:
        return tolerations_for(list(self.taints))

    def to_json(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "taints": [str(t) for t in self.taints],
            "nodeSelector": dict(self.node_selector),
            "jobLabels": dict(self.job_labels),
            "suspend": self.suspend,
            "podAnnotations": dict(self.pod_annotations),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorkloadContract:
        taints = []
        for text in data.get("taints") or []:
            kv, _, effect = text.partition(":")
            key, _, value = kv.partition("=")
            taints.append(Taint(key, value, effect))
        return cls(
            pool=data["pool"],
            taints=tuple(taints),
            node_selector=dict(data.get("nodeSelector") or {}),
            job_labels=dict(data.get("jobLabels") or {}),
            suspend=bool(data.get("suspend")),
            pod_annotations=dict(data.get("podAnnotations") or {}),
        )


def job_manifest(contract: WorkloadContract, *, gpus: int = 1, image: str = CUDA_IMAGE) -> dict[str, Any]:
    """A batch/v1 Job that runs `nvidia-smi` once on one node of the pool."""
    name = f"{contract.pool}-gpu-job"
    spec: dict[str, Any] = {
        "backoffLimit": 0,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "nodeSelector": dict(contract.node_selector),
                "tolerations": contract.tolerations,
                "containers": [
                    {
                        "name": "cuda",
                        "image": image,
                        "command": ["nvidia-smi"],
                        "resources": {
                            "requests": dict(EXAMPLE_REQUESTS),
                            "limits": {GPU_RESOURCE: str(gpus)},
                        },
                    }
                ],
            }
        },
    }
    if contract.pod_annotations:
        spec["template"] = {"metadata": {"annotations": dict(contract.pod_annotations)}, **spec["template"]}
    if contract.suspend:
        spec = {"suspend": True, **spec}
    metadata: dict[str, Any] = {"name": name}
    if contract.job_labels:
        metadata["labels"] = dict(contract.job_labels)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}


#: The GPU workload section of docs/simulate.md sits between these markers; tests/test_simulation.py checks it.
README_BEGIN = "<!-- workload examples: generated from the pools' workload contracts -->"
README_END = "<!-- end of workload examples -->"


def readme_examples(examples: list[tuple[str, WorkloadContract]]) -> str:
    """docs/simulate.md's per-cloud workload snippets: what the Job of each (stack, pool) must carry."""
    out = [README_BEGIN]
    for stack, contract in examples:
        job = job_manifest(contract)
        pod = job["spec"]["template"]["spec"]
        keep: dict[str, Any] = {}
        if "labels" in job["metadata"]:
            keep["metadata"] = {"labels": job["metadata"]["labels"]}
        spec: dict[str, Any] = {"suspend": True} if contract.suspend else {}
        spec["template"] = {"spec": {"nodeSelector": pod["nodeSelector"], "tolerations": pod["tolerations"]}}
        keep["spec"] = spec
        body = yaml.safe_dump(keep, sort_keys=False, default_flow_style=None, width=110).rstrip()
        out += [
            "",
            f"`{stack}`, pool `{contract.pool}` "
            f"(`python -m elastic_gpu workload --stack {stack} --pool {contract.pool}`):",
            "",
            "```yaml",
            body,
            "```",
        ]
    out += ["", README_END]
    return "\n".join(out)
