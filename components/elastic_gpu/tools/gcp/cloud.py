"""GCP as the offline tools ask for it (`ToolCloud`, elastic_gpu/tools/tool_cloud.py): GKE's deploy provider, and its
reader of node pools, their templates, GKE's autoscaler's timing, its mocks, its part of the policy pack, its
replacement rows, Kueue's admission, ComputeClass priorities, the release channel's running version and the Cloud
Billing Catalog, each module imported when first asked for (by full name: elastic_gpu/provider.py says why)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from elastic_gpu.clouds import ReplacementRows
from elastic_gpu.gcp.provider import GcpProvider

if TYPE_CHECKING:
    from elastic_gpu.prices import LivePrices
    from elastic_gpu.tools.offline.cloud_mocks import Mocks
    from elastic_gpu.tools.offline.runner import Preview
    from elastic_gpu.tools.policy.pack_parts import PackRules
    from elastic_gpu.tools.simulation.pod import PodShape
    from elastic_gpu.tools.simulation.templates import NodeGroupReader
    from elastic_gpu.tools.simulation.timings import AutoscalerTiming, Evidence
    from elastic_gpu.tools.tool_cloud import ToolCloud
    from elastic_gpu.versions import SupportStatus


class GcpTools(GcpProvider):
    """GKE in the tools. Also a `QueueAdmission` (Kueue), a `GroupOrder` (ComputeClass priorities), a
    `RunningVersion` (its release channel) and a `LivePriceSource` (the Cloud Billing Catalog, with an API key)."""

    def reader(self) -> NodeGroupReader:
        from elastic_gpu.tools.simulation.templates import NodeGroupReader

        with self.loading():
            import elastic_gpu.tools.gcp.autoscaler_templates as autoscaler_templates
            import elastic_gpu.tools.gcp.reader as reader
        return NodeGroupReader(
            read_node_groups=reader.read_node_groups, node_templates=autoscaler_templates.node_templates
        )

    def autoscaler_timing(self, preview: Preview) -> AutoscalerTiming | None:
        with self.loading():
            import elastic_gpu.tools.gcp.autoscaler_timing as autoscaler_timing
        return autoscaler_timing.autoscaler_settings(preview)

    def mocks(self) -> Mocks:
        with self.loading():
            import elastic_gpu.tools.gcp.mocks as mocks
        return mocks.MOCKS

    def pack(self) -> PackRules:
        with self.loading():
            import elastic_gpu.tools.gcp.pack as pack
        return pack.RULES

    def replacement(self) -> ReplacementRows:
        with self.loading():
            import elastic_gpu.gcp.replacement as replacement
        return replacement.ROWS

    # QueueAdmission, GroupOrder, RunningVersion, LivePriceSource: each declared where it is asked for
    # (tools/cost.py, tools/simulation/run.py, tools/policy/version_rules.py)

    def queued_evidence(self) -> Evidence:
        with self.loading():
            import elastic_gpu.tools.gcp.autoscaler_timing as autoscaler_timing
        return autoscaler_timing.QUEUED_EVIDENCE

    def admission_problem(self, preview: Preview, pod: PodShape) -> str | None:
        with self.loading():
            import elastic_gpu.tools.gcp.kueue_simulation as kueue_simulation
        return kueue_simulation.admission_problem(preview, pod)

    def admission_path(self, preview: Preview, pod: PodShape) -> str:
        with self.loading():
            import elastic_gpu.tools.gcp.kueue_simulation as kueue_simulation
        return kueue_simulation.admission_path(preview, pod)

    def group_order(self, preview: Preview, pod: PodShape) -> list[str]:
        with self.loading():
            import elastic_gpu.tools.gcp.autoscaler_templates as autoscaler_templates
        return autoscaler_templates.group_order(preview, pod)

    def running_support(self, status: SupportStatus, props: Mapping[str, Any]) -> SupportStatus:
        with self.loading():
            import elastic_gpu.gcp.versions as versions
        return versions.running_support(status, props)

    def price_source(self) -> LivePrices:
        import elastic_gpu.gcp.prices as prices  # urllib only: no SDK

        return prices.GcpBillingCatalog()


TOOLS: ToolCloud = GcpTools()
