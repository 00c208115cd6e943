"""The account preflight runs for a program's own pools as for a stack: the same checks, findings and fixes, at
preview, from the described account offline (`--account`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from elastic_gpu.errors import ConfigError
from elastic_gpu.preflight import FINDINGS_INPUT, TYPE_TOKEN
from elastic_gpu.tools.offline.account import described_account
from elastic_gpu.tools.offline.runner import Preview, run_preview

#: aws-prod's pools (stacks/Pulumi.aws-prod.yaml) built by a program on a handle of an existing cluster.
AWS_PROD_AS_A_PROGRAM = """
from elastic_gpu import EksCluster, GeneralPool, GeneralPoolArgs, SpotGpuPool, SpotGpuPoolArgs
zones = ["us-east-1a", "us-east-1b", "us-east-1c"]
cluster = EksCluster.existing(
    "prod", cluster_name="gpu-prod", kubernetes_version="1.35", node_role_arn="arn:aws:iam::123456789012:role/nodes",
    subnet_ids={z: f"subnet-{z}" for z in zones}, oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/x",
    oidc_provider_url="https://x", region="us-east-1")
GeneralPool("general", GeneralPoolArgs(cluster=cluster, instance_types=["m6i.xlarge", "m6a.xlarge", "m5.xlarge",
            "m5a.xlarge"], min_size=2, max_size=6))
SpotGpuPool("inference", SpotGpuPoolArgs(cluster=cluster, instance_types=["g4dn.xlarge"], max_size=9,
            on_demand_fallback=True))
SpotGpuPool("training", SpotGpuPoolArgs(cluster=cluster, instance_types=["g5.2xlarge"], max_size=6,
            disk_size_gib=200))
"""


def program(tmp_path: Path, source: str) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: own\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (tmp_path / "__main__.py").write_text(source)
    return tmp_path


def all_findings(preview: Preview) -> list[dict[str, Any]]:
    return [f for c in preview.of_type(TYPE_TOKEN) for f in c.inputs[FINDINGS_INPUT]]


def key(f: dict[str, Any]) -> tuple[str, ...]:
    return (f["pool"], f["check"], f["level"], f["message"], f["fix"])


def test_a_program_meets_the_findings_and_fixes_of_the_stack_with_its_pools(tmp_path: Path) -> None:
    stack = {key(f) for f in all_findings(run_preview("aws-prod", ROOT)) if f["check"] != "api-access"}
    p = run_preview("dev", program(tmp_path, AWS_PROD_AS_A_PROGRAM))
    # each pool records the findings that name it; the quota both GPU pools draw on comes with the second, with
    # both pools' need, as the stack reports it
    by_component = {c.name: [f["check"] for f in c.inputs[FINDINGS_INPUT]] for c in p.of_type(TYPE_TOKEN)}
    assert by_component == {
        "general-preflight": ["cpu-quota"],
        "inference-preflight": ["spot-quota", "on-demand-quota"],
        "training-preflight": ["spot-quota"],
    }
    found = {key(f) for f in all_findings(p)}
    assert stack and stack <= found
    # beyond the stack's: inference's share of the spot quota, before training was declared
    [partial] = found - stack
    assert partial[:2] == ("inference", "spot-quota") and "(inference 36); the account has 0" in partial[3]
    assert any("(inference 36, training 48)" in f[3] for f in stack)
    # printed as the stack's are
    assert sum(w.startswith("preflight: ") for w in p.warnings) == 4


def test_a_program_describes_its_account_offline_as_a_stack_does(tmp_path: Path) -> None:
    ready = {"aws": {"quotas": {"L-3819A6DF": 84, "L-DB2E81BA": 36, "L-1216C47A": 24}}}
    p = run_preview("dev", program(tmp_path, AWS_PROD_AS_A_PROGRAM), described_account(ready))
    assert all_findings(p) == [] and p.of_type(TYPE_TOKEN) == []
    assert not [w for w in p.warnings if w.startswith("preflight: ")]


def test_a_zone_that_offers_none_of_a_programs_pool_types_fails_before_the_pool_declares_anything(
    tmp_path: Path,
) -> None:
    account = described_account({"aws": {"offerings": {"g5.2xlarge": ["us-east-1a", "us-east-1b"]}}})
    with pytest.raises(ConfigError) as exc:
        run_preview("dev", program(tmp_path, AWS_PROD_AS_A_PROGRAM), account)
    assert exc.value.source == "account (preflight of 'training')"
    [problem] = exc.value.problems
    assert problem.startswith("training: us-east-1c offers none of g5.2xlarge: its node group there can never")


def test_a_program_without_a_region_is_checked_in_the_region_its_zones_name(tmp_path: Path) -> None:
    source = AWS_PROD_AS_A_PROGRAM.replace(', region="us-east-1")', ")")
    path = program(tmp_path, source)
    (path / "Pulumi.dev.yaml").write_text("config: {}\n")
    fixes = [f["fix"] for f in all_findings(run_preview("dev", path))]
    assert fixes and all(fix.endswith("--region us-east-1") for fix in fixes)
