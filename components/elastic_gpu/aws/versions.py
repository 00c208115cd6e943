"""EKS: the Kubernetes minors it accepts (elastic_gpu/versions.py merges them) and its managed add-ons."""

from __future__ import annotations

from datetime import date

from elastic_gpu.aws import EKS_CLUSTER, EKS_EXISTING_CLUSTER, EKS_NODE_GROUP
from elastic_gpu.cloud_facts import VersionRows
from elastic_gpu.clouds import HANDLE_VERSION_INPUT, MinorSupport

_SOURCE = (
    "EKS calendar (docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html) as mirrored by "
    "endoflife-date/endoflife.date products/amazon-eks.md (eol = end of standard support, eoes = end of "
    "extended support; commit a70eca3 of 2026-08-22)"
)

#: EKS: 12 months of paid extended support after the end of standard support.
KUBERNETES_SUPPORT = (
    MinorSupport("1.32", date(2026, 3, 23), date(2027, 3, 23), _SOURCE),
    MinorSupport("1.33", date(2026, 7, 29), date(2027, 7, 29), _SOURCE),
    MinorSupport("1.34", date(2026, 12, 2), date(2027, 12, 2), _SOURCE),
    MinorSupport("1.35", date(2027, 3, 27), date(2028, 3, 27), _SOURCE),
    MinorSupport("1.36", date(2027, 8, 2), date(2028, 8, 2), _SOURCE),
)


def minor(kubernetes_version: str) -> str:
    """ "1.33" of "1.33" or "1.33.2"."""
    return ".".join(kubernetes_version.split(".")[:2])


#: EKS managed add-ons per Kubernetes minor: the minors EksAddons accepts and the versions it pins for each
#: (aws/addons.py; also the offline answer to `aws.eks.get_addon_version`). Each is the
#: latest version of the EKS add-on type for the minor, as the EKS user guide's tables list them
#: (managing-kube-proxy, managing-coredns: the ja_jp .md copy that lists 1.36, the newest found; 1.33
#: coredns stays v1.13.2 from the docs.amazonaws.cn copy, as that copy lists it and an add-on is not
#: downgraded). vpc-cni: one version serves every minor in each copy of its table (managing-vpc-cni); no
#: copy listing 1.35 or 1.36 was found, so v1.21.1-eksbuild.7 there is unverified. eks-pod-identity-agent
#: has no per-minor table (one agent serves every supported minor); its version is the newest seen in
#: published EKS configs, unverified for 1.36.
#: Check against `aws eks describe-addon-versions --addon-name <name> --kubernetes-version <minor>`.
EKS_ADDON_VERSIONS: dict[str, dict[str, str]] = {
    "1.32": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.32.13-eksbuild.16",
        "coredns": "v1.11.4-eksbuild.40",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.33": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.33.10-eksbuild.13",
        "coredns": "v1.13.2-eksbuild.4",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.34": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.34.6-eksbuild.13",
        "coredns": "v1.13.2-eksbuild.11",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.35": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.35.3-eksbuild.13",
        "coredns": "v1.14.3-eksbuild.3",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
    "1.36": {
        "vpc-cni": "v1.21.1-eksbuild.7",
        "kube-proxy": "v1.36.0-eksbuild.14",
        "coredns": "v1.14.3-eksbuild.3",
        "eks-pod-identity-agent": "v1.3.10-eksbuild.2",
    },
}


def eks_addon_versions(kubernetes_version: str) -> dict[str, str]:
    """The EKS managed add-ons and their versions for ``kubernetes_version`` ("1.33" or "1.33.2")."""
    key = minor(kubernetes_version)
    try:
        return dict(EKS_ADDON_VERSIONS[key])
    except KeyError:
        allowed = ", ".join(EKS_ADDON_VERSIONS)
        raise ValueError(f"no EKS add-on versions pinned for Kubernetes {key}; pinned: {allowed}") from None


#: Its cluster resource and the input that carries its Kubernetes version, and the handle on a cluster this
#: library did not create, whose minor its node groups follow (the version policy rules judge both).
VERSION_INPUTS = {EKS_CLUSTER: "version", EKS_EXISTING_CLUSTER: HANDLE_VERSION_INPUT}

#: Its node-pool resource and the input that carries the nodes' Kubernetes version (`diff`: version skew
#: between control plane and nodes). Unset, the nodes follow the control plane.
NODE_VERSION_INPUTS = {EKS_NODE_GROUP: "version"}


#: The rows above as the deploy protocol's record (elastic_gpu/provider.py VersionRows).
ROWS = VersionRows(
    kubernetes_support=KUBERNETES_SUPPORT, version_inputs=VERSION_INPUTS, node_version_inputs=NODE_VERSION_INPUTS
)
