"""Each node group's scale-from-zero node template, built the way that cloud's autoscaler builds it (never
from the stack config): every node group is read once into its `NodeGroupView` (elastic_gpu/tools/node_group_view.py),
and every cloud's `node_templates` (elastic_gpu/tools/<cloud>/autoscaler_templates.py, which says how its
autoscaler builds them) makes its templates from its views and the rest of the stack, in cloud order.

`allocatable` is the instance type's capacity. Each cloud sets `reserved` (what its node image keeps:
kube-reserved and the eviction threshold) and whether its autoscaler's template subtracts it; every
template gets the requests of the pods a new node runs (the stack's DaemonSets that would run there,
and the kube-proxy pod the autoscaler adds). A CPU type the GPU catalog does not know has no
vCPU/memory figure here, so those do not limit it (GPU pods are kept off it by the GPU request).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, cast

from elastic_gpu.gpu_catalog import GpuSpec, gpu_instance_type
from elastic_gpu.karpenter_core import RESERVED
from elastic_gpu.scheduling import GPU_RESOURCE
from elastic_gpu.tools.clouds import all_clouds
from elastic_gpu.tools.cost import reserved_only
from elastic_gpu.tools.node_group_reading import ReaderParts
from elastic_gpu.tools.node_group_view import NodeGroupView, StackResource
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.offline.stack_resources import node_groups as preview_node_groups
from elastic_gpu.tools.simulation.fit import NodeTemplate, misfit
from elastic_gpu.tools.simulation.pod import PodShape, pod_shape

GIB = 2**30
MIB = 2**20
#: The kube-proxy pod the autoscaler puts on every template node (kubernetes/autoscaler
#: cluster-autoscaler-1.33.6 cloudprovider/utils.go:37 KubeProxyCpuRequestMillis, :75 BuildKubeProxy).
KUBE_PROXY_CPU = 0.1
#: The kubelet's default hard eviction threshold memory.available (kubelet defaults; GCE:
#: gce_reserved.go:48; AKS node-resource-reservations, 1.29+; EKS AL2023 nodeadm keeps the default).
EVICTION_HARD_MEMORY = 100 * MIB
ZONE_LABEL = "topology.kubernetes.io/zone"


@dataclass(frozen=True)
class NodeGroupReader:
    """How the tools read a cloud's node groups from captured resources: the policy rules, cost, report,
    simulation and diff read nothing of a node group but its `NodeGroupView` (elastic_gpu/tools/node_group_view.py),
    and the simulation's templates are made from those views."""

    #: the node groups a resource declares (empty for a type it does not read), from its props alone (a
    #: resource policy) or placed against the stack's resources (region, zones, shared caps) when given;
    #: props may be the policy engine's proxies, which raise on an unknown value
    read_node_groups: Callable[[StackResource, Sequence[StackResource] | None], list[NodeGroupView]]
    #: the scale-from-zero templates of the preview's node groups of this cloud, from their views: what the
    #: view adds of the catalog's shape, the node's reserves and the autoscaler's template tags (the simulation)
    node_templates: Callable[[Preview, list[NodeGroupView]], list[NodeTemplate]]


class TemplateParts(ReaderParts, Protocol):
    """A cloud as the simulation's templates ask for it: its reader, whole."""

    def reader(self) -> NodeGroupReader:
        """Its reader of node groups and of their scale-from-zero templates. Called when the tables are first
        merged (node_group_view, the offline report) and once per simulation."""
        ...


def template_clouds() -> list[TemplateParts]:
    """Every registered cloud, viewed by its templates (the registry's order): a preview may declare any cloud's
    node groups. Sound because each cloud's class is checked against `ToolCloud` (tools/tool_cloud.py), which
    extends `TemplateParts`."""
    return cast(list[TemplateParts], all_clouds())


def shape(cloud: str, instance_type: str, spec: GpuSpec | None = None) -> dict[str, float]:
    """A node's resources by its type's GPU row (the catalog's, else its group's `spec`); unbounded if none."""
    row = gpu_instance_type(cloud, instance_type, spec)
    if row is None:
        return {"cpu": math.inf, "memory": math.inf}
    return {"cpu": float(row.vcpus), "memory": float(row.memory_gib * GIB), GPU_RESOURCE: float(row.gpus)}


def tiered_cpu_reserve(vcpus: float) -> float:
    """kube-reserved CPU, in cores, by the tiers GKE documents and EKS's AL2023 nodeadm applies
    (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go getCPUMillicoresToReserve): 6% of the
    first core, 1% of the second, 0.5% of the next two, 0.25% of every core above four."""
    tiers = ((1, 0.06), (1, 0.01), (2, 0.005), (math.inf, 0.0025))
    left, total = vcpus, 0.0
    for size, share in tiers:
        part = min(left, size)
        total += part * share
        left -= part
        if left <= 0:
            break
    return total


def daemon_requests(preview: Preview, template: NodeTemplate) -> dict[str, float]:
    """Requests of the pods a new node of this template runs: every DaemonSet the stack declares whose
    pod tolerates the node's taints and selects its labels, plus kube-proxy."""
    out = {"cpu": KUBE_PROXY_CPU}
    probe = replace(template, allocatable={}, daemon_requests={}, reserved={})
    for shape in preview.memo("daemonset-pods", lambda: _daemonset_pods(preview)):
        if misfit(replace(shape, requests={}), probe) is None:
            for resource, value in shape.requests.items():
                out[resource] = out.get(resource, 0.0) + value
    return out


def _daemonset_pods(preview: Preview) -> list[PodShape]:
    """The pod of each DaemonSet the stack declares: read once per `reading` block, not once per node template."""
    return [pod_shape({"kind": "DaemonSet", **r.inputs}) for r in preview.of_type("kubernetes:apps/v1:DaemonSet")]


def node_groups(preview: Preview) -> list[NodeGroupView]:
    """Every node group the captured resources declare, read once per preview by its cloud's reader against
    the stack (tools/offline/stack_resources.node_groups)."""
    return preview_node_groups(preview)


def node_templates(preview: Preview) -> list[NodeTemplate]:
    views = node_groups(preview)
    out = [
        t
        for cloud in template_clouds()
        for t in cloud.reader().node_templates(preview, [v for v in views if v.cloud == cloud.name])
    ]
    mark_reserved(out, views)
    for t in out:
        t.daemon_requests = daemon_requests(preview, t)
    return out


def mark_reserved(templates: list[NodeTemplate], views: list[NodeGroupView]) -> None:
    """Each template of a reserved-only group gets capacity "reserved", whatever its cloud's template builder set
    ("on-demand": a reserved node is an on-demand node of its type, launched into the reservation), so that the
    expander and the backoff machine see the tier."""
    reserved = {(v.resource, v.name) for v in views if reserved_only(v)}
    for t in templates:
        if (t.resource, t.name) in reserved:
            t.capacity = RESERVED
