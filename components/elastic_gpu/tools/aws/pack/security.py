"""The policy pack's rules for EKS nodes' security (aws/pack), beside the cloud-neutral no-public-node-ips:
node disks encrypted, launch templates require IMDSv2 and give nodes no public IP; and IRSA roles trust an
OIDC provider."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from pulumi_policy import (
    EnforcementLevel,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from elastic_gpu.aws import EKS_NODE_GROUP, PUBLIC_SUBNET_IDS_INPUT
from elastic_gpu.tools.policy._base import is_true, props_of

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


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
            if ebs is not None and not is_true(ebs.get("encrypted")):
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


SUBNET = "aws:ec2/subnet:Subnet"
PUBLIC_SUBNET_FIX = (
    "Run nodes in private subnets behind a NAT gateway (map_public_ip_on_launch false), e.g. the handle's "
    "subnet_ids of private subnets."
)


def _public_subnet_ids(resources: Sequence[PolicyResource]) -> set[str]:
    """The subnet ids the cluster handles found to map public IPs (unknown ones: none)."""
    found: set[str] = set()
    for r in resources:
        if r.resource_type.startswith("elastic-gpu:index:"):
            try:
                ids = props_of(r).get(PUBLIC_SUBNET_IDS_INPUT) or []
                found |= {i for i in ids if isinstance(i, str)}
            except UnknownValueError:
                continue
    return found


def _node_group_subnet_ids(r: PolicyResource) -> list[str]:
    try:
        return [i for i in props_of(r).get("subnetIds") or [] if isinstance(i, str)]
    except UnknownValueError:
        return []


def public_node_ips(resources: Sequence[PolicyResource]) -> Iterator[tuple[PolicyResource, str]]:
    """no-public-node-ips' EKS part (tools/policy/security_rules.py): launch templates that give nodes a public IP,
    and node groups in a subnet that maps public IPs on launch: one the program declares (its dependencies), or
    one of an existing cluster as its handle read it."""
    public = _public_subnet_ids(resources)
    for r in resources:
        if r.resource_type == EKS_NODE_GROUP:
            declared = [d for d in r.dependencies if d.resource_type == SUBNET and _maps_public_ip(d)]
            # A declared subnet is named by its resource; the handle's read of it (its id among `public`, answered
            # from the same declaration offline) would name it a second time.
            named = [d.name for d in declared] or sorted(set(_node_group_subnet_ids(r)) & public)
            if named:
                yield (
                    r,
                    f"Node group '{props_of(r).get('nodeGroupName') or r.name}' runs in subnet(s) "
                    f"{', '.join(named)} that give every instance a public IP (mapPublicIpOnLaunch). "
                    + PUBLIC_SUBNET_FIX,
                )
        if r.resource_type != LAUNCH_TEMPLATE:
            continue
        for ni in props_of(r).get("networkInterfaces") or []:
            if is_true(ni.get("associatePublicIpAddress")):
                yield (
                    r,
                    "Launch template gives nodes a public IP (networkInterfaces.associatePublicIpAddress). "
                    "Remove it and run nodes in private subnets behind a NAT gateway.",
                )


def _maps_public_ip(subnet: PolicyResource) -> bool:
    try:
        return is_true(props_of(subnet).get("mapPublicIpOnLaunch"))
    except UnknownValueError:
        return False


# --- eks-irsa-trusts-an-oidc-provider -------------------------------------------------------

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
