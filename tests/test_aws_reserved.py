"""EKS: a GPU pool's reserved tier (EC2 On-Demand Capacity Reservations and Capacity Blocks for ML), under Karpenter
and under the cluster-autoscaler: what the stack declares, in which order, what the preview reads and finds, and
what it refuses."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from elastic_gpu.__main__ import main
from elastic_gpu.aws.karpenter.nodes import node_class_spec, node_pool_spec, node_pools
from elastic_gpu.aws.node_spec import gpu_node_spec
from elastic_gpu.aws.preflight import reservation_findings
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.settings import Reservations
from elastic_gpu.tools.offline.account import described_account
from elastic_gpu.tools.offline.runner import Preview, run_preview
from elastic_gpu.tools.offline.stack_resources import node_groups
from tests.conftest import stack_preview, stack_values
from tests.crd_schemas import validate
from tests.test_karpenter_eks import NODES, pool_args

ODCR = "cr-0a1b2c3d4e5f60001"
BLOCK = "cr-0a1b2c3d4e5f60002"
#: The described account: an ODCR of 2 x g4dn.xlarge in us-east-1a, a Capacity Block of 2 x p5.48xlarge in
#: us-east-1b active from 2026-11-01 to 2027-01-01 (DescribeCapacityReservations' fields).
RESERVATIONS: dict[str, dict[str, Any]] = {
    ODCR: {
        "reservationType": "default",
        "instanceType": "g4dn.xlarge",
        "availabilityZone": "us-east-1a",
        "instanceCount": 2,
        "state": "active",
    },
    BLOCK: {
        "reservationType": "capacity-block",
        "instanceType": "p5.48xlarge",
        "availabilityZone": "us-east-1b",
        "instanceCount": 2,
        "state": "active",
        "startDate": "2026-11-01T11:30:00Z",
        "endDate": "2027-01-01T11:30:00Z",
    },
}
#: A day inside the Capacity Block's window.
INSIDE = datetime(2026, 12, 1, tzinfo=timezone.utc)

PROGRAM = """
import pulumi
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster, EksClusterArgs, GeneralPool,
    GeneralPoolArgs, SpotGpuPool, SpotGpuPoolArgs)
from elastic_gpu.settings import Reservations

cluster = EksCluster("c", EksClusterArgs(cluster_name="lab", region="us-east-1",
                                         zones=["us-east-1a", "us-east-1b"], kubernetes_version="1.35"))
general = GeneralPool("general", GeneralPoolArgs(cluster=cluster, instance_types=["m6i.large"], max_size=2))
pool = SpotGpuPool("t4", SpotGpuPoolArgs(cluster=cluster, instance_types=["g4dn.xlarge"], max_size=MAX,
                                         on_demand_fallback=FALLBACK, reservations=RESERVATIONS))
ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=cluster, provider=cluster.provider, general_pool=general,
                                              gpu_pools=[pool]))
"""


def program_preview(
    tmp_path: Path,
    reservations: str,
    account: dict[str, Any] | None = None,
    max_size: int = 2,
    fallback: bool = True,
) -> Preview:
    """The program above under the mock engine, its pool's `reservations` as given, against an account holding
    RESERVATIONS (or `account`'s)."""
    source = PROGRAM.replace("RESERVATIONS", reservations).replace("MAX", str(max_size))
    (tmp_path / "stacks").mkdir(exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text("name: consumer\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks" / "Pulumi.test.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(source.replace("FALLBACK", str(fallback)))
    described = {"aws": {"reservations": RESERVATIONS if account is None else account}}
    return run_preview("test", tmp_path, described_account(described))


# --- Karpenter -------------------------------------------------------------------------------------------


def test_karpenter_selects_the_reservations_and_takes_them_first() -> None:
    args = pool_args(reservations=Reservations(ids=[ODCR], tags={"team": "ml"}, nodes=2))
    node_class = node_class_spec(gpu_node_spec("inference", args), NODES)
    assert node_class["capacityReservationSelectorTerms"] == [{"id": ODCR}, {"tags": {"team": "ml"}}]
    plans = node_pools(args)
    # reserved first at the top weight; the spot-first NodePool one below (Karpenter orders by weight)
    assert [(p.suffix, p.capacity_types, p.max_nodes, p.weight) for p in plans] == [
        ("reserved", ("reserved",), 2, 100),
        ("spot-first", ("spot", "on-demand"), 9, 99),
    ]
    reserved = node_pool_spec("inference", args, NODES, plans[0])
    assert reserved["template"]["spec"]["requirements"][0] == {
        "key": "karpenter.sh/capacity-type",
        "operator": "In",
        "values": ["reserved"],
    }
    assert reserved["limits"]["nodes"] == "2"
    # both objects pass the pinned CRDs (karpenter-provider-aws v1.14.1), CEL rules included
    assert validate({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "i"},
                     "spec": node_class}) == []  # fmt: skip
    assert validate({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "i-reserved"},
                     "spec": reserved}) == []  # fmt: skip


def test_without_reservations_karpenter_objects_are_unchanged() -> None:
    args = pool_args()
    assert "capacityReservationSelectorTerms" not in node_class_spec(gpu_node_spec("inference", args), NODES)
    assert [(p.suffix, p.weight) for p in node_pools(args)] == [("spot-first", 100)]


def test_reservations_only_is_the_reserved_node_pool_alone() -> None:
    args = pool_args(max_size=0, on_demand_fallback=False, reservations=Reservations(ids=[BLOCK], nodes=2, only=True))
    assert [(p.suffix, p.capacity_types) for p in node_pools(args)] == [("reserved", ("reserved",))]


def test_the_crd_refuses_what_the_rules_refuse() -> None:
    # the CRD's own pattern and CEL: the rules must not let through what the API server would reject
    good = node_class_spec(gpu_node_spec("inference", pool_args(reservations=Reservations(ids=[ODCR], nodes=1))), NODES)
    bad = good | {"capacityReservationSelectorTerms": [{"id": "cr-XYZ"}]}
    assert validate({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "i"},
                     "spec": bad})  # fmt: skip
    from elastic_gpu.aws.reservations import reservation_problems
    from elastic_gpu.settings import Spelling

    spell = Spelling("gpuPools[0].", stack_file=True)
    problems = reservation_problems(spell, Reservations(ids=["cr-XYZ"], nodes=1), karpenter=True, max_size=1,
                                    on_demand_fallback=False)  # fmt: skip
    assert problems == [
        "gpuPools[0].reservations.ids[0]: 'cr-XYZ' is not an EC2 capacity reservation id; allowed: cr- and lowercase "
        "letters or digits, e.g. cr-0123456789abcdef0 (`aws ec2 describe-capacity-reservations` lists them)"
    ]


# --- the stack file's rules ---------------------------------------------------------------------------------


def _stack(pool_changes: dict[str, Any], provisioner: str | None = "karpenter") -> dict[str, Any]:
    """aws-reserved's `config:` with its inference pool changed (and no provisioner: the cluster-autoscaler)."""
    config = stack_values("aws-reserved")
    config["elastic-gpu:gpuPools"][0].update(pool_changes)
    if provisioner is None:
        del config["elastic-gpu:provisioner"]
    return config


def test_a_stack_file_refuses_tags_under_the_cluster_autoscaler_and_only_with_other_tiers() -> None:
    changes = {"reservations": {"ids": [ODCR], "tags": {"team": "ml"}, "nodes": 2, "only": True}}
    with pytest.raises(ConfigError) as exc:
        load_stack_config(_stack(changes, provisioner=None))
    problems = "\n".join(exc.value.problems)
    assert "gpuPools[0].reservations.tags: under the cluster-autoscaler each reservation is a node group" in problems
    assert (
        "gpuPools[0].reservations.only: true uses the reservations alone, so gpuPools[0].maxSize must be 0 (got 9)"
    ) in problems


def test_the_shipped_reserved_stack_passes_the_gate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "--stack", "aws-reserved"]) == 0
    out = capsys.readouterr().out
    # a new account holds no reservation: a warning naming it and the command that checks it
    assert f"inference: the account has no capacity reservation {ODCR} in us-east-1" in out
    assert f"aws ec2 describe-capacity-reservations --capacity-reservation-ids {ODCR} --region us-east-1" in out


# --- the cluster-autoscaler --------------------------------------------------------------------------------


def test_an_odcr_is_an_on_demand_group_in_its_zone_ranked_first(tmp_path: Path) -> None:
    preview = program_preview(tmp_path, f"Reservations(ids=['{ODCR}'], nodes=2)")
    group = preview.one("aws:eks/nodeGroup:NodeGroup", "t4-reserved-us-east-1a").inputs
    assert group["capacityType"] == "ON_DEMAND"
    assert group["instanceTypes"] == ["g4dn.xlarge"]
    assert group["scalingConfig"]["maxSize"] == 2 and group["scalingConfig"]["minSize"] == 0
    [subnet] = group["subnetIds"]
    assert "us-east-1a" in subnet
    template = preview.one("aws:ec2/launchTemplate:LaunchTemplate", "t4-reserved-us-east-1a-lt").inputs
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": ODCR}
    }
    assert "instanceMarketOptions" not in template
    # the priority expander: reserved, then spot, then the on-demand fallback
    ranks = yaml.safe_load(preview.one("kubernetes:core/v1:ConfigMap", "ca-priorities").inputs["data"]["priorities"])
    kinds = {rank: sorted({r.replace("\\", "").split("-")[3] for r in regexes}) for rank, regexes in ranks.items()}
    assert kinds[90] == ["reserved"] and kinds[50] == ["spot"] and "fallback" in kinds[10], ranks
    assert sorted(ranks, reverse=True) == [90, 50, 10]
    # the reader: a reserved group, the reservation named, its max the tier's nodes
    [view] = [v for v in node_groups(preview) if v.resource == "t4-reserved-us-east-1a"]
    assert view.capacity_types == ["reserved"] and view.reservations == (ODCR,)
    assert not view.spot and view.max_size == 2 and view.zones == ["us-east-1a"]


def test_a_capacity_block_is_a_capacity_block_group(tmp_path: Path) -> None:
    account = {BLOCK: {**RESERVATIONS[BLOCK], "instanceType": "g4dn.xlarge", "instanceCount": 1}}
    preview = program_preview(tmp_path, f"Reservations(ids=['{BLOCK}'], nodes=2, only=True)", account,
                              max_size=0, fallback=False)  # fmt: skip
    groups = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    # only: the reserved group and the general pool's, no spot or on-demand group
    assert sorted(g.name for g in groups) == ["general-ng", "t4-reserved-us-east-1b"]
    group = preview.one("aws:eks/nodeGroup:NodeGroup", "t4-reserved-us-east-1b").inputs
    assert group["capacityType"] == "CAPACITY_BLOCK"
    # bounded by the block's instance count, not the tier's nodes
    assert group["scalingConfig"]["maxSize"] == 1
    template = preview.one("aws:ec2/launchTemplate:LaunchTemplate", "t4-reserved-us-east-1b-lt").inputs
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["capacityReservationSpecification"]["capacityReservationTarget"]["capacityReservationId"] == BLOCK
    [view] = [v for v in node_groups(preview) if v.resource == "t4-reserved-us-east-1b"]
    assert view.capacity_types == ["reserved"] and view.reservations == (BLOCK,)


@pytest.mark.parametrize(
    ("account", "expected"),
    [
        ({}, f"{ODCR} cannot be read (invoke of aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation "
             f"failed: reading EC2 Capacity Block Reservation ({ODCR}): couldn't find resource)"),
        ({ODCR: {**RESERVATIONS[ODCR], "availabilityZone": "us-east-1c"}},
         f"{ODCR} is in us-east-1c, not a zone of the pool (['us-east-1a', 'us-east-1b'])"),
        ({ODCR: {**RESERVATIONS[ODCR], "instanceType": "g5.xlarge"}},
         f"{ODCR} reserves g5.xlarge, not one of the pool's instance_types (['g4dn.xlarge'])"),
    ],
)  # fmt: skip
def test_a_reservation_the_node_group_cannot_use_is_refused_before_any_resource(
    tmp_path: Path, account: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigError) as exc:
        program_preview(tmp_path, f"Reservations(ids=['{ODCR}'], nodes=2)", account)
    [problem] = exc.value.problems
    assert problem.startswith("SpotGpuPool 't4': SpotGpuPoolArgs.reservations.ids: " + expected), problem


def test_tags_are_refused_under_the_cluster_autoscaler(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        program_preview(tmp_path, f"Reservations(ids=['{ODCR}'], tags={{'team': 'ml'}}, nodes=2)")
    assert any(
        p.startswith("SpotGpuPool 't4': SpotGpuPoolArgs.reservations.tags: under the cluster-autoscaler")
        for p in exc.value.problems
    )


# --- the preview's reads -------------------------------------------------------------------------------------


def test_preflight_reads_each_reservation(monkeypatch: pytest.MonkeyPatch) -> None:
    from elastic_gpu.aws import reservations
    from elastic_gpu.tools.aws import mocks

    def answer(account: dict[str, Any]) -> Any:
        def read(rid: str, region: str) -> Any:
            def invoke() -> Any:
                fields = mocks._capacity_reservation({"id": rid, "region": region}, {"reservations": account})
                return reservations.ReadReservation(
                    id=rid,
                    reservation_type=fields["reservationType"],
                    instance_type=fields["instanceType"],
                    availability_zone=fields["availabilityZone"],
                    instance_count=fields["instanceCount"],
                    available_instance_count=fields["availableInstanceCount"],
                    state=fields["state"],
                    start_date=fields["startDate"],
                    end_date=fields["endDate"],
                )

            from elastic_gpu.preflight import attempt

            return attempt(invoke)

        return read

    cfg = load_stack_config(stack_values("aws-reserved"))

    def found(account: dict[str, Any], now: datetime = INSIDE) -> list[tuple[str, str, str]]:
        monkeypatch.setattr("elastic_gpu.aws.preflight.read_reservation", answer(account))
        return [(f.pool, f.level, f.message) for f in reservation_findings(cfg, now)]

    # the account holds both, each of the pool's type, in a cluster zone, in its window: nothing to say
    assert found(RESERVATIONS) == []
    # the Capacity Block's window is over: an error
    [(pool, level, message)] = found(RESERVATIONS, datetime(2027, 2, 1, tzinfo=timezone.utc))
    assert (pool, level) == ("training", "error")
    assert message == (
        f"Capacity Block {BLOCK} (2 x p5.48xlarge in us-east-1b) ended 2027-01-01T11:30:00Z (state active)"
    )
    # not started yet: a warning, the pool's pods go to spot meanwhile
    [(pool, level, message)] = found(RESERVATIONS, datetime(2026, 10, 1, tzinfo=timezone.utc))
    assert (pool, level) == ("training", "warning") and "until 2026-11-01T11:30:00Z" in message
    # another zone and another type: one error naming both
    wrong = {
        **RESERVATIONS,
        ODCR: {**RESERVATIONS[ODCR], "availabilityZone": "us-east-1d", "instanceType": "g5.xlarge"},
    }
    [(pool, level, message)] = found(wrong)
    assert (pool, level) == ("inference", "error")
    assert "reserves g5.xlarge, which the pool never launches" in message
    assert "is in us-east-1d, not one of cluster.zones" in message
    # smaller than the tier: a warning
    small = {**RESERVATIONS, ODCR: {**RESERVATIONS[ODCR], "instanceCount": 1}}
    assert found(small) == [
        ("inference", "warning", "its reservations hold 1 instances, fewer than reservations.nodes (2): the reserved "
         "tier never reaches its nodes"),
    ]  # fmt: skip
    # cancelled: it launches nothing
    cancelled = {**RESERVATIONS, ODCR: {**RESERVATIONS[ODCR], "state": "cancelled"}}
    assert "is cancelled: it launches no instance" in found(cancelled)[0][2]
    # the account lacks one: a warning with the command that checks it
    [(pool, level, message)] = found({BLOCK: RESERVATIONS[BLOCK]})
    assert (pool, level, message) == (
        "inference",
        "warning",
        f"the account has no capacity reservation {ODCR} in us-east-1: the pool's reserved tier launches nothing",
    )


def test_the_shipped_stack_previews_reserved_node_pools_first() -> None:
    preview = stack_preview("aws-reserved")
    views = {v.declared_name: v for v in node_groups(preview)}
    reserved, spot = views["inference-reserved"], views["inference-spot-first"]
    assert reserved.capacity_types == ["reserved"] and reserved.reservations == (ODCR,)
    assert not reserved.spot and reserved.max_size == 2 and reserved.weight == 100
    # then spot, falling back to on-demand within the next NodePool
    assert spot.capacity_types == ["spot", "on-demand"] and spot.reservations == () and spot.weight == 99
    assert views["training-spot"].capacity_types == ["spot"] and views["training-spot"].weight == 99
    assert views["training-reserved"].reservations == (BLOCK,)
    node_class = preview.one("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "training-nodeclass").inputs["spec"]
    assert node_class["capacityReservationSelectorTerms"] == [{"id": BLOCK}]
