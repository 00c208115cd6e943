"""Per-pool settings of the nodes, as pulumi-eks and terraform-aws-modules/eks offer them per node group.

One cloud-neutral set of arguments on GeneralPoolArgs and SpotGpuPoolArgs; each cloud's pools module
says what it makes of them (`override_problems`, and its builder), and a setting the cloud has no place
for is an error that says so, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pydantic import Field

from elastic_gpu.cluster_handle import is_input_str
from elastic_gpu.errors import Problem, problem
from elastic_gpu.settings.base import ArgsModel
from elastic_gpu.validation import said


class NodeOverrides(ArgsModel):
    """The nodes' own settings, each defaulting to the cluster's. A value may be an Output; the annotations
    spell `str | pulumi.Output[str]` (not `pulumi.Input[str]`, whose forward references the Args validation
    cannot resolve)."""

    subnet_ids: Mapping[str, str | pulumi.Output[str]] | str | pulumi.Output[str] | None = None
    """Default None: the cluster's subnets. EKS: zone -> subnet id for this pool's node groups (a zone the
    map leaves out uses the cluster's). AKS: one VNet subnet id for the pool's agent pools (vnetSubnetID;
    an Azure subnet spans zones); a plain string, as it is part of the agent-pool name. GKE: not available
    (node pools use the cluster's subnetwork)."""
    node_identity: str | pulumi.Output[str] | None = None
    """Default None: the cluster's. EKS: the IAM role ARN of the node groups (nodeRoleArn; it needs the EKS
    worker, CNI and ECR read policies and an EC2_LINUX access entry). GKE: the nodes' service account email
    (nodeConfig.serviceAccount), a plain string as it is part of the node-pool name. AKS: not available
    (nodes act as the cluster's kubelet identity)."""
    security_group_ids: list[str | pulumi.Output[str]] | None = None
    """Default None: EKS's cluster security group. EKS only: the launch template's security groups; EKS then
    adds no cluster security group, so include it (the nodes must reach the control plane)."""
    image: str | pulumi.Output[str] | None = None
    """Default None: the cloud's node image for the GPU. EKS: an AMI id in the launch template (amiType
    CUSTOM; its root volume as `ami_family`'s; `user_data` must then join the node to the cluster, e.g. a
    nodeadm NodeConfig). GKE: the node image type (nodeConfig.imageType, e.g. "UBUNTU_CONTAINERD").
    AKS: not available."""
    user_data: str | pulumi.Output[str] | None = None
    """Default None. EKS only: the launch template's user data, as text (base64 is done here). On AL2023 a
    shell script ("#!...") or a nodeadm NodeConfig (YAML) becomes a part of the MIME multi-part document EKS
    merges with its own; a document starting "MIME-Version" is used as it is; on Bottlerocket, its TOML."""
    kubelet_config: dict[str, Any] = Field(default_factory=dict)
    """Default {}: kubelet settings in KubeletConfiguration spelling (e.g. {"cpuManagerPolicy": "static",
    "podPidsLimit": 4096}). EKS (AL2023): a nodeadm NodeConfig `spec.kubelet.config`, any key. AKS
    (kubeletConfig) and GKE (nodeConfig.kubeletConfig): the keys that cloud maps, others are an error."""


def override_type_problems(where: str, args: NodeOverrides) -> list[str]:
    """Each setting has the shape its field says (before any cloud reads it)."""
    problems: list[str] = []
    subnets = args.subnet_ids
    if subnets is not None and not is_input_str(subnets):
        if not isinstance(subnets, Mapping) or not subnets:
            problems.append(
                problem(
                    where,
                    "subnet_ids",
                    f"must map zones to subnet ids (EKS) or be one subnet id (AKS), got {said(subnets)}",
                )
            )
        else:
            problems += [
                Problem(
                    f"{where}subnet_ids[{z!r}]: must be a subnet id (a string or an Output), got {type(s).__name__}",
                    "subnet_ids",
                )
                for z, s in subnets.items()
                if not isinstance(z, str) or not is_input_str(s)
            ]
    for name in ("node_identity", "image", "user_data"):
        value = getattr(args, name)
        if value is not None and (not is_input_str(value) or value == ""):
            problems.append(problem(where, name, f"must be a non-empty string or an Output, got {said(value)}"))
    groups = args.security_group_ids
    if groups is not None and (
        isinstance(groups, str) or not isinstance(groups, list) or not groups or not all(map(is_input_str, groups))
    ):
        problems.append(
            problem(where, "security_group_ids", f"must be a non-empty list of security group ids, got {said(groups)}")
        )
    if not isinstance(args.kubelet_config, dict) or not all(isinstance(k, str) for k in args.kubelet_config):
        problems.append(
            problem(
                where,
                "kubelet_config",
                f"must be a mapping of KubeletConfiguration keys, got {said(args.kubelet_config)}",
            )
        )
    return problems


def unsupported(where: str, args: NodeOverrides, cloud: str, fields: Mapping[str, str]) -> list[str]:
    """A problem for each set field the cloud cannot honour (`fields`: field -> why)."""
    return [
        problem(where, name, f"not available on {cloud}: {why} (allowed: unset)")
        for name, why in fields.items()
        if getattr(args, name) not in (None, {}, [])
    ]


def kubelet_problems(where: str, args: NodeOverrides, cloud: str, keys: Mapping[str, str]) -> list[str]:
    """`keys`: KubeletConfiguration key -> the cloud SDK argument that sets it (its pools.py KUBELET_KEYS)."""
    if unknown := sorted(set(args.kubelet_config) - set(keys)):
        return [problem(where, "kubelet_config", f"{unknown} cannot be set on {cloud}; allowed: {', '.join(keys)}")]
    return []


def kubelet_args(args: NodeOverrides, keys: Mapping[str, str]) -> dict[str, Any]:
    """The cloud SDK's keyword arguments for `kubelet_config` (validated by kubelet_problems)."""
    return {keys[k]: v for k, v in sorted(args.kubelet_config.items())}
