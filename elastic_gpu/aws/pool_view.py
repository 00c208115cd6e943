"""EKS managed node groups as `PoolView`s, and where they bill (elastic_gpu/pool_view.py merges the readers)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.pool_view import (
    KARPENTER_NODE_POOL,
    PoolView,
    StackResource,
    int_or_none,
    intends_spot,
    karpenter_pool_view,
    provider_prop,
    taint,
)
from elastic_gpu.scheduling import POOL_LABEL

#: EKS AMI types that ship the NVIDIA driver (AL2_x86_64_GPU, AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA ...).
_EKS_GPU_AMI = re.compile(r"(_GPU|_NVIDIA)$")
#: EC2 accelerated families not (yet) in the catalog: g4dn, g5, g6, g6e, p3, p4d, p5 ...
_EC2_GPU_FAMILY = re.compile(r"^(g\d|p\d)[a-z]*\.")


#: The labels EKS puts on every node of a managed node group (EKS User Guide, "Simplify node lifecycle with
#: managed node groups": labels prefixed eks.amazonaws.com; capacityType defaults to ON_DEMAND, EKS API Nodegroup).
EKS_NODEGROUP_LABEL = "eks.amazonaws.com/nodegroup"
EKS_CAPACITY_TYPE_LABEL = "eks.amazonaws.com/capacityType"


def eks_node_labels(node_group_name: str, capacity_type: str | None) -> dict[str, str]:
    return {EKS_NODEGROUP_LABEL: node_group_name, EKS_CAPACITY_TYPE_LABEL: capacity_type or "ON_DEMAND"}


def _eks(name: str, p: Mapping[str, Any]) -> Iterator[PoolView]:
    types = list(p.get("instanceTypes") or [])
    gpu = bool(_EKS_GPU_AMI.search(p.get("amiType") or "")) or any(
        gpu_instance_type("aws", t) or _EC2_GPU_FAMILY.match(t) for t in types
    )
    scaling = p.get("scalingConfig") or {}
    labels = dict(p.get("labels") or {})
    label = p.get("nodeGroupName") or name
    yield PoolView(
        cloud="aws",
        label=label,
        pool=labels.get(POOL_LABEL, label),
        gpu=gpu,
        spot=p.get("capacityType") == "SPOT",
        intends_spot=intends_spot(labels, label),
        instance_types=types,
        min_size=int_or_none(scaling.get("minSize")),
        max_size=int_or_none(scaling.get("maxSize")),
        pinned_size_path="scalingConfig.desiredSize" if scaling.get("desiredSize") is not None else None,
        autoscaled=True,
        taints=[taint(t.get("key", ""), t.get("value"), t.get("effect", "")) for t in p.get("taints") or []],
        labels=labels,
        implicit_labels=eks_node_labels(label, p.get("capacityType")),
    )


def _region(resource: StackResource, stack: Iterable[StackResource]) -> str | None:
    """The AWS provider's `region`."""
    return provider_prop(resource, "region")


def _karpenter(name: str, p: Mapping[str, Any]) -> Iterator[PoolView]:
    """A Karpenter NodePool whose node class is an EC2NodeClass."""
    pool = karpenter_pool_view(name, p)
    if pool is not None and pool.cloud == "aws":
        yield pool


def _karpenter_region(resource: StackResource, stack: Iterable[StackResource]) -> str | None:
    """A Kubernetes object: its nodes bill where the stack's AWS resources are (the AWS provider's region,
    read off any AWS resource)."""
    regions = {provider_prop(r, "region") for r in stack if r.resource_type.startswith("aws:")} - {None}
    return regions.pop() if len(regions) == 1 else None


#: Resource type -> the pools it declares.
POOL_READERS = {EKS_NODE_GROUP: _eks, KARPENTER_NODE_POOL: _karpenter}
#: Resource type -> the region its nodes bill in.
REGION_READERS = {EKS_NODE_GROUP: _region, KARPENTER_NODE_POOL: _karpenter_region}
