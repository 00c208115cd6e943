"""pulumi-eks's node groups and add-on in the offline preview: `ManagedNodeGroup`, `NodeGroupV2` and `Addon`,
remote components like its `Cluster` (elastic_gpu/tools/aws/mocks.py REMOTE_COMPONENTS lists them all).

Each mock first refuses what pulumi-eks refuses, with its words, then registers the children a real run
declares under the names pulumi-eks gives them, and returns the component's outputs. Sources: pulumi/pulumi-eks
at commit 7bf0c1b (2026-08-12), nodejs/eks/nodes/nodegroup.ts (ManagedNodeGroup, createManagedNodeGroup,
NodeGroupV2, createNodeGroupV2Internal) and nodejs/eks/addons/addon.ts.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from elastic_gpu.aws import ACCESS_ENTRY_MODES
from elastic_gpu.tools.offline.cloud_mocks import RemoteChildren

#: A managed node group with any of these gets a custom launch template, so a launch template of the user's own
#: cannot be given with them (nodegroup.ts customLaunchTemplateArgs, with customUserDataArgs).
CUSTOM_USER_DATA_ARGS = ("kubeletExtraArgs", "bootstrapExtraArgs", "bottlerocketSettings", "nodeadmExtraOptions")
CUSTOM_LAUNCH_TEMPLATE_ARGS = (*CUSTOM_USER_DATA_ARGS, "enableIMDSv2", "userData", "amiId", "enableEfaSupport")

#: createManagedNodeGroup's scaling defaults when `scalingConfig` leaves a size out.
MANAGED_SCALING_DEFAULTS = {"desiredSize": 2, "minSize": 1, "maxSize": 2}
#: createNodeGroupV2Internal's defaults: sizes, instance type (nodegroup.ts DEFAULT_INSTANCE_TYPE) and refresh.
NODE_GROUP_V2_DEFAULTS = {"minSize": 1, "maxSize": 2, "desiredCapacity": 2}
DEFAULT_INSTANCE_TYPE = "t3.medium"


class PulumiEksInputError(Exception):
    """pulumi-eks's InputPropertiesError: what a real `pulumi preview` fails with for these arguments."""


def _set(value: Any) -> bool:
    """JavaScript truthiness, as pulumi-eks tests its options: 0, false, "" and absent are all unset."""
    return value not in (None, False, 0, "", [], {})


def _raise(kind: str, name: str, problems: list[str], message: str) -> None:
    if problems:
        raise PulumiEksInputError(f"pulumi-eks {kind} '{name}': {message} " + " ".join(problems))


def _cluster_parts(inputs: dict[str, Any], children: RemoteChildren) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pulumi-eks cluster a node group or add-on joins (its inputs and outputs) and its EKS cluster."""
    cluster = children.state(inputs.get("cluster"))
    if not cluster and isinstance(inputs.get("cluster"), dict):  # CoreData given instead of a Cluster
        cluster = {**inputs["cluster"], "eksCluster": inputs["cluster"].get("cluster")}
    return cluster, children.state(cluster.get("eksCluster"))


def _cluster_subnets(cluster: dict[str, Any], eks: dict[str, Any]) -> Any:
    """core.subnetIds, else the private, else the public subnets (createManagedNodeGroup)."""
    for key in ("subnetIds", "privateSubnetIds", "publicSubnetIds"):
        if cluster.get(key):
            return cluster[key]
    return (eks.get("vpcConfig") or {}).get("subnetIds") or []


def managed_node_group_problems(inputs: dict[str, Any]) -> list[str]:
    """createManagedNodeGroup's validation errors, before anything is declared (nodegroup.ts)."""
    problems = []
    if _set(inputs.get("nodeRole")) and _set(inputs.get("nodeRoleArn")):
        problems.append(
            "nodeRole: You cannot specify both nodeRole and nodeRoleArn when creating a managed node group."
        )
    problems += [
        f"amiId: You cannot specify both amiId and {key} when creating a managed node group."
        for key in ("gpu", "amiType")
        if _set(inputs.get("amiId")) and _set(inputs.get(key))
    ]
    if not _set(inputs.get("nodeRoleArn")) and not _set(inputs.get("nodeRole")):
        problems.append("nodeRole: An IAM role, or role ARN must be provided to create a managed node group")
        return problems  # pulumi-eks throws here
    if inputs.get("enableEfaSupport") is True and not _set(inputs.get("placementGroupAvailabilityZone")):
        problems.append("enableEfaSupport: You must specify placementGroupAvailabilityZone when enabling EFA support.")
    custom_template = [k for k in CUSTOM_LAUNCH_TEMPLATE_ARGS if _set(inputs.get(k))]
    if _set(inputs.get("launchTemplate")) and custom_template:
        problems.append(
            f"launchTemplate: If you provide a custom launch template, you cannot provide any of "
            f"{', '.join(CUSTOM_LAUNCH_TEMPLATE_ARGS)}. Please include these in the launch template that you are "
            "providing."
        )
    if _set(inputs.get("userData")) and any(_set(inputs.get(k)) for k in CUSTOM_USER_DATA_ARGS):
        problems.append(
            f"userData: If you provide custom userData, you cannot provide any of {', '.join(CUSTOM_USER_DATA_ARGS)}. "
            "Please include these in the userData that you are providing."
        )
    return problems


def managed_node_group(name: str, inputs: dict[str, Any], children: RemoteChildren) -> dict[str, Any]:
    """`eks:index:ManagedNodeGroup`: one `aws.eks.NodeGroup` named as the component, on the cluster's EKS cluster,
    its version the cluster's unless given (and no launch template), its subnets the cluster's unless given."""
    _raise("ManagedNodeGroup", name, managed_node_group_problems(inputs), "The input properties are invalid.")
    cluster, eks = _cluster_parts(inputs, children)
    role_arn = inputs.get("nodeRoleArn") or children.state(inputs.get("nodeRole")).get("arn")
    # Without access entries the role must be one of the cluster's instance roles (its aws-auth mapping).
    mode = (eks.get("accessConfig") or {}).get("authenticationMode")
    roles = [children.state(r).get("arn") for r in cluster.get("instanceRoles") or []]
    if mode not in ACCESS_ENTRY_MODES and role_arn not in roles:
        _raise(
            "ManagedNodeGroup",
            name,
            [
                "nodeRole: A managed node group cannot be created without first setting its role in the cluster's "
                "instanceRoles"
            ],
            "The input properties are invalid.",
        )
    scaling = {**MANAGED_SCALING_DEFAULTS, **{k: v for k, v in (inputs.get("scalingConfig") or {}).items() if v}}
    version = inputs.get("version")
    if not version and not inputs.get("launchTemplate"):
        version = eks.get("version")
    args = {
        k: v
        for k, v in inputs.items()
        if k not in ("cluster", "nodeRole", *CUSTOM_LAUNCH_TEMPLATE_ARGS, "operatingSystem", "ignoreScalingChanges")
    }
    args |= {
        "clusterName": inputs.get("clusterName") or eks.get("name"),
        "nodeRoleArn": role_arn,
        "scalingConfig": scaling,
        "subnetIds": inputs.get("subnetIds") or _cluster_subnets(cluster, eks),
    }
    if version:
        args["version"] = version
    node_group = children("aws:eks/nodeGroup:NodeGroup", name, args)
    return {"nodeGroup": node_group, "placementGroupName": ""}


def node_group_v2_problems(inputs: dict[str, Any], cluster: dict[str, Any]) -> list[str]:
    """createNodeGroupV2Internal's checks of mutually exclusive options and the instance profile."""
    problems = [
        f"{a}: {a} and {b} are mutually exclusive"
        for a, b in (("clusterIngressRule", "clusterIngressRuleId"), ("nodeSecurityGroup", "nodeSecurityGroupId"))
        if _set(inputs.get(a)) and _set(inputs.get(b))
    ]
    options = cluster.get("nodeGroupOptions") or {}
    profile = _set(inputs.get("instanceProfile")) or _set(options.get("instanceProfile"))
    profile_name = _set(inputs.get("instanceProfileName")) or _set(options.get("instanceProfileName"))
    if profile and profile_name:
        problems.append("instanceProfile: instanceProfile and instanceProfileName are mutually exclusive")
    # The cluster makes an instance profile for its default node group when it creates or is given one role.
    cluster_profile = not cluster.get("skipDefaultNodeGroup") and not cluster.get("instanceRoles")
    if not (profile or profile_name or cluster_profile or cluster.get("instanceProfileName")):
        problems.append("instanceProfile: an instanceProfile or instanceProfileName is required")
    return problems


def node_group_v2(name: str, inputs: dict[str, Any], children: RemoteChildren) -> dict[str, Any]:
    """`eks:index:NodeGroupV2`: a self-managed group (declare_node_group_v2) on the cluster it is given."""
    cluster, eks = _cluster_parts(inputs, children)
    _raise("NodeGroupV2", name, node_group_v2_problems(inputs, cluster), "Invalid arguments for node group.")
    return declare_node_group_v2(name, inputs, children, cluster, eks)


def declare_node_group_v2(
    name: str, inputs: dict[str, Any], children: RemoteChildren, cluster: dict[str, Any], eks: dict[str, Any]
) -> dict[str, Any]:
    """createNodeGroupV2Internal's children: `<name>-launchTemplate` and the `aws.autoscaling.Group` `<name>`
    tagged as the cluster's (`kubernetes.io/cluster/<name>: owned`), on the cluster's node security group, in
    `nodeSubnetIds`, else the cluster's private subnets, else its public ones (nodegroup.ts workerSubnetIds).
    Also what pulumi-eks's `Cluster` declares as its default node group (cluster.ts createNodeGroupV2(name,
    core.nodeGroupOptions)), so `cluster` may be the cluster's own inputs."""
    cluster_name = eks.get("name") or ""
    security_group = inputs.get("nodeSecurityGroupId") or cluster.get("nodeSecurityGroupId") or f"sg-{name}-node"
    template = children(
        "aws:ec2/launchTemplate:LaunchTemplate",
        f"{name}-launchTemplate",
        {
            "instanceType": inputs.get("instanceType") or DEFAULT_INSTANCE_TYPE,
            "imageId": inputs.get("amiId"),
            "userData": node_user_data(cluster_name, inputs),
            "networkInterfaces": [
                {
                    "associatePublicIpAddress": str(inputs.get("nodeAssociatePublicIpAddress", True)).lower(),
                    "securityGroups": [security_group],
                }
            ],
        },
    )
    tags = [
        {"key": k, "value": v, "propagateAtLaunch": True} for k, v in (inputs.get("autoScalingGroupTags") or {}).items()
    ]
    tags += [
        {"key": f"kubernetes.io/cluster/{cluster_name}", "value": "owned", "propagateAtLaunch": True},
        {"key": "Name", "value": f"{cluster_name}-worker", "propagateAtLaunch": True},
    ]
    sizes = {k: inputs.get(k) or v for k, v in NODE_GROUP_V2_DEFAULTS.items()}
    group = children(
        "aws:autoscaling/group:Group",
        name,
        {
            **sizes,
            "launchTemplate": {"name": f"{name}-launchTemplate", "version": "1"},
            "vpcZoneIdentifiers": inputs.get("nodeSubnetIds") or _worker_subnets(cluster, eks),
            "instanceRefresh": {
                "strategy": "Rolling",
                "preferences": {"minHealthyPercentage": inputs.get("minRefreshPercentage") or 50},
            },
            "tags": tags,
        },
    )
    del template  # a child of the component, referenced by name as pulumi-eks does
    return {
        "autoScalingGroup": group,
        "extraNodeSecurityGroups": inputs.get("extraNodeSecurityGroups") or [],
        "nodeSecurityGroupId": security_group,
    }


def kubelet_flags(inputs: dict[str, Any]) -> list[str]:
    """The kubelet flags pulumi-eks gives a self-managed group's nodes (nodes/userdata.ts buildKubeletFlags):
    `kubeletExtraArgs`, then `--node-labels=k=v,...` and `--register-with-taints=k=v:Effect,...`."""
    flags = str(inputs.get("kubeletExtraArgs") or "").split()
    labels = inputs.get("labels") or {}
    if labels:
        flags.append("--node-labels=" + ",".join(f"{k}={v}" for k, v in labels.items()))
    taints = inputs.get("taints") or {}
    if taints:
        parts = [
            f"{k}={t['value']}:{t['effect']}" if t.get("value") else f"{k}:{t['effect']}" for k, t in taints.items()
        ]
        flags.append("--register-with-taints=" + ",".join(parts))
    return flags


def node_user_data(cluster_name: str, inputs: dict[str, Any]) -> str:
    """The launch template's user data (base64), as pulumi-eks's AL2 script runs the bootstrap with the kubelet
    flags (nodes/userdata.ts; its __snapshots__/userdata.test.ts.snap shows the line)."""
    flags = " ".join(kubelet_flags(inputs))
    script = f"#!/bin/bash\n/etc/eks/bootstrap.sh {cluster_name!r} --kubelet-extra-args '{flags}'\n"
    return base64.b64encode(script.encode()).decode()


def _worker_subnets(cluster: dict[str, Any], eks: dict[str, Any]) -> Any:
    """A self-managed group's subnets (nodegroup.ts createNodeGroupV2Internal workerSubnetIds): the cluster's
    private subnets, else its public ones, else every subnet of the cluster (core.subnetIds)."""
    for key in ("privateSubnetIds", "publicSubnetIds", "subnetIds"):
        if cluster.get(key):
            return cluster[key]
    return (eks.get("vpcConfig") or {}).get("subnetIds") or []


def addon(name: str, inputs: dict[str, Any], children: RemoteChildren) -> dict[str, Any]:
    """`eks:index:Addon`: one `aws.eks.Addon` named as the component on the cluster's EKS cluster, its
    `configurationValues` object as JSON (addon.ts; pulumi-eks sorts the keys: stringifyAddonConfiguration)."""
    _, eks = _cluster_parts(inputs, children)
    args = {k: v for k, v in inputs.items() if k not in ("cluster", "configurationValues")}
    args["clusterName"] = eks.get("name")
    if _set(inputs.get("configurationValues")):
        args["configurationValues"] = json.dumps(inputs["configurationValues"], sort_keys=True, separators=(",", ":"))
    children("aws:eks/addon:Addon", name, args)
    return {}  # addon.ts registers no outputs (its `addon` is a plain property, not in the Python SDK)
