"""ClusterAutoscaler on AKS: the managed autoscaler, configured on the cluster and per pool.

AKS runs the cluster-autoscaler itself. Its settings are the cluster's
`autoScalerProfile` (AksCluster) and each agent pool's autoscaling min/max
(the pools); with expander `priority` it reads the
`cluster-autoscaler-priority-expander` ConfigMap in kube-system, which the
cloud-neutral ClusterAutoscaler declares. So nothing more is declared here; this
only checks that the component's settings are the ones the cluster carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from elastic_gpu.azure import AKS_DEFAULT_EXPANDER
from elastic_gpu.errors import ConfigError
from elastic_gpu.validation import said

if TYPE_CHECKING:
    from pulumi_azure_native.containerservice.outputs import (
        ManagedClusterPropertiesResponseAutoScalerProfile as AutoScalerProfile,
    )

    from elastic_gpu.cluster_autoscaler import ClusterAutoscalerArgs
    from elastic_gpu.cluster_handle import AksClusterHandle

#: The managed autoscaler lives in kube-system; the priority ConfigMap must be there too.
AKS_AUTOSCALER_NAMESPACE = "kube-system"
#: Read by elastic_gpu.cluster_autoscaler: AKS runs the autoscaler, no pod of ours.
RUNS_POD = False


def _az_aks(verb: str, cluster: AksClusterHandle, rest: str) -> pulumi.Output[str]:
    """`az aks <verb>` for this cluster: az needs --resource-group and --name (unless `az configure` set defaults)."""
    return pulumi.Output.concat(
        f"az aks {verb} --resource-group ", cluster.resource_group_name, " --name ", cluster.cluster_name, rest
    )


def expander_command(cluster: AksClusterHandle) -> pulumi.Output[str]:
    """The az command that sets the managed autoscaler's expander (az aks update --cluster-autoscaler-profile)."""
    return _az_aks("update", cluster, " --cluster-autoscaler-profile expander=priority")


def show_expander_command(cluster: AksClusterHandle) -> pulumi.Output[str]:
    """The az command that reads the managed autoscaler's expander."""
    return _az_aks("show", cluster, " --query autoScalerProfile.expander")


def declared_expander(cluster: AksClusterHandle) -> tuple[pulumi.Output[bool], pulumi.Output[str | None]]:
    """(whether the program declares the handle's ManagedCluster, its autoScalerProfile.expander): found through
    the resources the handle's cluster name depends on (`cluster_name=mc.name`). A profile not known at preview
    is one the program does not set (a set one is an input, known then): None."""
    from pulumi_azure_native import containerservice

    name = pulumi.Output.from_input(cluster.cluster_name)

    async def managed_cluster() -> containerservice.ManagedCluster | None:
        return next((r for r in await name.resources() if isinstance(r, containerservice.ManagedCluster)), None)

    async def expander() -> str | None:
        mc = await managed_cluster()
        if mc is None or not await mc.auto_scaler_profile.is_known():
            return None
        return _expander_of(await mc.auto_scaler_profile.future())

    async def declared() -> bool:
        return await managed_cluster() is not None

    return pulumi.Output.from_input(declared()), pulumi.Output.from_input(expander())


def _expander_of(profile: AutoScalerProfile | dict[str, str] | None) -> str | None:
    """autoScalerProfile.expander, from the SDK's output type or the plain dict the mock engine answers with."""
    if profile is None:
        return None
    return profile.get("expander") if isinstance(profile, dict) else profile.expander


def build_autoscaler(name: str, args: ClusterAutoscalerArgs, parent: pulumi.Resource) -> dict[str, object]:
    """AKS: no Deployment, no identity; checks (or, on a cluster we did not create, warns about) the profile."""
    from elastic_gpu.azure.node_provisioning import uses_node_provisioning
    from elastic_gpu.cluster_autoscaler import has_fallback

    cluster: AksClusterHandle = args.cluster  # type: ignore[assignment]
    if uses_node_provisioning(cluster):
        # Node auto-provisioning makes the GPU pools' nodes; no agent pool autoscales (AksClusterArgs.provisioner).
        return {"image": None, "role_arn": None, "service_account_name": None}
    where = f"ClusterAutoscaler '{name}': ClusterAutoscalerArgs."
    problems = []
    if args.image is not None:
        problems.append(
            f"{where}image: AKS runs its own managed autoscaler; leave image unset (got {said(args.image)})"
        )
    if args.namespace != AKS_AUTOSCALER_NAMESPACE:
        problems.append(
            f"{where}namespace: AKS's autoscaler reads its priority ConfigMap from "
            f"{AKS_AUTOSCALER_NAMESPACE} (got {said(args.namespace)})"
        )
    fallback = has_fallback(args.gpu_pools)
    profile = cluster.autoscaler_profile
    if profile is None:
        # A cluster we did not create: its autoScalerProfile is not ours to set. When the program declares that
        # ManagedCluster itself (the handle's name comes from it), its expander is read from there.
        if fallback:

            def warn(found: list[object]) -> None:
                declared, expander, cmds = found[0], found[1], found[2:]
                if declared and expander == "priority":
                    return
                need = (
                    f"ClusterAutoscaler '{name}': spot pools with an on-demand fallback need the AKS autoscaler's "
                    "expander to be "
                    "'priority' (otherwise AKS may scale the on-demand fallback first)"
                )
                if declared:
                    sets = repr(expander) if expander else f"none (AKS's default is {AKS_DEFAULT_EXPANDER!r})"
                    fix = f"; the program's ManagedCluster sets {sets}: set auto_scaler_profile.expander='priority'"
                else:
                    fix = f". Check with `{cmds[0]}`, and set it with: {cmds[1]}"
                pulumi.log.warn(need + fix, resource=parent)

            pulumi.Output.all(
                *declared_expander(cluster), show_expander_command(cluster), expander_command(cluster)
            ).apply(warn)
    else:
        problems += [
            f"{where}{field}: on AKS the autoscaler's settings live on the AksCluster's autoScalerProfile "
            f"({field}={said(theirs)}); got {said(ours)}: set the same value on both"
            for field, ours, theirs in (
                ("scale_down_unneeded_time", args.scale_down_unneeded_time, profile.scale_down_unneeded_time),
                ("scale_down_delay_after_add", args.scale_down_delay_after_add, profile.scale_down_delay_after_add),
                ("max_node_provision_time", args.max_node_provision_time, profile.max_node_provision_time),
                ("expander", args.expander[:1], [profile.expander]),
            )
            if ours != theirs
        ]
        if fallback and profile.expander != "priority":
            problems.append(
                f"{where}expander: spot pools with an on-demand fallback need the AKS autoscaler's expander "
                f"'priority' (AksClusterArgs.expander first), got {said(profile.expander)}"
            )
    if problems:
        raise ConfigError(problems, source=f"ClusterAutoscaler '{name}'")
    return {"image": None, "role_arn": None, "service_account_name": None}
