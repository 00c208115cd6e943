"""Karpenter on EKS as the GPU pools' provisioner (instead of the cluster-autoscaler's node groups).

- `release`: the pinned upstream version, chart, namespace and the settings a real install needs.
- `iam`: the controller's policy (upstream getting-started CloudFormation, scoped to this cluster), the
  node role and its EC2_LINUX access entry.
- `interruption`: the SQS queue Karpenter drains interruption events from and the EventBridge rules.
- `nodes`: one EC2NodeClass and the NodePools (spot, then on-demand fallback) per SpotGpuPool.
- `controller`: the `Karpenter` component that declares all of the above but the per-pool objects.
- `model`: what Karpenter does with a pending GPU pod, on a clock, from its source (for `simulate`).
"""
