"""EKS's reader: managed node groups, self-managed Auto Scaling groups and Karpenter NodePools (an
EC2NodeClass's) as `NodeGroupView`s, each read once here for every tool (policy, cost, the preview's Pools table,
the simulation, diff)."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.aws.asg_tags import NODE_TEMPLATE_PREFIX
from elastic_gpu.aws.karpenter.release import NODE_CLASS_API
from elastic_gpu.cluster_handle import SUBNET_IDS_INPUT
from elastic_gpu.gpu_catalog import gpu_instance_type, gpu_spec_of
from elastic_gpu.scheduling import POOL_LABEL
from elastic_gpu.tools.engine_props import known, read_known
from elastic_gpu.tools.node_group_reading import stack_derived
from elastic_gpu.tools.node_group_view import (
    KARPENTER_NODE_POOL,
    NodeGroupView,
    StackResource,
    int_or_none,
    intends_spot,
    karpenter_node_pool,
    provider_prop,
    taint,
)

#: EKS AMI types that ship the NVIDIA driver (AL2_x86_64_GPU, AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA ...).
_EKS_GPU_AMI = re.compile(r"(_GPU|_NVIDIA)$")
#: EC2 accelerated families not (yet) in the catalog: g4dn, g5, g6, g6e, p3, p4d, p5 ...
_EC2_GPU_FAMILY = re.compile(r"^(g\d|p\d)[a-z]*\.")
SUBNET = "aws:ec2/subnet:Subnet"
#: A self-managed node group: an Auto Scaling group and the launch template it names (pulumi-eks's NodeGroupV2 and
#: its Cluster's default node group, nodejs/eks/nodes/nodegroup.ts createNodeGroupV2Internal).
AUTOSCALING_GROUP = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
#: The Pulumi type of Karpenter's EC2NodeClass (aws/karpenter/release.py NODE_CLASS_API).
KARPENTER_NODE_CLASS = f"kubernetes:{NODE_CLASS_API}:EC2NodeClass"
#: The tag the cluster-autoscaler's auto-discovery looks for (cluster-autoscaler cloudprovider/aws README,
#: "Auto-Discovery Setup"): a group without it is sized by nobody but its own desired capacity.
AUTOSCALER_ENABLED_TAG = "k8s.io/cluster-autoscaler/enabled"
#: The node group's own tags that set its autoscaler template's resources (read through DescribeNodegroup).
_TEMPLATE_RESOURCES = f"{NODE_TEMPLATE_PREFIX}/resources/"


#: The labels EKS puts on every node of a managed node group (EKS User Guide, "Simplify node lifecycle with
#: managed node groups": labels prefixed eks.amazonaws.com; capacityType defaults to ON_DEMAND, EKS API Nodegroup).
EKS_NODEGROUP_LABEL = "eks.amazonaws.com/nodegroup"
EKS_CAPACITY_TYPE_LABEL = "eks.amazonaws.com/capacityType"


def eks_node_labels(node_group_name: str, capacity_type: str | None) -> dict[str, str]:
    return {EKS_NODEGROUP_LABEL: node_group_name, EKS_CAPACITY_TYPE_LABEL: capacity_type or "ON_DEMAND"}


def subnet_zones(stack: Sequence[StackResource]) -> dict[str, str]:
    """Subnet id -> availability zone: from the subnets the program declares (where the stack's resources carry
    their ids: the offline runner's), and from the cluster handles' zone -> subnet maps (an existing cluster's
    subnets come from another stack or a config value, so the program declares none; the handle still says
    which zone each is in)."""
    zones: dict[str, str] = {}
    for r in stack:
        subnet_id = getattr(r, "id", None)
        if r.resource_type == SUBNET and subnet_id and (zone := known(r.props, "availabilityZone")):
            zones[subnet_id] = zone
        mapping = None if getattr(r, "custom", True) else read_known(r.props, SUBNET_IDS_INPUT)
        if isinstance(mapping, dict):  # a handle component's
            zones.update({s: z for z, s in mapping.items() if isinstance(s, str) and isinstance(z, str)})
    return zones


def _zones(p: Mapping[str, Any], stack: Sequence[StackResource]) -> list[str]:
    """Its subnets' zones, in its subnets' order; "?" for one the stack does not place."""
    subnet_ids = read_known(p, "subnetIds", [], prune=False)  # a subnet not known yet is a zone not known: "?"
    zone_of = stack_derived(stack, subnet_zones)  # built once per stack, not once per node group
    return [zone_of.get(s, "?") if isinstance(s, str) else "?" for s in subnet_ids if isinstance(subnet_ids, list)]


def _node_group(resource: StackResource, stack: Sequence[StackResource] | None) -> NodeGroupView:
    p = resource.props
    types = list(p.get("instanceTypes") or [])
    labels = dict(p.get("labels") or {})
    gpu_spec = gpu_spec_of(labels)
    gpu = bool(_EKS_GPU_AMI.search(p.get("amiType") or "")) or any(
        gpu_instance_type("aws", t, gpu_spec) or _EC2_GPU_FAMILY.match(t) for t in types
    )
    scaling = p.get("scalingConfig") or {}
    label = p.get("nodeGroupName") or resource.name
    declared_taints = p.get("taints") or []
    tags = read_known(p, "tags", {})
    return NodeGroupView(
        cloud="aws",
        name=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=gpu,
        spot=p.get("capacityType") == "SPOT",
        intends_spot=intends_spot(labels, label),
        instance_types=types,
        min_size=int_or_none(scaling.get("minSize")),
        max_size=int_or_none(scaling.get("maxSize")),
        pinned_size_path="scalingConfig.desiredSize" if scaling.get("desiredSize") is not None else None,
        autoscaled=True,
        taints=[taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in declared_taints],
        labels=labels,
        gpu_spec=gpu_spec,
        implicit_labels=eks_node_labels(label, p.get("capacityType")),
        region=None if stack is None else provider_prop(resource, "region"),
        resource=resource.name,
        declared_name=resource.name,
        zones=[] if stack is None else _zones(p, stack),
        # The EKS API's own spelling (NO_SCHEDULE), as the program wrote it.
        shown_taints=[f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in declared_taints],
        **_reserved_node_group(p, stack),
        template_resources={
            k.removeprefix(_TEMPLATE_RESOURCES): str(v)
            for k, v in (tags if isinstance(tags, dict) else {}).items()
            if k.startswith(_TEMPLATE_RESOURCES)
        },
    )


def _reserved_node_group(p: Mapping[str, Any], stack: Sequence[StackResource] | None) -> dict[str, Any]:
    """A managed node group's capacity types, and the reservation its launch template targets (the reserved tier:
    aws/pools.py): capacityType CAPACITY_BLOCK, or an ON_DEMAND group whose launch template names a
    capacityReservationTarget id, is "reserved"."""
    capacity = p.get("capacityType")
    plain = {"capacity_types": ["spot" if capacity == "SPOT" else "on-demand"]}
    ref = read_known(p, "launchTemplate", {})
    if stack is None or not isinstance(ref, dict):
        return {**plain, "capacity_types": ["reserved"]} if capacity == "CAPACITY_BLOCK" else plain
    template = next(
        (r for r in stack if r.resource_type == LAUNCH_TEMPLATE and ref.get("id") in {getattr(r, "id", None), r.name}),
        None,
    )
    spec = read_known(template.props, "capacityReservationSpecification", {}) if template is not None else {}
    target = read_known(spec if isinstance(spec, dict) else {}, "capacityReservationTarget", {})
    rid = read_known(target if isinstance(target, dict) else {}, "capacityReservationId")
    if isinstance(rid, str) or capacity == "CAPACITY_BLOCK":
        return {"capacity_types": ["reserved"], "reservations": (rid,) if isinstance(rid, str) else ()}
    return plain


def reserved_node_pool(view: NodeGroupView, stack: Sequence[StackResource]) -> NodeGroupView:
    """A Karpenter NodePool that allows capacity type `reserved`: the reservations its EC2NodeClass selects (`cr-...`
    ids, `tag:k=v` for a tag term), which the NodePool's nodes come from."""
    if "reserved" not in view.capacity_types:
        return view
    for r in stack:
        if r.resource_type != KARPENTER_NODE_CLASS:
            continue
        if read_known(read_known(r.props, "metadata", {}), "name") != view.node_class:
            continue
        terms = read_known(read_known(r.props, "spec", {}), "capacityReservationSelectorTerms", [])
        names: list[str] = []
        for term in terms if isinstance(terms, list) else []:
            if isinstance(term, dict) and isinstance(term.get("id"), str):
                names.append(term["id"])
            elif isinstance(term, dict) and isinstance(term.get("tags"), dict):
                names += [f"tag:{k}={v}" for k, v in term["tags"].items()]
        return replace(view, reservations=tuple(names))
    return view


def _launch_template(resource: StackResource, stack: Sequence[StackResource] | None) -> StackResource | None:
    """The launch template an Auto Scaling group names (by its name or id), when the stack declares it."""
    template = read_known(resource.props, "launchTemplate", {})
    if not isinstance(template, dict) or stack is None:
        return None
    wanted = {template.get("name"), template.get("id")} - {None}
    for r in stack:
        if r.resource_type == LAUNCH_TEMPLATE and ({r.name, getattr(r, "id", None), known(r.props, "name")} & wanted):
            return r
    return None


def _kubelet_flag(user_data: object, flag: str) -> list[str]:
    """The comma-separated values of a kubelet flag in a launch template's user data (base64), as pulumi-eks
    writes `--node-labels=k=v,...` and `--register-with-taints=k=v:Effect,...` (nodes/userdata.ts)."""
    if not isinstance(user_data, str):
        return []
    try:
        text = base64.b64decode(user_data, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        text = user_data
    found = re.findall(rf"{re.escape(flag)}=([^\s'\"]+)", text)
    return [part for value in found for part in value.split(",") if part]


def _self_managed_labels_and_taints(template: StackResource | None) -> tuple[dict[str, str], list[Any]]:
    if template is None:
        return {}, []
    user_data = known(template.props, "userData")
    labels = dict(part.split("=", 1) for part in _kubelet_flag(user_data, "--node-labels") if "=" in part)
    taints = []
    for part in _kubelet_flag(user_data, "--register-with-taints"):
        key_value, _, effect = part.rpartition(":")
        key, _, value = key_value.partition("=")
        taints.append(taint(key, value or None, effect))
    return labels, taints


def _autoscaling_group(resource: StackResource, stack: Sequence[StackResource] | None) -> NodeGroupView:
    """A self-managed group: its launch template's type; sized by the cluster-autoscaler only when tagged for its
    auto-discovery, else always `desiredCapacity` nodes (pulumi-eks's default node group: 2, nodegroup.ts)."""
    p = resource.props
    template = _launch_template(resource, stack)
    instance_type = None if template is None else known(template.props, "instanceType")
    types = [instance_type] if isinstance(instance_type, str) else []
    labels, taints = _self_managed_labels_and_taints(template)
    tags = read_known(p, "tags", [])
    keys = {t.get("key") for t in tags if isinstance(t, dict)} if isinstance(tags, list) else set()
    autoscaled = AUTOSCALER_ENABLED_TAG in keys
    desired = int_or_none(p.get("desiredCapacity"))
    low, high = int_or_none(p.get("minSize")), int_or_none(p.get("maxSize"))
    if not autoscaled and desired is not None:
        low = high = desired  # nothing scales it: its nodes run at the desired capacity
    subnets = read_known(p, "vpcZoneIdentifiers", [], prune=False)
    zone_of = {} if stack is None else stack_derived(stack, subnet_zones)
    return NodeGroupView(
        cloud="aws",
        name=resource.name,
        pool=resource.name,
        gpu=any(gpu_instance_type("aws", t) or _EC2_GPU_FAMILY.match(t) for t in types),
        spot=False,
        intends_spot=intends_spot(labels, resource.name),
        labels=labels,
        taints=taints,
        instance_types=types,
        min_size=low,
        max_size=high,
        pinned_size_path="desiredCapacity" if autoscaled and desired is not None else None,
        autoscaled=autoscaled,
        region=None if stack is None else provider_prop(resource, "region"),
        resource=resource.name,
        declared_name=resource.name,
        zones=[zone_of.get(s, "?") if isinstance(s, str) else "?" for s in subnets]
        if isinstance(subnets, list)
        else [],
        capacity_types=["on-demand"],
    )


def _karpenter_region(stack: Sequence[StackResource]) -> str | None:
    """A Kubernetes object: its nodes bill where the stack's AWS resources are (the AWS provider's region,
    read off any AWS resource)."""
    regions = {provider_prop(r, "region") for r in stack if r.resource_type.startswith("aws:")} - {None}
    return regions.pop() if len(regions) == 1 else None


def read_node_groups(resource: StackResource, stack: Sequence[StackResource] | None = None) -> list[NodeGroupView]:
    """The node groups an EKS resource declares: a managed node group, or a Karpenter NodePool whose node class
    is an EC2NodeClass; `stack` (when given) places them (region, zones)."""
    if resource.resource_type == EKS_NODE_GROUP:
        return [_node_group(resource, stack)]
    if resource.resource_type == AUTOSCALING_GROUP:
        return [_autoscaling_group(resource, stack)]
    if resource.resource_type == KARPENTER_NODE_POOL:
        view = karpenter_node_pool(resource, "aws")
        if view is None:
            return []
        if stack is None:
            return [view]
        return [reserved_node_pool(replace(view, region=stack_derived(stack, _karpenter_region)), stack)]
    return []
