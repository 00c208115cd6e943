"""One read of every node group: each cloud's reader turns a node group resource into one `NodeGroupView`,
and the Pools table, the cost table, the policies and the simulation all read that view."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import stack_preview

from elastic_gpu.scheduling import AKS_SPOT_TAINT, GKE_GPU_TAINT, Taint
from elastic_gpu.tools.clouds import all_clouds
from elastic_gpu.tools.node_group_reading import pools_of, stack_pools
from elastic_gpu.tools.node_group_view import AUTO_CREATED_GROUP, AUTOSCALED_GROUP, KARPENTER_GROUP, NodeGroupView
from elastic_gpu.tools.offline.policy_run import stack_resources
from elastic_gpu.tools.offline.report import pool_rows, preview_cost
from elastic_gpu.tools.simulation.templates import node_templates


def _views(stack: str) -> dict[str, NodeGroupView]:
    return {v.resource: v for v in stack_pools(stack_resources(stack_preview(stack)))}


def test_an_eks_managed_node_group_is_read_into_the_view() -> None:
    v = _views("aws-dev")["t4-spot-us-west-2a"]
    assert (v.cloud, v.kind, v.pool, v.gpu, v.spot) == ("aws", AUTOSCALED_GROUP, "t4", True, True)
    assert v.name.startswith("gpu-dev-t4-spot-us-west-2a-") and v.declared_name == "t4-spot-us-west-2a"
    assert (v.instance_types, v.min_size, v.max_size) == (["g4dn.xlarge"], 0, 2)
    # Placed against the stack: its subnet's zone, its provider's region.
    assert (v.zones, v.region) == (["us-west-2a"], "us-west-2")
    assert v.taints == [Taint("nvidia.com/gpu", "true", "NoSchedule")]
    assert v.shown_taints == ["nvidia.com/gpu=true:NO_SCHEDULE"]  # as the EKS API spells it
    assert v.template_resources["nvidia.com/gpu"] == "2"
    assert v.capacity_types == ["spot"] and not v.any_type and v.shared_cap is None


def test_an_eks_karpenter_node_pool_is_read_into_the_view() -> None:
    v = _views("aws-karpenter")["inference-spot-first"]
    assert (v.cloud, v.kind, v.name, v.pool) == ("aws", KARPENTER_GROUP, "inference-spot-first", "inference")
    assert not v.spot and v.spot_first and v.capacity_types == ["spot", "on-demand"]
    assert v.any_type and v.instance_types[0] == "g4dn.xlarge" and len(v.instance_types) > 1
    assert (v.min_size, v.max_size, v.weight, v.consolidate_after) == (0, 9, 100, "10m")
    assert v.node_class == "inference" and v.region == "us-east-1"
    assert v.zones == ["us-east-1a", "us-east-1b", "us-east-1c"]


def test_an_aks_agent_pool_and_an_inline_profile_are_read_into_the_view() -> None:
    views = _views("azure-dev")
    v = views["t4-t4s0"]
    assert (v.cloud, v.kind, v.pool, v.spot, v.gpu) == ("azure", AUTOSCALED_GROUP, "t4", True, True)
    assert (v.instance_types, v.min_size, v.max_size, v.zones) == (["Standard_NC4as_T4_v3"], 0, 4, ["1", "2"])
    assert v.implicit_taints == [AKS_SPOT_TAINT] and v.region == "westeurope"
    assert v.disk_bytes == 100 * 2**30 and v.max_pods == 250  # Azure CNI overlay's default
    inline = views["gpu-dev-aks[0]"]
    assert (inline.name, inline.declared_name, inline.gpu) == ("system", "system", False)


def test_an_aks_node_auto_provisioning_node_pool_is_read_into_the_view() -> None:
    v = _views("azure-karpenter")["inference-spot-first"]
    assert (v.cloud, v.kind, v.spot_first, v.max_size) == ("azure", KARPENTER_GROUP, True, 9)
    # Its sizes by the SKU name label node auto-provisioning lists them under.
    assert v.instance_types == ["Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3", "Standard_NC16as_T4_v3"]
    assert v.region == "eastus2" and v.zones == ["eastus2-1", "eastus2-2", "eastus2-3"]


def test_a_gke_node_pool_and_a_dws_pool_are_read_into_the_view() -> None:
    views = _views("gcp-prod")
    v = views["inference-spot"]
    assert (v.cloud, v.kind, v.pool, v.spot, v.compute_class) == (
        "gcp",
        AUTOSCALED_GROUP,
        "inference",
        True,
        "inference-spot-first",
    )
    assert v.accelerators == [("nvidia-l4", 1)] and v.implicit_taints == [GKE_GPU_TAINT]
    assert (v.region, v.zones) == ("us-central1", ["us-central1-a", "us-central1-b", "us-central1-c"])
    dws = views["training-dws"]
    assert dws.queued and dws.flex_start and not dws.spot and (dws.min_size, dws.max_size) == (0, 4)


def test_a_gke_auto_created_class_is_one_view_per_priority_sized_by_its_pools_plan() -> None:
    views = _views("gcp-autoprovision")
    spot, fallback = views["inference-compute-class[0]"], views["inference-compute-class[1]"]
    assert (spot.kind, spot.name, spot.spot, fallback.spot) == (
        AUTO_CREATED_GROUP,
        "inference-spot-first[0]",
        True,
        False,
    )
    # No node auto-provisioning: the pool's plan (9 spot + 9 fallback), one cap both priorities share and that
    # nothing in the cluster holds.
    assert (spot.max_size, fallback.max_size, spot.shared_cap, fallback.shared_cap) == (
        18,
        18,
        "inference-spot-first",
        "inference-spot-first",
    )
    assert not spot.cap_held and not fallback.cap_held
    assert spot.instance_types[0] == "g2-standard-32"  # the largest first: priced as the upper bound
    assert spot.compute_class == "inference-spot-first" and spot.region == "us-central1"
    assert spot.zones == ["us-central1-a", "us-central1-b", "us-central1-c"]  # the class's priorityDefaults


def test_with_node_auto_provisioning_the_class_is_sized_by_the_cluster_limit(program_dir) -> None:
    from conftest import stack_values

    from elastic_gpu.tools.offline.runner import run_preview

    values = stack_values("gcp-autoprovision")
    values["elastic-gpu:cluster"]["nodeAutoProvisioning"] = True
    # A plan the limit disagrees with: the limit, which GKE holds, wins.
    for r in (preview := run_preview("test", program_dir(values))).resources:
        if r.type.endswith(":ComputeClass"):
            r.inputs["metadata"]["annotations"]["elastic-gpu.io/planned-nodes"] = "3"
    views = {v.resource: v for v in stack_pools(stack_resources(preview))}
    spot = views["inference-compute-class[0]"]
    assert (spot.max_size, spot.shared_cap, spot.cap_held) == (18, "nvidia-l4", True)


def test_read_from_its_props_alone_a_node_group_has_no_region_nor_cap() -> None:
    """A resource policy sees one resource: the facts other resources hold stay unset."""
    preview = stack_preview("gcp-autoprovision")
    (cc,) = [r for r in preview.resources if r.type.endswith(":ComputeClass") and r.name == "inference-compute-class"]
    views = pools_of(cc.type, cc.name, cc.inputs)
    assert [v.max_size for v in views] == [None, None] and {v.region for v in views} == {None}


@pytest.mark.parametrize("stack", ["aws-karpenter", "azure-dev", "gcp-autoprovision"])
def test_each_node_group_resource_has_one_reader(stack: str) -> None:
    for r in stack_resources(stack_preview(stack)):
        readers = [c.name for c in all_clouds() if c.reader().read_node_groups(r, None)]
        assert len(readers) <= 1, (r.resource_type, r.name, readers)


@pytest.mark.parametrize("stack", ["aws-dev", "azure-dev", "gcp-autoprovision", "aws-karpenter"])
def test_the_pools_table_the_cost_table_and_the_simulation_agree_on_each_group(stack: str) -> None:
    """All three are made from the same views: a group's name, capacity and size read the same in each."""
    preview = stack_preview(stack)
    rows = {r.node_group: r for r in pool_rows(preview)}
    costs = {c.pool.name: c for c in preview_cost(preview).pools}
    assert set(rows) == set(costs)
    for t in node_templates(preview):
        row = rows[t.name]
        assert t.max_size == row.max_size and t.capacity in row.capacity, t.name
        assert costs[t.name].pool.pool == t.pool


def test_a_view_is_immutable() -> None:
    v = _views("aws-dev")["t4-spot-us-west-2a"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.max_size = 9  # type: ignore[misc]


def test_a_value_only_the_reports_read_never_hides_a_node_group_from_the_policies() -> None:
    """During a real preview a node group's tags or subnets may be unknown: the view still reads (the
    policies judge its sizes and taints); what is unknown is left out ("?" for an unplaced subnet)."""
    from pulumi.runtime import rpc
    from pulumi_policy.proxy import unknown_checking_proxy

    from elastic_gpu.aws import EKS_NODE_GROUP
    from elastic_gpu.tools.node_group_reading import read_node_groups
    from elastic_gpu.tools.node_group_view import Resource

    props = {
        "nodeGroupName": "ng",
        "instanceTypes": ["g4dn.xlarge"],
        "scalingConfig": {"minSize": 0, "maxSize": 2},
        "tags": rpc.UNKNOWN,
        "subnetIds": [rpc.UNKNOWN],
    }
    (view,) = read_node_groups(Resource(EKS_NODE_GROUP, "ng", unknown_checking_proxy(props)), [])
    assert (view.gpu, view.max_size, view.zones, view.template_resources) == (True, 2, ["?"], {})


def test_a_list_with_one_unknown_element_keeps_its_known_elements() -> None:
    """A zone list whose one element is known only after deployment (a real preview): the view keeps the known
    zones, and the Pools table shows them (it sorted the engine's placeholder and crashed)."""
    from pulumi.runtime import rpc
    from pulumi_policy.proxy import unknown_checking_proxy

    from elastic_gpu.azure import AKS_AGENT_POOL
    from elastic_gpu.tools.node_group_reading import read_node_groups
    from elastic_gpu.tools.node_group_view import Resource
    from elastic_gpu.tools.offline.report import pool_row

    props = {
        "agentPoolName": "gpu",
        "vmSize": "Standard_NC4as_T4_v3",
        "enableAutoScaling": True,
        "minCount": 0,
        "maxCount": 2,
        "availabilityZones": [rpc.UNKNOWN, "2"],
        "tags": {"a": "b", "c": rpc.UNKNOWN},
    }
    (view,) = read_node_groups(Resource(AKS_AGENT_POOL, "gpu", unknown_checking_proxy(props)), [])
    assert (view.gpu, view.max_size, view.zones) == (True, 2, ["2"])
    assert pool_row(view).zones == ["2"]
