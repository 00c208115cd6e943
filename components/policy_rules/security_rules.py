"""Rule 7: node disks encrypted, EKS launch templates require IMDSv2, no public IPs on nodes; and IRSA roles
trust an OIDC provider."""

from __future__ import annotations

import json

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.azure import AKS_AGENT_POOL, AKS_MANAGED_CLUSTER
from elastic_gpu.gcp import GKE_CLUSTER, GKE_NODE_POOL
from elastic_gpu.policy_rules._base import props_of

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _true(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def validate_disks_encrypted(args: ResourceValidationArgs, report: ReportViolation) -> None:
    p = args.props
    if args.resource_type == LAUNCH_TEMPLATE:
        mappings = p.get("blockDeviceMappings") or []
        if not mappings:
            report(
                "Launch template declares no blockDeviceMappings, so the root volume's encryption depends on the "
                "AMI snapshot and the account default. Declare the root volume with ebs.encrypted: true.",
                None,
            )
        for m in mappings:
            ebs = m.get("ebs")
            if ebs is not None and not _true(ebs.get("encrypted")):
                report(
                    f"EBS volume {m.get('deviceName', '?')} of this launch template is not encrypted. "
                    "Set ebs.encrypted: true (and optionally a kmsKeyId).",
                    None,
                )
    elif args.resource_type == EKS_NODE_GROUP and not p.get("launchTemplate"):
        report(
            f"Node group '{p.get('nodeGroupName') or args.name}' has no launch template, so its root volume is "
            "encrypted only if the account's EBS default encryption is on. Use a launch template with an "
            "encrypted root volume (GeneralPool and SpotGpuPool do).",
            None,
        )


node_disks_encrypted = ResourceValidationPolicy(
    name="node-disks-encrypted",
    description=(
        "Node root volumes are encrypted: EKS node groups use a launch template whose EBS volumes set "
        "encrypted: true. (AKS and GKE disks are encrypted at rest by the platform.)"
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_disks_encrypted,
)


def validate_imdsv2(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != LAUNCH_TEMPLATE:
        return
    meta = args.props.get("metadataOptions") or {}
    if meta.get("httpTokens") != "required":
        report(
            "Launch template does not require IMDSv2 (metadataOptions.httpTokens is "
            f"{meta.get('httpTokens', 'unset')!r}): any pod can read the node role's credentials with one GET. "
            "Set metadataOptions.httpTokens: required and httpPutResponseHopLimit: 1.",
            None,
        )
    hops = meta.get("httpPutResponseHopLimit")
    if isinstance(hops, int | float) and hops > 2:
        report(
            f"Launch template's httpPutResponseHopLimit is {int(hops)}: pods can reach the instance metadata. "
            "Use 1 (or 2 if a node agent needs it).",
            None,
        )


eks_launch_template_imdsv2 = ResourceValidationPolicy(
    name="eks-launch-template-imdsv2",
    description=(
        "EC2 launch templates for nodes require IMDSv2 (metadataOptions.httpTokens: required) with a hop limit "
        "of at most 2. Fix: set metadataOptions on the launch template."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_imdsv2,
)


def validate_no_public_ips(args: StackValidationArgs, report: ReportViolation) -> None:
    gke_private_cluster = any(
        r.resource_type == GKE_CLUSTER
        and _true((props_of(r).get("privateClusterConfig") or {}).get("enablePrivateNodes"))
        for r in args.resources
    )
    for r in args.resources:
        p = props_of(r)
        if r.resource_type == LAUNCH_TEMPLATE:
            for ni in p.get("networkInterfaces") or []:
                if _true(ni.get("associatePublicIpAddress")):
                    report(
                        "Launch template gives nodes a public IP (networkInterfaces.associatePublicIpAddress). "
                        "Remove it and run nodes in private subnets behind a NAT gateway.",
                        r.urn,
                    )
        elif r.resource_type == AKS_AGENT_POOL and _true(p.get("enableNodePublicIP")):
            report(
                f"AKS agent pool '{r.name}' sets enableNodePublicIP: nodes get public IPs. Remove it.",
                r.urn,
            )
        elif r.resource_type == AKS_MANAGED_CLUSTER:
            for prof in p.get("agentPoolProfiles") or []:
                if _true(prof.get("enableNodePublicIP")):
                    report(
                        f"AKS agent pool profile '{prof.get('name', '?')}' sets enableNodePublicIP: nodes get "
                        "public IPs. Remove it.",
                        r.urn,
                    )
        elif r.resource_type == GKE_NODE_POOL:
            private = (p.get("networkConfig") or {}).get("enablePrivateNodes")
            if private is False or (private is None and not gke_private_cluster):
                report(
                    f"GKE node pool '{p.get('name') or r.name}' has public node IPs: neither its "
                    "networkConfig.enablePrivateNodes nor the cluster's privateClusterConfig.enablePrivateNodes "
                    "is true. Enable private nodes (with Cloud NAT for egress); if the cluster's nodes are private "
                    "already, say so: GkeCluster.existing(..., private_nodes=True) in a program, "
                    "cluster.privateNodes: true in a stack file.",
                    r.urn,
                )


no_public_node_ips = StackValidationPolicy(
    name="no-public-node-ips",
    description=(
        "Nodes get no public IPs: no associatePublicIpAddress on EKS launch templates, no enableNodePublicIP on AKS "
        "pools, private nodes on GKE (node pool networkConfig or cluster privateClusterConfig). Fix: use private "
        "subnets / private nodes with NAT for egress."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_no_public_ips,
)


# --- eks-irsa-trusts-an-oidc-provider (issue 20) ----------------------------------------------

IAM_ROLE = "aws:iam/role:Role"
WEB_IDENTITY = "sts:AssumeRoleWithWebIdentity"


def _web_identity_principals(policy: object) -> list[object]:
    """The `Federated` principals of a trust policy's web-identity statements (IRSA)."""
    if isinstance(policy, str):
        try:
            policy = json.loads(policy)
        except ValueError:
            return []
    if not isinstance(policy, dict):
        return []
    statements = policy.get("Statement") or []
    found = []
    for s in statements if isinstance(statements, list) else [statements]:
        actions = s.get("Action") if isinstance(s, dict) else None
        if WEB_IDENTITY in (actions if isinstance(actions, list) else [actions]):
            found.append((s.get("Principal") or {}).get("Federated") if isinstance(s.get("Principal"), dict) else None)
    return found


def validate_irsa_trust(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != IAM_ROLE:
        return
    for federated in _web_identity_principals(args.props.get("assumeRolePolicy")):
        if not isinstance(federated, str) or not federated.strip():
            report(
                f"IAM role '{args.name}' is assumed with a web identity (IRSA) but trusts the provider "
                f"{json.dumps(federated)}: the cluster has no IAM OIDC provider, so the pod (e.g. the "
                "cluster-autoscaler) can never assume the role. Create one: pulumi_eks.Cluster(..., "
                "create_oidc_provider=True) for EksCluster.from_pulumi_eks, or pass its ARN to "
                "EksCluster.existing(oidc_provider_arn=...).",
                None,
            )


eks_irsa_trusts_an_oidc_provider = ResourceValidationPolicy(
    name="eks-irsa-trusts-an-oidc-provider",
    description=(
        "An IAM role assumed with a web identity (IRSA, e.g. the cluster-autoscaler's) trusts an IAM OIDC provider "
        '(`"Federated": "arn:...:oidc-provider/..."`), not an empty one. Fix: create_oidc_provider=True on the '
        "pulumi_eks.Cluster, or the provider's ARN in EksCluster.existing(oidc_provider_arn=...)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_irsa_trust,
)
