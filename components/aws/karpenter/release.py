"""The pinned Karpenter release and the facts of its install (aws/karpenter-provider-aws at tag v1.14.1)."""

from __future__ import annotations

#: The newest release (tags of aws/karpenter-provider-aws; its docs' KARPENTER_VERSION, 2026-08-21).
KARPENTER_VERSION = "1.14.1"
#: The Helm chart (website/content/en/docs/getting-started/getting-started-with-karpenter/_index.md:
#: `helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version ...`).
CHART = "oci://public.ecr.aws/karpenter/karpenter"
#: Upstream's getting-started namespace (KARPENTER_NAMESPACE=kube-system) and the chart's service account.
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"
RELEASE_NAME = "karpenter"

#: The tag Karpenter's selectors find the cluster's private subnets and node security group by
#: (getting-started: `karpenter.sh/discovery: ${CLUSTER_NAME}`).
DISCOVERY_TAG_KEY = "karpenter.sh/discovery"

#: The node class a pool declares (pkg/apis/crds at v1.14.1: v1 only); the NodePool API is the core's
#: (elastic_gpu.karpenter_core.NODE_POOL_API).
NODE_CLASS_API = "karpenter.k8s.aws/v1"
NODE_CLASS_GROUP = "karpenter.k8s.aws"
