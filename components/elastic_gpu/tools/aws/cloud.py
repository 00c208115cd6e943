"""AWS as the offline tools ask for it (`ToolCloud`, elastic_gpu/tools/tool_cloud.py): EKS's deploy provider, and its
reader of node groups, their templates, the cluster-autoscaler's timing, its mocks, its part of the policy pack,
its replacement rows, Karpenter's simulation and the live price list, each module imported when first asked for
(by full name: elastic_gpu/provider.py says why)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from elastic_gpu.aws.provider import AwsProvider
from elastic_gpu.clouds import ReplacementRows

if TYPE_CHECKING:
    from elastic_gpu.prices import LivePrices
    from elastic_gpu.tools.offline.cloud_mocks import Mocks
    from elastic_gpu.tools.offline.runner import Preview
    from elastic_gpu.tools.policy.pack_parts import PackRules
    from elastic_gpu.tools.simulation.pod import PodShape
    from elastic_gpu.tools.simulation.run import PoolOutcome
    from elastic_gpu.tools.simulation.templates import NodeGroupReader
    from elastic_gpu.tools.simulation.timings import AutoscalerTiming
    from elastic_gpu.tools.tool_cloud import ToolCloud


class AwsTools(AwsProvider):
    """EKS in the tools. Also an `OwnProvisioner` (Karpenter) and a `LivePriceSource` (the price list and spot
    price history, through the provider's invokes)."""

    def reader(self) -> NodeGroupReader:
        from elastic_gpu.tools.simulation.templates import NodeGroupReader

        with self.loading():
            import elastic_gpu.tools.aws.autoscaler_templates as autoscaler_templates
            import elastic_gpu.tools.aws.reader as reader
        return NodeGroupReader(
            read_node_groups=reader.read_node_groups, node_templates=autoscaler_templates.node_templates
        )

    def autoscaler_timing(self, preview: Preview) -> AutoscalerTiming | None:
        with self.loading():
            import elastic_gpu.tools.aws.autoscaler_timing as autoscaler_timing
        return autoscaler_timing.autoscaler_settings(preview)

    def mocks(self) -> Mocks:
        with self.loading():
            import elastic_gpu.tools.aws.mocks as mocks
        return mocks.MOCKS

    def pack(self) -> PackRules:
        with self.loading():
            import elastic_gpu.tools.aws.pack as pack
        return pack.RULES

    def replacement(self) -> ReplacementRows:
        with self.loading():
            import elastic_gpu.aws.replacement as replacement
        return replacement.ROWS

    # OwnProvisioner, LivePriceSource: each declared where it is asked for
    # (tools/cost.py, tools/simulation/run.py, tools/policy/version_rules.py)

    def simulate_pod(
        self, preview: Preview, pod: PodShape, region: str | None, pool: str | None, promise: float | None
    ) -> PoolOutcome | None:
        with self.loading():
            import elastic_gpu.tools.aws.provisioning as provisioning
        return provisioning.simulate_pod(preview, pod, region, pool, promise)

    def price_source(self) -> LivePrices:
        import elastic_gpu.aws.prices as prices  # no SDK at import: the invokes import pulumi_aws when called

        return prices.AwsPriceList()


TOOLS: ToolCloud = AwsTools()
