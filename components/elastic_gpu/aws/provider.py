"""AWS as a `CloudProvider` (elastic_gpu/provider.py): EKS, its managed node groups, the cluster-autoscaler we
run (or Karpenter), read and checked through this folder's modules, each imported when first asked for (by
full name: elastic_gpu/provider.py says why)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from elastic_gpu.aws.facts import FACTS
from elastic_gpu.clouds import Cloud

if TYPE_CHECKING:
    from elastic_gpu.cloud_facts import VersionRows
    from elastic_gpu.cluster_autoscaler import AutoscalerBuilder
    from elastic_gpu.config import ConfigRules, StackBuilder, StackConfig
    from elastic_gpu.gpu_catalog import GpuSpec
    from elastic_gpu.pool_args import PoolBuilder
    from elastic_gpu.preflight import Finding
    from elastic_gpu.provider import CloudProvider


class AwsProvider(Cloud):
    """EKS. Also an `AccountPreflight` and a `GpuResolver` (EC2). Its tools (Karpenter's simulation, its live
    prices, ...) are elastic_gpu/tools/aws/cloud.py's `AwsTools`."""

    name = "aws"
    facts = FACTS
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
        from elastic_gpu.config import StackBuilder

        return StackBuilder(cluster_problems=lambda _: [], pool_args=stack.pool_args, build_stack=stack.build_stack)

    def pool_builder(self) -> PoolBuilder:
        with self.loading():
            import elastic_gpu.aws.pools as pools
        return pools.BUILDER

    def autoscaler_builder(self) -> AutoscalerBuilder:
        with self.loading():
            import elastic_gpu.aws.autoscaler as autoscaler
        from elastic_gpu.cluster_autoscaler import AutoscalerBuilder

        return AutoscalerBuilder(build_autoscaler=autoscaler.build_autoscaler)

    def versions(self) -> VersionRows:
        with self.loading():
            import elastic_gpu.aws.versions as versions
        return versions.ROWS

    # deploy-side capabilities (elastic_gpu/provider.py lists them)

    def preflight(self, cfg: StackConfig) -> list[Finding]:
        with self.loading():
            import elastic_gpu.aws.preflight as preflight
        return preflight.findings(cfg)

    def resolve_gpu(self, instance_type: str, region: str | None, zones: Sequence[str]) -> GpuSpec | str:
        with self.loading():
            import elastic_gpu.aws.gpu_types as gpu_types
        return gpu_types.resolve_gpu(instance_type, region)


PROVIDER: CloudProvider = AwsProvider()
