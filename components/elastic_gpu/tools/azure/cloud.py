"""Azure as the offline tools ask for it (`ToolCloud`, elastic_gpu/tools/tool_cloud.py): AKS's deploy provider, and its
reader of agent pools, their templates, the managed autoscaler's timing, its mocks, its part of the policy pack,
its replacement rows, node auto-provisioning's simulation, the Retail Prices API and Long Term Support's running
version, each module imported when first asked for (by full name: elastic_gpu/provider.py says why)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from elastic_gpu.azure.provider import AzureProvider
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
    from elastic_gpu.versions import SupportStatus


class AzureTools(AzureProvider):
    """AKS in the tools. Also an `OwnProvisioner` (node auto-provisioning), a `LivePriceSource` (the Retail
    Prices API) and a `RunningVersion` (Long Term Support)."""

    def reader(self) -> NodeGroupReader:
        from elastic_gpu.tools.simulation.templates import NodeGroupReader

        with self.loading():
            import elastic_gpu.tools.azure.autoscaler_templates as autoscaler_templates
            import elastic_gpu.tools.azure.reader as reader
        return NodeGroupReader(
            read_node_groups=reader.read_node_groups, node_templates=autoscaler_templates.node_templates
        )

    def autoscaler_timing(self, preview: Preview) -> AutoscalerTiming | None:
        with self.loading():
            import elastic_gpu.tools.azure.autoscaler_timing as autoscaler_timing
        return autoscaler_timing.autoscaler_settings(preview)

    def mocks(self) -> Mocks:
        with self.loading():
            import elastic_gpu.tools.azure.mocks as mocks
        return mocks.MOCKS

    def pack(self) -> PackRules:
        with self.loading():
            import elastic_gpu.tools.azure.pack as pack
        return pack.RULES

    def replacement(self) -> ReplacementRows:
        with self.loading():
            import elastic_gpu.azure.replacement as replacement
        return replacement.ROWS

    # OwnProvisioner, LivePriceSource, RunningVersion: each declared where it is asked for
    # (tools/cost.py, tools/simulation/run.py, tools/policy/version_rules.py)

    def simulate_pod(
        self, preview: Preview, pod: PodShape, region: str | None, pool: str | None, promise: float | None
    ) -> PoolOutcome | None:
        with self.loading():
            import elastic_gpu.tools.azure.provisioning as provisioning
        return provisioning.simulate_pod(preview, pod, region, pool, promise)

    def price_source(self) -> LivePrices:
        import elastic_gpu.azure.prices as prices  # urllib only: no SDK

        return prices.AzureRetailPrices()

    def running_support(self, status: SupportStatus, props: Mapping[str, Any]) -> SupportStatus:
        with self.loading():
            import elastic_gpu.azure.versions as versions
        return versions.running_support(status, props)


TOOLS: ToolCloud = AzureTools()
