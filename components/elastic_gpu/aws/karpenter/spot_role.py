"""The EC2 Spot service-linked role Karpenter's spot launches need, created or adopted.

EC2 launches spot capacity through the account's `AWSServiceRoleForEC2Spot`. Karpenter's getting-started
creates it once per account (aws/karpenter-provider-aws v1.14.1 website/content/en/docs/getting-started/
getting-started-with-karpenter/scripts/step06-add-spot-role.sh: `aws iam create-service-linked-role
--aws-service-name spot.amazonaws.com || true`, the `|| true` because a second create fails: "Service role
name AWSServiceRoleForEC2Spot has been taken in this account"). Without it, and without
iam:CreateServiceLinkedRole (which its controller policy does not grant), a CreateFleet fails and Karpenter
marks every spot offering unavailable (pkg/providers/instance/instance.go:644-647): a spot-first pool runs
on-demand, a spot-only pool gets no node.

A Pulumi program cannot `|| true`: declaring the role fails `up` on an account that has it, and declaring it
only when a preview finds it missing would, at the next preview, find it present and delete it. So the role
this library creates carries a tag naming the stack (MANAGED_BY_TAG), and `auto` reads the account's role at
preview (the `aws.iam.get_role` invoke): absent, or tagged by this stack, it is declared (created once, then
kept); present without the tag, it is the account's own and is used as it is, never declared. `create` always
declares, `exists` never does (and warns when the preview does not find it). A declared role is kept when the
stack is destroyed (`retain_on_delete`): other stacks and spot users of the account rely on it.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from elastic_gpu.settings.aws import DEFAULT_SPOT_ROLE_MODE, SpotRoleMode

SPOT_SERVICE = "spot.amazonaws.com"
SPOT_ROLE_NAME = "AWSServiceRoleForEC2Spot"
#: The tag that marks the role as this stack's (value: "<project>/<stack>").
MANAGED_BY_TAG = "elastic-gpu.io/managed-by"

__all__ = ["DEFAULT_SPOT_ROLE_MODE", "SpotRoleMode", "build_spot_role"]
#: The one command that creates the role by hand (Karpenter's getting-started step06).
CREATE_COMMAND = f"aws iam create-service-linked-role --aws-service-name {SPOT_SERVICE}"
#: How the `aws.iam.get_role` invoke says the role does not exist. pulumi-aws 7 (terraform-provider-aws v6)
#: reads it with findRoleByName, which turns IAM's NoSuchEntityException into a retry.NotFoundError whose text is
#: "couldn't find resource" (internal/retry/error.go NotFoundError.Error; internal/service/iam/role_data_source.go
#: wraps it as "reading IAM Role (<name>): couldn't find resource"); providers before that passed IAM's own
#: "NoSuchEntity" through (role_data_source.go's GetRoleWithContext error).
NOT_FOUND_TEXTS = ("couldn't find resource", "NoSuchEntity")


def stack_marker() -> str:
    return f"{pulumi.get_project()}/{pulumi.get_stack()}"


def read_spot_role() -> dict[str, str] | str | None:
    """The account's AWSServiceRoleForEC2Spot tags; None when the account has no such role (NOT_FOUND_TEXTS);
    the provider's error text when the role could not be read (e.g. no iam:GetRole)."""
    try:
        role = aws.iam.get_role(name=SPOT_ROLE_NAME)
    except Exception as exc:  # the invoke raises the provider's error text
        text = str(exc) or type(exc).__name__
        return None if any(t in text for t in NOT_FOUND_TEXTS) else text
    return dict(role.tags or {})


def build_spot_role(
    name: str, mode: SpotRoleMode, tags: dict[str, str], parent: pulumi.Resource
) -> aws.iam.ServiceLinkedRole | None:
    """The role, when this stack declares it (see the module docstring); None when the account's own is used."""
    marker = stack_marker()
    if mode != "create":
        existing = read_spot_role()
        if isinstance(existing, str):  # unreadable: declaring could fail `up` (taken), not declaring leave none
            pulumi.log.warn(
                f"Karpenter '{name}': spotServiceLinkedRole: {mode}, but the account's {SPOT_ROLE_NAME} could not be "
                f"read ({existing}), so this stack declares none. Allow iam:GetRole on it, or make sure it exists: "
                f"`{CREATE_COMMAND}` (an error that the name has been taken means it does), or set "
                "spotServiceLinkedRole: create to declare it.",
                resource=parent,
            )
            return None
        if mode == "exists":
            if existing is None:
                pulumi.log.warn(
                    f"Karpenter '{name}': spotServiceLinkedRole: exists, but the account has no {SPOT_ROLE_NAME}: "
                    f"Karpenter can launch no spot node until it does. Run `{CREATE_COMMAND}` or set "
                    "spotServiceLinkedRole: auto.",
                    resource=parent,
                )
            return None
        if existing is not None and existing.get(MANAGED_BY_TAG) != marker:
            return None  # the account's own role (or another stack's): used, never declared
    return aws.iam.ServiceLinkedRole(
        f"{name}-spot-role",
        aws_service_name=SPOT_SERVICE,
        description="EC2 Spot launches for Karpenter (elastic-gpu)",
        tags={**tags, MANAGED_BY_TAG: marker},
        opts=pulumi.ResourceOptions(parent=parent, retain_on_delete=True),
    )
