"""GCP as a `CloudProvider` (elastic_gpu/provider.py): GKE, its node pools, GKE's own cluster autoscaler (or
node auto-provisioning with ComputeClasses), Kueue, read and checked through this folder's modules, each
imported when first asked for (by full name: elastic_gpu/provider.py says why)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

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
    UpgradeReach,
    VersionRows,
)

if TYPE_CHECKING:
    from datetime import date

    from elastic_gpu.config import StackConfig
    from elastic_gpu.gpu_catalog import GpuSpec
    from elastic_gpu.preflight import Finding
    from elastic_gpu.prices import LivePrices
    from elastic_gpu.tools.offline.runner import Preview
    from elastic_gpu.tools.simulation.pod import PodShape
    from elastic_gpu.tools.simulation.timings import AutoscalerSettings, Evidence
    from elastic_gpu.versions import SupportStatus


class GcpProvider:
    """GKE. Also an `AccountPreflight`, a `QueueAdmission` (Kueue), a `GroupOrder` (ComputeClass priorities),
    a `RunningVersion` (its release channel), an `UpgradePath` (its own upgrades at end of support), a
    `GpuResolver` (Compute Engine machine types) and a `LivePriceSource` (the Cloud Billing Catalog, with an API
    key)."""

    name = "gcp"
    facts = CloudFacts(
        service="GKE",
        handle_attributes=("project", "location"),
        existing_hint="GkeCluster.existing(...) or GkeCluster.from_cluster(...)",
        instance_type_pattern=r"[a-z][a-z0-9]*-[a-z0-9-]+",
        example_instance_type="e2-standard-4",
        spot_fix="set nodeConfig.spot: true (preemptible is the legacy 24-hour kind)",
        one_group_many_types=False,
        prices_accelerators=True,
        # GKE's managed autoscaler scales the node pools and no autoscaler of ours runs (gcp/autoscaler.py): the
        # minors it accepts are GKE's own calendar's (gcp/versions.py), not the autoscaler's image tags.
        pins_autoscaler_image=False,
        node_label_howto=(
            "on the GKE node pool, `node_config.labels` (gcp.container.NodePool; or `gcloud container node-pools "
            "update POOL --cluster C --node-labels={labels}`, which replaces the pool's labels)"
        ),
        region_config=("gcp", "region"),
        region_of_zone=r"(.+)-[a-z]",
    )
    owner = "a GCP"

    def config_rules(self) -> ConfigRules:
        with importing(self.name):
            import elastic_gpu.gcp.config_rules as rules
        return ConfigRules.of(rules)

    def ignored_settings(self) -> Mapping[tuple[str, str | None], str]:
        # The stack creates the cluster's VPC network unless `cluster.network` brings one (cluster.networkCidr).
        return {
            ("autoscaler", None): (
                "GKE runs its own cluster autoscaler (profile set by GkeCluster, limits per node pool); remove the "
                "section"
            )
        }

    def stack_builder(self) -> StackBuilder:
        with importing(self.name):
            import elastic_gpu.gcp.stack as stack
        return StackBuilder(
            cluster_problems=stack.cluster_problems, pool_args=stack.pool_args, build_stack=stack.build_stack
        )

    def pool_builder(self) -> PoolBuilder:
        with importing(self.name):
            import elastic_gpu.gcp.pools as pools
        return PoolBuilder.of(pools)

    def autoscaler_builder(self) -> AutoscalerBuilder:
        with importing(self.name):
            import elastic_gpu.gcp.autoscaler as autoscaler
        return AutoscalerBuilder(
            build_autoscaler=autoscaler.build_autoscaler,
            runs_pod=autoscaler.RUNS_POD,
            supports_priority_expander=autoscaler.SUPPORTS_PRIORITY_EXPANDER,
        )

    def reader(self) -> NodeGroupReader:
        with importing(self.name):
            import elastic_gpu.gcp.node_templates as node_templates
            import elastic_gpu.gcp.reader as reader
        return NodeGroupReader(read_node_groups=reader.read_node_groups, node_templates=node_templates.node_templates)

    def autoscaler_settings(self, preview: Preview) -> AutoscalerSettings | None:
        with importing(self.name):
            import elastic_gpu.gcp.timing as timing
        return timing.autoscaler_settings(preview)

    def mocks(self) -> Mocks:
        with importing(self.name):
            import elastic_gpu.gcp.mocks as mocks
        return Mocks(
            resources=mocks.RESOURCE_MOCKS,
            invokes=mocks.INVOKE_MOCKS,
            new_account=mocks.NEW_ACCOUNT,
            account_invokes=mocks.ACCOUNT_INVOKES,
        )

    def pack(self) -> PackRules:
        with importing(self.name):
            import elastic_gpu.gcp.pack as pack
        return PackRules.of(pack)

    def versions(self) -> VersionRows:
        with importing(self.name):
            import elastic_gpu.gcp.versions as versions
        return VersionRows.of(versions)

    def replacement(self) -> ReplacementRows:
        with importing(self.name):
            import elastic_gpu.gcp.replacement as replacement
        return ReplacementRows.of(replacement)

    # AccountPreflight, QueueAdmission, GroupOrder, RunningVersion, UpgradePath, GpuResolver

    def resolve_gpu(self, instance_type: str, region: str | None, zones: Sequence[str]) -> GpuSpec | str:
        with importing(self.name):
            import elastic_gpu.gcp.gpu_types as gpu_types
        return gpu_types.resolve_gpu(instance_type, zones)

    def preflight(self, cfg: StackConfig) -> list[Finding]:
        with importing(self.name):
            import elastic_gpu.gcp.preflight as preflight
        return preflight.findings(cfg)

    def queued_evidence(self) -> Evidence:
        with importing(self.name):
            import elastic_gpu.gcp.timing as timing
        return timing.QUEUED_EVIDENCE

    def admission_problem(self, preview: Preview, pod: PodShape) -> str | None:
        with importing(self.name):
            import elastic_gpu.gcp.kueue_simulation as kueue_simulation
        return kueue_simulation.admission_problem(preview, pod)

    def admission_path(self, preview: Preview, pod: PodShape) -> str:
        with importing(self.name):
            import elastic_gpu.gcp.kueue_simulation as kueue_simulation
        return kueue_simulation.admission_path(preview, pod)

    def group_order(self, preview: Preview, pod: PodShape) -> list[str]:
        with importing(self.name):
            import elastic_gpu.gcp.node_templates as node_templates
        return node_templates.group_order(preview, pod)

    def running_support(self, status: SupportStatus, props: Mapping[str, Any]) -> SupportStatus:
        with importing(self.name):
            import elastic_gpu.gcp.versions as versions
        return versions.running_support(status, props)

    def price_source(self) -> LivePrices:
        import elastic_gpu.gcp.prices as prices  # urllib only: no SDK

        return prices.GcpBillingCatalog()

    def upgrade_reach(self, minor: str, props: Mapping[str, Any], on: date) -> UpgradeReach:
        with importing(self.name):
            import elastic_gpu.gcp.upgrade_path as upgrade_path
        return upgrade_path.upgrade_reach(minor, props, on)


PROVIDER: CloudProvider = GcpProvider()
