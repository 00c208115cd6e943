"""Production network and access choices, EKS managed add-ons, Kueue kept current and reachable."""

from __future__ import annotations

from typing import Any

import pytest

from elastic_gpu.aws.versions import EKS_ADDON_VERSIONS
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.gcp.versions import KUEUE_WEBHOOK_PORT
from elastic_gpu.tools.offline.runner import run_preview
from elastic_gpu.versions import SUPPORTED_KUBERNETES_VERSIONS
from tests.conftest import stack_preview, stack_values

P = "elastic-gpu:"
ADDON = "aws:eks/addon:Addon"
NG = "aws:eks/nodeGroup:NodeGroup"


def errors_for(stack: str, change) -> str:
    values: dict[str, Any] = stack_values(stack)
    change(values)
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return str(exc.value)


# --- EKS managed add-ons ------------------------------------------------------------------------


def test_addon_table_covers_every_supported_eks_minor_and_kube_proxy_matches_it() -> None:
    assert set(EKS_ADDON_VERSIONS) == set(SUPPORTED_KUBERNETES_VERSIONS["aws"])
    for minor, addons in EKS_ADDON_VERSIONS.items():
        assert set(addons) == {"vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"}
        assert addons["kube-proxy"].startswith(f"v{minor}.")  # kube-proxy follows the control plane's minor
        assert all(v.startswith("v") and "-eksbuild." in v for v in addons.values())


@pytest.mark.parametrize("stack", ["aws-dev", "aws-prod"])
def test_eks_addons_follow_the_cluster_minor_and_wait_for_the_node_groups(stack: str) -> None:
    p = stack_preview(stack)
    minor = p.config[P + "cluster"]["kubernetesVersion"]
    addons = {r.inputs["addonName"]: r for r in p.of_type(ADDON)}
    assert {name: r.inputs["addonVersion"] for name, r in addons.items()} == EKS_ADDON_VERSIONS[minor]
    groups = {r.urn for r in p.of_type(NG)}
    for r in addons.values():
        assert r.inputs["clusterName"] == p.config[P + "cluster"]["name"]
        assert r.inputs["resolveConflictsOnCreate"] == r.inputs["resolveConflictsOnUpdate"] == "OVERWRITE"
        assert groups <= set(r.depends_on), r.name


def test_a_minor_bump_moves_the_addons(program_dir) -> None:
    values = stack_values("aws-dev")
    values[P + "cluster"]["kubernetesVersion"] = "1.34"
    p = run_preview("aws-dev", program_dir(values, stack="aws-dev"))
    kube_proxy = next(r for r in p.of_type(ADDON) if r.inputs["addonName"] == "kube-proxy")
    assert kube_proxy.inputs["addonVersion"] == EKS_ADDON_VERSIONS["1.34"]["kube-proxy"]


# --- AWS network -----------------------------------------------------------------------------------


def route_targets(p) -> dict[str, str]:
    """Private subnet name -> the NAT gateway its route table sends 0.0.0.0/0 to."""
    by_id = p.by_id()
    out = {}
    for assoc in p.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation"):
        subnet = by_id[assoc.inputs["subnetId"]]
        if "private" not in subnet.name:
            continue
        rt = by_id[assoc.inputs["routeTableId"]]
        [route] = rt.inputs["routes"]
        out[subnet.inputs["availabilityZone"]] = by_id[route["natGatewayId"]].name
    return out


def test_prod_has_a_nat_gateway_per_zone_and_each_zone_uses_its_own() -> None:
    p = stack_preview("aws-prod")
    nats = p.of_type("aws:ec2/natGateway:NatGateway")
    assert len(nats) == 3
    by_id = p.by_id()
    for nat in nats:
        zone = nat.name.rsplit("nat-", 1)[1]
        assert by_id[nat.inputs["subnetId"]].inputs["availabilityZone"] == zone  # in its zone's public subnet
    assert route_targets(p) == {z: f"gpu-prod-nat-{z}" for z in ("us-east-1a", "us-east-1b", "us-east-1c")}


def test_dev_keeps_one_nat_gateway() -> None:
    p = stack_preview("aws-dev")
    assert len(p.of_type("aws:ec2/natGateway:NatGateway")) == 1
    assert set(route_targets(p).values()) == {"gpu-dev-nat"}


@pytest.mark.parametrize("stack", ["aws-dev", "aws-prod"])
def test_s3_gateway_endpoint_on_every_private_route_table(stack: str) -> None:
    p = stack_preview(stack)
    [s3] = [r for r in p.of_type("aws:ec2/vpcEndpoint:VpcEndpoint") if r.inputs["serviceName"].endswith(".s3")]
    region = p.config[P + "cluster"]["region"]
    assert s3.inputs["serviceName"] == f"com.amazonaws.{region}.s3" and s3.inputs["vpcEndpointType"] == "Gateway"
    private_rts = {r.id for r in p.of_type("aws:ec2/routeTable:RouteTable") if "natGatewayId" in r.inputs["routes"][0]}
    assert set(s3.inputs["routeTableIds"]) == private_rts


def test_prod_pulls_images_through_ecr_interface_endpoints() -> None:
    p = stack_preview("aws-prod")
    ecr = [r for r in p.of_type("aws:ec2/vpcEndpoint:VpcEndpoint") if ".ecr." in r.inputs["serviceName"]]
    assert sorted(r.inputs["serviceName"] for r in ecr) == [
        "com.amazonaws.us-east-1.ecr.api",
        "com.amazonaws.us-east-1.ecr.dkr",
    ]
    by_id = p.by_id()
    for r in ecr:
        assert r.inputs["vpcEndpointType"] == "Interface" and r.inputs["privateDnsEnabled"] is True
        assert {by_id[s].name for s in r.inputs["subnetIds"]} == {f"gpu-prod-private-us-east-1{z}" for z in "abc"}
        [sg] = [by_id[g] for g in r.inputs["securityGroupIds"]]
        assert sg.inputs["ingress"] == [
            {"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["10.40.0.0/16"]}
        ]
    # node groups wait for the endpoints (image pulls)
    for g in p.of_type(NG):
        assert {r.urn for r in ecr} <= set(g.depends_on)
    assert not [r for r in stack_preview("aws-dev").of_type("aws:ec2/vpcEndpoint:VpcEndpoint") if ".ecr." in r.name]


# --- API endpoint access -----------------------------------------------------------------------------


def test_eks_prod_restricts_the_public_endpoint() -> None:
    vpc = stack_preview("aws-prod").one("aws:eks/cluster:Cluster", "gpu-prod-eks").inputs["vpcConfig"]
    assert vpc["endpointPrivateAccess"] is True and vpc["endpointPublicAccess"] is True
    assert vpc["publicAccessCidrs"] == ["203.0.113.0/24"]
    dev = stack_preview("aws-dev").one("aws:eks/cluster:Cluster", "gpu-dev-eks").inputs["vpcConfig"]
    assert "publicAccessCidrs" not in dev  # default: anywhere


def test_eks_private_only(program_dir) -> None:
    values = stack_values("aws-dev")
    values[P + "cluster"]["apiAccess"] = {"public": False}
    p = run_preview("aws-dev", program_dir(values, stack="aws-dev"))
    vpc = p.one("aws:eks/cluster:Cluster", "gpu-dev-eks").inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is False and vpc["endpointPrivateAccess"] is True
    assert "publicAccessCidrs" not in vpc


def test_aks_prod_authorized_ranges_and_private_cluster(program_dir) -> None:
    prod = stack_preview("azure-prod").one("azure-native:containerservice:ManagedCluster", "gpu-prod-aks")
    assert prod.inputs["apiServerAccessProfile"] == {"authorizedIPRanges": ["203.0.113.0/24"]}
    values = stack_values("azure-dev")
    values[P + "cluster"]["apiAccess"] = {"public": False}
    p = run_preview("azure-dev", program_dir(values, stack="azure-dev"))
    cluster = p.one("azure-native:containerservice:ManagedCluster", "gpu-dev-aks")
    assert cluster.inputs["apiServerAccessProfile"] == {"enablePrivateCluster": True}


def test_gke_prod_master_authorized_networks_and_private_endpoint(program_dir) -> None:
    c = stack_preview("gcp-prod").one("gcp:container/cluster:Cluster", "gpu-prod-gke").inputs
    assert c["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"cidrBlock": "203.0.113.0/24", "displayName": "203.0.113.0/24"}
    ]
    assert c["privateClusterConfig"]["masterIpv4CidrBlock"] == "172.16.0.0/28"
    assert c["privateClusterConfig"]["enablePrivateEndpoint"] is False
    values = stack_values("gcp-dev")
    values[P + "cluster"]["apiAccess"] = {"public": False}
    p = run_preview("gcp-dev", program_dir(values, stack="gcp-dev"))
    dev = p.one("gcp:container/cluster:Cluster", "gpu-dev-gke").inputs
    assert dev["privateClusterConfig"]["enablePrivateEndpoint"] is True
    assert dev["masterAuthorizedNetworksConfig"] == {"cidrBlocks": []}  # on, nothing outside the VPC


@pytest.mark.parametrize(
    ("stack", "change", "message"),
    [
        (
            "aws-dev",
            lambda v: v[P + "cluster"].update({"apiAccess": {"publicCidrs": ["10.0.0.1/8"]}}),
            "cluster.apiAccess.publicCidrs[0]: '10.0.0.1/8' is not an IPv4 range",
        ),
        (
            "aws-dev",
            lambda v: v[P + "cluster"].update({"apiAccess": {"public": False, "publicCidrs": ["203.0.113.0/24"]}}),
            "cluster.apiAccess.publicCidrs: set only with a public endpoint",
        ),
        (
            "gcp-dev",
            lambda v: v[P + "cluster"].update({"privateNodes": False, "apiAccess": {"public": False}}),
            "cluster.apiAccess.public: a GKE private endpoint needs private nodes",
        ),
        (
            "azure-dev",
            lambda v: v[P + "cluster"].update({"natGateways": "single"}),
            "cluster.natGateways: an AWS-only setting; remove it for cloud 'azure'",
        ),
        (
            "gcp-dev",
            lambda v: v[P + "cluster"].update({"controlPlaneCidr": "172.16.0.0/24"}),
            "cluster.controlPlaneCidr: '172.16.0.0/24' is not an IPv4 /28",
        ),
        ("aws-dev", lambda v: v.update({P + "kueue": {"namespaces": ["ml"]}}), "kueue: only used with a gpuPools"),
        (
            "gcp-prod",
            lambda v: v.update({P + "kueue": {"namespaces": ["ML_team"]}}),
            "kueue.namespaces[0]: 'ML_team' is not a Kubernetes namespace name",
        ),
    ],
)
def test_access_and_network_config_errors(stack: str, change, message: str) -> None:
    assert message in errors_for(stack, change)


# --- Kueue ----------------------------------------------------------------------------------------


def test_private_gke_control_plane_reaches_kueues_webhook() -> None:
    p = stack_preview("gcp-prod")
    fw = p.one("gcp:compute/firewall:Firewall", "kueue-webhook")
    assert fw.inputs["direction"] == "INGRESS"
    assert fw.inputs["sourceRanges"] == [p.config[P + "cluster"]["controlPlaneCidr"]]
    assert fw.inputs["allows"] == [{"protocol": "tcp", "ports": [str(KUEUE_WEBHOOK_PORT), "8082"]}]
    network = p.one("gcp:container/cluster:Cluster", "gpu-prod-gke").inputs["network"]
    assert fw.inputs["network"] == network != "default" and fw.inputs["project"] == "elastic-gpu-prod"
    assert fw.provider and "pulumi:providers:gcp::gcp::" in fw.provider  # the stack's explicit provider
    release = p.one("kubernetes:helm.sh/v3:Release", "kueue-kueue")
    assert fw.urn in release.depends_on  # the webhook answers from the first object on
