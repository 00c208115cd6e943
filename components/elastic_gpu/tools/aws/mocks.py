"""EKS in the offline preview: the mock engine's answers for its resources and invokes, pulumi-eks's
Cluster as a remote component (merged by elastic_gpu/tools/offline/mocks.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import grpc

from elastic_gpu.aws import DEFAULT_AUTHENTICATION_MODE
from elastic_gpu.aws.gpu_types import described_instance_type
from elastic_gpu.aws.quotas import EC2_QUOTAS
from elastic_gpu.tools.aws import pulumi_eks_mocks
from elastic_gpu.tools.offline.cloud_mocks import Mocks, RemoteChildren, RemoteComponentMock
from elastic_gpu.tools.offline.mocks import DECLARED, MOCK_CA, MOCK_UUID

ACCOUNT = "123456789012"


def _eks_cluster(name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """aws.eks.Cluster as EKS creates it: its endpoint, CA, OIDC issuer, cluster security group, and, when the
    program gives no `accessConfig`, EKS's default CONFIG_MAP with the creator as admin (EKS API Reference,
    CreateAccessConfigRequest)."""
    cluster = inputs.get("name", name)
    access = inputs.get("accessConfig") or {}
    return {
        "accessConfig": {
            "authenticationMode": access.get("authenticationMode") or DEFAULT_AUTHENTICATION_MODE,
            "bootstrapClusterCreatorAdminPermissions": access.get("bootstrapClusterCreatorAdminPermissions", True),
        },
        "endpoint": f"https://{cluster}.gr7.example.eks.amazonaws.com",
        "certificateAuthority": {"data": MOCK_CA},
        "identities": [{"oidcs": [{"issuer": f"https://oidc.eks.example.amazonaws.com/id/{cluster.upper()}"}]}],
        "arn": f"arn:aws:eks:example:{ACCOUNT}:cluster/{cluster}",
        "vpcConfig": {
            **(inputs.get("vpcConfig") or {}),
            "clusterSecurityGroupId": f"sg-{hashlib.sha256(cluster.encode()).hexdigest()[:17]}",
        },
    }


def _eks_node_group(name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    ng = inputs.get("nodeGroupName")
    if not isinstance(ng, str):  # absent, or unknown at preview: EKS names the ASG after the group anyway
        ng = name
    return {"resources": [{"autoscalingGroups": [{"name": f"eks-{ng}-{MOCK_UUID}"}]}]}


def _eks_get_cluster(args: dict[str, Any]) -> dict[str, Any]:
    """aws.eks.getCluster: the cluster as the EKS cluster mock describes it."""
    described = _eks_cluster(args.get("name", "cluster"), args)
    return described | {
        "name": args.get("name"),
        "id": args.get("name"),
        "certificateAuthorities": [described["certificateAuthority"]],
        "version": "1.33",
    }


class InvokeFailed(grpc.RpcError):
    """An invoke the provider answers with an error, as the engine reports one (the SDK raises
    `invoke of <token> failed: <details>` in the program, which may catch it)."""

    def __init__(self, details: str) -> None:
        super().__init__(details)
        self._details = details

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self._details


#: The general pools' instance types the shipped stacks, examples and README use (and pulumi-eks's default node
#: type), as DescribeInstanceTypes describes them: (DefaultVCpus, memory GiB). From the Amazon EC2 Instance Types
#: guide, "General purpose instances" hardware specifications (docs.aws.amazon.com/ec2/latest/instancetypes/gp.html;
#: M5, M5a, M6i and M6a share one sizing: large 2 vCPU 8 GiB, xlarge 4 vCPU 16 GiB; t3.medium 2 vCPU 4 GiB).
GENERAL_INSTANCE_TYPES: dict[str, tuple[int, int]] = {
    "m5.large": (2, 8),
    "m5.xlarge": (4, 16),
    "m5a.large": (2, 8),
    "m5a.xlarge": (4, 16),
    "m6a.large": (2, 8),
    "m6a.xlarge": (4, 16),
    "m6i.large": (2, 8),
    "m6i.xlarge": (4, 16),
    "t3.medium": (2, 4),
}


def _ec2_get_instance_type(args: dict[str, Any]) -> dict[str, Any]:
    """aws.ec2.getInstanceType: the catalog's GPU types and the general types above as EC2 describes them; any
    other type is EC2's error (a program's offline_mocks.py INVOKES can describe more)."""
    name = str(args.get("instanceType"))
    if (described := described_instance_type(name)) is not None:
        return described
    if name in GENERAL_INSTANCE_TYPES:
        vcpus, memory_gib = GENERAL_INSTANCE_TYPES[name]
        return {"instanceType": name, "id": name, "defaultVcpus": vcpus, "memorySize": memory_gib * 1024, "gpuses": []}
    raise InvokeFailed(f"reading EC2 Instance Type ({name}): couldn't find resource")


def _ec2_get_subnets(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """aws.ec2.getSubnets filtered by `subnet-id` and `availability-zone` (EksCluster.from_cluster's `zones`): the
    given subnets the program declares in those zones; of the others, those whose id names the zone (a program's
    existing subnets named after their zone, as pulumi/examples aws-py-eks does), else one named after the zone."""
    filters = {f.get("name"): list(f.get("values") or []) for f in args.get("filters") or []}
    zones = filters.get("availability-zone", [])
    declared = _declared(account, "aws:ec2/subnet:Subnet")
    given = [i for i in filters.get("subnet-id", []) if isinstance(i, str)]
    ids = [i for i in given if i in declared and declared[i].get("availabilityZone") in zones]
    ids += [i for i in given if i not in declared and any(i.endswith(z) for z in zones)]
    ids = ids or [f"subnet-{z}" for z in zones if not given or not set(given) <= set(declared)]
    return {"ids": ids, "id": args.get("region") or MOCK_AWS_REGION, "filters": args.get("filters")}


def _eks_get_addon_version(args: dict[str, Any]) -> dict[str, Any]:
    """aws.eks.getAddonVersion: the table's version for the add-on and minor (what EKS offered when it was
    written; a real preview asks EKS)."""
    from elastic_gpu.aws.versions import eks_addon_versions

    addon, kubernetes_version = args["addonName"], args["kubernetesVersion"]
    version = eks_addon_versions(kubernetes_version)[addon]
    return {
        "addonName": addon,
        "kubernetesVersion": kubernetes_version,
        "mostRecent": args.get("mostRecent"),
        "version": version,
        "id": addon,
        "region": args.get("region") or MOCK_AWS_REGION,
    }


def _pricing_get_product(args: dict[str, Any]) -> dict[str, Any]:
    """aws.pricing.getProduct (elastic_gpu/aws/prices.py): the shipped table's on-demand price as a price-list
    product, so offline figures are the table's; a type the table lacks is the API's "no product" error."""
    from elastic_gpu.prices import price_row

    filters = {f.get("field"): f.get("value") for f in args.get("filters") or []}
    item, region = str(filters.get("instanceType")), str(filters.get("regionCode"))
    row = price_row("aws", region, item)
    if row is None:
        raise InvokeFailed(f"Pricing product query did not return any elements ({item} in {region})")
    dimension = {"unit": "Hrs", "pricePerUnit": {"USD": f"{row.on_demand:.10g}"}}
    product: dict[str, Any] = {"product": {"attributes": {"instanceType": item, "regionCode": region}}}
    product["terms"] = {"OnDemand": {"mock.term": {"priceDimensions": {"mock.dimension": dimension}}}}
    return {
        "result": json.dumps(product),
        "id": item,
        "serviceCode": args.get("serviceCode"),
        "filters": args["filters"],
    }


def _ec2_get_spot_price(args: dict[str, Any]) -> dict[str, Any]:
    """aws.ec2.getSpotPrice: the shipped table's spot price (the same in every zone, so the zones' median is the
    table's); a type without one is EC2's "no Spot Price History found" error."""
    from elastic_gpu.prices import price_row

    item, region = str(args.get("instanceType")), str(args.get("region") or MOCK_AWS_REGION)
    row = price_row("aws", region, item)
    if row is None or row.spot is None:
        raise InvokeFailed(f"no Spot Price History found matching criteria ({item} in {region})")
    return {
        "spotPrice": f"{row.spot:.10g}",
        "spotPriceTimestamp": "2026-01-01T00:00:00Z",
        "instanceType": item,
        "availabilityZone": args.get("availabilityZone"),
        "region": region,
        "id": item,
    }


#: The region an invoke of aws.getRegion answers with when the program's config names none.
MOCK_AWS_REGION = "us-east-1"

#: Invoke token -> the answer the cloud would give (derived only from the arguments).
INVOKE_MOCKS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "aws:eks/getCluster:getCluster": _eks_get_cluster,
    "aws:index/getAvailabilityZones:getAvailabilityZones": lambda args: {
        "names": [f"{args.get('region') or MOCK_AWS_REGION}{z}" for z in "abc"],
        "zoneIds": [f"use1-az{i}" for i in (1, 2, 4)],
        "id": args.get("region") or MOCK_AWS_REGION,
    },
    "aws:ec2/getInstanceType:getInstanceType": _ec2_get_instance_type,
    "aws:eks/getAddonVersion:getAddonVersion": _eks_get_addon_version,
    "aws:pricing/getProduct:getProduct": _pricing_get_product,
    "aws:ec2/getSpotPrice:getSpotPrice": _ec2_get_spot_price,
    "aws:index/getRegion:getRegion": lambda args: {
        "name": args.get("region") or MOCK_AWS_REGION,
        "region": args.get("region") or MOCK_AWS_REGION,
        "id": args.get("region") or MOCK_AWS_REGION,
        "description": "mock region",
        "endpoint": "ec2.amazonaws.com",
    },
}


# --- the account the preflight reads (elastic_gpu/aws/preflight.py, elastic_gpu/tools/offline/account.py) ---------

#: A new AWS account: the EC2 vCPU quotas at their defaults (elastic_gpu/aws/quotas.py: L-1216C47A at 5, as
#: `aws service-quotas get-aws-default-service-quota` shows it in the AWS CLI User Guide's Service Quotas
#: examples),
#: the GPU families' EC2 vCPU quotas at 0 (what new accounts report until a request is
#: granted; Karpenter then sees VcpuLimitExceeded / MaxSpotInstanceCountExceeded, karpenter-provider-aws
#: pkg/errors/errors.go), EKS's 30 managed node groups per cluster (EKS User Guide, "Amazon EKS service
#: quotas"), no EC2 Spot service-linked role (it appears with the first spot request or
#: `aws iam create-service-linked-role`), and every instance type offered in every zone (`offerings` lists
#: the zones of the types a region offers in some zones only); an existing cluster's subnets map no public IP
#: unless listed in `publicSubnets`.
NEW_ACCOUNT: dict[str, Any] = {
    "quotas": {**{q.code: q.default for q in EC2_QUOTAS}, "L-6D54EA21": 30},
    "spotServiceLinkedRole": False,
    "offerings": {},
    "publicSubnets": [],
    # capacity reservation id -> what DescribeCapacityReservations gives (the EC2 API's CapacityReservation fields,
    # camelCase): reservationType (default | capacity-block), instanceType, availabilityZone, instanceCount,
    # availableInstanceCount, state, startDate, endDate. A new account holds none.
    "reservations": {},
}


def _service_quota(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    code = args.get("quotaCode")
    if code not in account["quotas"]:
        raise KeyError(f"the described account has no quota {code!r}; give it under aws.quotas")
    value = account["quotas"][code]
    if value is None:  # described as unreadable: the credentials may not read it
        raise PermissionError(
            f"AccessDeniedException: not authorized to perform servicequotas:GetServiceQuota ({code})"
        )
    return {"quotaCode": code, "serviceCode": args.get("serviceCode"), "value": value, "adjustable": True}


def _role(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """aws.iam.getRole: the EC2 Spot service-linked role when the account has it (untagged: the account's own),
    else the provider's not-found error: terraform-provider-aws's data source reads the role with findRoleByName,
    whose retry.NotFoundError says "couldn't find resource" (internal/retry/error.go), wrapped as "reading IAM
    Role (<name>): ..." (internal/service/iam/role_data_source.go), not IAM's NoSuchEntity. A program's
    offline_mocks.py INVOKES can answer with other tags."""
    name = args.get("name")
    if name == "AWSServiceRoleForEC2Spot" and account["spotServiceLinkedRole"]:
        path = "/aws-service-role/spot.amazonaws.com/"
        return {"name": name, "path": path, "arn": f"arn:aws:iam::{ACCOUNT}:role{path}{name}", "tags": {}}
    raise InvokeFailed(f"reading IAM Role ({name}): couldn't find resource")


def _capacity_reservation(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """aws.ec2.getCapacityBlockReservation by id: the described reservation, ODCR or Capacity Block alike (the data
    source describes by id with no reservation-type filter: terraform-provider-aws internal/service/ec2/
    ec2_capacity_block_reservation_data_source.go Read), its count as `instanceCount` (the source's
    TotalInstanceCount tfsdk:"instance_count"). One the account lacks: EC2's InvalidCapacityReservationId.NotFound,
    which findCapacityReservations turns into retry.NotFoundError, "couldn't find resource" (internal/retry)."""
    rid = args.get("id")
    described = account["reservations"].get(rid)
    if described is None:
        raise InvokeFailed(f"reading EC2 Capacity Block Reservation ({rid}): couldn't find resource")
    region = args.get("region") or MOCK_AWS_REGION
    return {
        "id": rid,
        "arn": f"arn:aws:ec2:{region}:{ACCOUNT}:capacity-reservation/{rid}",
        "ownerId": ACCOUNT,
        "region": region,
        "reservationType": described.get("reservationType", "default"),
        "instanceType": described["instanceType"],
        "availabilityZone": described["availabilityZone"],
        "instanceCount": described["instanceCount"],
        "availableInstanceCount": described.get("availableInstanceCount", described["instanceCount"]),
        "state": described.get("state", "active"),
        "startDate": described.get("startDate", ""),
        "endDate": described.get("endDate", ""),
        "tags": described.get("tags", {}),
    }


def _offerings(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """Each (type, zone) the filters ask for that the account offers: every zone unless `offerings` says."""
    filters = {f["name"]: f["values"] for f in args.get("filters") or []}
    pairs = [
        (t, z)
        for t in filters.get("instance-type", [])
        for z in filters.get("location", [])
        if z in account["offerings"].get(t, [z])
    ]
    return {
        "instanceTypes": [t for t, _ in pairs],
        "locations": [z for _, z in pairs],
        "locationTypes": [args.get("locationType", "availability-zone")] * len(pairs),
        "id": args.get("region") or MOCK_AWS_REGION,
    }


def _declared(account: dict[str, Any], type_: str) -> dict[str, dict[str, Any]]:
    """id -> state of the resources of `type_` the program declared (StackMocks.declared)."""
    return {i: state for i, (t, state) in (account.get(DECLARED) or {}).items() if t == type_}


def _subnet(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """aws.ec2.getSubnet: a subnet the program declares as it declares it (mapPublicIpOnLaunch, its VPC); any
    other maps public IPs only when the account lists it in `publicSubnets`."""
    subnet = args.get("id") or "subnet-mock"
    declared = _declared(account, "aws:ec2/subnet:Subnet").get(subnet)
    if declared is not None:
        public, vpc = bool(declared.get("mapPublicIpOnLaunch")), declared.get("vpcId") or "vpc-mock"
    else:
        public, vpc = subnet in account["publicSubnets"], "vpc-mock"
    return {"id": subnet, "mapPublicIpOnLaunch": public, "vpcId": vpc}


#: What a route to the internet gateway looks like (a public subnet's, EC2 DescribeRouteTables), and a private
#: subnet's way out through a NAT gateway.
IGW_ROUTE = {"cidrBlock": "0.0.0.0/0", "gatewayId": "igw-mock"}
NAT_ROUTE = {"cidrBlock": "0.0.0.0/0", "natGatewayId": "nat-mock"}


def _route_table(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """aws.ec2.getRouteTable by `subnetId` or `routeTableId`. A declared subnet's table is the declared table
    its declared association names; a declared subnet with none has no explicit table, and the provider says
    "no matching EC2 Route Table found" (terraform-provider-aws internal/tfresource SingularDataSourceFindError),
    so a caller falls back to the VPC's main table (pulumi-eks nodegroup.ts getRouteTableAsync), which in a new
    VPC holds only the local route (Amazon VPC User Guide, "Route tables": the main route table). An account's
    own subnet routes to an internet gateway when listed in `publicSubnets`, else through a NAT gateway."""
    tables = _declared(account, "aws:ec2/routeTable:RouteTable")
    table_id = args.get("routeTableId")
    subnet = args.get("subnetId")
    if subnet and not table_id:
        associated = [
            a.get("routeTableId")
            for a in _declared(account, "aws:ec2/routeTableAssociation:RouteTableAssociation").values()
            if a.get("subnetId") == subnet
        ]
        if associated:
            table_id = associated[0]
        elif subnet in _declared(account, "aws:ec2/subnet:Subnet"):
            raise InvokeFailed("no matching EC2 Route Table found")
        else:
            own = [IGW_ROUTE if subnet in account["publicSubnets"] else NAT_ROUTE]
            return {"id": f"rtb-{subnet}", "routeTableId": f"rtb-{subnet}", "subnetId": subnet, "routes": own}
    state = tables.get(str(table_id), {})
    routes: list[dict[str, Any]] = list(state.get("routes") or [])
    routes += [  # routes declared on their own (aws.ec2.Route, as awsx's Vpc declares them)
        {
            "cidrBlock": r.get("destinationCidrBlock"),
            "gatewayId": r.get("gatewayId"),
            "natGatewayId": r.get("natGatewayId"),
        }
        for r in _declared(account, "aws:ec2/route:Route").values()
        if r.get("routeTableId") == table_id
    ]
    return {"id": table_id, "routeTableId": table_id, "subnetId": subnet, "routes": routes}


def _route_tables(args: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    """aws.ec2.getRouteTables (the VPC's main table, `association.main`): one with only the local route."""
    vpc = args.get("vpcId") or "vpc-mock"
    return {"id": vpc, "ids": [f"rtb-main-{vpc}"], "vpcId": vpc}


#: Invoke token -> its answer from the described account's `aws` section.
ACCOUNT_INVOKES: dict[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "aws:servicequotas/getServiceQuota:getServiceQuota": _service_quota,
    "aws:iam/getRole:getRole": _role,
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": _offerings,
    "aws:ec2/getSubnet:getSubnet": _subnet,
    "aws:ec2/getSubnets:getSubnets": _ec2_get_subnets,
    "aws:ec2/getRouteTable:getRouteTable": _route_table,
    "aws:ec2/getRouteTables:getRouteTables": _route_tables,
    "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation": _capacity_reservation,
}


#: Singular node-group options of pulumi-eks's ClusterArgs that `nodeGroupOptions` excludes.
PULUMI_EKS_SINGULAR_NODE_GROUP_OPTIONS = (
    "nodeSubnetIds",
    "nodeAssociatePublicIpAddress",
    "instanceType",
    "instanceProfileName",
    "nodePublicKey",
    "nodeRootVolumeSize",
    "nodeUserData",
    "minSize",
    "maxSize",
    "desiredCapacity",
    "nodeAmiId",
    "gpu",
)


class PulumiEksError(Exception):
    """What pulumi-eks itself throws for these arguments (a real `pulumi up` fails the same way)."""


def _js_truthy(value: Any) -> bool:
    """pulumi-eks tests options with JavaScript truthiness: 0, false, "" and absent are all unset."""
    return value not in (None, False, 0, "")


def pulumi_eks_cluster_problems(name: str, inputs: dict[str, Any]) -> list[str]:
    """The argument checks pulumi-eks makes before it declares anything (pulumi/pulumi-eks
    nodejs/eks/cluster/cluster.ts createCore and the publicAccessCidrs check on the cluster)."""
    where = f"pulumi-eks Cluster '{name}': "
    problems = []
    if _js_truthy(inputs.get("instanceRole")) and _js_truthy(inputs.get("instanceRoles")):
        problems.append(f"{where}instanceRole and instanceRoles are mutually exclusive, and cannot both be set.")
    if _js_truthy(inputs.get("subnetIds")) and (
        _js_truthy(inputs.get("publicSubnetIds")) or _js_truthy(inputs.get("privateSubnetIds"))
    ):
        problems.append(
            f"{where}subnetIds, and the use of publicSubnetIds and/or privateSubnetIds are mutually exclusive. "
            "Choose a single approach."
        )
    singular = [k for k in PULUMI_EKS_SINGULAR_NODE_GROUP_OPTIONS if _js_truthy(inputs.get(k))]
    if _js_truthy(inputs.get("nodeGroupOptions")) and singular:
        problems.append(
            f"{where}Setting nodeGroupOptions, and any set of singular node group option(s) on the cluster, is "
            f"mutually exclusive. Choose a single approach. (singular options set: {', '.join(singular)})"
        )
    auto_mode = inputs.get("autoMode") or {}
    auto = isinstance(auto_mode, dict) and auto_mode.get("enabled")
    if auto and inputs.get("authenticationMode") not in ("API", "API_AND_CONFIG_MAP"):
        problems.append(
            f"{where}Access entries are required when using EKS Auto Mode. Use the authentication mode "
            "'API' or 'API_AND_CONFIG_MAP'."
        )
    if inputs.get("publicAccessCidrs") and inputs.get("endpointPublicAccess") is False:
        problems.append(f"{where}`publicAccessCidrs` can only be set when `endpointPublicAccess` is true")
    return problems


def _pulumi_eks_instance_roles(name: str, inputs: dict[str, Any], child: RemoteChildren) -> list[Any]:
    """The roles pulumi-eks reports as `instanceRoles` (cluster.ts createCore): the given ones, else one it
    creates unless the default node group is skipped without `createInstanceRole`, else none."""
    if inputs.get("instanceRoles"):
        return list(inputs["instanceRoles"])
    if inputs.get("instanceRole"):
        return [inputs["instanceRole"]]
    create = inputs.get("createInstanceRole")
    if create or (not inputs.get("skipDefaultNodeGroup") and create is None):
        role = child(
            "aws:iam/role:Role",
            f"{name}-instanceRole-role",
            {
                "assumeRolePolicy": '{"Version":"2012-10-17","Statement":[{"Effect":"Allow",'
                '"Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}'
            },
        )
        return [role]
    return []


def _pulumi_eks_security_groups(name: str, inputs: dict[str, Any], child: RemoteChildren) -> tuple[str, str] | None:
    """pulumi-eks's own security groups and rules, as it declares them unless `skipDefaultSecurityGroups`
    (pulumi/pulumi-eks v4.3.0 nodejs/eks/cluster/cluster.ts:548-585, nodejs/eks/nodes/securitygroup.ts:111-193):
    `clusterSecurityGroup` on the control plane (egress only, plus ingress 443 from the nodes), and the
    default nodes' `nodeSecurityGroup`, open to itself and to `clusterSecurityGroup` only. Returns their ids."""
    if inputs.get("skipDefaultSecurityGroups"):
        return None
    vpc = inputs.get("vpcId")
    cluster_sg = child("aws:ec2/securityGroup:SecurityGroup", f"{name}-eksClusterSecurityGroup", {"vpcId": vpc})["id"]
    node_sg = child("aws:ec2/securityGroup:SecurityGroup", f"{name}-nodeSecurityGroup", {"vpcId": vpc})["id"]
    everything = {"fromPort": 0, "toPort": 0, "protocol": "-1"}
    rules: dict[str, dict[str, Any]] = {
        "eksClusterInternetEgressRule": {
            "type": "egress", **everything, "cidrBlocks": ["0.0.0.0/0"], "securityGroupId": cluster_sg
        },
        "eksNodeIngressRule": {"type": "ingress", **everything, "securityGroupId": node_sg, "self": True},
        "eksNodeClusterIngressRule": {
            "type": "ingress", "fromPort": 1025, "toPort": 65535, "protocol": "tcp",
            "securityGroupId": node_sg, "sourceSecurityGroupId": cluster_sg,
        },
        "eksExtApiServerClusterIngressRule": {
            "type": "ingress", "fromPort": 443, "toPort": 443, "protocol": "tcp",
            "securityGroupId": node_sg, "sourceSecurityGroupId": cluster_sg,
        },
        "eksNodeInternetEgressRule": {
            "type": "egress", **everything, "cidrBlocks": ["0.0.0.0/0"], "securityGroupId": node_sg
        },
        "eksClusterIngressRule": {
            "type": "ingress", "fromPort": 443, "toPort": 443, "protocol": "tcp",
            "securityGroupId": cluster_sg, "sourceSecurityGroupId": node_sg,
        },
    }  # fmt: skip
    for rule, rule_inputs in rules.items():
        child("aws:ec2/securityGroupRule:SecurityGroupRule", f"{name}-{rule}", rule_inputs)
    return cluster_sg, node_sg


def _pulumi_eks_default_node_group(
    name: str,
    inputs: dict[str, Any],
    child: RemoteChildren,
    cluster_name: str,
    security_groups: tuple[str, str] | None,
) -> dict[str, Any] | None:
    """The default node group pulumi-eks declares unless `skipDefaultNodeGroup`, `fargate` or Auto Mode
    (cluster.ts: `createNodeGroupV2(name, core.nodeGroupOptions)`): a self-managed group named as the cluster,
    of `nodeGroupOptions` or the singular options (`instanceType` default t3.medium, nodes/instances.ts
    DEFAULT_INSTANCE_TYPE; desiredCapacity 2, minSize 1, maxSize 2, nodegroup.ts), always on: Pools and Cost
    show its nodes."""
    auto_mode = inputs.get("autoMode") or {}
    if (
        inputs.get("skipDefaultNodeGroup")
        or inputs.get("fargate")
        or (isinstance(auto_mode, dict) and auto_mode.get("enabled"))
    ):
        return None
    options = dict(inputs.get("nodeGroupOptions") or {k: inputs.get(k) for k in PULUMI_EKS_SINGULAR_NODE_GROUP_OPTIONS})
    if security_groups is not None:
        options.setdefault("nodeSecurityGroupId", security_groups[1])
    cluster = {k: inputs.get(k) for k in ("subnetIds", "publicSubnetIds", "privateSubnetIds")}
    return pulumi_eks_mocks.declare_node_group_v2(
        name, {k: v for k, v in options.items() if v is not None}, child, cluster, {"name": cluster_name}
    )


def _pulumi_eks_cluster(name: str, inputs: dict[str, Any], child: RemoteChildren) -> dict[str, Any]:
    """pulumi-eks `eks:index:Cluster` (a remote component): the children and outputs a program reads.

    It first refuses what pulumi-eks refuses (`pulumi_eks_cluster_problems`). The names follow pulumi-eks
    (`<name>-eksCluster`, `<name>-instanceRole-role`, `<name>-oidcProvider`); without `name` the EKS
    cluster is auto-named. Its default node group (unless `skipDefaultNodeGroup`) is declared as pulumi-eks
    declares it (`_pulumi_eks_default_node_group`).
    """
    if problems := pulumi_eks_cluster_problems(name, inputs):
        raise PulumiEksError("; ".join(problems))
    cluster_name = inputs.get("name") or f"{name}-eksCluster-mock"
    # The EKS cluster gets `subnetIds`, else the public and the private subnets, public first (cluster.ts
    # createCore: `[...publicIds, ...privateIds]`): a zone's first subnet id may well be a public one.
    subnets = inputs.get("subnetIds") or [
        *(inputs.get("publicSubnetIds") or []),
        *(inputs.get("privateSubnetIds") or []),
    ]
    roles = _pulumi_eks_instance_roles(name, inputs, child)
    # Without `version` the EKS cluster's version stays None, which the mock engine sends as unknown: what a
    # real preview of a new cluster shows before EKS picks its default minor (a program may give an existing
    # cluster's version in its offline_mocks.py: RESOURCES = {"aws:eks/cluster:Cluster": ...}).
    security_groups = _pulumi_eks_security_groups(name, inputs, child)
    eks_inputs: dict[str, Any] = {
        "name": cluster_name,
        "version": inputs.get("version"),
        "vpcConfig": {"subnetIds": subnets},
    }
    if security_groups is not None:
        eks_inputs["vpcConfig"]["securityGroupIds"] = [security_groups[0]]
    if inputs.get("authenticationMode"):  # cluster.ts: accessConfig only with an authentication mode
        eks_inputs["accessConfig"] = {
            "authenticationMode": inputs["authenticationMode"],
            "bootstrapClusterCreatorAdminPermissions": True,
        }
    eks = child("aws:eks/cluster:Cluster", f"{name}-eksCluster", eks_inputs)
    _pulumi_eks_default_node_group(name, inputs, child, cluster_name, security_groups)
    issuer = _eks_cluster(cluster_name, {"name": cluster_name})["identities"][0]["oidcs"][0]["issuer"]
    oidc_arn = ""
    if inputs.get("createOidcProvider"):
        child(
            "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
            f"{name}-oidcProvider",
            {"url": issuer, "clientIdLists": ["sts.amazonaws.com"]},
        )
        oidc_arn = f"arn:aws:iam::{ACCOUNT}:oidc-provider/{issuer.removeprefix('https://')}"
    described = _eks_cluster(cluster_name, {})
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "kubernetes", "cluster": {"server": described["endpoint"], "certificate-authority-data": MOCK_CA}}
        ],
        "contexts": [{"name": "aws", "context": {"cluster": "kubernetes", "user": "aws"}}],
        "current-context": "aws",
        "users": [
            {
                "name": "aws",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "aws",
                        "args": ["eks", "get-token", "--cluster-name", cluster_name],
                    }
                },
            }
        ],
    }
    return {
        "eksCluster": eks,
        "instanceRoles": roles,
        "kubeconfig": kubeconfig,
        "kubeconfigJson": json.dumps(kubeconfig),
        "oidcProviderArn": oidc_arn,
        "oidcProviderUrl": issuer,
        "oidcIssuer": issuer.removeprefix("https://"),
        # Without its own groups pulumi-eks reports EKS's cluster security group for both (cluster.ts:2198).
        "clusterSecurityGroupId": security_groups[0]
        if security_groups
        else described["vpcConfig"]["clusterSecurityGroupId"],
        "nodeSecurityGroupId": security_groups[1]
        if security_groups
        else described["vpcConfig"]["clusterSecurityGroupId"],
    }


def _awsx_vpc(name: str, inputs: dict[str, Any], child: RemoteChildren) -> dict[str, Any]:
    """pulumi-awsx `awsx:ec2:Vpc` with its defaults (awsx/ec2/vpc.ts at pulumi/pulumi-awsx 01c654f): the VPC
    (10.0.0.0/16 unless given), an internet gateway, and per zone (`availabilityZoneNames`, else the region's
    first `numberOfAvailabilityZones`, default 3) a public and a private subnet (`<name>-public-<n>`,
    `<name>-private-<n>`, the legacy allocator's names), each with its route table and association; the public
    subnet maps public IPs and routes 0.0.0.0/0 to the gateway, the private one to the zone's NAT gateway
    (`natGateways.strategy` OnePerAz; Single: the first zone's). The subnets' CIDR blocks are this mock's."""
    import pulumi

    region = pulumi.Config("aws").get("region") or MOCK_AWS_REGION
    zones = list(inputs.get("availabilityZoneNames") or [])
    zones = zones or [f"{region}{z}" for z in "abcdef"[: int(inputs.get("numberOfAvailabilityZones") or 3)]]
    strategy = str((inputs.get("natGateways") or {}).get("strategy") or "OnePerAz").lower()
    cidr = inputs.get("cidrBlock") or "10.0.0.0/16"
    vpc = child("aws:ec2/vpc:Vpc", name, {"cidrBlock": cidr, "enableDnsHostnames": inputs.get("enableDnsHostnames")})
    igw = child("aws:ec2/internetGateway:InternetGateway", name, {"vpcId": vpc["id"]})
    base = ".".join(cidr.split(".")[:2])
    public_ids: list[Any] = []
    private_ids: list[Any] = []
    nats: list[Any] = []
    for i, zone in enumerate(zones):
        for kind in ("public", "private"):
            subnet_name = f"{name}-{kind}-{i + 1}"
            subnet = child(
                "aws:ec2/subnet:Subnet",
                subnet_name,
                {
                    "vpcId": vpc["id"],
                    "availabilityZone": zone,
                    "mapPublicIpOnLaunch": kind == "public",
                    "cidrBlock": f"{base}.{i * 64 + (0 if kind == 'private' else 48)}.0/20",
                },
            )
            (public_ids if kind == "public" else private_ids).append(subnet["id"])
            table = child("aws:ec2/routeTable:RouteTable", subnet_name, {"vpcId": vpc["id"]})
            child(
                "aws:ec2/routeTableAssociation:RouteTableAssociation",
                subnet_name,
                {"routeTableId": table["id"], "subnetId": subnet["id"]},
            )
            route: dict[str, Any] = {"routeTableId": table["id"], "destinationCidrBlock": "0.0.0.0/0"}
            if kind == "public":
                if strategy != "none" and (strategy == "oneperaz" or not nats):
                    eip = child("aws:ec2/eip:Eip", f"{name}-{i + 1}", {})
                    nats.append(
                        child(
                            "aws:ec2/natGateway:NatGateway",
                            f"{name}-{i + 1}",
                            {"subnetId": subnet["id"], "allocationId": eip["id"]},
                        )["id"]
                    )
                route["gatewayId"] = igw["id"]
            elif strategy != "none":
                route["natGatewayId"] = nats[0] if strategy == "single" else nats[i]
            else:
                continue
            child("aws:ec2/route:Route", subnet_name, route)
    return {
        "vpcId": vpc["id"],
        "vpc": vpc,
        "internetGateway": igw,
        "publicSubnetIds": public_ids,
        "privateSubnetIds": private_ids,
        "isolatedSubnetIds": [],
    }


RESOURCE_MOCKS: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = {
    "aws:eks/cluster:Cluster": _eks_cluster,
    "aws:eks/nodeGroup:NodeGroup": _eks_node_group,
    "aws:ec2/launchTemplate:LaunchTemplate": lambda name, inputs: {"latestVersion": 1},
}

#: Every AWS resource has an ARN (unless its inputs give one).
PROVIDER_DEFAULTS: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "aws:": lambda typ, name: {"arn": f"arn:aws:mock::{ACCOUNT}:{typ.split(':')[-1].lower()}/{name}"},
}

#: Remote (multi-language) components: their mock registers the children a real run would create
#: and returns the component's outputs, resource references included.
REMOTE_COMPONENTS: dict[str, RemoteComponentMock] = {
    "eks:index:Cluster": _pulumi_eks_cluster,
    "eks:index:ManagedNodeGroup": pulumi_eks_mocks.managed_node_group,
    "eks:index:NodeGroupV2": pulumi_eks_mocks.node_group_v2,
    "eks:index:Addon": pulumi_eks_mocks.addon,
    "awsx:ec2:Vpc": _awsx_vpc,
}


def account_reservations(account: dict[str, Any]) -> list[dict[str, Any]]:
    """The described account's capacity reservations as the reservation rules read them (ODCRs and Capacity Blocks
    alike: DescribeCapacityReservations' InstanceType, AvailabilityZone, TotalInstanceCount)."""
    return [
        {"id": rid, "instanceType": r["instanceType"], "zone": r["availabilityZone"], "count": r["instanceCount"]}
        for rid, r in (account.get("reservations") or {}).items()
    ]


#: This cloud's part of the mock engine (tools/offline/cloud_mocks.py `Mocks`).
MOCKS = Mocks(
    resources=RESOURCE_MOCKS,
    invokes=INVOKE_MOCKS,
    provider_defaults=PROVIDER_DEFAULTS,
    remote_components=REMOTE_COMPONENTS,
    new_account=NEW_ACCOUNT,
    account_invokes=ACCOUNT_INVOKES,
    account_reservations=account_reservations,
)
