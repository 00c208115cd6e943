"""A rule is written once and runs for a stack file and a program alike: the same refusal, naming the setting as
each caller spells it (`gpuPools[0].spotMaxPrice`, `SpotGpuPoolArgs.spot_max_price`), before any resource."""

from __future__ import annotations

import dataclasses

import pulumi
import pytest

from elastic_gpu.clouds import all_clouds
from elastic_gpu.cluster_handle import COMMON_ATTRIBUTES, handle_problems
from elastic_gpu.compose import PlannedCluster
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from tests.conftest import stack_values

P = "elastic-gpu:"

AKS_POOL = """
from elastic_gpu import AksCluster, SpotGpuPool, SpotGpuPoolArgs
cluster = AksCluster.existing("c", cluster_name="c", resource_group_name="rg", location="westeurope",
                              zones=["1", "2"], kubernetes_version="1.33")
SpotGpuPool("t4", SpotGpuPoolArgs(cluster=cluster, instance_types=["Standard_NC4as_T4_v3"], max_size=2,
                                  spot_max_price=PRICE))
"""


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The type of every resource the program registers (components included)."""
    seen: list[str] = []
    real = pulumi.Resource.__init__

    def record(self, t, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(t)
        return real(self, t, name, *args, **kwargs)

    monkeypatch.setattr(pulumi.Resource, "__init__", record)
    return seen


def stack_file_problems(price: float) -> list[str]:
    values = stack_values("azure-dev")
    values[P + "gpuPools"][0]["spotMaxPrice"] = price
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return [p for p in exc.value.problems if "spotMaxPrice" in p]


@pytest.mark.parametrize("price", [0.123456, -2.0, 0.0, 1e-06])
def test_azure_spot_max_price_is_refused_alike_by_a_stack_file_and_a_program(run_program, registered, price) -> None:
    """AKS takes -1 or a positive price with at most five decimals (learn.microsoft.com/azure/aks/spot-node-pool,
    Limitations). A program passed 0.123456 that the stack file refused, and refused -2.0 only after the pool's
    component was registered."""
    allowed = "allowed: -1 (up to the on-demand price) or a positive USD/hour with at most 5 decimals"
    [stack_file] = stack_file_problems(price)
    assert stack_file == f"gpuPools[0].spotMaxPrice: {price!r} is not allowed; {allowed}"
    with pytest.raises(ConfigError) as exc:
        run_program(AKS_POOL.replace("PRICE", repr(price)))
    assert exc.value.problems == [
        f"SpotGpuPool 't4': SpotGpuPoolArgs.spot_max_price: {price!r} is not allowed; {allowed}"
    ]
    assert "elastic-gpu:index:SpotGpuPool" not in registered
    assert not [t for t in registered if t.startswith("azure-native:")]


@pytest.mark.parametrize("price", [-1.0, 0.12345, 2.5])
def test_an_azure_spot_max_price_aks_takes_is_taken_by_both(run_program, price: float) -> None:
    values = stack_values("azure-dev")
    values[P + "gpuPools"][0]["spotMaxPrice"] = price
    load_stack_config(values)
    pools = run_program(AKS_POOL.replace("PRICE", repr(price))).of_type("azure-native:containerservice:AgentPool")
    assert pools and {p.inputs["spotMaxPrice"] for p in pools if p.inputs["scaleSetPriority"] == "Spot"} == {price}


GKE_POOL = """
from elastic_gpu import GkeCluster, SpotGpuPool, SpotGpuPoolArgs
cluster = GkeCluster.existing("c", cluster_name="c", project="p", location="us-central1",
                              zones=["us-central1-a", "us-central1-b"], kubernetes_version="1.33")
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g2-standard-4"], max_size=2,))
"""


#: A stack file refuses a disk below every cloud's when it is read (the field's bound, MIN_DISK_GIB).
BELOW_ALL = "gpuPools[0].diskSizeGib: Input should be greater than or equal to 20 (got {disk})"
#: ... and one within every cloud's but outside the cloud's own by the one disk rule, as a program.
OUT_OF_RANGE = "gpuPools[0].diskSizeGib: {said}"


@pytest.mark.parametrize(
    ("stack", "program", "disk", "allowed", "stack_file"),
    [
        ("azure-dev", AKS_POOL, 4096, "20 to 2048 GiB (AKS osDiskSizeGB, ARM API)", OUT_OF_RANGE),
        ("azure-dev", AKS_POOL, 5, "20 to 2048 GiB (AKS osDiskSizeGB, ARM API)", BELOW_ALL),
        ("gcp-dev", GKE_POOL, 10, "20 to 65536 GiB (GKE node boot disk)", BELOW_ALL),
    ],
)
def test_a_node_disk_is_bounded_alike_by_a_stack_file_and_a_program(
    run_program, registered, stack: str, program: str, disk: int, allowed: str, stack_file: str
) -> None:
    """One disk rule (validation.disk_problems): the cloud's bounds within every cloud's (the settings' field
    bounds). A program's 5 GiB AKS disk or 10 GiB GKE disk passed, which the stack file refused."""
    values = stack_values(stack)
    values[P + "gpuPools"][0]["diskSizeGib"] = disk
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    said = f"{disk} GiB is out of range; allowed: {allowed}"
    assert [p for p in exc.value.problems if "diskSizeGib" in p] == [stack_file.format(disk=disk, said=said)]
    source = program.replace("PRICE", "None").replace("max_size=2,", f"max_size=2, disk_size_gib={disk},")
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    pool = "l4" if program is GKE_POOL else "t4"
    assert exc.value.problems == [f"SpotGpuPool '{pool}': SpotGpuPoolArgs.disk_size_gib: {said}"]
    assert "elastic-gpu:index:SpotGpuPool" not in registered


def test_the_planned_cluster_declares_each_clouds_handle_attributes_and_no_other() -> None:
    """The handle the Args are checked against before the cluster exists: a typed record, not one answering None
    for any name; a cloud's new handle attribute needs its field."""
    declared = {f.name for f in dataclasses.fields(PlannedCluster)}
    for cloud in all_clouds():
        needed = {*COMMON_ATTRIBUTES, *cloud.facts.handle_attributes}
        assert needed <= declared, (cloud.name, needed - declared)
        planned = PlannedCluster(cloud.name, "c", ["z"], "1.35", {})
        assert handle_problems("", planned) == []
        assert all(getattr(planned, a) is None for a in cloud.facts.handle_attributes)
    with pytest.raises(AttributeError):
        PlannedCluster("azure", "c", ["1"], "1.35", {}).vnet_subnet_id  # type: ignore[attr-defined]  # noqa: B018


# --- a pool of reservations alone: one rule on every cloud --------------------------------------------------------

RESERVATION_IDS = {
    "aws": "cr-0123456789abcdef0",
    "azure": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/"
    "Microsoft.Compute/capacityReservationGroups/a100",
    "gcp": "zones/us-central1-a/reservations/r",
}


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_only_reservations_is_one_rule_on_every_cloud(cloud: str) -> None:
    """`reservations.only` refuses a spot tier and a fallback with the same words on each cloud, and a pool of
    reservations alone may have maxSize 0 (which any other GPU pool may not)."""
    from elastic_gpu.config import load_stack_config
    from elastic_gpu.errors import ConfigError
    from tests.conftest import stack_values

    values = stack_values(f"{cloud}-prod")
    pool = values["elastic-gpu:gpuPools"][0]
    pool["maxSize"] = 3
    pool["reservations"] = {"ids": [RESERVATION_IDS[cloud]], "nodes": 2, "only": True}
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    problems = [p for p in exc.value.problems if ".only:" in p]
    assert (
        problems[0]
        == "gpuPools[0].reservations.only: true uses the reservations alone, so gpuPools[0].maxSize must be 0 (got 3)"
    )
    pool.update({"maxSize": 0, "onDemandFallback": False})
    pool.pop("fallbackMaxSize", None)
    pool.pop("maxMinutesToFallback", None)
    try:
        load_stack_config(values)
    except ConfigError as error:  # other clouds' own rules may speak; the cloud-neutral ones must not
        assert not [p for p in error.problems if ".only:" in p or "maxSize" in p], error.problems
