"""The Kubernetes support table (elastic_gpu/versions.py): levels by date, the preview warning, the policy levels."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from conftest import stack_values

from elastic_gpu import versions
from elastic_gpu.clouds import get_cloud
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.versions import KUBERNETES_SUPPORT, README_BEGIN, README_END, support_status, support_table
from tests.docs_pages import page

P = "elastic-gpu:"
ROOT = Path(__file__).resolve().parent.parent
TODAY = date(2026, 11, 24)


@pytest.fixture
def on_today(monkeypatch):
    monkeypatch.setattr(versions, "today", lambda: TODAY)


@pytest.mark.parametrize(
    ("cloud", "minor", "level", "next_minor"),
    [
        ("aws", "1.33", "past-standard", "1.34"),  # EKS extended support until 2027-07-29
        ("aws", "1.34", "standard", "1.35"),
        ("azure", "1.33", "end-of-life", "1.34"),
        ("azure", "1.34", "standard", "1.35"),  # until 2026-11-30
        ("gcp", "1.34", "end-of-life", "1.35"),
        ("gcp", "1.36", "standard", "1.37"),
        ("gcp", "1.37", "standard", None),  # in GKE's Rapid channel since 2026-10-08
    ],
)
def test_level_on_a_day(cloud, minor, level, next_minor) -> None:
    status = support_status(get_cloud(cloud), minor, TODAY)
    assert status is not None and (status.level, status.next_minor) == (level, next_minor)


def test_the_last_day_is_still_in_support() -> None:
    row = KUBERNETES_SUPPORT["aws"]["1.34"]
    assert support_status(get_cloud("aws"), "1.34.2", row.end_of_standard_support).level == "standard"
    assert support_status(get_cloud("aws"), "1.34", date(2026, 12, 3)).level == "past-standard"
    assert support_status(get_cloud("aws"), "1.34", date(2027, 12, 3)).level == "end-of-life"


def test_a_minor_older_than_the_table_is_end_of_life_and_a_newer_one_unknown() -> None:
    status = support_status(get_cloud("aws"), "1.29", TODAY)
    assert status is not None and (status.row, status.level) == (None, "end-of-life")
    assert status.message().startswith(
        "Kubernetes 1.29 on aws is past its end of life: it is older than every minor EKS still lists"
    )
    assert support_status(get_cloud("azure"), "1.26.3", TODAY).level == "end-of-life"
    assert support_status(get_cloud("aws"), "1.99", TODAY) is None


def test_the_advice_never_names_a_date_already_past() -> None:
    # On 2026-12-05 AKS 1.34's standard support (until 2026-11-30) is over, and AKS moves an unsupported minor
    # straight into the oldest supported one (azure/upgrade_path.py): 1.33 goes to 1.35 in one upgrade.
    message = support_status(get_cloud("azure"), "1.33", date(2026, 12, 5)).message()
    assert "upgrade to 1.35 (standard support until 2027-03-31)" in message
    assert "through 1.34" not in message and "2026-11-30" not in message
    # EKS upgrades one minor at a time: a minor past its support goes through the ones between.
    eks = support_status(get_cloud("aws"), "1.32", date(2027, 1, 15)).message()
    assert "one minor at a time (through" in eks
    # The day before, 1.34 is still the next step.
    assert (
        "upgrade to 1.34 (standard support until 2026-11-30)"
        in support_status(get_cloud("azure"), "1.33", date(2026, 11, 29)).message()
    )
    # Past every row's standard support: no date at all.
    assert (
        support_status(get_cloud("gcp"), "1.34", date(2030, 1, 1))
        .message()
        .count("upgrade to a minor in standard support")
        == 1
    )


def test_shipped_stacks_are_in_standard_support_today() -> None:
    for stack_file in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")):
        values = __import__("yaml").safe_load(stack_file.read_text())["config"]
        status = support_status(get_cloud(values[P + "cloud"]), values[P + "cluster"]["kubernetesVersion"], TODAY)
        assert status is not None and status.level == "standard", stack_file.name


def test_preview_of_an_end_of_life_minor_warns_with_the_date(program_dir, on_today) -> None:
    values = stack_values("azure-dev")
    values[P + "cluster"]["kubernetesVersion"] = "1.33"
    preview = run_preview("t", program_dir(values, stack="t"))
    [warning] = [w for w in preview.warnings if "kubernetesVersion" in w]
    assert warning.startswith("cluster.kubernetesVersion: Kubernetes 1.33 on azure reached end of life on 2026-07-31")
    assert "upgrade to 1.34 (standard support until 2026-11-30)" in warning
    levels = {v.policy: v.level for v in run_policies(preview).violations if v.policy.startswith("kubernetes-")}
    assert levels == {"kubernetes-version-not-end-of-life": "mandatory"}


def test_extended_support_is_an_advisory_naming_the_date(program_dir, on_today) -> None:
    values = stack_values("aws-dev")
    values[P + "cluster"]["kubernetesVersion"] = "1.33"
    preview = run_preview("t", program_dir(values, stack="t"))
    [warning] = [w for w in preview.warnings if "kubernetesVersion" in w]
    assert "past its end of standard support (2026-07-29; extended support, at extra cost, until 2027-07-29)" in warning
    violations = [v for v in run_policies(preview).violations if v.policy.startswith("kubernetes-")]
    assert [(v.policy, v.level, v.name) for v in violations] == [
        ("kubernetes-version-standard-support", "advisory", "gpu-dev-eks")
    ]
    assert "upgrade to 1.34" in violations[0].message


def test_shipped_minor_previews_without_a_version_warning(program_dir, on_today) -> None:
    preview = run_preview("t", program_dir(stack_values("gcp-dev"), stack="t"))
    assert not [w for w in preview.warnings if "kubernetesVersion" in w]
    assert not [v for v in run_policies(preview).violations if v.policy.startswith("kubernetes-")]


def test_an_existing_cluster_past_its_support_warns(run_program, on_today) -> None:
    preview = run_program(
        "from elastic_gpu import AksCluster\n"
        'AksCluster.existing("old", cluster_name="c", resource_group_name="rg", location="westeurope",\n'
        '                    zones=["1"], kubernetes_version="1.33")\n'
    )
    assert any(
        w.startswith("kubernetes_version: Kubernetes 1.33 on azure reached end of life") for w in preview.warnings
    )


def test_readme_support_table_is_generated() -> None:
    readme = page("kubernetes-versions.md")
    section = readme[readme.index(README_BEGIN) : readme.index(README_END) + len(README_END)]
    assert section == support_table(), "regenerate README's support table from versions.support_table()"


@pytest.mark.parametrize(
    ("channel", "policies", "says"),
    [
        ("REGULAR", {"kubernetes-version-not-end-of-life": "mandatory"}, "On release channel REGULAR 1.35 is a floor"),
        (
            "EXTENDED",
            {"kubernetes-version-standard-support": "advisory"},
            "On the EXTENDED channel GKE keeps the minor",
        ),
    ],
)
def test_gke_is_judged_by_the_version_its_channel_runs(program_dir, monkeypatch, channel, policies, says) -> None:
    values = stack_values("gcp-dev")
    values[P + "cluster"].update(kubernetesVersion="1.35", releaseChannel=channel)
    preview = run_preview("t", program_dir(values, stack="t"))
    monkeypatch.setattr(versions, "today", lambda: date(2027, 5, 1))  # 1.35's standard support ended 2027-04-11
    found = [v for v in run_policies(preview).violations if v.policy.startswith("kubernetes-")]
    assert {v.policy: v.level for v in found} == policies
    assert says in found[0].message


def test_gke_says_the_version_is_a_floor_unless_the_channel_keeps_it(program_dir) -> None:
    values = stack_values("gcp-dev")
    [floor] = [w for w in run_preview("t", program_dir(values, stack="t")).warnings if "releaseChannel" in w]
    assert floor.startswith("cluster.releaseChannel: REGULAR: GKE upgrades this cluster past Kubernetes 1.35")
    assert "set releaseChannel: EXTENDED to keep 1.35" in floor
    values[P + "cluster"]["releaseChannel"] = "EXTENDED"
    assert not [w for w in run_preview("t", program_dir(values, stack="t")).warnings if "releaseChannel" in w]


# --- GKE's own calendar; AKS Long Term Support -------------------------------------------------------------


def test_gke_minors_come_from_gkes_calendar_not_autoscaler_tags() -> None:
    from elastic_gpu.versions import CLUSTER_AUTOSCALER_TAGS, SUPPORTED_KUBERNETES_VERSIONS

    assert "1.37" not in CLUSTER_AUTOSCALER_TAGS  # no autoscaler image of 1.37 is pinned ...
    assert "1.37" in SUPPORTED_KUBERNETES_VERSIONS["gcp"]  # ... yet GKE offers it and runs its own autoscaler
    assert not {"1.32", "1.33", "1.34"} & set(SUPPORTED_KUBERNETES_VERSIONS["gcp"])  # past end of support


@pytest.mark.parametrize("minor", ["1.32", "1.33", "1.34"])
def test_a_gke_minor_past_end_of_support_is_refused(program_dir, minor) -> None:
    from elastic_gpu.errors import ConfigError

    values = stack_values("gcp-dev")
    values[P + "cluster"]["kubernetesVersion"] = minor
    with pytest.raises(ConfigError) as exc:
        run_preview("t", program_dir(values, stack="t"))
    assert f"cluster.kubernetesVersion: {minor!r} is not supported on gcp; allowed: 1.35, 1.36, 1.37" in str(exc.value)


def test_gke_1_37_previews(program_dir, on_today) -> None:
    values = stack_values("gcp-dev")
    values[P + "cluster"]["kubernetesVersion"] = "1.37"
    preview = run_preview("t", program_dir(values, stack="t"))
    assert not [v for v in run_policies(preview).violations if v.policy.startswith("kubernetes-")]


def _aks_cluster_args(props):
    from pulumi_policy import ResourceValidationArgs

    return ResourceValidationArgs("azure-native:containerservice:ManagedCluster", props, "urn:c", "c", None, None)


@pytest.mark.parametrize(
    ("plan", "tier", "level"),
    [
        ("AKSLongTermSupport", "Premium", "past-standard"),  # LTS until 2027-07-31: advisory, not end of life
        ("KubernetesOfficial", "Premium", "end-of-life"),  # 1.33's End of life was 2026-07-31
        (None, "Standard", "end-of-life"),
        ("AKSLongTermSupport", "Standard", "end-of-life"),  # AKS allows LTS on Premium only
    ],
)
def test_an_aks_133_cluster_is_judged_by_its_support_plan(on_today, plan, tier, level) -> None:
    from elastic_gpu.tools.policy.version_rules import cluster_support, validate_not_end_of_life

    props = {"kubernetesVersion": "1.33", "sku": {"name": "Base", "tier": tier}}
    if plan:
        props["supportPlan"] = plan
    status = cluster_support(_aks_cluster_args(props))
    assert status is not None and status.level == level
    reported: list[str] = []
    validate_not_end_of_life(_aks_cluster_args(props), lambda message, urn: reported.append(message))
    assert bool(reported) == (level == "end-of-life")
    if level == "past-standard":
        assert "extended support, at extra cost, until 2027-07-31" in status.message()
        assert "On AKS Long Term Support (AKSLongTermSupport, Premium tier)." in status.message()


def test_lts_ends_too() -> None:
    from elastic_gpu.azure.versions import running_support

    past = support_status(get_cloud("azure"), "1.33", date(2027, 8, 1))
    assert past is not None
    lts = running_support(past, {"supportPlan": "AKSLongTermSupport", "sku": {"tier": "Premium"}})
    assert lts.level == "end-of-life" and "reached end of life on 2027-07-31" in lts.message()
