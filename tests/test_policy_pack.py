"""The pack is assembled from the cloud-neutral rules (elastic_gpu/tools/policy/) and each cloud's `policies`
part, which places its own rules after a neutral one: the pack keeps the order of policy/README.md's Rules
table, whatever folder a rule is in."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pulumi_policy import EnforcementLevel, PolicyResource, StackValidationArgs, StackValidationPolicy
from pulumi_policy.policy import PolicyResourceOptions

from elastic_gpu.tools.policy import ALL_POLICIES, assemble
from elastic_gpu.tools.policy.security_rules import validate_no_public_ips


def test_the_pack_keeps_the_rule_lists_order() -> None:
    # The order of the report's violations and of `python -m elastic_gpu policy`'s "allowed:" list.
    assert [p.name for p in ALL_POLICIES] == [
        "gpu-pool-noschedule-taint",
        "spot-gpu-pool-scales-to-zero",
        "spot-pool-is-spot",
        "eks-autoscaler-asg-tags",
        "device-plugin-tolerates-gpu-taints",
        "autoscaler-owned-size-ignored",
        "node-disks-encrypted",
        "eks-launch-template-imdsv2",
        "no-public-node-ips",
        "cluster-autoscaler-off-spot-and-gpu",
        "controllers-schedulable",
        "gpu-monthly-cost-ceiling",
        "cost-allocation-tags",
        "spot-gpu-pool-on-demand-fallback",
        "gpu-pool-max-size-cap",
        "eks-gpu-groups-autoscaled",
        "kubernetes-version-standard-support",
        "kubernetes-version-not-end-of-life",
        "spot-gpu-pool-fallback-promise",
        "gpu-node-group-one-model",
        "eks-irsa-trusts-an-oidc-provider",
        "spot-gpu-pool-fallback-promise-advisory",
        "karpenter-gpu-node-pool",
        "karpenter-fallback-ordered",
        "gpu-pool-uses-its-reservations",
        "reservation-used",
        "account-preflight",
        "karpenter-interruption-handling",
        "gke-auto-provisioning-gpu-limits",
        "gke-auto-provisioning-gpu-cap",
        "gke-compute-class-gpu-taint",
        "gke-compute-class-spot-first",
        "gke-compute-class-scale-down",
    ]


def _policy(name: str) -> StackValidationPolicy:
    return StackValidationPolicy(name, "d", lambda args, report: None, EnforcementLevel.MANDATORY)


def test_a_clouds_rule_goes_after_the_rule_it_names_in_the_order_given() -> None:
    a, b, x, y, z = (_policy(n) for n in "abxyz")
    placed = [(None, z), ("a", x), ("a", y)]
    assert [p.name for p in assemble([a, b], placed)] == ["a", "x", "y", "b", "z"]
    with pytest.raises(ValueError, match="placed after an unknown policy: c"):
        assemble([a, b], [("c", x)])


def _resource(resource_type: str, name: str, props: dict) -> PolicyResource:
    opts = PolicyResourceOptions(False, [], False, [], None, [])  # type: ignore[arg-type]
    return PolicyResource(resource_type, props, f"urn:{name}", name, opts, None, None, [], {})


def test_public_node_ips_are_reported_in_the_stacks_order_whichever_cloud_finds_them() -> None:
    resources = [
        _resource("gcp:container/nodePool:NodePool", "gke", {"name": "gke"}),
        _resource(
            "aws:ec2/launchTemplate:LaunchTemplate", "lt", {"networkInterfaces": [{"associatePublicIpAddress": "true"}]}
        ),
        _resource("azure-native:containerservice:AgentPool", "aks", {"enableNodePublicIP": True}),
    ]
    urns: list[str | None] = []
    validate_no_public_ips(StackValidationArgs(resources), lambda message, urn=None: urns.append(urn))
    assert urns == ["urn:gke", "urn:lt", "urn:aks"]


@pytest.mark.parametrize(
    "module", ["elastic_gpu.tools.aws.pack.node_groups", "elastic_gpu.tools.gcp.pack.auto_provisioning"]
)
def test_a_clouds_rules_import_before_the_pack(module: str) -> None:
    # A cloud's rules import policy_rules' helpers; the pack, assembled on first use, then imports them back.
    code = f"import {module}\nfrom elastic_gpu.tools.policy import ALL_POLICIES\nprint(len(ALL_POLICIES))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout, done.stderr[-300:]) == (0, f"{len(ALL_POLICIES)}\n", "")
