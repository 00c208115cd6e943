"""`diff` without phantoms: unknowns compare as unknown on both sides, updates show old -> new values, and
every change that interrupts running GPU nodes is marked (a replaced node group, a rolling version bump, a
Karpenter drift), with version skew and a resize riding on a version change as warnings."""

from __future__ import annotations

import copy
import json
import subprocess
import textwrap

from elastic_gpu.__main__ import main
from elastic_gpu.tools.node_group_view import KARPENTER_NODE_POOL
from elastic_gpu.tools.offline.diff import Side, build_diff
from elastic_gpu.tools.offline.runner import Preview, run_preview
from tests.conftest import stack_preview, stack_values

P = "elastic-gpu:"

#: pulumi/examples azure-py-aks, with azure-native only: an SSH key and a client id known only after
#: deployment (unknown at preview), and a secret from the stack config, on a ManagedCluster and a RoleAssignment.
AKS_PROGRAM = """
import pulumi
from pulumi_azure_native import authorization, containerservice, managedidentity, resources

config = pulumi.Config()
rg = resources.ResourceGroup("rg")
identity = managedidentity.UserAssignedIdentity("aks-id", resource_group_name=rg.name)
cluster = containerservice.ManagedCluster(
    "aks",
    resource_group_name=rg.name,
    agent_pool_profiles=[{"count": 3, "mode": "System", "name": "agentpool", "vm_size": "Standard_DS2_v2"}],
    kubernetes_version="1.33",
    dns_prefix=rg.name,
    linux_profile={"admin_username": "azureuser", "ssh": {"public_keys": [{"key_data": identity.client_id}]}},
    service_principal_profile={"client_id": identity.client_id, "secret": config.require_secret("spSecret")},
)
authorization.RoleAssignment(
    "aks-network",
    principal_id=identity.principal_id,
    principal_type="ServicePrincipal",
    role_definition_id="/providers/Microsoft.Authorization/roleDefinitions/4d97b98b-1d4f-4787-a291-c67834d212e7",
    scope=rg.id,
)
pulumi.export("clusterName", cluster.name)
"""


def side(preview: Preview) -> Side:
    return Side("x", {r.urn: r for r in preview.resources}, preview.config, preview)


def test_an_unchanged_aks_program_with_unknowns_and_secrets_shows_no_change(tmp_path, capsys):
    (tmp_path / "__main__.py").write_text(textwrap.dedent(AKS_PROGRAM))
    (tmp_path / "Pulumi.yaml").write_text("name: aks\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(
        "config:\n  azure-native:location: westus\n  aks:spSecret:\n    secure: AAABAMockSecret\n"
    )
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "b"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)
    # The base runs in its own process and comes back as `preview --json`: its unknowns must stay unknowns.
    assert main(["diff", "--stack", "dev", "--program", str(tmp_path), "--base", "HEAD", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["changes"] == [] and out["summary"] == {"create": 0, "update": 0, "replace": 0, "delete": 0}
    assert main(["diff", "--stack", "dev", "--program", str(tmp_path), "--base", "HEAD"]) == 0
    assert "  no changes" in capsys.readouterr().out


def test_an_update_shows_old_and_new_values(program_dir, tmp_path, capsys):
    base_file = tmp_path / "base.yaml"
    values = stack_values("aws-dev")
    base_file.write_text(json.dumps({"config": values}))
    values[P + "gpuPools"][0]["maxSize"] = 6  # 4 over two zones: 2 per group, now 3
    directory = str(program_dir(values, stack="aws-dev"))
    assert main(["diff", "--stack", "aws-dev", "--program", directory, "--base-file", str(base_file)]) == 0
    assert "        scalingConfig.maxSize: 2 -> 3" in capsys.readouterr().out
    assert main(["diff", "--stack", "aws-dev", "--program", directory, "--base-file", str(base_file), "--json"]) == 0
    group = next(c for c in json.loads(capsys.readouterr().out)["changes"] if c["name"] == "t4-spot-us-west-2a")
    assert group["values"] == [{"path": "scalingConfig.maxSize", "old": 2, "new": 3}]
    assert group["interruptsGpuNodes"] == []  # a resize rolls no node


def test_a_gpu_node_group_replacement_is_marked_as_draining_gpu_nodes(program_dir):
    base = stack_preview("aws-prod")
    values = stack_values("aws-prod")
    next(p for p in values[P + "gpuPools"] if p["name"] == "inference")["instanceTypes"] = ["g4dn.2xlarge"]
    diff = build_diff(side(base), side(run_preview("aws-prod", program_dir(values, stack="aws-prod"))))
    replaced = {c.name: c.interrupts for c in diff.of("replace")}
    assert replaced["inference-spot-us-east-1a"] and replaced["inference-fallback-us-east-1a"]
    assert "every running GPU node is drained and deleted" in replaced["inference-spot-us-east-1a"][0]
    untouched = [c for c in diff.changes if c.name.startswith(("training", "general"))]
    assert all(not c.interrupts for c in untouched)


def test_a_version_bump_rolls_gpu_nodes_and_a_resize_with_it_is_told_to_wait(program_dir):
    values = stack_values("aws-prod")
    values[P + "cluster"]["kubernetesVersion"] = "1.34"
    base = side(run_preview("aws-prod", program_dir(values, stack="aws-prod")))
    values[P + "cluster"]["kubernetesVersion"] = "1.35"
    head = side(run_preview("aws-prod", program_dir(values, stack="aws-prod")))
    diff = build_diff(base, head)
    marks = {c.name: c.interrupts for c in diff.of("update") if c.type == "aws:eks/nodeGroup:NodeGroup"}
    assert "rolls every GPU node" in marks["training-spot-us-east-1a"][0]
    assert "(changed: version)" in marks["training-spot-us-east-1a"][0]
    assert marks["general-ng"] == []  # a CPU pool rolls too, but runs no GPU job
    assert diff.warnings == []
    next(p for p in values[P + "gpuPools"] if p["name"] == "training")["maxSize"] = 12
    head = side(run_preview("aws-prod", program_dir(values, stack="aws-prod")))
    (warning,) = build_diff(base, head).warnings
    assert "in the same `up` as a version change" in warning and "Resize in its own `up`" in warning


def test_version_skew_between_control_plane_and_node_groups_is_a_warning():
    base = stack_preview("aws-prod")
    head = copy.deepcopy(base)
    group = next(r for r in head.resources if r.name == "training-spot-us-east-1a")
    group.inputs["version"] = "1.36"
    (warning,) = build_diff(side(base), side(head)).warnings
    assert warning.startswith("version skew: node pool training-spot-us-east-1a runs Kubernetes 1.36 (version)")
    assert "newer than the control plane" in warning


def test_a_karpenter_node_pool_change_drifts_gpu_nodes_as_its_budget_allows():
    base = stack_preview("aws-karpenter")
    head = copy.deepcopy(base)
    pool = next(r for r in head.resources if r.type == KARPENTER_NODE_POOL and "gpu" in json.dumps(r.inputs))
    pool.inputs["spec"]["template"]["metadata"]["labels"]["team"] = "ml"
    (change,) = [c for c in build_diff(side(base), side(head)).changes if c.urn == pool.urn]
    (mark,) = change.interrupts
    # The shipped budget replaces drifted nodes one at a time; a budget of 0 holds them; none: Karpenter's default.
    assert mark.startswith("drifts the GPU nodes of NodePool") and "1 at a time (its Drifted budget)" in mark
    [drifted] = [b for b in pool.inputs["spec"]["disruption"]["budgets"] if "Drifted" in (b.get("reasons") or [])]
    drifted["nodes"] = "0"
    (change,) = [c for c in build_diff(side(base), side(head)).changes if c.urn == pool.urn]
    assert "keeps running nodes until" in change.interrupts[0]
    pool.inputs["spec"]["disruption"].pop("budgets")
    (change,) = [c for c in build_diff(side(base), side(head)).changes if c.urn == pool.urn]
    assert "Karpenter replaces running GPU nodes" in change.interrupts[0]
    # A limit is no drift.
    head = copy.deepcopy(base)
    pool = next(r for r in head.resources if r.urn == pool.urn)
    pool.inputs["spec"]["limits"]["nodes"] = 99
    (change,) = [c for c in build_diff(side(base), side(head)).changes if c.urn == pool.urn]
    assert change.interrupts == []
