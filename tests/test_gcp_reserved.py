"""GKE's reserved tier (gpuPools[].reservations): a node pool with specific reservation affinity ranked first by the
pool's ComputeClass (cluster autoscaler), or a ComputeClass priority with `reservations` (auto-provisioning); the
rules on `reservations`; and compute.getReservation read at preview from the described account."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import stack_preview, stack_values

from elastic_gpu.errors import ConfigError
from elastic_gpu.gcp import GKE_NODE_POOL
from elastic_gpu.preflight import FINDINGS_INPUT
from elastic_gpu.preflight import TYPE_TOKEN as PREFLIGHT
from elastic_gpu.tools.node_group_reading import stack_pools
from elastic_gpu.tools.offline.account import described_account
from elastic_gpu.tools.offline.policy_run import stack_resources
from elastic_gpu.tools.offline.runner import Preview, run_preview
from tests.crd_schemas import validate

NS = "elastic-gpu:"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
RESERVATION = {
    "zone": "us-central1-a",
    "machineType": "g2-standard-8",
    "count": 2,
    "inUseCount": 0,
}


def _pools(preview: Preview, pool: str) -> dict[str, Any]:
    return {r.name: r for r in preview.of_type(GKE_NODE_POOL) if r.name.startswith(f"{pool}-")}


def _with(program_dir, stack: str, i: int, account: dict[str, Any] | None = None, **pool: Any) -> Preview:
    values = stack_values(stack)
    values[NS + "gpuPools"][i].update(pool)
    for key in [k for k, v in pool.items() if v is None]:
        values[NS + "gpuPools"][i].pop(key)
    return run_preview("test", program_dir(values), account)


def _errors(stack: str, i: int, **pool: Any) -> str:
    from elastic_gpu.config import load_stack_config

    values = stack_values(stack)
    values[NS + "gpuPools"][i].update(pool)
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return str(exc.value)


# --- node pools (GKE's cluster autoscaler) ----------------------------------------------------------------------


def test_the_reserved_tier_is_an_on_demand_node_pool_in_the_reservations_zone_with_specific_affinity() -> None:
    pools = _pools(stack_preview("gcp-reserved"), "inference")
    assert sorted(pools) == ["inference-fallback", "inference-reserved", "inference-spot"]
    reserved, spot = pools["inference-reserved"].inputs, pools["inference-spot"].inputs
    node = reserved["nodeConfig"]
    assert node["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["l4-inference"],
    }
    # Spot VMs consume no reservation: the reserved tier is on-demand, in the reservation's zone only, 0 to nodes.
    assert node["spot"] is False and reserved["nodeLocations"] == ["us-central1-a"]
    assert (reserved["autoscaling"]["totalMinNodeCount"], reserved["autoscaling"]["totalMaxNodeCount"]) == (0, 2)
    # The same machine type and GPU as the pool's other tiers (a reservation serves only VMs that match it).
    assert node["machineType"] == spot["nodeConfig"]["machineType"] == "g2-standard-8"
    assert node["guestAccelerators"] == spot["nodeConfig"]["guestAccelerators"]
    # The other tiers consume none (and keep the names they had in gcp-prod).
    assert "reservationAffinity" not in spot["nodeConfig"]
    prod = _pools(stack_preview("gcp-prod"), "inference")
    assert spot["name"] == prod["inference-spot"].inputs["name"]


def test_the_compute_class_ranks_reserved_then_spot_then_on_demand_and_validates() -> None:
    preview = stack_preview("gcp-reserved")
    pools = _pools(preview, "inference")
    [cc] = [c for c in preview.of_type(COMPUTE_CLASS) if c.name == "inference-compute-class"]
    names = [p["nodepools"] for p in cc.inputs["spec"]["priorities"]]
    assert names == [[pools[f"inference-{t}"].inputs["name"]] for t in ("reserved", "spot", "fallback")]
    assert validate(cc.inputs | {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass"}) == []
    # Every tier's nodes carry the class label and taint, so the pods that select the class reach all three.
    for pool in pools.values():
        assert pool.inputs["nodeConfig"]["labels"]["cloud.google.com/compute-class"] == cc.inputs["metadata"]["name"]


def _views(preview: Preview) -> dict[str, Any]:
    return {v.resource: v for v in stack_pools(stack_resources(preview))}


def test_the_reader_reports_the_reserved_group_first_with_its_reservations() -> None:
    views = _views(stack_preview("gcp-reserved"))
    view = views["inference-reserved"]
    assert view.capacity_types[0] == "reserved" and view.reservations == ("l4-inference",)
    assert (view.spot, view.max_size, view.zones) == (False, 2, ["us-central1-a"])
    spot = views["inference-spot"]
    assert spot.capacity_types == ["spot"] and spot.reservations == ()


def test_a_shared_reservation_is_named_by_its_project_in_a_one_zone_pool(program_dir) -> None:
    values = stack_values("gcp-reserved")
    values[NS + "cluster"]["zones"] = ["us-central1-b"]
    values[NS + "gpuPools"][0]["reservations"] = {"ids": ["projects/ml-capacity/reservations/l4-pool"], "nodes": 1}
    pools = _pools(run_preview("test", program_dir(values)), "inference")
    reserved = pools["inference-reserved"].inputs
    assert reserved["nodeConfig"]["reservationAffinity"]["values"] == ["projects/ml-capacity/reservations/l4-pool"]
    assert reserved["nodeLocations"] == ["us-central1-b"]


# --- the rules ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reservations", "pool", "expected"),
    [
        (
            {"ids": ["L4_Inference"], "nodes": 1},
            {},
            "gpuPools[0].reservations.ids[0]: allowed: a reservation name, projects/<project>/reservations/<name>",
        ),
        (
            {"ids": ["zones/us-central1-a/reservations/r"], "tags": {"team": "ml"}, "nodes": 1},
            {},
            "gpuPools[0].reservations.tags: AWS only",
        ),
        ({"ids": [], "nodes": 1}, {}, "gpuPools[0].reservations.ids: at least one reservation"),
        (
            {"ids": ["r"], "nodes": 1},
            {},
            "gpuPools[0].reservations.ids: a reservation is zonal and the pool spans us-central1-a, us-central1-b",
        ),
        (
            {"ids": ["zones/europe-west4-a/reservations/r"], "nodes": 1},
            {},
            "gpuPools[0].reservations.ids[0]: zone europe-west4-a is not one of the pool's zones",
        ),
        (
            {"ids": ["zones/us-central1-a/reservations/r", "zones/us-central1-b/reservations/s"], "nodes": 1},
            {},
            "gpuPools[0].reservations.ids: one zone per pool's reserved tier",
        ),
        (
            {"ids": ["zones/us-central1-a/reservations/r"], "nodes": 1, "only": True},
            {},
            "gpuPools[0].reservations.only: true uses the reservations alone, so gpuPools[0].maxSize must be 0",
        ),
    ],
)
def test_reservations_are_checked_naming_the_field_and_what_is_allowed(
    reservations: dict[str, Any], pool: dict[str, Any], expected: str
) -> None:
    assert expected in _errors("gcp-reserved", 0, reservations=reservations, **pool)


def test_a_queued_provisioning_pool_takes_no_reservation() -> None:
    text = _errors("gcp-reserved", 1, reservations={"ids": ["zones/us-central1-a/reservations/r"], "nodes": 1})
    assert "gpuPools[1].reservations: a queued-provisioning pool takes flex-start capacity" in text


PROGRAM = """
from elastic_gpu import GkeCluster, GkeClusterArgs, SpotGpuPool, SpotGpuPoolArgs
from elastic_gpu.settings import Reservations
c = GkeCluster("g", GkeClusterArgs(cluster_name="g", project="acme-ml", region="us-central1",
                                  zones=["us-central1-a"], kubernetes_version="1.35"))
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=c, instance_types=["g2-standard-8"], max_size=2,
                                  reservations=Reservations(ids=IDS, nodes=1)))
"""


def test_a_program_s_reservations_are_checked_as_the_stack_file_s(run_program) -> None:
    with pytest.raises(ConfigError, match=r"SpotGpuPoolArgs.reservations.ids\[0\]: allowed: a reservation name"):
        run_program(PROGRAM.replace("IDS", "['Bad_Name']"))
    preview = run_program(PROGRAM.replace("IDS", "['l4-res']"))
    [reserved] = [r for r in preview.of_type(GKE_NODE_POOL) if r.name == "l4-reserved"]
    assert reserved.inputs["nodeConfig"]["reservationAffinity"]["values"] == ["l4-res"]


# --- auto-provisioning: a ComputeClass priority with reservations ------------------------------------------------


def test_auto_provisioning_puts_a_specific_reservations_priority_first(program_dir) -> None:
    preview = _with(
        program_dir,
        "gcp-autoprovision",
        0,
        reservations={"ids": ["projects/ml-capacity/zones/us-central1-a/reservations/l4-res"], "nodes": 2},
    )
    assert not _pools(preview, "inference")
    [cc] = [c for c in preview.of_type(COMPUTE_CLASS) if c.name == "inference-compute-class"]
    first, *rest = cc.inputs["spec"]["priorities"]
    assert first["reservations"] == {
        "affinity": "Specific",
        "specific": [{"name": "l4-res", "project": "ml-capacity", "zones": ["us-central1-a"]}],
    }
    assert "spot" not in first and first["gpu"]["type"] == "nvidia-l4"
    assert [p["spot"] for p in rest][:1] == [True] and rest[-1]["spot"] is False
    assert validate(cc.inputs | {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass"}) == []
    views = [v for v in _views(preview).values() if v.compute_class == cc.inputs["metadata"]["name"]]
    assert views[0].capacity_types == ["reserved"]
    assert views[0].reservations == ("projects/ml-capacity/reservations/l4-res",)
    assert len(views) == 3 and all(v.capacity_types != ["reserved"] for v in views[1:])


# --- the reservation read at preview (compute.getReservation) ----------------------------------------------------


def _findings(program_dir, reservation: dict[str, Any] | None, **res: Any) -> list[dict[str, Any]]:
    account = described_account({"gcp": {"reservations": {"l4-inference": reservation} if reservation else {}}})
    pool = {"reservations": {"ids": ["zones/us-central1-a/reservations/l4-inference"], "nodes": 2, **res}}
    [component] = _with(program_dir, "gcp-reserved", 0, account, **pool).of_type(PREFLIGHT)
    return [f for f in component.inputs[FINDINGS_INPUT] if f["check"] == "reservation"]


def _error(program_dir, reservation: dict[str, Any], **res: Any) -> str:
    with pytest.raises(ConfigError) as exc:
        _findings(program_dir, reservation, **res)
    return str(exc.value)


def test_a_matching_reservation_is_no_finding(program_dir) -> None:
    assert _findings(program_dir, RESERVATION) == []


def test_a_missing_reservation_says_so_and_how_to_check_a_future_one(program_dir) -> None:
    [missing] = _findings(program_dir, None)
    assert missing["level"] == "warning" and missing["pool"] == "inference"
    assert "reservation l4-inference not found in us-central1-a of project elastic-gpu-prod" in missing["message"]
    assert "gcloud compute future-reservations describe l4-inference --zone=us-central1-a" in missing["fix"]


def test_a_reservation_in_another_zone_is_not_found_in_the_pools(program_dir) -> None:
    [missing] = _findings(program_dir, RESERVATION | {"zone": "us-central1-b"})
    assert "not found in us-central1-a" in missing["message"]


def test_a_reservation_of_another_machine_type_is_an_error(program_dir) -> None:
    text = _error(program_dir, RESERVATION | {"machineType": "g2-standard-4"})
    assert "reservation l4-inference holds g2-standard-4 VMs, the pool asks for g2-standard-8" in text


def test_a_reservation_of_another_gpu_is_an_error(program_dir) -> None:
    text = _error(program_dir, RESERVATION | {"accelerators": [{"type": "nvidia-tesla-t4", "count": 1}]})
    assert "holds VMs with 1 x nvidia-tesla-t4, the pool's nodes carry 1 x nvidia-l4" in text


def test_a_reservation_smaller_than_the_reserved_tier_is_an_error(program_dir) -> None:
    text = _error(program_dir, RESERVATION | {"count": 1})
    assert "its reservations hold 1 VM(s), the reserved tier asks for 2 (reservations.nodes)" in text
    assert "gcloud compute reservations update l4-inference --vm-count=2 --zone=us-central1-a" in text


def test_a_reservation_in_use_or_not_ready_is_a_warning(program_dir) -> None:
    [in_use] = _findings(program_dir, RESERVATION | {"inUseCount": 1})
    assert in_use["level"] == "warning" and "1 are in use by other VMs: 1 free" in in_use["message"]
    [creating] = _findings(program_dir, RESERVATION | {"status": "CREATING"})
    assert "reservation l4-inference in us-central1-a is CREATING, not READY" in creating["message"]
