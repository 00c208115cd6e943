"""Azure as a `CloudProvider` (elastic_gpu/provider.py): AKS, its agent pools, the cluster-autoscaler AKS runs
itself (or node auto-provisioning), read and checked through this folder's modules, each imported when first
asked for (by full name: elastic_gpu/provider.py says why)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
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
    from elastic_gpu.preflight import Finding
    from elastic_gpu.prices import LivePrices
    from elastic_gpu.tools.offline.runner import Preview
    from elastic_gpu.tools.simulation.pod import PodShape
    from elastic_gpu.tools.simulation.run import PoolOutcome
    from elastic_gpu.tools.simulation.timings import AutoscalerSettings
    from elastic_gpu.versions import SupportStatus


class AzureProvider:
    """AKS. Also an `OwnProvisioner` (node auto-provisioning), an `AccountPreflight`, `ClusterItems` (the
    System pool), a `LivePriceSource` (the Retail Prices API), an `UpgradePath` (a skip from an unsupported
    minor) and a `RunningVersion` (Long Term Support)."""

    name = "azure"
    facts = CloudFacts(
        service="AKS",
        handle_attributes=("resource_group_name", "location", "autoscaler_profile"),
        existing_hint="AksCluster.existing(...) or AksCluster.from_managed_cluster(...)",
        instance_type_pattern=r"Standard_[A-Za-z0-9_]+",
        example_instance_type="Standard_D4s_v5",
        spot_fix="set scaleSetPriority: Spot",
        one_group_many_types=False,
        prices_accelerators=False,
        # AKS runs its own cluster-autoscaler (configured through the cluster's autoscaler profile).
        pins_autoscaler_image=False,
        private_api_needs_runner=True,
        # node auto-provisioning's AKSNodeClass (provisioner karpenter, elastic_gpu/azure/node_provisioning)
        karpenter_node_class_group="karpenter.azure.com",
        # An agent pool without availabilityZones is regional: the only kind in a region without zones.
        zoneless=True,
        node_label_howto=(
            "on the AKS node pool, `node_labels` (azure-native AgentPool; or `az aks nodepool update --resource-group "
            "RG --cluster-name C --name POOL --labels {labels_spaced}`)"
        ),
        region_config=("azure-native", "location"),
    )
    owner = "an Azure"

    def config_rules(self) -> ConfigRules:
        with importing(self.name):
            import elastic_gpu.azure.config_rules as rules
        # AKS takes fewer duration forms than Go: its own format, on top of the rules every cloud's module names.
        return replace(ConfigRules.of(rules), duration_format=rules.DURATION_FORMAT)

    def ignored_settings(self) -> Mapping[tuple[str, str | None], str]:
        return {
            ("cluster", "network_cidr"): (
                "only the AWS and GCP stacks create a network (a VPC); AKS uses Azure CNI overlay; remove it"
            )
        }

    def stack_builder(self) -> StackBuilder:
        with importing(self.name):
            import elastic_gpu.azure.stack as stack
        return StackBuilder(
            cluster_problems=stack.cluster_problems, pool_args=stack.pool_args, build_stack=stack.build_stack
        )

    def pool_builder(self) -> PoolBuilder:
        with importing(self.name):
            import elastic_gpu.azure.pools as pools
        return PoolBuilder.of(pools)

    def autoscaler_builder(self) -> AutoscalerBuilder:
        with importing(self.name):
            import elastic_gpu.azure.autoscaler as autoscaler
        return AutoscalerBuilder(build_autoscaler=autoscaler.build_autoscaler, runs_pod=autoscaler.RUNS_POD)

    def reader(self) -> NodeGroupReader:
        with importing(self.name):
            import elastic_gpu.azure.node_templates as node_templates
            import elastic_gpu.azure.reader as reader
        return NodeGroupReader(read_node_groups=reader.read_node_groups, node_templates=node_templates.node_templates)

    def autoscaler_settings(self, preview: Preview) -> AutoscalerSettings | None:
        with importing(self.name):
            import elastic_gpu.azure.timing as timing
        return timing.autoscaler_settings(preview)

    def mocks(self) -> Mocks:
        with importing(self.name):
            import elastic_gpu.azure.mocks as mocks
        return Mocks(
            resources=mocks.RESOURCE_MOCKS,
            invokes=mocks.INVOKE_MOCKS,
            new_account=mocks.NEW_ACCOUNT,
            account_invokes=mocks.ACCOUNT_INVOKES,
            account_readers=mocks.ACCOUNT_READERS,
        )

    def pack(self) -> PackRules:
        with importing(self.name):
            import elastic_gpu.azure.pack as pack
        return PackRules.of(pack)

    def versions(self) -> VersionRows:
        with importing(self.name):
            import elastic_gpu.azure.versions as versions
        return VersionRows.of(versions)

    def replacement(self) -> ReplacementRows:
        with importing(self.name):
            import elastic_gpu.azure.replacement as replacement
        return ReplacementRows.of(replacement)

    # OwnProvisioner, AccountPreflight, ClusterItems, UpgradePath

    def simulate_pod(
        self, preview: Preview, pod: PodShape, region: str | None, pool: str | None, promise: float | None
    ) -> PoolOutcome | None:
        with importing(self.name):
            import elastic_gpu.azure.provisioning as provisioning
        return provisioning.simulate_pod(preview, pod, region, pool, promise)

    def preflight(self, cfg: StackConfig) -> list[Finding]:
        with importing(self.name):
            import elastic_gpu.azure.preflight as preflight
        return preflight.findings(cfg)

    def cluster_items(self, cfg: StackConfig) -> list[str]:
        with importing(self.name):
            import elastic_gpu.azure.config_rules as config_rules
        return config_rules.cluster_items(cfg)

    def price_source(self) -> LivePrices:
        import elastic_gpu.azure.prices as prices  # urllib only: no SDK

        return prices.AzureRetailPrices()

    def upgrade_reach(self, minor: str, props: Mapping[str, Any], on: date) -> UpgradeReach:
        with importing(self.name):
            import elastic_gpu.azure.upgrade_path as upgrade_path
        return upgrade_path.upgrade_reach(minor, props, on)

    def running_support(self, status: SupportStatus, props: Mapping[str, Any]) -> SupportStatus:
        with importing(self.name):
            import elastic_gpu.azure.versions as versions
        return versions.running_support(status, props)


PROVIDER: CloudProvider = AzureProvider()
