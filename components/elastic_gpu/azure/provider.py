"""Azure as a `CloudProvider` (elastic_gpu/provider.py): AKS, its agent pools, the cluster-autoscaler AKS runs
itself (or node auto-provisioning), read and checked through this folder's modules, each imported when first
asked for (by full name: elastic_gpu/provider.py says why)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from elastic_gpu.cloud_facts import CloudFacts
from elastic_gpu.clouds import Cloud

if TYPE_CHECKING:
    from datetime import date

    from elastic_gpu.cloud_facts import UpgradeReach, VersionRows
    from elastic_gpu.cluster_autoscaler import AutoscalerBuilder
    from elastic_gpu.config import ConfigRules, StackBuilder, StackConfig
    from elastic_gpu.pool_args import PoolBuilder
    from elastic_gpu.preflight import Finding
    from elastic_gpu.provider import CloudProvider


class AzureProvider(Cloud):
    """AKS. Also an `AccountPreflight`, `ClusterItems` (the System pool) and an `UpgradePath` (a skip from an
    unsupported minor). Its tools (node auto-provisioning's simulation, the Retail Prices API, Long Term Support's
    running version, ...) are elastic_gpu/tools/azure/cloud.py's `AzureTools`."""

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
        with self.loading():
            import elastic_gpu.azure.config_rules as rules
        return rules.RULES

    def ignored_settings(self) -> Mapping[tuple[str, str | None], str]:
        return {
            ("cluster", "network_cidr"): (
                "only the AWS and GCP stacks create a network (a VPC); AKS uses Azure CNI overlay; remove it"
            )
        }

    def stack_builder(self) -> StackBuilder:
        with self.loading():
            import elastic_gpu.azure.stack as stack
        from elastic_gpu.config import StackBuilder

        return StackBuilder(
            cluster_problems=stack.cluster_problems, pool_args=stack.pool_args, build_stack=stack.build_stack
        )

    def pool_builder(self) -> PoolBuilder:
        with self.loading():
            import elastic_gpu.azure.pools as pools
        return pools.BUILDER

    def autoscaler_builder(self) -> AutoscalerBuilder:
        with self.loading():
            import elastic_gpu.azure.autoscaler as autoscaler
        from elastic_gpu.cluster_autoscaler import AutoscalerBuilder

        return AutoscalerBuilder(build_autoscaler=autoscaler.build_autoscaler, runs_pod=autoscaler.RUNS_POD)

    def versions(self) -> VersionRows:
        with self.loading():
            import elastic_gpu.azure.versions as versions
        return versions.ROWS

    # deploy-side capabilities (elastic_gpu/provider.py lists them)

    def preflight(self, cfg: StackConfig) -> list[Finding]:
        with self.loading():
            import elastic_gpu.azure.preflight as preflight
        return preflight.findings(cfg)

    def cluster_items(self, cfg: StackConfig) -> list[str]:
        with self.loading():
            import elastic_gpu.azure.config_rules as config_rules
        return config_rules.cluster_items(cfg)

    def upgrade_reach(self, minor: str, props: Mapping[str, Any], on: date) -> UpgradeReach:
        with self.loading():
            import elastic_gpu.azure.upgrade_path as upgrade_path
        return upgrade_path.upgrade_reach(minor, props, on)


PROVIDER: CloudProvider = AzureProvider()
