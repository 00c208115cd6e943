"""The unkind account (examples/account-unkind.yaml): every described fact set the way that breaks a first
`pulumi up`. Every shipped example, stack and upstream program previews under it with findings, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from conftest import UPSTREAM as UPSTREAM_DIR

from elastic_gpu.errors import ConfigError
from elastic_gpu.preflight import FINDINGS_INPUT, TYPE_TOKEN
from elastic_gpu.tools.offline.account import load_account, new_account
from elastic_gpu.tools.offline.runner import run_preview

UNKIND = ROOT / "examples" / "account-unkind.yaml"
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if (p / "__main__.py").exists())
UPSTREAM = sorted(p for p in UPSTREAM_DIR.iterdir() if p.is_dir())
STACKS = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


def test_the_unkind_account_sets_every_fact_a_new_account_has() -> None:
    described = yaml.safe_load(UNKIND.read_text())
    for cloud, section in new_account().items():
        assert set(described.get(cloud, {})) == set(section), f"{cloud}: set every key of its new account"
        # a quota the new account knows is set, at zero
        quotas = described.get(cloud, {}).get("quotas", {})
        assert set(section.get("quotas", {})) <= set(quotas)
        assert all(v == 0 for v in quotas.values())


@pytest.mark.parametrize("program", EXAMPLES + UPSTREAM, ids=lambda p: p.name)
def test_every_example_and_upstream_program_previews_under_it_with_findings(program: Path) -> None:
    preview = run_preview("dev", program, load_account(UNKIND))
    found = [f for c in preview.of_type(TYPE_TOKEN) for f in c.inputs[FINDINGS_INPUT]]
    assert found, "an unkind account leaves every GPU pool short of quota"
    assert all(f["fix"] for f in found)


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_previews_under_it_with_findings(stack: str) -> None:
    try:
        preview = run_preview(stack, ROOT, load_account(UNKIND))
    except ConfigError as exc:  # a refusal of the preflight's, with its fix: never another failure
        pytest.fail(f"{stack}: {exc}")
    [component] = preview.of_type(TYPE_TOKEN)
    assert component.inputs[FINDINGS_INPUT]
