"""GCP as a `CloudProvider` (elastic_gpu/provider.py): GKE, its node pools, GKE's own cluster autoscaler (or
node auto-provisioning with ComputeClasses), Kueue, read and checked through this folder's modules, each
imported when first asked for (by full name: elastic_gpu/provider.py says why)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from elastic_gpu.cloud_facts import CloudFacts
from elastic_gpu.clouds import Cloud

if TYPE_CHECKING:
    from datetime import date

    from elastic_gpu.cloud_facts import UpgradeReach, VersionRows
    from elastic_gpu.cluster_autoscaler import AutoscalerBuilder
    from elastic_gpu.config import ConfigRules, StackBuilder, StackConfig
    from elastic_gpu.gpu_catalog import GpuSpec
    from elastic_gpu.pool_args import PoolBuilder
    from elastic_gpu.preflight import Finding
    from elastic_gpu.provider import CloudProvider


class GcpProvider(Cloud):
    """GKE. Also an `AccountPreflight`, an `UpgradePath` (its own upgrades at end of support) and a `GpuResolver`
    (Compute Engine machine types). Its tools (Kueue's admission, ComputeClass priorities, the release channel's
    running version, the Cloud Billing Catalog, ...) are elastic_gpu/tools/gcp/cloud.py's `GcpTools`."""

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
        with self.loading():
            import elastic_gpu.gcp.config_rules as rules
        return rules.RULES

    def ignored_settings(self) -> Mapping[tuple[str, str | None], str]:
        # The stack creates the cluster's VPC network unless `cluster.network` brings one (cluster.networkCidr).
        return {
            ("autoscaler", None): (
                "GKE runs its own cluster autoscaler (profile set by GkeCluster, limits per node pool); remove the "
                "section"
            )
        }

    def stack_builder(self) -> StackBuilder:
        with self.loading():
            import elastic_gpu.gcp.stack as stack
        from elastic_gpu.config import StackBuilder

        return StackBuilder(
            cluster_problems=stack.cluster_problems, pool_args=stack.pool_args, build_stack=stack.build_stack
        )

    def pool_builder(self) -> PoolBuilder:
        with self.loading():
            import elastic_gpu.gcp.pools as pools
        return pools.BUILDER

    def autoscaler_builder(self) -> AutoscalerBuilder:
        with self.loading():
            import elastic_gpu.gcp.autoscaler as autoscaler
        from elastic_gpu.cluster_autoscaler import AutoscalerBuilder

        return AutoscalerBuilder(
            build_autoscaler=autoscaler.build_autoscaler,
            runs_pod=autoscaler.RUNS_POD,
            supports_priority_expander=autoscaler.SUPPORTS_PRIORITY_EXPANDER,
        )

    def versions(self) -> VersionRows:
        with self.loading():
            import elastic_gpu.gcp.versions as versions
        return versions.ROWS

    # deploy-side capabilities (elastic_gpu/provider.py lists them)

    def resolve_gpu(self, instance_type: str, region: str | None, zones: Sequence[str]) -> GpuSpec | str:
        with self.loading():
            import elastic_gpu.gcp.gpu_types as gpu_types
        return gpu_types.resolve_gpu(instance_type, zones)

    def preflight(self, cfg: StackConfig) -> list[Finding]:
        with self.loading():
            import elastic_gpu.gcp.preflight as preflight
        return preflight.findings(cfg)

    def upgrade_reach(self, minor: str, props: Mapping[str, Any], on: date) -> UpgradeReach:
        with self.loading():
            import elastic_gpu.gcp.upgrade_path as upgrade_path
        return upgrade_path.upgrade_reach(minor, props, on)


PROVIDER: CloudProvider = GcpProvider()
