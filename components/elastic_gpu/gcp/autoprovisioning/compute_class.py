"""A spot GPU pool as a GKE ComputeClass whose priorities GKE auto-creates node pools for.

Fields are those of the ComputeClass reference
(https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass) and of the CRD schema
in tests/data/crds (validated there, strict):

- `priorities`: spot first, then on-demand when the pool has an on-demand fallback; each names the
  pool's machine type (`machineType`), or, when the pool takes every catalog machine type of its GPU
  and count in one family (stack config `gpu:` without `instanceTypes`), the family (`machineFamily`),
  and the GPU (`gpu: {type, count, driverVersion}`): GKE attaches exactly that GPU and count.
- `nodePoolAutoCreation.enabled: true`: GKE creates the node pools (none is declared), in the pool's zones
  (`priorityDefaults.location.zones`). The class's annotation `elastic-gpu.io/planned-nodes` records the nodes
  the pool plans (maxSize and its fallback's) for the tools: a ComputeClass has no node limit, so GKE holds the
  pool to it only through node auto-provisioning's limits (spec.NO_CAP_WITHOUT_NAP).
- `whenUnsatisfiable: DoNotScaleUp`: with every priority out of capacity the pod stays pending;
  `ScaleUpAnyway` would let GKE create nodes outside the priorities ("nodes using the default
  configuration", about-custom-compute-classes), which a GPU pod cannot use and a pool's caps do not cover.
- `activeMigration.optimizeRulePriority: true`: once spot capacity is back, GKE replaces on-demand
  fallback nodes with spot ones (the reason for a spot-first pool); workloads that must not move use
  a PodDisruptionBudget, which the migration respects as any eviction does.
- `autoscalingPolicy.consolidationDelayMinutes`: how long an unneeded node stays before GKE removes
  it, so a pool returns to zero at a known time (the cluster-autoscaler's scale-down-unneeded-time default).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from elastic_gpu.errors import problem
from elastic_gpu.gcp.autoprovisioning.spec import PLANNED_NODES_ANNOTATION, eligible_machine_types, takes_gpu
from elastic_gpu.gcp.compute_class_api import COMPUTE_CLASS_API, WHEN_UNSATISFIABLE, compute_class_name
from elastic_gpu.gcp.config_rules import machine_family
from elastic_gpu.gcp.node_config import NO_PLACE_ON_GKE
from elastic_gpu.gcp.node_spec import GkeNodeSpec, gpu_accelerator, node_spec
from elastic_gpu.gcp.reservations import pool_reservation_problems, reservations_of
from elastic_gpu.gpu_catalog import GpuSpec, gpu_instance_type, gpu_spec_labels
from elastic_gpu.pool_overrides import unsupported
from elastic_gpu.pool_types import BuiltPool
from elastic_gpu.scheduling import (
    CAPACITY_LABEL,
    GKE_COMPUTE_CLASS_KEY,
    GKE_GPU_TAINT,
    NODE_CLASS_GPU,
    POOL_LABEL,
    Taint,
    gke_compute_class_taint,
    node_labels,
)
from elastic_gpu.settings import GpuPoolCore
from elastic_gpu.validation import said
from elastic_gpu.workload import WorkloadContract

if TYPE_CHECKING:
    from elastic_gpu.cluster_handle import GkeClusterHandle
    from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs

#: Minutes an unneeded auto-created node stays: cluster-autoscaler's scale-down-unneeded-time default
#: (10m, FAQ), which the cluster-autoscaler stacks are simulated with too.
CONSOLIDATION_DELAY_MINUTES = 10
#: ComputeClass priorities[].gpu.driverVersion spells GkeCluster's DEFAULT/LATEST in lowercase (CRD enum).
DRIVER_VERSIONS = {"DEFAULT": "default", "LATEST": "latest"}
#: nodePoolConfig.imageType takes these (CRD enum); GKE node pools spell them in capitals.
IMAGE_TYPES = ("cos_containerd", "ubuntu_containerd")
#: gpu.gpuSharing.sharingStrategy for time-sliced GPUs (as the node pools' gpuSharingConfig).
TIME_SHARING = "TIME_SHARING"


def machine_selectors(instance_types: list[str], gpus: int, spec: GpuSpec | None = None) -> list[dict[str, str]]:
    """One `machineFamily` when the pool takes every eligible type of its family, else a `machineType` each."""
    row = gpu_instance_type("gcp", instance_types[0], spec)
    assert row is not None, "validated before use"
    family = machine_family(row.name)
    if len(instance_types) > 1 and set(instance_types) == set(eligible_machine_types(row.gpu, gpus, family)):
        return [{"machineFamily": family}]
    return [{"machineType": t} for t in instance_types]


def instance_types_eligible(instance_types: list[str], gpus: int, spec: GpuSpec | None = None) -> list[str]:
    """The machine types GKE may create for a pool of these types and GPU count (what its priorities allow)."""
    row = gpu_instance_type("gcp", instance_types[0], spec)
    assert row is not None, "validated before use"
    out: list[str] = []
    for sel in machine_selectors(instance_types, gpus, spec):
        family = sel.get("machineFamily")
        out += eligible_machine_types(row.gpu, gpus, family) if family else [sel["machineType"]]
    return out


def _gpu(node: GkeNodeSpec) -> dict[str, Any]:
    acc = node.accelerator
    assert acc is not None, "a GPU pool's spec"
    gpu: dict[str, Any] = {"type": acc.type, "count": acc.count, "driverVersion": DRIVER_VERSIONS[acc.driver_version]}
    if acc.sharing_clients > 1:
        gpu["gpuSharing"] = {"sharingStrategy": TIME_SHARING, "maxSharedClientsPerGPU": acc.sharing_clients}
    return gpu


def _taints(name: str, args: SpotGpuPoolArgs) -> list[Taint]:
    """The pool's own taints; GKE adds its GPU taint to GPU nodes and the class taint itself (both tolerated)."""
    return sorted(set(args.extra_taints))


def class_node_labels(name: str, args: SpotGpuPoolArgs) -> dict[str, str]:
    """The labels on every node GKE creates for the class, in the reference's `nodePoolConfig.nodeLabels`
    (the class-wide field; a priority has none there): the pool's own without the capacity label, which
    differs per priority (GKE marks spot nodes `cloud.google.com/gke-spot: "true"` itself)."""
    labels = node_labels(pool=name, node_class=NODE_CLASS_GPU, spot=False)
    labels.pop(CAPACITY_LABEL)
    return labels | gpu_spec_labels(args.gpu_spec) | dict(args.extra_labels)


def planned_nodes(pool: GpuPoolCore) -> int:
    """The nodes a pool plans (a stack file's or a program's): its max size and its on-demand fallback's; node
    auto-provisioning's limits sum them too (cluster.limits_for)."""
    return pool.max_size + pool.fallback_total


def compute_class_spec(name: str, args: SpotGpuPoolArgs) -> dict[str, Any]:
    """The ComputeClass of a pool under auto-provisioning (see the module docstring for each field)."""
    capacities = [True, False] if args.on_demand_fallback else [args.spot]
    # One node spec (gcp/node_spec.py) as the node pools read it; the class-wide labels, the pool's own taints.
    node = node_spec(
        args,
        spot=capacities[0],
        labels=class_node_labels(name, args),
        taints=_taints(name, args),
        accelerator=gpu_accelerator(args),
    )
    priorities = []
    for spot in capacities:
        for selector in machine_selectors(list(args.instance_types), args.gpus_per_node, args.gpu_spec):
            machine = replace(node, machine_type=selector.get("machineType", node.machine_type), spot=spot)
            priority: dict[str, Any] = {
                **selector,
                "spot": machine.spot,
                "gpu": _gpu(machine),
                # the node pools' disk type for the priority's machines (one table: gcp/config_rules.py)
                "storage": {"bootDiskSize": machine.disk_size_gib, "bootDiskType": machine.disk_type},
            }
            if machine.taints:
                priority["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in machine.taints]
            priorities.append(priority)
    if args.reservations is not None:
        priorities = _reserved_priorities(args, node) + (
            priorities if args.max_size > 0 or args.on_demand_fallback else []
        )
    node_pool_config: dict[str, Any] = {
        "autoRepair": True,
        "autoUpgrade": True,
        "nodeLabels": node.labels,
    }
    if account := node.service_account:
        node_pool_config["serviceAccount"] = account
    if isinstance(node.image_type, str):
        node_pool_config["imageType"] = node.image_type.lower()
    return {
        "priorities": priorities,
        "nodePoolAutoCreation": {"enabled": True},
        "nodePoolConfig": node_pool_config,
        # The pool's zones, for every priority: without node auto-provisioning there are no cluster-wide
        # autoProvisioningLocations to place the node pools GKE creates.
        "priorityDefaults": {"location": {"zones": list(args.pool_zones)}},
        "whenUnsatisfiable": WHEN_UNSATISFIABLE,
        "activeMigration": {"optimizeRulePriority": True},
        "autoscalingPolicy": {"consolidationDelayMinutes": CONSOLIDATION_DELAY_MINUTES},
    }


def _reserved_priorities(args: SpotGpuPoolArgs, node: GkeNodeSpec) -> list[dict[str, Any]]:
    """The reserved tier first: the pool's machine type and GPU on on-demand VMs (spot VMs consume no
    reservation) with `reservations: {affinity: Specific, specific: [{name, project, zones}]}` (GKE "About custom
    compute classes", priorities[].reservations; field names as the CRD in tests/data/crds)."""
    assert args.reservations is not None
    reservations, zone = reservations_of(args.reservations, args.pool_zones)
    specific = [
        {"name": r.name, **({"project": r.project} if r.project else {}), "zones": [r.zone or zone]}
        for r in reservations
    ]
    machine = replace(node, spot=False)
    return [
        {
            "machineType": machine.machine_type,
            "gpu": _gpu(machine),
            "storage": {"bootDiskSize": machine.disk_size_gib, "bootDiskType": machine.disk_type},
            "reservations": {"affinity": "Specific", "specific": specific},
            **(
                {"taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in machine.taints]}
                if machine.taints
                else {}
            ),
        }
    ]


def workload_contract(name: str, args: SpotGpuPoolArgs) -> WorkloadContract:
    """Select the ComputeClass (`cloud.google.com/compute-class: <class>`, GKE's node selector for it)
    and the pool label (the class's nodePoolConfig.nodeLabels puts it on every node); tolerate GKE's GPU
    taint and the class taint (GKE taints auto-created nodes for a toleration that matches a selected
    label: node-auto-provisioning concepts, "Node metadata")."""
    compute_class = compute_class_name(name)
    taints = sorted({GKE_GPU_TAINT, gke_compute_class_taint(compute_class), *_taints(name, args)})
    return WorkloadContract(
        pool=name,
        taints=tuple(taints),
        node_selector={POOL_LABEL: name, GKE_COMPUTE_CLASS_KEY: compute_class},
    )


def pool_problems(where: str, args: SpotGpuPoolArgs) -> list[str]:
    """What a pool under auto-provisioning cannot say: one machine family, the GPU count each type
    takes, no queued provisioning here (a DWS pool keeps its node pool), GKE node image names."""
    problems = unsupported(where, args, "gcp", NO_PLACE_ON_GKE)
    if args.max_run_hours is not None:
        problems.append(
            problem(
                where,
                "max_run_hours",
                "bounds how long a queued-provisioning (flex-start) node runs; set "
                f"queued_provisioning: true or remove it (got {args.max_run_hours})",
            )
        )
    if args.node_config is not None:
        problems.append(
            problem(
                where,
                "node_config",
                "a node pool's inputs; under provisioner auto-provisioning GKE creates the pools "
                "from the ComputeClass, which has no place for them; allowed: None",
            )
        )
    if args.kubelet_config:
        problems.append(
            problem(
                where,
                "kubelet_config",
                "not mapped to a ComputeClass (priorities[].nodeSystemConfig) yet under "
                f"provisioner auto-provisioning; allowed: {{}} (got {sorted(args.kubelet_config)})",
            )
        )
    if args.node_identity is not None and not isinstance(args.node_identity, str):
        problems.append(
            problem(where, "node_identity", f"a plain service account email (got {type(args.node_identity).__name__})")
        )
    if args.image is not None and (not isinstance(args.image, str) or args.image.lower() not in IMAGE_TYPES):
        problems.append(
            problem(where, "image", f"a ComputeClass takes {', '.join(IMAGE_TYPES)} (got {said(args.image)})")
        )
    problems += pool_reservation_problems(where, args, queued=False)
    rows = [gpu_instance_type("gcp", t, args.gpu_spec) for t in args.instance_types]
    families = sorted({machine_family(r.name) for r in rows if r is not None})
    if len(families) > 1:
        problems.append(problem(where, "instance_types", f"one machine family per pool (got {families})"))
    count = args.gpu_count or (rows[0].gpus if rows and rows[0] is not None else None)
    for r in rows:
        if r is not None and count is not None and not takes_gpu(r, r.gpu, count):
            problems.append(problem(where, "instance_types", f"{r.name!r} cannot carry {count} x {r.model.name}"))
    return problems


def build_spot_gpu_pool(name: str, args: SpotGpuPoolArgs, parent: pulumi.Resource) -> BuiltPool:
    """The pool's ComputeClass; no node pool (GKE creates them for pending pods that select the class)."""
    cluster: GkeClusterHandle = args.cluster  # type: ignore[assignment]
    compute_class = k8s.apiextensions.CustomResource(
        f"{name}-compute-class",
        api_version=COMPUTE_CLASS_API,
        kind="ComputeClass",
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=compute_class_name(name), annotations={PLANNED_NODES_ANNOTATION: str(planned_nodes(args))}
        ),
        spec=compute_class_spec(name, args),
        opts=pulumi.ResourceOptions(parent=parent, provider=cluster.provider),
    )
    first = class_node_labels(name, args)
    return BuiltPool(
        node_groups=[],
        taints=sorted({GKE_GPU_TAINT, *_taints(name, args)}),
        labels=dict(first),
        resources=[compute_class],
        nodes=[],
        node_group_ids=[],
        # GKE installs the driver and runs its own NVIDIA device plugin on GPU nodes, auto-created ones too.
        ships_device_plugin=True,
    )
