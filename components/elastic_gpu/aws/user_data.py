"""A pool's launch-template user data: the kubelet settings and the user's own part, as EKS takes them.

On AL2023, EKS merges a managed node group's user data with its own bootstrap and requires the MIME
multi-part format (EKS user guide, "Customizing managed nodes with launch templates"); nodeadm reads the
`application/node.eks.aws` parts (NodeConfig) and runs the shell-script parts. Bottlerocket reads TOML.
"""

from __future__ import annotations

import base64
from typing import Any

import pulumi
import yaml

from elastic_gpu.errors import problem
from elastic_gpu.pool_overrides import NodeOverrides

BOUNDARY = "ELASTICGPU"
NODEADM_API = "node.eks.aws/v1alpha1"
NODECONFIG_TYPE = "application/node.eks.aws"
SHELL_TYPE = 'text/x-shellscript; charset="us-ascii"'


def node_config(kubelet_config: dict[str, Any]) -> str:
    """A nodeadm NodeConfig setting only the kubelet's configuration (merged with EKS's own)."""
    doc = {"apiVersion": NODEADM_API, "kind": "NodeConfig", "spec": {"kubelet": {"config": kubelet_config}}}
    return "---\n" + yaml.safe_dump(doc, sort_keys=True)


def _part_type(text: str) -> str:
    return SHELL_TYPE if text.startswith("#!") else NODECONFIG_TYPE


def mime_document(parts: list[tuple[str, str]]) -> str:
    body = "".join(f"--{BOUNDARY}\nContent-Type: {kind}\n\n{text.rstrip()}\n\n" for kind, text in parts)
    return f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="{BOUNDARY}"\n\n{body}--{BOUNDARY}--\n'


def user_data_problems(where: str, args: NodeOverrides, ami_family: str) -> list[str]:
    problems: list[str] = []
    if args.kubelet_config and ami_family != "al2023":
        problems.append(
            problem(
                where,
                "kubelet_config",
                f"set through nodeadm on AL2023 only; on {ami_family!r} put the kubelet settings into user_data "
                "(allowed: ami_family 'al2023', or unset)",
            )
        )
    text = args.user_data
    if args.kubelet_config and isinstance(text, pulumi.Output):
        problems.append(
            problem(
                where,
                "user_data",
                "an Output cannot be combined with kubelet_config (its format is known only at deploy time); put "
                "the kubelet settings into your NodeConfig, or pass user_data as a string",
            )
        )
    if args.kubelet_config and isinstance(text, str) and text.startswith("MIME-Version"):
        problems.append(
            problem(
                where,
                "user_data",
                "a MIME document cannot be combined with kubelet_config; add a NodeConfig part with "
                "spec.kubelet.config to it yourself, or pass your script or NodeConfig alone",
            )
        )
    if args.image is not None and args.user_data is None:
        problems.append(
            problem(
                where,
                "image",
                "a custom AMI gets no bootstrap from EKS; give user_data that joins the node to the cluster (a "
                "nodeadm NodeConfig with spec.cluster), or leave image unset for EKS's GPU AMI",
            )
        )
    return problems


def launch_template_user_data(args: NodeOverrides, ami_family: str) -> pulumi.Input[str] | None:
    """The launch template's `user_data` (base64), or None when the pool sets neither part."""
    text = args.user_data
    if ami_family != "al2023" or (isinstance(text, str) and text.startswith("MIME-Version")):
        return None if text is None else pulumi.Output.from_input(text).apply(_b64)
    if isinstance(text, pulumi.Output):  # alone (user_data_problems): the user's document, as it is
        return text.apply(_b64)
    parts = [(NODECONFIG_TYPE, node_config(args.kubelet_config))] if args.kubelet_config else []
    if text is not None:
        parts.append((_part_type(text), text))
    return _b64(mime_document(parts)) if parts else None


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
