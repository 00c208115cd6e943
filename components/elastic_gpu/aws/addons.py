"""EksAddons: the EKS managed add-ons (vpc-cni, kube-proxy, coredns, eks-pod-identity-agent) at the
versions of the cluster's Kubernetes minor, so a version bump moves them too (eksctl installs them as
EKS add-ons by default; a cluster left with the self-managed copies keeps old versions after upgrades).

Each version is pinned: the table's row for the cluster's minor (elastic_gpu/aws/versions.py
EKS_ADDON_VERSIONS), so it changes only when the user changes the minor, pins a version
(`EksAddonsArgs.versions`) or upgrades this library (whose CHANGELOG names a new row). It was the newest EKS
offered, read at every preview (`aws.eks.get_addon_version(most_recent=True)`): each build EKS published
moved the add-ons on an unrelated `pulumi up`, restarting the CNI and CoreDNS on running GPU nodes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from elastic_gpu.args_doc import documented
from elastic_gpu.aws.versions import EKS_ADDON_VERSIONS, eks_addon_versions, minor
from elastic_gpu.cluster_handle import EksClusterHandle
from elastic_gpu.errors import ConfigError

TYPE_TOKEN = "elastic-gpu:index:EksAddons"

#: We own the add-ons' configuration: on create EKS adopts the self-managed copies it installed with the
#: cluster, on update our version wins (EKS API resolveConflicts: OVERWRITE).
RESOLVE_CONFLICTS = "OVERWRITE"

#: The add-ons every minor's row of the table names.
ADDON_NAMES = tuple(sorted({a for row in EKS_ADDON_VERSIONS.values() for a in row}))


@documented
@dataclass
class EksAddonsArgs:
    cluster: EksClusterHandle
    """The EKS cluster (created by EksCluster, or an existing one's handle): its name and Kubernetes minor."""
    nodes: list[pulumi.Resource] = field(default_factory=list)
    """Node groups the add-ons wait for: coredns needs nodes, and on an upgrade the add-ons move only
    after the node groups (control plane, node groups, add-ons, as the EKS upgrade guide orders them)."""
    versions: dict[str, pulumi.Input[str]] | None = None
    """Per add-on, a version to pin (e.g. {"coredns": "v1.13.2-eksbuild.11"}); the others: the version the
    table in elastic_gpu/aws/versions.py pins for the cluster's minor, which moves only with the minor (or a
    release of this library), never because EKS published a newer build."""
    tags: dict[str, str] = field(default_factory=dict)
    """Tags on each add-on (cost allocation)."""


class EksAddons(pulumi.ComponentResource):
    """One `aws.eks.Addon` per managed add-on, pinned to the cluster minor's version."""

    def __init__(self, name: str, args: EksAddonsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        pinned = dict(args.versions or {})
        if unknown := sorted(set(pinned) - set(ADDON_NAMES)):
            raise ConfigError(
                [f"EksAddons '{name}': EksAddonsArgs.versions: {', '.join(map(repr, unknown))} is not an add-on this "
                 f"component manages; allowed: {', '.join(ADDON_NAMES)}"],
                source=f"EksAddons '{name}'",
            )  # fmt: skip
        super().__init__(TYPE_TOKEN, name, None, opts)
        # Checks the minor against the table (a ConfigError at preview for one it does not know), then asks EKS.
        resolved = addon_versions(name, args.cluster.kubernetes_version, parent=self)
        versions = {addon: pinned.get(addon, resolved[addon]) for addon in ADDON_NAMES}
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


def addon_versions(
    name: str, kubernetes_version: pulumi.Input[str], parent: pulumi.Resource | None = None
) -> dict[str, pulumi.Output[str]]:
    """The version of each add-on the table pins for the cluster's minor: the same on every `pulumi up` of the
    same minor. The minor must be one the table names (a ConfigError otherwise); for a minor read from a
    pulumi-eks cluster (an Output) that is checked once the minor is known. `parent` is kept for callers."""

    def minor_of(version: str) -> str:
        try:
            eks_addon_versions(version)
        except ValueError as exc:
            raise ConfigError([f"EksAddons '{name}': {exc}"], source=f"EksAddons '{name}'") from None
        return minor(version)

    # Known at preview when the cluster exists or sets `version`, so an unknown minor fails the preview.
    if isinstance(kubernetes_version, str):
        checked = pulumi.Output.from_input(minor_of(kubernetes_version))
    else:
        version: pulumi.Output[str] = pulumi.Output.from_input(kubernetes_version)
        checked = version.apply(minor_of)

    def pinned(addon: str) -> pulumi.Output[str]:
        return checked.apply(lambda m: eks_addon_versions(m)[addon])

    return {addon: pinned(addon) for addon in ADDON_NAMES}
