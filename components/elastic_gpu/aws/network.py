"""The VPC an EKS cluster needs: private subnets for nodes (no public IPs), public ones for the NAT
gateways (one per zone, or one for dev), an S3 gateway endpoint and optionally ECR interface endpoints."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from elastic_gpu.settings.aws import DEFAULT_NAT_GATEWAYS, NatGateways

#: Each zone gets one /(n+3) private block and one /(n+3) public block of the VPC range.
MAX_ZONES = 4


@dataclass
class Network:
    vpc_id: pulumi.Output[str]
    private_subnet_ids: dict[str, pulumi.Output[str]]  #: by zone: where nodes go
    public_subnet_ids: dict[str, pulumi.Output[str]]  #: by zone: NAT gateway and public load balancers
    egress: list[pulumi.Resource]  #: what nodes need before they can join (NAT route)


def build_network(
    name: str,
    *,
    cluster_name: str,
    cidr: str,
    zones: list[str],
    tags: dict[str, str],
    parent: pulumi.Resource,
    region: str,
    nat_gateways: NatGateways = DEFAULT_NAT_GATEWAYS,
    ecr_endpoints: bool = False,
    private_subnet_tags: dict[str, str] | None = None,
) -> Network:
    if len(zones) > MAX_ZONES:
        raise ValueError(f"at most {MAX_ZONES} zones are supported (got {len(zones)})")
    opts = pulumi.ResourceOptions(parent=parent)
    blocks = list(ipaddress.ip_network(cidr).subnets(prefixlen_diff=3))
    cluster_tag = {f"kubernetes.io/cluster/{cluster_name}": "shared"}

    vpc = aws.ec2.Vpc(
        f"{name}-vpc",
        cidr_block=cidr,
        enable_dns_hostnames=True,  # EKS nodes register by private DNS name
        enable_dns_support=True,
        tags={**tags, "Name": f"{cluster_name}-vpc"},
        opts=opts,
    )
    igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags={**tags, "Name": f"{cluster_name}-igw"}, opts=opts)

    private: dict[str, pulumi.Output[str]] = {}
    egress: list[pulumi.Resource] = []
    public: dict[str, pulumi.Output[str]] = {}
    public_rt = aws.ec2.RouteTable(
        f"{name}-public-rt",
        vpc_id=vpc.id,
        routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
        tags={**tags, "Name": f"{cluster_name}-public"},
        opts=opts,
    )
    for i, zone in enumerate(zones):
        sub = aws.ec2.Subnet(
            f"{name}-public-{zone}",
            vpc_id=vpc.id,
            availability_zone=zone,
            cidr_block=str(blocks[MAX_ZONES + i]),
            map_public_ip_on_launch=False,
            tags={**tags, **cluster_tag, "Name": f"{cluster_name}-public-{zone}", "kubernetes.io/role/elb": "1"},
            opts=opts,
        )
        aws.ec2.RouteTableAssociation(f"{name}-public-{zone}", subnet_id=sub.id, route_table_id=public_rt.id, opts=opts)
        public[zone] = sub.id

    # NAT gateways: one per zone by default, so a zone's failure cuts no other zone's egress (image
    # pulls, the EKS API); `single` keeps a dev cluster cheap. Each private subnet routes to its zone's
    # NAT (or the only one).
    nat_zones = zones if nat_gateways == "perZone" else zones[:1]
    nats: dict[str, aws.ec2.NatGateway] = {}
    for zone in nat_zones:
        suffix = f"nat-{zone}" if nat_gateways == "perZone" else "nat"
        eip = aws.ec2.Eip(
            f"{name}-{suffix}", domain="vpc", tags={**tags, "Name": f"{cluster_name}-{suffix}"}, opts=opts
        )
        nats[zone] = aws.ec2.NatGateway(
            f"{name}-{suffix}",
            allocation_id=eip.id,
            subnet_id=public[zone],
            tags={**tags, "Name": f"{cluster_name}-{suffix}"},
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[igw]),
        )
    route_tables: dict[str, aws.ec2.RouteTable] = {}
    for zone in zones:
        nat = nats.get(zone, nats[nat_zones[0]])
        key = zone if nat_gateways == "perZone" else nat_zones[0]
        if key not in route_tables:
            rt_name = f"{name}-private-rt-{zone}" if nat_gateways == "perZone" else f"{name}-private-rt"
            route_tables[key] = aws.ec2.RouteTable(
                rt_name,
                vpc_id=vpc.id,
                routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
                tags={**tags, "Name": f"{cluster_name}-private" + (f"-{zone}" if nat_gateways == "perZone" else "")},
                opts=opts,
            )
    for i, zone in enumerate(zones):
        sub = aws.ec2.Subnet(
            f"{name}-private-{zone}",
            vpc_id=vpc.id,
            availability_zone=zone,
            cidr_block=str(blocks[i]),
            map_public_ip_on_launch=False,
            tags={
                **tags,
                **cluster_tag,
                "Name": f"{cluster_name}-private-{zone}",
                "kubernetes.io/role/internal-elb": "1",
                **(private_subnet_tags or {}),
            },
            opts=opts,
        )
        rt = route_tables[zone if nat_gateways == "perZone" else nat_zones[0]]
        egress.append(
            aws.ec2.RouteTableAssociation(f"{name}-private-{zone}", subnet_id=sub.id, route_table_id=rt.id, opts=opts)
        )
        private[zone] = sub.id
    # S3 gateway endpoint: free, and image layers (ECR keeps them in S3) skip the NAT's per-GB charge.
    aws.ec2.VpcEndpoint(
        f"{name}-s3",
        vpc_id=vpc.id,
        service_name=f"com.amazonaws.{region}.s3",
        vpc_endpoint_type="Gateway",
        route_table_ids=[rt.id for rt in route_tables.values()],
        tags={**tags, "Name": f"{cluster_name}-s3"},
        opts=opts,
    )
    if ecr_endpoints:
        egress += _interface_endpoints(name, vpc, cidr, region, list(private.values()), cluster_name, tags, opts)
    return Network(vpc_id=vpc.id, private_subnet_ids=private, public_subnet_ids=public, egress=egress)


#: ECR's two interface endpoints: the registry API (auth, manifests) and the Docker endpoint.
ECR_SERVICES = ("ecr.api", "ecr.dkr")
#: The EKS API: the autoscaler reads an empty managed group's labels, taints and resources tags with
#: eks:DescribeNodegroup to scale it from zero; "For private clusters ... you need to create an interface
#: endpoint for Amazon EKS" (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md).
EKS_SERVICE = "eks"
INTERFACE_SERVICES = (*ECR_SERVICES, EKS_SERVICE)


def _interface_endpoints(
    name: str,
    vpc: aws.ec2.Vpc,
    cidr: str,
    region: str,
    subnet_ids: list[pulumi.Output[str]],
    cluster_name: str,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> list[pulumi.Resource]:
    """Interface endpoints for ECR and EKS in every private subnet, reachable on 443 from the VPC only. They
    cost per hour and zone but save the NAT's per-GB processing on every image pull (worth it for GPU
    images), and keep the autoscaler's eks:DescribeNodegroup calls inside the VPC."""
    sg = aws.ec2.SecurityGroup(
        f"{name}-endpoints",
        vpc_id=vpc.id,
        description="HTTPS from the VPC to its interface endpoints",
        ingress=[aws.ec2.SecurityGroupIngressArgs(protocol="tcp", from_port=443, to_port=443, cidr_blocks=[cidr])],
        tags={**tags, "Name": f"{cluster_name}-endpoints"},
        opts=opts,
    )
    return [
        aws.ec2.VpcEndpoint(
            f"{name}-{service.replace('.', '-')}",
            vpc_id=vpc.id,
            service_name=f"com.amazonaws.{region}.{service}",
            vpc_endpoint_type="Interface",
            private_dns_enabled=True,
            subnet_ids=subnet_ids,
            security_group_ids=[sg.id],
            tags={**tags, "Name": f"{cluster_name}-{service}"},
            opts=opts,
        )
        for service in INTERFACE_SERVICES
    ]
