"""AWS as a `CloudProvider` (elastic_gpu/provider.py): EKS, its managed node groups, the cluster-autoscaler we
run (or Karpenter), read and checked through this folder's modules, each imported when first asked for (by
full name: elastic_gpu/provider.py says why)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from elastic_gpu.provider import (
    AutoscalerBuilder,
    Cloud,
    CloudFacts,
    CloudProvider,
    ConfigRules,
    PoolBuilder,
    StackBuilder,
    VersionRows,
)

if TYPE_CHECKING:
    from elastic_gpu.config import StackConfig
    from elastic_gpu.gpu_catalog import GpuSpec
    from elastic_gpu.preflight import Finding


class AwsProvider(Cloud):
    """EKS. Also an `AccountPreflight` and a `GpuResolver` (EC2). Its tools (Karpenter's simulation, its live
    prices, ...) are elastic_gpu/tools/aws/cloud.py's `AwsTools`."""

    name = "aws"
    facts = CloudFacts(
        service="EKS",
        handle_attributes=(
            "region",
            "node_role_arn",
            "subnet_ids",
            "oidc_provider_arn",
            "oidc_issuer_url",
            "node_dependencies",
        ),
        existing_hint="EksCluster.existing(...), EksCluster.from_cluster(...) or EksCluster.from_pulumi_eks(...)",
        instance_type_pattern=r"[a-z][a-z0-9-]*\.[a-z0-9]+",
        example_instance_type="m6i.xlarge",
        spot_fix="set capacityType: SPOT",
        # An EKS managed node group holds several instance types (see validation.gpu_instance_type_problems).
        one_group_many_types=True,
        prices_accelerators=False,
        pins_autoscaler_image=True,
        # The private-only endpoint answers in the VPC the stack creates (aws/cluster.py PRIVATE_ENDPOINT_WARNING).
        private_api_needs_runner=True,
        karpenter_node_class_group="karpenter.k8s.aws",
        node_label_howto=(
            "on an EKS managed node group, `labels` (aws.eks.NodeGroup, pulumi-eks ManagedNodeGroup; or `aws eks "
            "update-nodegroup-config --cluster-name C --nodegroup-name G --labels addOrUpdateLabels={{{labels}}}`); on "
            "a self-managed group (pulumi-eks NodeGroupV2 and its Cluster's default node group), `labels` (the "
            "kubelet's --node-labels, on nodes started after the change)"
        ),
        region_config=("aws", "region"),
        region_of_zone=r"(.+\d)[a-z]",
    )
    owner = "an AWS"
    # no ignored settings (Cloud's): the stack creates the VPC (cluster.networkCidr) and runs the autoscaler it
    # configures

    def config_rules(self) -> ConfigRules:
        with self.loading():
            import elastic_gpu.aws.config_rules as rules
        return rules.RULES

    def stack_builder(self) -> StackBuilder:
        with self.loading():
            import elastic_gpu.aws.stack as stack
        return StackBuilder(cluster_problems=lambda _: [], pool_args=stack.pool_args, build_stack=stack.build_stack)

    def pool_builder(self) -> PoolBuilder:
        with self.loading():
            import elastic_gpu.aws.pools as pools
        return pools.BUILDER

    def autoscaler_builder(self) -> AutoscalerBuilder:
        with self.loading():
            import elastic_gpu.aws.autoscaler as autoscaler
        return AutoscalerBuilder(build_autoscaler=autoscaler.build_autoscaler)

    def versions(self) -> VersionRows:
        with self.loading():
            import elastic_gpu.aws.versions as versions
        return versions.ROWS

    # deploy-side capabilities (elastic_gpu/provider.py)

    def preflight(self, cfg: StackConfig) -> list[Finding]:
        with self.loading():
            import elastic_gpu.aws.preflight as preflight
        return preflight.findings(cfg)

    def resolve_gpu(self, instance_type: str, region: str | None, zones: Sequence[str]) -> GpuSpec | str:
        with self.loading():
            import elastic_gpu.aws.gpu_types as gpu_types
        return gpu_types.resolve_gpu(instance_type, region)


PROVIDER: CloudProvider = AwsProvider()
