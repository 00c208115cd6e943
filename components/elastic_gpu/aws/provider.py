"""AWS as a `CloudProvider` (elastic_gpu/provider.py): EKS, its managed node groups, the cluster-autoscaler we
run (or Karpenter), read and checked through this folder's modules, each imported when first asked for (by
full name: elastic_gpu/provider.py says why)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from elastic_gpu.clouds import importing
from elastic_gpu.provider import (
    AutoscalerBuilder,
    CloudFacts,
    CloudProvider,
    ConfigRules,
    Mocks,
    NodeGroupReader,
    PackRules,
    PoolBuilder,
    ReplacementRows,
    StackBuilder,
    VersionRows,
)

if TYPE_CHECKING:
    from elastic_gpu.config import StackConfig
    from elastic_gpu.gpu_catalog import GpuSpec
    from elastic_gpu.preflight import Finding
    from elastic_gpu.prices import LivePrices
    from elastic_gpu.tools.offline.runner import Preview
    from elastic_gpu.tools.simulation.pod import PodShape
    from elastic_gpu.tools.simulation.run import PoolOutcome
    from elastic_gpu.tools.simulation.timings import AutoscalerSettings


class AwsProvider:
    """EKS. Also an `OwnProvisioner` (Karpenter), an `AccountPreflight`, a `GpuResolver` (EC2) and a
    `LivePriceSource` (the price list and spot price history, through the provider's invokes)."""

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

    def config_rules(self) -> ConfigRules:
        with importing(self.name):
            import elastic_gpu.aws.config_rules as rules
        return ConfigRules.of(rules)

    def ignored_settings(self) -> Mapping[tuple[str, str | None], str]:
        return {}  # the stack creates the VPC (cluster.networkCidr) and runs the autoscaler it configures

    def stack_builder(self) -> StackBuilder:
        with importing(self.name):
            import elastic_gpu.aws.stack as stack
        return StackBuilder(cluster_problems=lambda _: [], pool_args=stack.pool_args, build_stack=stack.build_stack)

    def pool_builder(self) -> PoolBuilder:
        with importing(self.name):
            import elastic_gpu.aws.pools as pools
        return PoolBuilder.of(pools)

    def autoscaler_builder(self) -> AutoscalerBuilder:
        with importing(self.name):
            import elastic_gpu.aws.autoscaler as autoscaler
        return AutoscalerBuilder(build_autoscaler=autoscaler.build_autoscaler)

    def reader(self) -> NodeGroupReader:
        with importing(self.name):
            import elastic_gpu.aws.node_templates as node_templates
            import elastic_gpu.aws.reader as reader
        return NodeGroupReader(read_node_groups=reader.read_node_groups, node_templates=node_templates.node_templates)

    def autoscaler_settings(self, preview: Preview) -> AutoscalerSettings | None:
        with importing(self.name):
            import elastic_gpu.aws.timing as timing
        return timing.autoscaler_settings(preview)

    def mocks(self) -> Mocks:
        with importing(self.name):
            import elastic_gpu.aws.mocks as mocks
        return Mocks(
            resources=mocks.RESOURCE_MOCKS,
            invokes=mocks.INVOKE_MOCKS,
            provider_defaults=mocks.PROVIDER_DEFAULTS,
            remote_components=mocks.REMOTE_COMPONENTS,
            new_account=mocks.NEW_ACCOUNT,
            account_invokes=mocks.ACCOUNT_INVOKES,
        )

    def pack(self) -> PackRules:
        with importing(self.name):
            import elastic_gpu.aws.pack as pack
        return PackRules.of(pack)

    def versions(self) -> VersionRows:
        with importing(self.name):
            import elastic_gpu.aws.versions as versions
        return VersionRows.of(versions)

    def replacement(self) -> ReplacementRows:
        with importing(self.name):
            import elastic_gpu.aws.replacement as replacement
        return ReplacementRows.of(replacement)

    # OwnProvisioner, AccountPreflight, GpuResolver, LivePriceSource

    def simulate_pod(
        self, preview: Preview, pod: PodShape, region: str | None, pool: str | None, promise: float | None
    ) -> PoolOutcome | None:
        with importing(self.name):
            import elastic_gpu.aws.provisioning as provisioning
        return provisioning.simulate_pod(preview, pod, region, pool, promise)

    def preflight(self, cfg: StackConfig) -> list[Finding]:
        with importing(self.name):
            import elastic_gpu.aws.preflight as preflight
        return preflight.findings(cfg)

    def resolve_gpu(self, instance_type: str, region: str | None, zones: Sequence[str]) -> GpuSpec | str:
        with importing(self.name):
            import elastic_gpu.aws.gpu_types as gpu_types
        return gpu_types.resolve_gpu(instance_type, region)

    def price_source(self) -> LivePrices:
        import elastic_gpu.aws.prices as prices  # no SDK at import: the invokes import pulumi_aws when called

        return prices.AwsPriceList()


PROVIDER: CloudProvider = AwsProvider()
