"""Karpenter on EKS: the controller's IAM (upstream's policy, scoped), the interruption queue, the per-pool
EC2NodeClass/NodePools (against the upstream CRDs at v1.14.1) and the timing model from source."""

from __future__ import annotations

import copy
import json

import pytest

from elastic_gpu.aws.karpenter.iam import NODE_POLICIES, controller_policies
from elastic_gpu.aws.karpenter.interruption import MESSAGE_RETENTION_SECONDS, RULES, queue_policy
from elastic_gpu.aws.karpenter.nodes import (
    KarpenterNodes,
    eligible_instance_types,
    node_class_spec,
    node_pool_spec,
    node_pools,
)
from elastic_gpu.aws.node_spec import gpu_node_spec
from elastic_gpu.compose import PlannedCluster
from elastic_gpu.config import load_stack_config
from elastic_gpu.errors import ConfigError
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs
from elastic_gpu.tools.aws.karpenter import model
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.report import to_json
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation import karpenter as karpenter_sim
from elastic_gpu.tools.simulation.run import simulate
from tests.conftest import stack_preview, stack_values, stem
from tests.crd_schemas import validate
from tests.docs_pages import page

NODE_ROLE = "arn:aws:iam::123456789012:role/gpu-prod-karpenter-node"
QUEUE = "arn:aws:sqs:us-east-1:123456789012:gpu-prod"
ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]


def pool_args(**changes: object) -> SpotGpuPoolArgs:
    """aws-prod's inference pool; each test changes one field."""
    base: dict[str, object] = {
        "cluster": PlannedCluster("aws", "gpu-prod", ZONES, "1.35", {}),
        "instance_types": ["g4dn.xlarge"],
        "max_size": 9,
        "on_demand_fallback": True,
        "tags": {"project": "elastic-gpu"},
    }
    return SpotGpuPoolArgs(**(base | changes))  # type: ignore[arg-type]


NODES = KarpenterNodes(
    node_role_name="gpu-prod-karpenter-node",
    subnet_selector_terms=[{"tags": {"karpenter.sh/discovery": "gpu-prod"}}],
    security_group_selector_terms=[{"tags": {"karpenter.sh/discovery": "gpu-prod"}}],
    consolidate_after="10m",
    provider=None,  # type: ignore[arg-type]
)


def node_pool(suffix: str = "spot", **changes: object) -> dict:
    """The pool's NodePool of that suffix: "spot-first" by default, "spot"/"on-demand" with a separate cap."""
    if suffix != "spot-first":
        changes = {"fallback_max_size": 9} | changes
    args = pool_args(**changes)
    plan = next(p for p in node_pools(args) if p.suffix == suffix)
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": f"inference-{suffix}"},
        "spec": node_pool_spec("inference", args, NODES, plan),
    }


def node_class(**changes: object) -> dict:
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "inference"},
        "spec": node_class_spec(gpu_node_spec("inference", pool_args(**changes)), NODES),
    }


# --- IAM ------------------------------------------------------------------------------------------------


def test_the_controller_policy_is_upstreams_scoped_to_this_cluster() -> None:
    docs = controller_policies("gpu-prod", "us-east-1", NODE_ROLE, QUEUE)
    assert list(docs) == [
        "NodeLifecyclePolicy",
        "IAMIntegrationPolicy",
        "EKSIntegrationPolicy",
        "InterruptionPolicy",
        "ZonalShiftPolicy",
        "ResourceDiscoveryPolicy",
    ]
    sids = [s["Sid"] for d in docs.values() for s in d["Statement"]]
    assert len(sids) == 6 + 4 + 1 + 1 + 1 + 5 == len(set(sids))
    [passrole] = [s for s in docs["IAMIntegrationPolicy"]["Statement"] if s["Action"] == "iam:PassRole"]
    assert passrole["Resource"] == NODE_ROLE  # the node role only, never `*`
    assert docs["InterruptionPolicy"]["Statement"][0]["Resource"] == QUEUE
    cluster_arn = "arn:aws:eks:us-east-1:123456789012:cluster/gpu-prod"
    assert docs["EKSIntegrationPolicy"]["Statement"][0]["Resource"] == cluster_arn
    text = json.dumps(docs)
    assert "${" not in text and "kubernetes.io/cluster/gpu-prod" in text
    # every mutating EC2 statement is conditioned on this cluster's ownership tag
    for s in docs["NodeLifecyclePolicy"]["Statement"][1:]:
        cond = json.dumps(s["Condition"])
        assert "kubernetes.io/cluster/gpu-prod" in cond, s["Sid"]


def test_the_node_role_has_upstreams_managed_policies() -> None:
    assert {p.rsplit("/", 1)[1] for p in NODE_POLICIES} == {
        "AmazonEKS_CNI_Policy",
        "AmazonEKSWorkerNodePolicy",
        "AmazonEC2ContainerRegistryPullOnly",
        "AmazonSSMManagedInstanceCore",
    }


def test_the_interruption_queue_gets_upstreams_events_over_tls_only() -> None:
    assert MESSAGE_RETENTION_SECONDS == 300
    assert sorted(p["detail-type"][0] for p in RULES.values()) == [
        "AWS Health Event",
        "EC2 Capacity Reservation Instance Interruption Warning",
        "EC2 Instance Rebalance Recommendation",
        "EC2 Instance State-change Notification",
        "EC2 Spot Instance Interruption Warning",
    ]
    allow, deny = queue_policy(QUEUE)["Statement"]
    assert allow["Principal"]["Service"] == ["events.amazonaws.com", "sqs.amazonaws.com"]
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} and deny["Effect"] == "Deny"


# --- objects against the CRDs ---------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["spot-first", "spot", "on-demand"])
def test_the_node_pools_and_node_class_validate_against_the_upstream_crds(suffix: str) -> None:
    assert validate(node_pool(suffix)) == []
    assert validate(node_class()) == []


def test_the_node_pool_carries_the_pools_meaning() -> None:
    spot, od = node_pool("spot")["spec"], node_pool("on-demand")["spec"]
    assert spot["weight"] > od["weight"]
    assert spot["limits"] == {"nodes": "9", "nvidia.com/gpu": "9"}
    tmpl = spot["template"]
    assert tmpl["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert tmpl["metadata"]["labels"] == {
        "elastic-gpu.io/node-class": "gpu",
        "elastic-gpu.io/pool": "inference",
        "elastic-gpu.io/capacity": "spot",
        "nvidia.com/gpu.present": "true",
        "k8s.amazonaws.com/accelerator": "nvidia-tesla-t4",
    }
    assert tmpl["spec"]["requirements"] == [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
        {
            "key": "node.kubernetes.io/instance-type",
            "operator": "In",
            "values": ["g4dn.xlarge", "g4dn.2xlarge", "g4dn.4xlarge", "g4dn.8xlarge"],
        },
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ZONES},
    ]
    assert spot["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert spot["disruption"]["consolidateAfter"] == "10m"


def test_a_spot_pool_with_a_fallback_is_one_node_pool_spot_first() -> None:
    [plan] = node_pools(pool_args())
    spec = node_pool("spot-first")["spec"]
    capacity = spec["template"]["spec"]["requirements"][0]
    # Karpenter tries spot, then on-demand within one NodePool (docs/concepts/nodepools.md:276)
    assert capacity == {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}
    # one cap for both: the pool's maxSize
    assert (plan.suffix, plan.max_nodes, spec["limits"]) == ("spot-first", 9, {"nodes": "9", "nvidia.com/gpu": "9"})
    # no elastic-gpu.io/capacity label: its nodes are either
    assert "elastic-gpu.io/capacity" not in spec["template"]["metadata"]["labels"]


def test_a_four_gpu_pool_limits_gpus_by_four_per_node() -> None:
    spec = node_pool(instance_types=["g5.12xlarge"], max_size=3)["spec"]
    assert spec["limits"] == {"nodes": "3", "nvidia.com/gpu": "12"}


def test_the_node_class_is_al2023_imdsv2_and_an_encrypted_gp3_of_the_pools_disk() -> None:
    spec = node_class(disk_size_gib=200)["spec"]
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@latest"}]
    assert spec["metadataOptions"]["httpTokens"] == "required"
    assert spec["metadataOptions"]["httpPutResponseHopLimit"] == 1
    [root] = spec["blockDeviceMappings"]
    assert root["rootVolume"] is True
    assert root["ebs"] == {"volumeSize": "200Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}


def test_a_wrong_node_pool_field_enum_or_weight_fails() -> None:
    obj = node_pool()
    obj["spec"]["disruption"]["consolidationPolicy"] = "WhenIdle"
    assert any("'WhenIdle' is not one of" in e for e in validate(obj))
    obj = node_pool()
    obj["spec"]["weight"] = 0  # 1..100
    assert any("weight: 0 is less than the minimum of 1" in e for e in validate(obj))
    obj = node_pool()
    obj["spec"]["template"]["spec"]["taint"] = obj["spec"]["template"]["spec"].pop("taints")
    assert any("'taint' was unexpected" in e for e in validate(obj))


def test_a_node_pool_cel_rule_is_checked() -> None:
    obj = node_pool()
    obj["spec"]["template"]["metadata"]["labels"]["karpenter.sh/team"] = "x"
    [error] = validate(obj)
    assert 'label domain "karpenter.sh" is restricted' in error


def test_a_wrong_node_class_fails() -> None:
    obj = node_class()
    obj["spec"]["amiSelectorTerms"] = [{"alias": "ubuntu@latest"}]
    assert validate(obj)  # the alias family is an enum-like CEL rule
    obj = node_class()
    obj["spec"]["instanceProfile"] = "x"  # role or instanceProfile, not both
    assert any("must specify exactly one of ['role', 'instanceProfile']" in e for e in validate(obj))
    obj = copy.deepcopy(node_class())
    obj["spec"]["metadataOptions"]["httpTokens"] = "optional-ish"
    assert any("httpTokens: 'optional-ish' is not one of" in e for e in validate(obj))


# --- what Karpenter may pick ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("types", "eligible"),
    [
        (["g4dn.xlarge"], ["g4dn.xlarge", "g4dn.2xlarge", "g4dn.4xlarge", "g4dn.8xlarge"]),
        (["g5.2xlarge"], ["g5.xlarge", "g5.2xlarge", "g5.4xlarge", "g5.8xlarge"]),
        (["g5.12xlarge"], ["g5.12xlarge"]),
        (["p3.8xlarge"], ["p3.8xlarge"]),
    ],
)
def test_eligible_types_are_every_catalog_type_of_the_gpu_and_count(types: list[str], eligible: list[str]) -> None:
    assert eligible_instance_types(pool_args(instance_types=types)) == eligible


def test_node_pools_per_pool() -> None:
    def plans(**changes: object) -> list[tuple[str, tuple[str, ...], int, int]]:
        return [(p.suffix, p.capacity_types, p.max_nodes, p.weight) for p in node_pools(pool_args(**changes))]

    assert plans() == [("spot-first", ("spot", "on-demand"), 9, 100)]
    assert plans(on_demand_fallback=False) == [("spot", ("spot",), 9, 100)]
    # only a separate cap on on-demand needs the weighted second NodePool
    assert plans(fallback_max_size=3) == [("spot", ("spot",), 9, 100), ("on-demand", ("on-demand",), 3, 10)]
    assert plans(spot=False, on_demand_fallback=False) == [("on-demand", ("on-demand",), 9, 100)]


# --- the model ------------------------------------------------------------------------------------------


def test_the_fallback_comes_one_loop_after_the_failed_spot_launch() -> None:
    # first loop: idle 1 s .. max 10 s; then the pod's requeue (<= 10 s) and another window
    assert model.to_fallback(spot=True, fallback=True) == model.Seconds(2, 30)
    assert model.to_fallback(spot=True, fallback=False) is None
    assert model.to_fallback(spot=False, fallback=False) == model.Seconds(1, 10)


def test_spot_only_retries_after_the_unavailable_offerings_ttl() -> None:
    figures = model.first_node(spot=True, fallback=False)
    assert list(figures.values()) == [None, model.Seconds(1, 10), model.Seconds(3600, 3600 + 180 + 20)]


def test_time_to_zero_is_consolidate_after_plus_a_poll_and_the_validation_delay() -> None:
    assert karpenter_sim.to_zero(600) == 625
    assert {c.name for c in model.CONSTANTS} >= {"BATCH_IDLE_DURATION", "BATCH_MAX_DURATION", "UnavailableOfferingsTTL"}
    assert all("v1.14.1" in c.source for c in model.CONSTANTS)


# --- the aws-karpenter stack ----------------------------------------------------------------------------

KARPENTER_RULES = ("karpenter-gpu-node-pool", "karpenter-fallback-ordered", "karpenter-interruption-handling")


def karpenter_stack() -> Preview:
    return copy.deepcopy(stack_preview("aws-karpenter"))


def separate_cap_values() -> dict:
    """aws-karpenter with the inference pool's on-demand capped separately (its own NodePool)."""
    values = stack_values("aws-karpenter")
    values["elastic-gpu:gpuPools"][0]["fallbackMaxSize"] = 4
    return values


@pytest.fixture(scope="module")
def separate_cap_stack(tmp_path_factory: pytest.TempPathFactory) -> Preview:
    import yaml

    from elastic_gpu.tools.offline.runner import run_preview
    from tests.conftest import ROOT

    root = tmp_path_factory.mktemp("separate-cap")
    (root / "stacks").mkdir()
    (root / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (root / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    (root / "stacks" / "Pulumi.cap.yaml").write_text(yaml.safe_dump({"config": separate_cap_values()}))
    return run_preview("cap", root)


def violations(preview: Preview, rule: str) -> list[str]:
    return [v.message for v in run_policies(preview).violations if v.policy == rule]


def test_the_stack_declares_karpenter_and_no_gpu_node_groups() -> None:
    preview = stack_preview("aws-karpenter")
    groups = preview.of_type("aws:eks/nodeGroup:NodeGroup")
    assert [stem(g.inputs["nodeGroupName"]) for g in groups] == ["gpu-karpenter-general"]
    release = preview.one("kubernetes:helm.sh/v3:Release", "karpenter-release").inputs
    assert (release["chart"], release["version"], release["namespace"]) == (
        "oci://public.ecr.aws/karpenter/karpenter",
        "1.14.1",
        "kube-system",
    )
    values = release["values"]
    assert values["settings"] == {"clusterName": "gpu-karpenter", "interruptionQueue": "gpu-karpenter"}
    assert values["nodeSelector"] == {
        "kubernetes.io/os": "linux",
        "elastic-gpu.io/node-class": "general",
        "elastic-gpu.io/pool": "general",
        "elastic-gpu.io/capacity": "on-demand",
    }
    assert values["serviceAccount"]["annotations"]["eks.amazonaws.com/role-arn"].startswith("arn:aws:")
    assert preview.one("aws:eks/accessEntry:AccessEntry", "karpenter-node-access").inputs["type"] == "EC2_LINUX"
    queue = preview.one("aws:sqs/queue:Queue", "karpenter-interruption").inputs
    assert (queue["messageRetentionSeconds"], queue["sqsManagedSseEnabled"]) == (300, True)
    assert len(preview.of_type("aws:cloudwatch/eventRule:EventRule")) == 5
    assert sorted(r.name for r in preview.of_type("kubernetes:karpenter.sh/v1:NodePool")) == [
        "inference-spot-first",
        "training-spot",
    ]
    for r in preview.of_type("kubernetes:karpenter.sh/v1:NodePool"):
        # a new AMI (al2023@latest) reaches busy nodes one at a time; a running Job keeps do-not-disrupt
        assert r.inputs["spec"]["disruption"]["budgets"] == [{"nodes": "10%"}, {"nodes": "1", "reasons": ["Drifted"]}]
    pools = {r.name: r.inputs["workloadContract"] for r in preview.of_type("elastic-gpu:index:SpotGpuPool")}
    assert {p: c["podAnnotations"] for p, c in pools.items()} == {
        "inference": {"karpenter.sh/do-not-disrupt": "true"},
        "training": {"karpenter.sh/do-not-disrupt": "true"},
    }
    cas = [r.inputs["workloadContract"] for r in stack_preview("aws-prod").of_type("elastic-gpu:index:SpotGpuPool")]
    assert all(c["podAnnotations"] == {} for c in cas)  # the cluster-autoscaler never reads it


def test_the_crds_are_their_own_release_at_the_controllers_version_and_installed_first() -> None:
    # Helm never upgrades a chart's crds/: the CRD chart carries them, the controller's release skips its own.
    preview = stack_preview("aws-karpenter")
    crds = preview.one("kubernetes:helm.sh/v3:Release", "karpenter-crd-release")
    controller = preview.one("kubernetes:helm.sh/v3:Release", "karpenter-release")
    assert (crds.inputs["name"], crds.inputs["chart"], crds.inputs["version"], crds.inputs["namespace"]) == (
        "karpenter-crd",
        "oci://public.ecr.aws/karpenter/karpenter-crd",
        controller.inputs["version"],
        "kube-system",
    )
    assert not crds.inputs.get("skipCrds")
    assert controller.inputs["skipCrds"] is True
    assert crds.urn in controller.depends_on
    # the NodePools wait for the CRDs (through the controller's release or directly)
    node_pool = preview.one("kubernetes:karpenter.sh/v1:NodePool", "training-spot")
    assert controller.urn in node_pool.depends_on


def test_the_stack_tags_its_private_subnets_and_node_security_group_for_discovery() -> None:
    preview = stack_preview("aws-karpenter")
    subnets = {r.name: r.inputs["tags"] for r in preview.of_type("aws:ec2/subnet:Subnet")}
    assert {n for n, t in subnets.items() if t.get("karpenter.sh/discovery") == "gpu-karpenter"} == {
        f"gpu-karpenter-private-us-east-1{z}" for z in "abc"
    }
    tag = preview.one("aws:ec2/tag:Tag", "gpu-karpenter-node-sg-discovery").inputs
    assert (tag["key"], tag["value"]) == ("karpenter.sh/discovery", "gpu-karpenter")
    assert tag["resourceId"].startswith("sg-")
    # the cluster-autoscaler stacks are unchanged: no discovery tag there
    assert not any("karpenter.sh/discovery" in r.inputs.get("tags", {}) for r in stack_preview("aws-prod").resources)


def test_the_karpenter_rules_pass_on_the_stack() -> None:
    preview = karpenter_stack()
    for rule in KARPENTER_RULES:
        assert violations(preview, rule) == [], rule


def _node_pool(preview: Preview, name: str) -> dict:
    return preview.one("kubernetes:karpenter.sh/v1:NodePool", name).inputs["spec"]


def test_a_node_pool_without_limits_or_taint_or_consolidation_fails() -> None:
    preview = karpenter_stack()
    spec = _node_pool(preview, "training-spot")
    del spec["limits"]
    spec["template"]["spec"]["taints"] = []
    spec["disruption"]["consolidateAfter"] = "Never"
    [limits, taint, never] = violations(preview, "karpenter-gpu-node-pool")
    assert "no limits.nodes" in limits and "does not taint" in taint and "never consolidates" in never


def test_an_on_demand_fallback_weighing_as_much_as_spot_fails(separate_cap_stack: Preview) -> None:
    preview = copy.deepcopy(separate_cap_stack)
    assert violations(preview, "karpenter-fallback-ordered") == []
    assert (_node_pool(preview, "inference-spot")["weight"], _node_pool(preview, "inference-on-demand")["weight"]) == (
        100,
        10,
    )
    _node_pool(preview, "inference-on-demand")["weight"] = 100
    [message] = violations(preview, "karpenter-fallback-ordered")
    assert "on-demand NodePool 'inference-on-demand' (weight 100) is not below spot" in message
    # a NodePool that allows spot as well tries spot first by itself: its weight does not matter
    on_demand = _node_pool(preview, "inference-on-demand")
    on_demand["template"]["spec"]["requirements"][0]["values"] = ["spot", "on-demand"]
    assert violations(preview, "karpenter-fallback-ordered") == []


def test_karpenter_without_the_interruption_queue_fails() -> None:
    preview = karpenter_stack()
    preview.one("kubernetes:helm.sh/v3:Release", "karpenter-release").inputs["values"]["settings"].pop(
        "interruptionQueue"
    )
    preview.resources = [
        r for r in preview.resources if not (r.type == "aws:cloudwatch/eventRule:EventRule" and "spot" in r.name)
    ]
    [message] = violations(preview, "karpenter-interruption-handling")
    assert "settings.interruptionQueue" in message and "EC2 Spot Instance Interruption Warning" in message


def test_karpenter_on_a_cloud_without_it_is_a_config_error() -> None:
    values = stack_values("gcp-dev") | {"elastic-gpu:provisioner": "karpenter"}
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    assert (
        "provisioner: 'karpenter' is not available on gcp; allowed on gcp: cluster-autoscaler, auto-provisioning"
        in str(exc.value)
    )
    with pytest.raises(ConfigError) as exc:
        load_stack_config(stack_values("aws-prod") | {"elastic-gpu:provisioner": "karpenters"})
    assert "provisioner" in str(exc.value) and "karpenter" in str(exc.value)


def test_simulate_reports_karpenter_next_to_the_autoscaler() -> None:
    karp = {o.pool: o.to_json() for o in simulate(stack_preview("aws-karpenter"))}
    ca = {o.pool: o.to_json() for o in simulate(stack_preview("aws-prod"))}
    assert {p: o["instance_types_eligible"] for p, o in karp.items()} == {"inference": 4, "training": 4}
    assert {p: o["instance_types_eligible"] for p, o in ca.items()} == {"inference": 1, "training": 1}
    inf = karp["inference"]
    # one NodePool: spot, then its own on-demand offerings
    assert (inf["first_choice"], inf["fallback"]) == ("inference-spot-first", "inference-spot-first")
    [outcome] = [o for o in simulate(stack_preview("aws-karpenter")) if o.pool == "inference"]
    assert [(t.name, t.capacity) for [t] in outcome.tiers] == [
        ("inference-spot-first", "spot"),
        ("inference-spot-first", "on-demand"),
    ]
    assert inf["minutes_to_fallback"] == {"min": 0.03, "max": 0.5}  # 2 s .. 30 s
    assert ca["inference"]["minutes_to_fallback"]["max"] > inf["minutes_to_fallback"]["max"]
    assert karp["training"]["scenarios"]["spot comes back after 60 min"] == {"min": 60.0, "max": 63.33}
    assert karp["training"]["minutes_to_zero"] == 10.42  # consolidateAfter 10m + 10 s poll + 15 s validation
    # the worst case: every NodePool at limits.nodes once (one cap: maxSize), priced as its priciest type
    # (g4dn.8xlarge on-demand: the spot-first NodePool may be all on-demand; g5.8xlarge spot)
    assert karp["inference"]["worst_case_nodes"] == 9 and karp["training"]["worst_case_nodes"] == 6
    assert karp["inference"]["worst_case_monthly_usd"] == pytest.approx(9 * 2.176 * 730, rel=0.01)


def test_simulate_with_on_demand_capped_separately(separate_cap_stack: Preview) -> None:
    inf = next(o.to_json() for o in simulate(separate_cap_stack) if o.pool == "inference")
    assert (inf["first_choice"], inf["fallback"]) == ("inference-spot", "inference-on-demand")
    assert inf["minutes_to_fallback"] == {"min": 0.03, "max": 0.5}  # the same loop as within one NodePool
    assert inf["worst_case_nodes"] == 9 + 4  # maxSize spot + fallbackMaxSize on-demand


def test_the_pools_rows_mark_node_pools_only() -> None:
    karp = {r["node_group"]: r for r in to_json(stack_preview("aws-karpenter"))["pools"]}
    assert karp["inference-spot-first"]["any_type"] is True and karp["inference-spot-first"]["max_size"] == 9
    assert karp["inference-spot-first"]["capacity"] == "spot, on-demand"
    assert "any_type" not in karp[next(n for n in karp if n.startswith("gpu-karpenter-general"))]
    assert all("any_type" not in r for r in to_json(stack_preview("aws-prod"))["pools"])


# --- the EC2 Spot service-linked role: created on a new account, adopted where the account has one -----

SPOT_ROLE = "aws:iam/serviceLinkedRole:ServiceLinkedRole"


def _account_preview(tmp_path, existing_tags: dict[str, str] | None, **cluster: object) -> Preview:
    """aws-karpenter previewed against an account whose AWSServiceRoleForEC2Spot has `existing_tags` (None:
    the account has none, as the built-in mocks' new account)."""
    import yaml

    from elastic_gpu.tools.offline.runner import run_preview
    from tests.conftest import ROOT

    values = stack_values("aws-karpenter")
    values["elastic-gpu:cluster"].update(cluster)
    (tmp_path / "stacks").mkdir(exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (tmp_path / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    (tmp_path / "stacks" / "Pulumi.acct.yaml").write_text(yaml.safe_dump({"config": values}))
    if existing_tags is not None:
        role = {
            "arn": "arn:aws:iam::123456789012:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot",
            "name": "AWSServiceRoleForEC2Spot",
            "path": "/aws-service-role/spot.amazonaws.com/",
            "tags": existing_tags,
        }
        (tmp_path / "offline_mocks.py").write_text(f"INVOKES = {{'aws:iam/getRole:getRole': lambda args: {role!r}}}\n")
    return run_preview("acct", tmp_path)


def test_a_new_account_gets_the_spot_role_kept_on_destroy() -> None:
    preview = stack_preview("aws-karpenter")  # the built-in mocks: a new account, no such role
    role = preview.one(SPOT_ROLE, "karpenter-spot-role")
    assert role.inputs["awsServiceName"] == "spot.amazonaws.com"  # step06-add-spot-role.sh
    assert role.inputs["tags"]["elastic-gpu.io/managed-by"] == "elastic-gpu/aws-karpenter"
    assert role.retain_on_delete  # the account's other spot users keep it
    # the NodePools (their first spot launch) come after it
    for pool in preview.of_type("kubernetes:karpenter.sh/v1:NodePool"):
        assert role.urn in pool.depends_on
    assert stack_preview("aws-prod").of_type(SPOT_ROLE) == []  # the cluster-autoscaler's stacks: untouched


def test_an_account_with_its_own_spot_role_uses_it_and_declares_none(tmp_path) -> None:
    # declaring it there would fail `up`: "Service role name AWSServiceRoleForEC2Spot has been taken"
    assert _account_preview(tmp_path, existing_tags={}).of_type(SPOT_ROLE) == []


def test_the_role_this_stack_made_stays_declared(tmp_path) -> None:
    # after the first `up` the preview finds the role it made: still declared, so nothing is deleted
    preview = _account_preview(tmp_path, existing_tags={"elastic-gpu.io/managed-by": "elastic-gpu/acct"})
    assert [r.name for r in preview.of_type(SPOT_ROLE)] == ["karpenter-spot-role"]


def test_exists_declares_none_and_warns_when_the_account_lacks_it(tmp_path) -> None:
    preview = _account_preview(tmp_path, existing_tags=None, spotServiceLinkedRole="exists")
    assert preview.of_type(SPOT_ROLE) == []
    [warning] = [w for w in preview.warnings if "AWSServiceRoleForEC2Spot" in w]
    assert "aws iam create-service-linked-role --aws-service-name spot.amazonaws.com" in warning


def test_create_always_declares_it(tmp_path) -> None:
    preview = _account_preview(tmp_path, existing_tags={}, spotServiceLinkedRole="create")
    assert [r.name for r in preview.of_type(SPOT_ROLE)] == ["karpenter-spot-role"]


def test_the_spot_role_setting_without_karpenter_is_a_config_error() -> None:
    values = stack_values("aws-prod")
    values["elastic-gpu:cluster"]["spotServiceLinkedRole"] = "create"
    with pytest.raises(ConfigError, match=r"cluster.spotServiceLinkedRole: only Karpenter needs"):
        load_stack_config(values)
    values["elastic-gpu:cluster"]["spotServiceLinkedRole"] = "maybe"
    with pytest.raises(ConfigError, match=r"spotServiceLinkedRole"):
        load_stack_config(values)


def test_the_readme_table_is_what_simulate_says() -> None:

    rows = {
        line.split("|")[1].strip().split(" ")[0]: [c.strip() for c in line.split("|")[2:-1]]
        for line in page("aws.md").splitlines()
        if line.startswith("| inference (T4") or line.startswith("| training (A10G")
    }
    ca = {o.pool: o for o in simulate(stack_preview("aws-prod"))}
    for o in simulate(stack_preview("aws-karpenter")):
        eligible, fallback, returns, zero, worst = rows[o.pool]
        assert eligible.endswith(f"/ {len(o.instance_types)} ({o.instance_types[0]} .. {o.instance_types[-1][-7:]})")
        if o.fallback:
            assert fallback == f"{ca[o.pool].minutes_to_fallback} / {o.minutes_to_fallback}"
        else:
            back = o.scenarios["spot comes back after 60 min"]
            assert returns.endswith(f"/ {back.min:g} to {back.max:g} min")
        assert zero == f"{ca[o.pool].minutes_to_zero:g} / {o.minutes_to_zero:g} min"
        assert worst == f"{ca[o.pool].worst_case_nodes} / {o.worst_case_nodes}"


# --- time-slicing: Karpenter plans with the physical GPU count --------------------------------------------

WHY_NOT_TIME_SLICING = (
    "with provisioner 'karpenter': Karpenter plans nodes with each instance type's physical nvidia.com/gpu count, "
    "not the time-sliced count the device plugin advertises, so it would launch up to 2 times the nodes the "
    "pending pods need; use provisioner 'cluster-autoscaler' (its node template advertises the shared count) or "
    "leave time-slicing off"
)


def test_time_slicing_under_karpenter_is_refused_in_the_stack_config() -> None:
    values = stack_values("aws-karpenter") | {"elastic-gpu:devicePlugin": {"timeSlicingReplicas": 2}}
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    assert f"devicePlugin.timeSlicingReplicas: 2 {WHY_NOT_TIME_SLICING}" in exc.value.problems
    # the same setting under the cluster-autoscaler is fine (aws-dev ships it)
    assert load_stack_config(stack_values("aws-dev")).device_plugin.time_slicing_replicas == 2


def test_time_slicing_under_karpenter_is_refused_in_a_program(run_program) -> None:
    assert NODES.pool_problems("SpotGpuPool 'p': SpotGpuPoolArgs.", pool_args(gpu_sharing_replicas=2)) == [
        f"SpotGpuPool 'p': SpotGpuPoolArgs.gpu_sharing_replicas: 2 {WHY_NOT_TIME_SLICING}"
    ]
    assert NODES.pool_problems("SpotGpuPool 'p': SpotGpuPoolArgs.", pool_args()) == []
    source = """
from elastic_gpu import (EksCluster, GeneralPool, GeneralPoolArgs, NvidiaDevicePlugin, NvidiaDevicePluginArgs,
                         SpotGpuPool, SpotGpuPoolArgs)
from elastic_gpu.aws.karpenter.controller import Karpenter, KarpenterArgs
c = EksCluster.existing("x", cluster_name="c", kubernetes_version="1.35", node_role_arn="r",
    subnet_ids={"us-east-1a": "subnet-1"}, oidc_provider_arn="a", oidc_provider_url="u", region="us-east-1")
general = GeneralPool("general", GeneralPoolArgs(cluster=c, instance_types=["m6i.large"], max_size=2))
karpenter = Karpenter("karpenter", KarpenterArgs(cluster=c, general_pool=general))
l4 = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=c, instance_types=["g6.xlarge"], max_size=4,
                                       provisioner=karpenter.nodes))
NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=c.provider, gpu_pools=[l4], time_slicing_replicas=2))
"""
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    assert exc.value.problems == [
        f"NvidiaDevicePlugin 'nvidia': NvidiaDevicePluginArgs.time_slicing_replicas: 2 {WHY_NOT_TIME_SLICING} "
        "(pools l4)"
    ]


def test_a_missing_spot_role_in_the_providers_own_words_previews_and_declares_it() -> None:
    # pulumi-aws 7 says "couldn't find resource" for a role IAM does not have (terraform-provider-aws
    # internal/retry/error.go), not IAM's NoSuchEntity: the new account's mock answers so, and the stack
    # declares the role instead of failing the preview.
    from elastic_gpu.tools.aws.mocks import ACCOUNT_INVOKES, NEW_ACCOUNT

    with pytest.raises(Exception, match=r"reading IAM Role \(AWSServiceRoleForEC2Spot\): couldn't find resource$"):
        ACCOUNT_INVOKES["aws:iam/getRole:getRole"]({"name": "AWSServiceRoleForEC2Spot"}, NEW_ACCOUNT)
    preview = stack_preview("aws-karpenter")
    assert [r.name for r in preview.of_type(SPOT_ROLE)] == ["karpenter-spot-role"]


def test_a_spot_role_the_credentials_cannot_read_is_a_warning_not_a_crash(tmp_path) -> None:
    preview = _account_preview(tmp_path, existing_tags={})
    (tmp_path / "offline_mocks.py").write_text(
        "from elastic_gpu.tools.aws.mocks import InvokeFailed\n"
        "def _denied(args):\n"
        "    raise InvokeFailed('reading IAM Role (AWSServiceRoleForEC2Spot): operation error IAM: GetRole, "
        "AccessDenied')\n"
        "INVOKES = {'aws:iam/getRole:getRole': _denied}\n"
    )
    from elastic_gpu.tools.offline.runner import run_preview

    preview = run_preview("acct", tmp_path)
    assert preview.of_type(SPOT_ROLE) == []  # unknown: declaring could fail `up` on an account that has it
    [warning] = [w for w in preview.warnings if "could not be read" in w]
    assert "AccessDenied" in warning and "aws iam create-service-linked-role" in warning


@pytest.mark.parametrize(("replicas", "bound"), [(1, ">= 2"), (1001, "<= 1000")])
def test_a_programs_time_slicing_replicas_are_held_to_the_stack_files_bounds(run_program, replicas, bound) -> None:
    # The stack file's devicePlugin.timeSlicingReplicas is 2 to 1000 (the field's bounds); a program's Args are
    # built without validation, so the component holds them to the same bounds before declaring anything.
    source = f"""
from elastic_gpu import EksCluster, NvidiaDevicePlugin, NvidiaDevicePluginArgs
c = EksCluster.existing("x", cluster_name="c", kubernetes_version="1.35", node_role_arn="r",
    subnet_ids={{"us-east-1a": "subnet-1"}}, oidc_provider_arn="a", oidc_provider_url="u", region="us-east-1")
NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=c.provider, gpu_pools=[],
                                                    time_slicing_replicas={replicas}))
"""
    with pytest.raises(ConfigError) as exc:
        run_program(source)
    assert exc.value.problems == [
        f"NvidiaDevicePlugin 'nvidia': NvidiaDevicePluginArgs.time_slicing_replicas: must be {bound} (got {replicas})"
    ]
