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
#: The CRDs as their own chart, at the controller's version: Helm installs a chart's `crds/` only on the
#: first install and never upgrades them, so upstream recommends this chart to keep the CRDs in step with
#: the controller (website/content/en/v1.14/upgrading/upgrade-guide.md:66-79 at 1d92708, "CRD Upgrades").
CRD_CHART = "oci://public.ecr.aws/karpenter/karpenter-crd"
CRD_RELEASE_NAME = "karpenter-crd"

#: The tag Karpenter's selectors find the cluster's private subnets and node security group by
#: (getting-started: `karpenter.sh/discovery: ${CLUSTER_NAME}`).
DISCOVERY_TAG_KEY = "karpenter.sh/discovery"

#: The node class a pool declares (pkg/apis/crds at v1.14.1: v1 only); the NodePool API is the core's
#: (elastic_gpu.karpenter_core.NODE_POOL_API).
NODE_CLASS_API = "karpenter.k8s.aws/v1"
NODE_CLASS_GROUP = "karpenter.k8s.aws"
