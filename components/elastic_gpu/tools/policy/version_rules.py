"""The cluster's Kubernetes minor is in standard support (kubernetes-version-standard-support, advisory) and
not past end of life (kubernetes-version-not-end-of-life, mandatory), by the support table in
elastic_gpu/versions.py: a cluster resource's declared minor, and the minor of a handle on a cluster this
library did not create (`existing()`, `from_*`), which its pools follow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from elastic_gpu.tools.clouds import all_clouds, get_cloud
from elastic_gpu.versions import SupportStatus, support_status


@runtime_checkable
class RunningVersion(Protocol):
    """A cluster that runs another version than it declares (GKE: the release channel upgrades past a floor; AKS:
    Long Term Support), as the version policy judges it. An optional capability: a cloud's tools implement it
    (tools/<cloud>/cloud.py)."""

    def running_support(self, status: SupportStatus, props: Mapping[str, Any]) -> SupportStatus:
        """The support status of the version the cluster resource (`props`) will run, from its declared one's."""
        ...


#: The cluster resource of each cloud and the input that carries its Kubernetes version (its versions part).
CLUSTER_VERSION_INPUTS: dict[str, tuple[str, str]] = {
    resource_type: (cloud.name, key)
    for cloud in all_clouds()
    for resource_type, key in cloud.versions().version_inputs.items()
}


def cluster_support(args: ResourceValidationArgs) -> SupportStatus | None:
    """The support status of the cluster resource's or handle's minor (None: neither, or newer than the table)."""
    found = CLUSTER_VERSION_INPUTS.get(args.resource_type)
    if found is None:
        return None
    cloud, key = found
    props = args.props or {}
    version = props.get(key)
    provider = get_cloud(cloud)
    status = support_status(provider, version) if isinstance(version, str) and version else None
    # The version that will run, where the cloud says more than the declared one (GKE: its release channel).
    if status is not None and isinstance(provider, RunningVersion):
        return provider.running_support(status, props)
    return status


def validate_in_standard_support(args: ResourceValidationArgs, report: ReportViolation) -> None:
    status = cluster_support(args)
    if status is not None and status.level == "past-standard":
        report(status.message(), None)


def validate_not_end_of_life(args: ResourceValidationArgs, report: ReportViolation) -> None:
    status = cluster_support(args)
    if status is not None and status.level == "end-of-life":
        report(status.message(), None)


kubernetes_version_standard_support = ResourceValidationPolicy(
    name="kubernetes-version-standard-support",
    description=(
        "The cluster's Kubernetes minor is in its cloud's standard support (past it: EKS charges extended "
        "support; upgrade one minor at a time)."
    ),
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=validate_in_standard_support,
)

kubernetes_version_not_end_of_life = ResourceValidationPolicy(
    name="kubernetes-version-not-end-of-life",
    description=(
        "The cluster's Kubernetes minor has not reached end of life on its cloud (AKS refuses to create it, GKE "
        "and EKS upgrade it on their own schedule)."
    ),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate_not_end_of_life,
)
