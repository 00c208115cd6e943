"""Each rule: the `bad-*` resources of the test programs are flagged, and only them (the `ok-*` ones pass).

The programs (tests/policy_programs.py) declare raw provider resources under the mock engine;
the report comes from the same offline engine as `python -m elastic_gpu policy`.
"""

from __future__ import annotations

import pytest
from policy_programs import flagged, program_preview, program_report

from elastic_gpu.tools.policy import ALL_POLICIES, POLICIES_BY_NAME

EXPECTED: dict[str, dict[str, set[str]]] = {
    "gpu-pool-noschedule-taint": {"aws": {"bad-notaint"}, "azure": {"bad-notaint"}, "gcp": {"bad-notaint"}},
    "spot-gpu-pool-scales-to-zero": {
        "aws": {"bad-minsize"},
        "azure": {"bad-minsize"},
        "gcp": {"bad-minsize", "bad-unbounded"},  # no autoscaling: can never reach zero
    },
    "spot-pool-is-spot": {
        "aws": {"bad-notspot"},
        "azure": {"bad-notspot", "bad-deallocate"},
        "gcp": {"bad-preemptible"},
    },
    "eks-autoscaler-asg-tags": {"aws": {"bad-noasgtags", "bad-ownedtags"}, "azure": set(), "gcp": set()},
    "device-plugin-tolerates-gpu-taints": {"aws": {"bad-plugin"}, "azure": {"bad-plugin"}, "gcp": set()},
    "autoscaler-owned-size-ignored": {"aws": {"bad-pinned"}, "azure": {"bad-pinned"}, "gcp": {"bad-pinned"}},
    "node-disks-encrypted": {"aws": {"bad-lt-unencrypted", "bad-nolt"}, "azure": set(), "gcp": set()},
    "eks-launch-template-imdsv2": {"aws": {"bad-lt-imdsv1"}, "azure": set(), "gcp": set()},
    "no-public-node-ips": {"aws": {"bad-lt-public"}, "azure": {"bad-public"}, "gcp": {"bad-public"}},
    "cluster-autoscaler-off-spot-and-gpu": {"aws": {"bad-ca", "bad-ca-spot-only"}, "azure": set(), "gcp": set()},
    "controllers-schedulable": {
        "aws": {"bad-ca-nowhere", "bad-ca-spot-only", "bad-karpenter-nowhere"},
        "azure": set(),
        "gcp": set(),
    },
    "cost-allocation-tags": {
        "aws": {"bad-untagged", "bad-vpc-untagged"},
        "azure": {"bad-untagged"},
        "gcp": {"bad-unlabelled"},
    },
    "spot-gpu-pool-on-demand-fallback": {
        "aws": {"bad-nofallback"},
        "azure": {"bad-nofallback"},
        "gcp": {"bad-nofallback"},
    },
    "eks-gpu-groups-autoscaled": {"aws": {"bad-unlisted"}, "azure": set(), "gcp": set()},
    "gpu-node-group-one-model": {"aws": {"bad-twomodels"}, "azure": set(), "gcp": set()},
    "eks-irsa-trusts-an-oidc-provider": {"aws": {"bad-irsa"}, "azure": set(), "gcp": set()},
    "gpu-pool-max-size-cap": {
        "aws": {"bad-toobig"},
        "azure": {"bad-toobig"},
        "gcp": {"bad-toobig", "bad-unbounded"},  # no max at all
    },
}

CASES = [(policy, cloud) for policy, clouds in EXPECTED.items() for cloud in clouds]


@pytest.mark.parametrize(("policy", "cloud"), CASES, ids=[f"{p}-{c}" for p, c in CASES])
def test_rule_flags_exactly_the_bad_resources(policy: str, cloud: str) -> None:
    assert flagged(cloud, policy) == EXPECTED[policy][cloud]


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_programs_declare_the_ok_and_bad_resources(cloud: str) -> None:
    names = {r.name for r in program_preview(cloud).resources}
    expected = set().union(*(e[cloud] for e in EXPECTED.values())) | {"ok-spot", "ok-fallback"}
    assert expected <= names


def test_every_rule_of_the_issue_has_cases() -> None:
    # The version rules depend on the day; tests/test_versions.py judges them on fixed dates.
    # gpu-monthly-cost-ceiling and spot-gpu-pool-fallback-promise (and its advisory twin) have their own files
    # (test_cost.py, test_fallback_promise.py), the Karpenter rules test_karpenter_eks.py.
    dated = {"kubernetes-version-standard-support", "kubernetes-version-not-end-of-life"}
    own_files = {
        "gpu-monthly-cost-ceiling",
        "spot-gpu-pool-fallback-promise",
        "spot-gpu-pool-fallback-promise-advisory",
        "account-preflight",
    }
    own_files |= {"karpenter-gpu-node-pool", "karpenter-fallback-ordered", "karpenter-interruption-handling"}
    # The reserved tier's rules: tests/test_reserved_tier_tools.py
    own_files |= {"gpu-pool-uses-its-reservations", "reservation-used"}
    # GKE auto-provisioning's rules: tests/test_gke_autoprovisioning.py
    own_files |= {
        "gke-auto-provisioning-gpu-limits",
        "gke-auto-provisioning-gpu-cap",
        "gke-compute-class-gpu-taint",
        "gke-compute-class-spot-first",
        "gke-compute-class-scale-down",
    }
    assert set(EXPECTED) | own_files | dated == set(POLICIES_BY_NAME)


def test_violations_carry_level_resource_and_a_fix() -> None:
    for cloud in ("aws", "azure", "gcp"):
        for v in program_report(cloud).violations:
            level = POLICIES_BY_NAME[v.policy].enforcement_level
            assert level is not None and v.level == level.value
            assert v.message.endswith(".") and len(v.message) > 40
            if v.policy != "gpu-monthly-cost-ceiling":
                assert v.urn and v.name, v


def test_messages_say_what_to_do() -> None:
    [taint] = program_report("aws").of("gpu-pool-noschedule-taint")
    assert "c1-bad-notaint" in taint.message and "nvidia.com/gpu=true:NoSchedule" in taint.message
    tags = {v.name: v.message for v in program_report("aws").of("eks-autoscaler-asg-tags")}
    assert "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu" in tags["bad-noasgtags"]
    owned = tags["bad-ownedtags"]
    assert "k8s.io/cluster-autoscaler/c1, k8s.io/cluster-autoscaler/enabled" in owned and "EKS sets" in owned
    [aks_plugin] = program_report("azure").of("device-plugin-tolerates-gpu-taints")
    assert "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in aks_plugin.message


def test_levels_names_and_descriptions() -> None:
    advisory = {p.name for p in ALL_POLICIES if p.enforcement_level.value == "advisory"}
    assert advisory == {
        "gpu-monthly-cost-ceiling",
        "spot-gpu-pool-on-demand-fallback",
        "kubernetes-version-standard-support",
        "spot-gpu-pool-fallback-promise-advisory",
        "account-preflight",
        "gke-auto-provisioning-gpu-cap",
        "gpu-pool-uses-its-reservations",
        "reservation-used",
    }
    for p in ALL_POLICIES:
        assert p.name == p.name.lower() and " " not in p.name
        assert len(p.description) > 60
