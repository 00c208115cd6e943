"""The VPC an EKS cluster needs: private subnets for nodes (no public IPs), public ones for the NAT."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

#: Each zone gets one /(n+3) private block and one /(n+3) public block of the VPC range.
MAX_ZONES = 4


@dataclass
class Network:
    vpc_id: pulumi.Output[str]
    private_subnet_ids: dict[str, pulumi.Output[str]]  #: by zone: where nodes go
    public_subnet_ids: dict[str, pulumi.Output[str]]  #: by zone: NAT gateway and public load balancers
    egress: list[pulumi.Resource]  #: what nodes need before they can join (NAT route)


def build_network(
    name: str, *, cluster_name: str, cidr: str, zones: list[str], tags: dict[str, str], parent: pulumi.Resource
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

    # One NAT gateway keeps a dev cluster cheap; nodes only need egress for images and the API.
    eip = aws.ec2.Eip(f"{name}-nat", domain="vpc", tags={**tags, "Name": f"{cluster_name}-nat"}, opts=opts)
    nat = aws.ec2.NatGateway(
        f"{name}-nat",
        allocation_id=eip.id,
        subnet_id=public[zones[0]],
        tags={**tags, "Name": f"{cluster_name}-nat"},
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[igw]),
    )
    private_rt = aws.ec2.RouteTable(
        f"{name}-private-rt",
        vpc_id=vpc.id,
        routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
        tags={**tags, "Name": f"{cluster_name}-private"},
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
            },
            opts=opts,
        )
        egress.append(
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{zone}", subnet_id=sub.id, route_table_id=private_rt.id, opts=opts
            )
        )
        private[zone] = sub.id
    return Network(vpc_id=vpc.id, private_subnet_ids=private, public_subnet_ids=public, egress=egress)
