"""EksAddons: the EKS managed add-ons (vpc-cni, kube-proxy, coredns, eks-pod-identity-agent) at the
versions of the cluster's Kubernetes minor, so a version bump moves them too (eksctl installs them as
EKS add-ons by default; a cluster left with the self-managed copies keeps old versions after upgrades)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from elastic_gpu.aws.versions import EKS_ADDON_VERSIONS, eks_addon_versions
from elastic_gpu.cluster_handle import EksClusterHandle
from elastic_gpu.errors import ConfigError

TYPE_TOKEN = "elastic-gpu:index:EksAddons"

#: We own the add-ons' configuration: on create EKS adopts the self-managed copies it installed with the
#: cluster, on update our version wins (EKS API resolveConflicts: OVERWRITE).
RESOLVE_CONFLICTS = "OVERWRITE"

#: The add-ons every minor's row of the table names.
ADDON_NAMES = tuple(sorted({a for row in EKS_ADDON_VERSIONS.values() for a in row}))


@dataclass
class EksAddonsArgs:
    cluster: EksClusterHandle
    """The EKS cluster (created by EksCluster, or an existing one's handle): its name and Kubernetes minor."""
    nodes: list[pulumi.Resource] = field(default_factory=list)
    """Node groups the add-ons wait for: coredns needs nodes, and on an upgrade the add-ons move only
    after the node groups (control plane, node groups, add-ons, as the EKS upgrade guide orders them)."""
    versions: dict[str, pulumi.Input[str]] | None = None
    """Default: the table in components/versions.py for the cluster's minor."""
    tags: dict[str, str] = field(default_factory=dict)
    """Tags on each add-on (cost allocation)."""


class EksAddons(pulumi.ComponentResource):
    """One `aws.eks.Addon` per managed add-on, pinned to the cluster minor's version."""

    def __init__(self, name: str, args: EksAddonsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        versions = args.versions or addon_versions(name, args.cluster.kubernetes_version)
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.addons = {
            addon: aws.eks.Addon(
                f"{name}-{addon}",
                cluster_name=args.cluster.cluster_name,
                addon_name=addon,
                addon_version=version,
                resolve_conflicts_on_create=RESOLVE_CONFLICTS,
                resolve_conflicts_on_update=RESOLVE_CONFLICTS,
                tags=args.tags,
                opts=pulumi.ResourceOptions(parent=self, depends_on=args.nodes),
            )
            for addon, version in sorted(versions.items())
        }
        self.versions: dict[str, pulumi.Input[str]] = dict(versions)
        self.register_outputs({"versions": self.versions})


def addon_versions(name: str, kubernetes_version: pulumi.Input[str]) -> dict[str, pulumi.Input[str]]:
    """The table's version of each add-on for the minor; for a minor read from a pulumi-eks cluster (an
    Output) each version is chosen once the minor is known (every minor's row names the same add-ons)."""

    def of(version: str) -> dict[str, str]:
        try:
            return eks_addon_versions(version)
        except ValueError as exc:
            raise ConfigError([f"EksAddons '{name}': {exc}"], source=f"EksAddons '{name}'") from None

    if not isinstance(kubernetes_version, pulumi.Output):
        return dict(of(kubernetes_version))
    # Known at preview when the cluster exists or sets `version`, so an unpinned minor fails the preview.
    return {addon: kubernetes_version.apply(lambda v, a=addon: of(v)[a]) for addon in ADDON_NAMES}
