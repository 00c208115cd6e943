"""Kueue and GKE queued provisioning: who reaches a queued pool, the ClusterQueue's quota, quantities."""

from __future__ import annotations

import copy
import dataclasses
from decimal import Decimal

import pytest
import yaml

from elastic_gpu.gcp.kueue import CLUSTER_QUEUE
from elastic_gpu.gcp.kueue_api import QUEUE_NAME_LABEL
from elastic_gpu.scheduling import GKE_QUEUED_TAINT
from elastic_gpu.tools.gcp.kueue_simulation import admission_problem
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation import simulate
from elastic_gpu.tools.simulation.pod import parse_quantity, pod_shape
from elastic_gpu.tools.simulation.run import pool_contracts
from elastic_gpu.workload import job_manifest
from tests.conftest import stack_preview
from tests.test_stacks_common import STACKS

KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"
NODE_POOL = "gcp:container/nodePool:NodePool"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Decimal("0.5")),
        ("4Gi", Decimal(4 * 2**30)),
        ("1.5Gi", Decimal(3 * 2**29)),
        ("10G", Decimal(10**10)),
        ("1e3", Decimal(1000)),
        ("1E3", Decimal(1000)),
        ("1E", Decimal(10**18)),  # exa, not an exponent
        ("100n", Decimal("1E-7")),
        (".5", Decimal("0.5")),
        ("2", Decimal(2)),
        (2, Decimal(2)),
        (1_000_000_000, Decimal(10**9)),
    ],
)
def test_quantities_parse_as_kubernetes_does(text, value) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["1K", "4gi", "Gi", "1 Gi", "1e", "1Ki1", "", True, None])
def test_what_is_not_a_quantity_is_refused(text) -> None:
    with pytest.raises(ValueError, match="not a Kubernetes quantity"):
        parse_quantity(text)


def _outcome(preview: Preview, manifest: dict):
    [outcome] = simulate(preview, manifest)
    return outcome


def _training_job() -> dict:
    [contract] = [c for c in pool_contracts(stack_preview("gcp-prod")) if c.pool == "training"]
    return job_manifest(contract)


def _with_cluster_queue(change) -> Preview:
    """gcp-prod's preview with the ClusterQueue's spec changed (the cached preview stays as it is)."""
    preview = stack_preview("gcp-prod")
    resources = []
    for r in preview.resources:
        if r.type == f"{KUEUE}:ClusterQueue":
            r = dataclasses.replace(r, inputs=copy.deepcopy(r.inputs))
            change(r.inputs["spec"])
        resources.append(r)
    return dataclasses.replace(preview, resources=resources)


@pytest.mark.parametrize("stack", STACKS)
def test_every_queued_pool_workload_fits_its_cluster_queue(stack) -> None:
    preview = stack_preview(stack)
    for contract in pool_contracts(preview):
        if QUEUE_NAME_LABEL in contract.job_labels:
            assert admission_problem(preview, pod_shape(job_manifest(contract))) is None, contract.pool


def test_the_training_job_reaches_the_queued_pool() -> None:
    outcome = _outcome(stack_preview("gcp-prod"), _training_job())
    assert outcome.reaches, outcome.reason
    assert [[g.resource for g in tier] for tier in outcome.tiers] == [["training-dws"]]


def test_a_job_without_the_queue_label_does_not_reach_the_queued_pool() -> None:
    job = _training_job()
    del job["metadata"]["labels"]
    outcome = _outcome(stack_preview("gcp-prod"), job)
    assert not outcome.reaches
    assert "training-dws" in outcome.reason
    assert "queued provisioning: no kueue.x-k8s.io/queue-name label" in outcome.reason
    assert "only through a ProvisioningRequest" in outcome.reason


def test_a_bare_number_quota_is_bytes_and_keeps_the_training_job_out() -> None:
    # ai-on-gke's nominalQuota 1000000000: under 1 GiB of memory, below the Job's 4Gi.
    def bare(spec):
        for r in spec["resourceGroups"][0]["flavors"][0]["resources"]:
            r["nominalQuota"] = 1_000_000_000

    outcome = _outcome(_with_cluster_queue(bare), _training_job())
    assert not outcome.reaches
    assert f"requests exceed ClusterQueue {CLUSTER_QUEUE}'s nominal quota for 1 pod(s)" in outcome.reason
    assert "memory 4294967296 > 1000000000" in outcome.reason
    assert "ephemeral-storage 10737418240 > 1000000000" in outcome.reason


def test_the_quota_counts_every_pod_kueue_admits_together() -> None:
    job = _training_job()
    job["spec"]["parallelism"] = 5  # the queued pool holds 4 nodes of one A100 each
    outcome = _outcome(stack_preview("gcp-prod"), job)
    assert not outcome.reaches and "nvidia.com/gpu 5 > 4" in outcome.reason
    job["spec"]["completions"] = 4  # Kueue's Job PodSet count: parallelism capped by completions
    assert _outcome(stack_preview("gcp-prod"), job).reaches


def test_a_resource_the_cluster_queue_does_not_cover_is_never_admitted() -> None:
    job = _training_job()
    job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["example.com/fpga"] = "1"
    problem = admission_problem(stack_preview("gcp-prod"), pod_shape(job))
    assert (
        problem == f"requests example.com/fpga, which ClusterQueue {CLUSTER_QUEUE} does not cover (Kueue: unavailable)"
    )


def test_a_cluster_queue_without_the_provisioning_check_never_asks_for_queued_nodes() -> None:
    preview = _with_cluster_queue(lambda spec: spec.pop("admissionChecksStrategy"))
    problem = admission_problem(preview, pod_shape(_training_job()))
    assert problem and "no ProvisioningRequest admission check of class queued-provisioning.gke.io" in problem


def test_a_cluster_queue_or_flavor_that_is_not_declared() -> None:
    def rename_flavor(spec):
        spec["resourceGroups"][0]["flavors"][0]["name"] = "spot-flavor"

    problem = admission_problem(_with_cluster_queue(rename_flavor), pod_shape(_training_job()))
    assert problem == f"ClusterQueue {CLUSTER_QUEUE} names ResourceFlavor(s) spot-flavor, not declared (inactive)"
    preview = stack_preview("gcp-prod")
    without_cq = dataclasses.replace(
        preview, resources=[r for r in preview.resources if r.type != f"{KUEUE}:ClusterQueue"]
    )
    assert admission_problem(without_cq, pod_shape(_training_job())) == (
        f"LocalQueue 'dws-local-queue' points to ClusterQueue '{CLUSTER_QUEUE}', which is not declared"
    )


def test_a_null_namespace_selector_admits_from_no_namespace() -> None:
    preview = _with_cluster_queue(lambda spec: spec.pop("namespaceSelector"))
    assert "admits from no namespace" in admission_problem(preview, pod_shape(_training_job()))


def test_a_namespace_without_the_local_queue() -> None:
    job = _training_job()
    job["metadata"]["namespace"] = "research"  # the stack's LocalQueues: default, ml-training
    assert admission_problem(stack_preview("gcp-prod"), pod_shape(job)) == (
        "no LocalQueue 'dws-local-queue' in namespace 'research'"
    )
    job["metadata"]["namespace"] = "ml-training"
    assert admission_problem(stack_preview("gcp-prod"), pod_shape(job)) is None


def test_the_cluster_queue_quota_is_the_queued_pools_at_max_size() -> None:
    cq = stack_preview("gcp-prod").one(f"{KUEUE}:ClusterQueue", "kueue-cluster-queue").inputs
    [flavor] = cq["spec"]["resourceGroups"][0]["flavors"]
    # training: 4 x a2-highgpu-1g (12 vCPU, 85 GiB, 1 A100), 200 GiB boot disk each
    assert {r["name"]: r["nominalQuota"] for r in flavor["resources"]} == {
        "cpu": "48",
        "memory": "340Gi",
        "nvidia.com/gpu": "4",
        "ephemeral-storage": "800Gi",
    }


def test_queued_nodes_carry_gkes_taint_and_the_workload_tolerates_it() -> None:
    preview = stack_preview("gcp-prod")
    # GKE taints queued-provisioning nodes itself: the pool does not declare it ...
    pool = preview.one(NODE_POOL, "training-dws").inputs
    assert GKE_QUEUED_TAINT.key not in {t["key"] for t in pool["nodeConfig"]["taints"]}
    # ... the Job tolerates it, and only the queued pool's Job does.
    job = _training_job()
    tolerations = job["spec"]["template"]["spec"]["tolerations"]
    assert {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"} in tolerations
    [inference] = [c for c in pool_contracts(preview) if c.pool == "inference"]
    assert GKE_QUEUED_TAINT not in inference.taints
    # Without the toleration the scheduler would leave the pod pending on the new node.
    job["spec"]["template"]["spec"]["tolerations"] = [t for t in tolerations if t["key"] != GKE_QUEUED_TAINT.key]
    outcome = _outcome(preview, job)
    assert not outcome.reaches
    assert "training-dws-" in outcome.reason
    assert "untolerated taint cloud.google.com/gke-queued=true:NoSchedule" in outcome.reason


def test_the_control_plane_reaches_kueues_webhook_and_visibility_api_on_the_clusters_nodes_only() -> None:
    p = stack_preview("gcp-prod")
    fw = p.one("gcp:compute/firewall:Firewall", "kueue-webhook").inputs
    # Kueue 0.19 serves its visibility API on 8082 (VisibilityOnDemand on by default); the chart's
    # APIService sends the kube-apiserver there, like the webhook on 9443.
    assert fw["allows"] == [{"protocol": "tcp", "ports": ["9443", "8082"]}]
    # Only the cluster's nodes: the tag every node pool of the cluster carries, nothing else in the network.
    assert fw["targetTags"] == ["elastic-gpu-gpu-prod"]
    assert "targetServiceAccounts" not in fw and "sourceTags" not in fw
    pools = p.of_type(NODE_POOL)
    assert pools and all(pool.inputs["nodeConfig"]["tags"] == ["elastic-gpu-gpu-prod"] for pool in pools)


def test_the_workload_command_prints_a_job_kueue_admits_onto_the_queued_pool(capsys) -> None:
    from elastic_gpu.__main__ import main

    assert main(["workload", "--stack", "gcp-prod", "--pool", "training"]) == 0
    job = yaml.safe_load(capsys.readouterr().out)
    assert admission_problem(stack_preview("gcp-prod"), pod_shape(job)) is None
    outcome = _outcome(stack_preview("gcp-prod"), job)
    assert outcome.reaches and outcome.first_choice == "training-dws"
