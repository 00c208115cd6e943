"""GKE's one node spec (elastic_gpu/gcp/node_spec.py): its ForceNew marks give the node-pool name's digest and the
replace rows, and a program's own nodeConfig inputs (`node_config`) reach the declared node pool."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import stem

from elastic_gpu.gcp import GKE_NODE_POOL
from elastic_gpu.gcp.node_spec import (
    NODE_CONFIG_FORCE_NEW_UNSET,
    POOL_FORCE_NEW_UNSET,
    GkeAccelerator,
    GkeNodeSpec,
    GkeReservationAffinity,
    owned_node_config_fields,
)
from elastic_gpu.gcp.pools import gke_node_pool_name
from elastic_gpu.node_marks import marked_inputs
from elastic_gpu.tools.replacement import NODE_ROLLING_FIELDS, replacing_paths

BASE = GkeNodeSpec(
    machine_type="g2-standard-8",
    spot=True,
    disk_size_gib=100,
    labels={"a": "b"},
    taints=(),
    accelerator=GkeAccelerator("nvidia-l4", 1, "DEFAULT"),
    queued=False,
    max_run_duration=None,
    oauth_scopes=("https://www.googleapis.com/auth/cloud-platform",),
    service_account=None,
    reservation=None,
    image_type=None,
    kubelet_config={},
    overrides=None,
)


def _name(spec: GkeNodeSpec) -> str:
    return gke_node_pool_name("l4-spot", spec.forcing())


def test_every_replaces_mark_is_a_replace_row_and_the_rows_come_from_the_spec() -> None:
    marked = marked_inputs(GkeNodeSpec, "replaces")
    assert marked and all(replacing_paths(GKE_NODE_POOL, [path]) == [path] for path in marked)
    rows = [*POOL_FORCE_NEW_UNSET, *marked, *(f"nodeConfig.{f}" for f in NODE_CONFIG_FORCE_NEW_UNSET)]
    from elastic_gpu.gcp.replacement import POOL_REPLACE_FIELDS

    assert list(POOL_REPLACE_FIELDS[GKE_NODE_POOL].fields) == rows
    # An input updated in place, or whose update recreates the nodes, is no replace row: the rolling rows hold
    # the spec's `rolls` marks.
    rolling = marked_inputs(GkeNodeSpec, "rolls")
    assert "nodeConfig.diskSizeGb" in rolling and replacing_paths(GKE_NODE_POOL, ["nodeConfig.diskSizeGb"]) == []
    assert NODE_ROLLING_FIELDS[GKE_NODE_POOL].fields == ("version", *rolling)
    assert BASE.disk_type == "pd-balanced" and dataclasses.replace(BASE, machine_type="a3-ultragpu-8g").disk_type == (
        "hyperdisk-balanced"
    )


@pytest.mark.parametrize(
    "change",
    [
        {"spot": False},
        {"accelerator": GkeAccelerator("nvidia-l4", 2, "DEFAULT")},
        {"accelerator": GkeAccelerator("nvidia-l4", 1, "LATEST")},
        {"service_account": "nodes@p.iam.gserviceaccount.com"},
        {"reservation": GkeReservationAffinity("SPECIFIC_RESERVATION", ("r1",))},
        {"queued": True},
    ],
)
def test_a_replacing_change_renames_the_pool(change: dict[str, object]) -> None:
    assert _name(dataclasses.replace(BASE, **change)) != _name(BASE)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change", [{"disk_size_gib": 200}, {"machine_type": "g2-standard-12"}, {"labels": {"x": "y"}}, {"image_type": "X"}]
)
def test_an_in_place_change_keeps_the_name(change: dict[str, object]) -> None:
    assert _name(dataclasses.replace(BASE, **change)) == _name(BASE)  # type: ignore[arg-type]


def test_the_queued_pools_digest_holds_the_affinity_type_as_before() -> None:
    # The names GKE already has must not change: NO_RESERVATION alone, as pools.py wrote it before the spec.
    queued = dataclasses.replace(BASE, queued=True, reservation=GkeReservationAffinity("NO_RESERVATION"))
    assert queued.forcing()["reservationAffinity"] == "NO_RESERVATION"
    assert "maxRunDuration" not in BASE.forcing() and "serviceAccount" not in BASE.forcing()


# --- the escape hatch: a program's own nodeConfig inputs ----------------------------------------------------------

PROGRAM = """
import pulumi_gcp as gcp
from elastic_gpu import GkeCluster, GkeClusterArgs, SpotGpuPool, SpotGpuPoolArgs
c = GkeCluster("g", GkeClusterArgs(cluster_name="g", project="acme-ml", region="us-central1",
                                  zones=["us-central1-a"], kubernetes_version="1.35"))
SpotGpuPool("l4", SpotGpuPoolArgs(cluster=c, instance_types=["g2-standard-8"], max_size=2, NODE_CONFIG))
"""


def _pool(run_program, node_config: str):
    preview = run_program(PROGRAM.replace("NODE_CONFIG", node_config))
    return next(r for r in preview.of_type(GKE_NODE_POOL) if r.name.startswith("l4-"))


def test_a_program_sets_a_node_pool_input_the_library_has_no_setting_for(run_program) -> None:
    plain = _pool(run_program, "node_config=None")
    pool = _pool(
        run_program,
        "node_config=gcp.container.NodePoolNodeConfigArgs(local_ssd_count=1, metadata={'team': 'ml'},"
        " resource_manager_tags={'tagKeys/1': 'tagValues/2'})",
    )
    node = pool.inputs["nodeConfig"]
    assert (node["localSsdCount"], node["metadata"]) == (1, {"team": "ml"})
    assert node["resourceManagerTags"] == {"tagKeys/1": "tagValues/2"}
    # The pool's own inputs are still there.
    assert node["machineType"] == "g2-standard-8" and node["spot"] is True and node["guestAccelerators"]
    # metadata forces a new pool (node_config.go ForceNew): it is in the name's digest, so the pool is renamed.
    assert stem(pool.inputs["name"]) == stem(plain.inputs["name"]) and pool.inputs["name"] != plain.inputs["name"]
    # An input updated in place (resourceManagerTags) is not: the same name as with metadata alone.
    meta_only = _pool(run_program, "node_config=gcp.container.NodePoolNodeConfigArgs(metadata={'team': 'ml'})")
    assert meta_only.inputs["name"] == pool.inputs["name"]


def test_an_input_the_pool_sets_itself_is_refused_naming_it(run_program) -> None:
    from elastic_gpu.errors import ConfigError

    with pytest.raises(ConfigError) as exc:
        _pool(run_program, "node_config=gcp.container.NodePoolNodeConfigArgs(machine_type='a2-highgpu-1g', spot=False)")
    text = str(exc.value)
    assert "node_config.machineType: set by the pool itself" in text and "'a2-highgpu-1g'" in text
    assert "node_config.spot: set by the pool itself" in text
    assert "reservationAffinity" in owned_node_config_fields() and "labels" in owned_node_config_fields()


def test_node_config_of_another_type_is_refused(run_program) -> None:
    from elastic_gpu.errors import ConfigError

    expected = r"node_config: must be a pulumi_gcp.container.NodePoolNodeConfigArgs \(got dict\)"
    with pytest.raises(ConfigError, match=expected):
        _pool(run_program, "node_config={'metadata': {'a': 'b'}}")
