"""AKS's reserved tier (elastic_gpu/azure/reservations.py): a pool's capacity reservation groups become Regular agent
pools ranked first by the priority expander, the cluster's identity may use them, each group is read at preview
(offline from the described account, a missing one answered with ARM's own 404), and bad settings are refused
before anything is declared."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, stack_preview, stack_values

from elastic_gpu.azure import AKS_AGENT_POOL, AKS_MANAGED_CLUSTER
from elastic_gpu.azure.reservations import CONTRIBUTOR_ROLE, NAP_REFUSAL
from elastic_gpu.cluster_autoscaler import ON_DEMAND_PRIORITY, RESERVED_PRIORITY, SPOT_PRIORITY
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.preflight import FINDINGS_INPUT, TYPE_TOKEN
from elastic_gpu.scheduling import CAPACITY_LABEL
from elastic_gpu.tools.azure.mocks import NEW_ACCOUNT, ArmError, _capacity_reservation, _capacity_reservation_group
from elastic_gpu.tools.node_group_reading import stack_pools
from elastic_gpu.tools.offline.account import described_account
from elastic_gpu.tools.offline.policy_run import stack_resources
from elastic_gpu.tools.offline.runner import Preview, run_preview

P = "elastic-gpu:"
STACK = "azure-reserved"
GROUP = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/gpu-reservations-rg/providers/"
    "Microsoft.Compute/capacityReservationGroups/a100-training"
)
A100 = "Standard_NC24ads_A100_v4"
#: The example account's groups (examples/account.yaml): what the shipped stack reserves from.
EXAMPLE_GROUPS = yaml.safe_load((ROOT / "examples" / "account.yaml").read_text())["azure"]["capacityReservationGroups"]


def agent_pools(p: Preview) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in p.of_type(AKS_AGENT_POOL)}


def findings(p: Preview, *checks: str) -> list[dict[str, Any]]:
    [component] = p.of_type(TYPE_TOKEN)
    return [f for f in component.inputs[FINDINGS_INPUT] if f["check"] in checks]


def with_groups(groups: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return described_account({"azure": {"capacityReservationGroups": groups}})


def reserved_preview(groups: dict[str, Any], change: Any = None) -> Preview:
    """The shipped reserved stack (changed by `change`) previewed against an account holding `groups`."""
    values = stack_values(STACK)
    if change is not None:
        change(values)
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp)
        (program / "stacks").mkdir()
        (program / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
        (program / "__main__.py").write_text((ROOT / "__main__.py").read_text())
        (program / "stacks" / f"Pulumi.{STACK}.yaml").write_text(yaml.safe_dump({"config": values}))
        return run_preview(STACK, program, with_groups(groups))


# --- what the stack declares -----------------------------------------------------------------------------------


def test_the_reserved_tier_is_a_regular_agent_pool_in_the_group() -> None:
    pools = agent_pools(stack_preview(STACK))
    reserved = pools["training-trainingr0"]
    assert reserved["capacityReservationGroupID"] == GROUP
    assert reserved["scaleSetPriority"] == "Regular"  # a reservation serves no spot VM
    assert "scaleSetEvictionPolicy" not in reserved and "spotMaxPrice" not in reserved
    assert (reserved["vmSize"], reserved["minCount"], reserved["maxCount"]) == (A100, 0, 2)
    assert reserved["availabilityZones"] == ["1", "2", "3"] and reserved["enableAutoScaling"] is True
    assert reserved["nodeLabels"][CAPACITY_LABEL] == "reserved"
    # the spot tier after it keeps its own settings, and no other pool names a group
    spot = pools["training-trainings0"]
    assert (spot["scaleSetPriority"], spot["maxCount"]) == ("Spot", 3)
    assert [n for n, p in pools.items() if "capacityReservationGroupID" in p] == ["training-trainingr0"]


def test_the_priority_expander_ranks_reserved_then_spot_then_on_demand() -> None:
    p = stack_preview(STACK)
    pools = agent_pools(p)
    name = {res: inputs["agentPoolName"] for res, inputs in pools.items()}
    ranks = yaml.safe_load(
        p.one("kubernetes:core/v1:ConfigMap", "cluster-autoscaler-priorities").inputs["data"]["priorities"]
    )
    rank_of = {regex: rank for rank, regexes in ranks.items() for regex in regexes}

    def rank(resource: str) -> int:
        return rank_of[f"^aks-{name[resource]}-[0-9]+-vmss$"]

    assert rank("training-trainingr0") == RESERVED_PRIORITY > rank("training-trainings0") == SPOT_PRIORITY
    assert rank("inference-inferences0") == SPOT_PRIORITY > rank("inference-inferenceo0") == ON_DEMAND_PRIORITY
    assert max(ranks) == RESERVED_PRIORITY


def test_the_reader_sees_a_reserved_group() -> None:
    views = {v.resource: v for v in stack_pools(stack_resources(stack_preview(STACK)))}
    reserved, spot = views["training-trainingr0"], views["training-trainings0"]
    assert reserved.capacity_types == ["reserved"] and reserved.reservations == (GROUP,)
    assert reserved.spot is False and reserved.max_size == 2
    assert spot.capacity_types == ["spot"] and spot.reservations == ()


def test_the_cluster_identity_may_use_the_group() -> None:
    p = stack_preview(STACK)
    [cluster] = p.of_type(AKS_MANAGED_CLUSTER)
    assert cluster.inputs["identity"]["type"] == "UserAssigned"  # AKS refuses a system-assigned one for a group
    [grant] = [r for r in p.of_type("azure-native:authorization:RoleAssignment") if "reservations" in r.name]
    assert grant.inputs["scope"] == GROUP.split("/providers/")[0]  # the group's resource group, as AKS documents
    assert grant.inputs["roleDefinitionId"].endswith(f"/roleDefinitions/{CONTRIBUTOR_ROLE}")
    assert grant.urn in cluster.depends_on
    # A stack without reservations keeps its system-assigned identity and has no such grant.
    prod = stack_preview("azure-prod")
    assert prod.of_type(AKS_MANAGED_CLUSTER)[0].inputs["identity"]["type"] == "SystemAssigned"


def test_only_the_reservations_declares_no_spot_or_on_demand_pool(run_program) -> None:
    # A program's pool (a stack file's `only` waits for the cloud-neutral maxSize rule to allow 0 with it).
    source = PROGRAM.replace("GRANTED", "[GROUP]").replace("max_size=2,", "max_size=0,")
    pools = agent_pools(run_program(source.replace("nodes=2)", "nodes=2, only=True)")))
    assert [p.get("capacityReservationGroupID") for p in pools.values()] == [GROUP]
    [reserved] = pools.values()
    assert (reserved["scaleSetPriority"], reserved["maxCount"]) == ("Regular", 2)


# --- what the preview reads --------------------------------------------------------------------------------------


def test_a_group_the_account_holds_as_the_pool_needs_is_no_finding() -> None:
    p = run_preview(STACK, ROOT, described_account(yaml.safe_load((ROOT / "examples" / "account.yaml").read_text())))
    assert findings(p, "reservation", "reservation-match", "reservation-size") == []


def test_a_new_account_has_no_such_group() -> None:
    [finding] = findings(stack_preview(STACK), "reservation", "reservation-match", "reservation-size")
    assert finding["pool"] == "training" and finding["level"] == "warning"
    assert finding["message"] == f"the capacity reservation group {GROUP} is not in the account"
    assert "az capacity reservation group show -g gpu-reservations-rg -n a100-training" in finding["fix"]


def test_the_mock_answers_a_missing_group_with_arms_404() -> None:
    args = {"resourceGroupName": "gpu-reservations-rg", "capacityReservationGroupName": "a100-training"}
    with pytest.raises(ArmError) as exc:
        _capacity_reservation_group(args, NEW_ACCOUNT)
    text = str(exc.value)
    assert "RESPONSE 404: 404 Not Found\nERROR CODE: ResourceNotFound" in text
    assert (
        "The Resource 'Microsoft.Compute/capacityReservationGroups/a100-training' under resource group "
        "'gpu-reservations-rg' was not found" in text
    )
    account = {**NEW_ACCOUNT, "capacityReservationGroups": EXAMPLE_GROUPS}
    group = _capacity_reservation_group(args, account)
    assert [m["id"].rsplit("/", 1)[1] for m in group["capacityReservations"]] == ["a100-z1", "a100-z2"]
    member = _capacity_reservation({**args, "capacityReservationName": "a100-z1", "expand": "instanceView"}, account)
    assert member["sku"] == {"name": A100, "capacity": 1} and member["zones"] == ["1"]
    assert member["instanceView"]["utilizationInfo"]["currentCapacity"] == 1
    with pytest.raises(ArmError, match="capacityReservations/a100-training/nope' under resource group"):
        _capacity_reservation({**args, "capacityReservationName": "nope"}, account)


@pytest.mark.parametrize(
    ("reservations", "check", "says"),
    [
        # A regional (non-zonal) reservation serves no VM of a zonal pool.
        ({"a100": {"sku": A100, "capacity": 2}}, "reservation-match", f"reserves no {A100} in the pool's zone(s)"),
        # A zone the pool does not use.
        (
            {"a100": {"sku": A100, "capacity": 2, "zone": "3"}, "other": {"sku": A100, "capacity": 2, "zone": "9"}},
            None,
            None,
        ),
        # Another size.
        ({"t4": {"sku": "Standard_NC4as_T4_v3", "capacity": 2, "zone": "1"}}, "reservation-match", "holds: t4"),
        # Smaller than reservations.nodes (2).
        ({"a100": {"sku": A100, "capacity": 1, "zone": "1"}}, "reservation-size", "its groups reserve 1 VM(s)"),
        # Not reserved yet.
        (
            {"a100": {"sku": A100, "capacity": 2, "zone": "1", "state": "Failed"}},
            "reservation",
            "is Failed, not Succeeded",
        ),
    ],
    ids=["regional", "zone-3-counts", "other-size", "smaller", "failed"],
)
def test_a_group_that_does_not_fit_the_pool_is_a_finding(reservations, check, says) -> None:
    p = reserved_preview({GROUP: {"reservations": reservations}})
    found = findings(p, "reservation", "reservation-match", "reservation-size")
    if check is None:  # zone 3 is one of the pool's: 2 reserved, as many as reservations.nodes
        assert found == []
        return
    assert [f["check"] for f in found if f["check"] == check] == [check]
    assert any(says in f["message"] for f in found), found


# --- what is refused ---------------------------------------------------------------------------------------------


def errors_for(change, stack: str = STACK) -> str:
    values = copy.deepcopy(stack_values(stack))
    change(values)
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return str(exc.value)


def training(values: dict[str, Any]) -> dict[str, Any]:
    return values[P + "gpuPools"][1]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda v: training(v)["reservations"].update({"ids": ["cr-0123456789abcdef0"]}),
            "gpuPools[1].reservations.ids[0]: 'cr-0123456789abcdef0' is not a capacity reservation group id; allowed: "
            "/subscriptions/<subscription id>/resourceGroups/<group>/providers/Microsoft.Compute/"
            "capacityReservationGroups/<name>",
        ),
        (
            lambda v: training(v)["reservations"].update({"ids": [GROUP, GROUP.upper()]}),
            "gpuPools[1].reservations.ids: a group is named twice",
        ),
        (
            lambda v: training(v)["reservations"].update({"tags": {"team": "ml"}}),
            "gpuPools[1].reservations.tags: AWS only (Karpenter's capacityReservationSelectorTerms)",
        ),
        (
            lambda v: training(v)["reservations"].update({"only": True}),
            "gpuPools[1].reservations.only: true uses the reservations alone, so gpuPools[1].maxSize must be 0 (got 3)",
        ),
        (
            lambda v: (
                training(v).update({"maxSize": 0, "onDemandFallback": True}),
                training(v)["reservations"].update({"only": True}),
            ),
            "gpuPools[1].reservations.only: true uses the reservations alone, so gpuPools[1].onDemandFallback must be "
            "false (got true)",
        ),
        (
            lambda v: training(v)["reservations"].update(
                {"nodes": 1, "ids": [GROUP, GROUP.replace("a100-training", "b")]}
            ),
            "gpuPools[1].reservations.nodes: the reserved tier is one agent pool per group and VM size (2 x 1), each "
            "with a max of at least 1, so it must be >= 2 (got 1)",
        ),
    ],
    ids=["not-a-group", "twice", "tags", "only-max", "only-fallback", "too-few-nodes"],
)
def test_bad_reservations_are_refused_by_field(change, message: str) -> None:
    assert message in errors_for(change)


def test_node_auto_provisioning_refuses_a_reserved_tier() -> None:
    def reserve(values: dict[str, Any]) -> None:
        values[P + "gpuPools"][0]["reservations"] = {"ids": [GROUP], "nodes": 1}

    message = errors_for(reserve, "azure-karpenter")
    assert f"gpuPools[0].reservations: {NAP_REFUSAL}" in message
    assert "Azure/karpenter-provider-azure#1839" in message


# --- a program ---------------------------------------------------------------------------------------------------

PROGRAM = """
from elastic_gpu import AksCluster, AksClusterArgs, SpotGpuPool, SpotGpuPoolArgs
from elastic_gpu.settings import Reservations
GROUP = "GROUP_ID"
aks = AksCluster("aks", AksClusterArgs(cluster_name="aks", location="eastus2", zones=["1", "2"],
                 kubernetes_version="1.35", capacity_reservation_group_ids=GRANTED))
SpotGpuPool("a100", SpotGpuPoolArgs(cluster=aks, instance_types=["Standard_NC24ads_A100_v4"], max_size=2,
            reservations=Reservations(ids=[GROUP], nodes=2)))
""".replace("GROUP_ID", GROUP)


def test_a_program_s_pool_reserves_from_a_group_its_cluster_was_told_of(run_program) -> None:
    p = run_program(PROGRAM.replace("GRANTED", "[GROUP]"))
    pools = agent_pools(p)
    assert [x.get("capacityReservationGroupID") for x in pools.values()] == [GROUP, None]
    assert p.of_type(AKS_MANAGED_CLUSTER)[0].inputs["identity"]["type"] == "UserAssigned"


def test_a_program_s_cluster_must_be_told_of_the_group(run_program) -> None:
    with pytest.raises(ConfigError) as exc:
        run_program(PROGRAM.replace("GRANTED", "[]"))
    assert "SpotGpuPool 'a100': SpotGpuPoolArgs.reservations.ids: the cluster's control-plane identity is not " in str(
        exc.value
    )
    assert "AksClusterArgs.capacity_reservation_group_ids" in str(exc.value)


def test_on_a_cluster_made_elsewhere_the_pool_says_how_to_check_the_identity(run_program) -> None:
    source = PROGRAM.replace(
        'AksCluster("aks", AksClusterArgs(cluster_name="aks", location="eastus2", zones=["1", "2"],\n'
        '                 kubernetes_version="1.35", capacity_reservation_group_ids=GRANTED))',
        'AksCluster.existing("aks", cluster_name="aks", resource_group_name="rg", location="eastus2", '
        'zones=["1", "2"], kubernetes_version="1.35")',
    )
    assert "AksCluster.existing" in source
    p = run_program(source)
    assert [x.get("capacityReservationGroupID") for x in agent_pools(p).values()] == [GROUP, None]
    [warning] = [w for w in p.warnings if "control-plane identity is user-assigned" in w]
    assert "--role Contributor --scope /subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/" in warning
