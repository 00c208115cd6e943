"""AKS's one node spec (elastic_gpu/azure/node_spec.py): the agent-pool name digest and the replacement rows come
from its ForceNew marks, every builder reads the pool's nodes from it, and a program reaches an agent-pool input
the library has no setting for through Pulumi's transforms."""

from __future__ import annotations

from dataclasses import replace

import pytest

from elastic_gpu.azure import AKS_AGENT_POOL
from elastic_gpu.azure.node_spec import REFUSED_IN_PLACE_UNSET, URL_PARAMETERS, AksNodeSpec, forcing
from elastic_gpu.azure.pools import STEM_CHARS, agent_pool_name, agent_pool_stem, aks_agent_pool_name
from elastic_gpu.azure.replacement import INLINE_POOL_REFUSED_FIELDS, POOL_REPLACE_FIELDS
from elastic_gpu.node_marks import is_set, marks
from elastic_gpu.scheduling import GPU_TAINT, POOL_LABEL
from tests.conftest import stack_preview

SUBNET = "/subscriptions/s/resourceGroups/g/providers/Microsoft.Network/virtualNetworks/v/subnets/a"
SPEC = AksNodeSpec(
    stem="inference",
    kind="s",
    capacity="spot",
    vm_size="Standard_NC4as_T4_v3",
    zones=["1", "2", "3"],
    min_count=0,
    max_count=9,
    labels={"elastic-gpu.io/pool": "inference"},
    taints=[GPU_TAINT],
    disk_size_gib=100,
    spot_max_price=-1.0,
)


MARKS = marks(AksNodeSpec, "replaces")


def test_the_replacement_rows_are_the_url_parameters_and_the_marked_inputs() -> None:
    fields = POOL_REPLACE_FIELDS[AKS_AGENT_POOL].fields
    assert fields == URL_PARAMETERS + tuple(m.input for _, m in MARKS)
    assert {"vmSize", "availabilityZones", "osDiskSizeGB", "scaleSetPriority", "kubeletConfig"} <= set(fields)


def test_the_inline_pool_refuses_what_aks_refuses_on_any_agent_pool() -> None:
    """An inline pool takes the AgentPool's inputs: `diff` refuses a change of each marked input AKS refuses in
    place (azurerm rotates the pool for it), and of the ones no spec field sets; not of the ForceNew ones that only
    a pool of its own can change (a System pool is never spot)."""
    refused = INLINE_POOL_REFUSED_FIELDS["azure-native:containerservice:ManagedCluster"].fields
    in_place = [m.input for _, m in MARKS if m.refused_in_place]
    assert in_place == ["vmSize", "availabilityZones", "osDiskSizeGB", "vnetSubnetID", "kubeletConfig"]
    assert refused == (*in_place, *REFUSED_IN_PLACE_UNSET)
    assert "scaleSetPriority" not in refused and "maxPods" in refused
    # the ones no spec field sets are really not set by any agent pool the library declares
    declared = set().union(*(p.inputs for p in stack_preview("azure-prod").of_type(AKS_AGENT_POOL)))
    assert declared & set(REFUSED_IN_PLACE_UNSET) == set()


def test_the_marks_and_the_inputs_of_the_spec_are_one() -> None:
    # each marked attribute is what build_agent_pool passes as that input: the properties the spec derives too
    assert (SPEC.os_type, SPEC.scale_set_priority, SPEC.scale_set_eviction_policy) == ("Linux", "Spot", "Delete")
    on_demand = replace(SPEC, capacity="on-demand", spot_max_price=None)
    assert (on_demand.scale_set_priority, on_demand.scale_set_eviction_policy) == ("Regular", None)


@pytest.mark.parametrize(
    ("change", "renamed"),
    [
        ({"vm_size": "Standard_NC8as_T4_v3"}, True),
        ({"zones": ["1"]}, True),
        ({"disk_size_gib": 200}, True),
        ({"capacity": "on-demand", "spot_max_price": None}, True),
        ({"spot_max_price": 2.5}, True),
        ({"vnet_subnet_id": SUBNET}, True),
        ({"kubelet_config": {"pod_max_pids": 1024}}, True),
        # Updated in place (or owned by the autoscaler): the pool keeps its name.
        ({"min_count": 1, "max_count": 20}, False),
        ({"labels": {"team": "ml"}}, False),
        ({"rank": 3}, False),
    ],
)
def test_a_change_renames_the_agent_pool_exactly_when_it_forces_a_replacement(change, renamed: bool) -> None:
    assert (agent_pool_name(replace(SPEC, **change)) != agent_pool_name(SPEC)) is renamed


def test_optional_marks_leave_the_names_of_pools_without_them_as_they_were() -> None:
    # The digest of a pool without a subnet or kubelet settings is the one it had before they were marked.
    legacy = {
        "vmSize": SPEC.vm_size,
        "availabilityZones": SPEC.zones,
        "osDiskSizeGB": SPEC.disk_size_gib,
        "scaleSetPriority": "Spot",
        "spotMaxPrice": -1.0,
    }
    assert forcing(SPEC) == legacy
    assert agent_pool_name(SPEC) == aks_agent_pool_name("inference", "s", legacy)


def test_every_declared_agent_pool_is_named_from_the_marked_inputs_it_declares() -> None:
    # What the stack declares, read back: the name digests the declared values of the named marks.
    pools = stack_preview("azure-prod").of_type(AKS_AGENT_POOL)
    assert len(pools) >= 4
    for pool in pools:
        inputs = pool.inputs
        stem = agent_pool_stem(inputs["nodeLabels"][POOL_LABEL])
        kind = inputs["agentPoolName"][len(stem[:STEM_CHARS])]
        named = {
            m.input: inputs.get(m.input)
            for _, m in MARKS
            if m.digest == "always" or (m.digest == "when_set" and is_set(inputs.get(m.input)))
        }
        if named["spotMaxPrice"] is not None:  # the engine hands -1.0 back as -1
            named["spotMaxPrice"] = float(named["spotMaxPrice"])
        assert inputs["agentPoolName"] == aks_agent_pool_name(stem, kind, named)


TRANSFORMED = """
import pulumi
from elastic_gpu import AksCluster, SpotGpuPool, SpotGpuPoolArgs

def encrypt_at_host(args: pulumi.ResourceTransformationArgs):
    if args.type_ == "azure-native:containerservice:AgentPool":
        return pulumi.ResourceTransformationResult({**args.props, "enableEncryptionAtHost": True}, args.opts)
    return None

aks = AksCluster.existing("aks", cluster_name="aks", resource_group_name="rg", location="eastus2", zones=["1"],
                          kubernetes_version="1.35")
SpotGpuPool("t4", SpotGpuPoolArgs(cluster=aks, instance_types=["Standard_NC4as_T4_v3"], max_size=2,
                                  on_demand_fallback=True),
            opts=pulumi.ResourceOptions(transformations=[encrypt_at_host]))
"""


def test_a_program_sets_an_agent_pool_input_the_library_has_no_setting_for(run_program) -> None:
    pools = run_program(TRANSFORMED).of_type(AKS_AGENT_POOL)
    assert sorted(p.inputs["scaleSetPriority"] for p in pools) == ["Regular", "Spot"]
    assert all(p.inputs["enableEncryptionAtHost"] is True for p in pools)
    # Without the transform the library declares no such input.
    plain = run_program(TRANSFORMED.replace("opts=pulumi.ResourceOptions(transformations=[encrypt_at_host])", ""))
    assert all("enableEncryptionAtHost" not in p.inputs for p in plain.of_type(AKS_AGENT_POOL))
