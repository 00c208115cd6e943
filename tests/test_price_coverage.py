"""Every pool type a shipped example or docs/library.md program declares has a price row in its own region, or (where
no source we can cite prices it) the preview, `cost` and the gate say how to give one, naming the setting.
The shipped stacks' coverage is tests/test_cost.py's."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.report import to_json
from elastic_gpu.tools.offline.runner import Preview, run_preview
from tests.test_examples import LIBRARY_PROGRAMS, NAMES, README_PROGRAMS, _readme_block, example

#: (cloud, region, item) a program declares that no source we can cite prices: SkyPilot's AWS catalog lists no
#: g6 type in eu-west-1 and Karpenter's AWS table covers us-east-1 only (elastic_gpu/data/price_sources.csv).
UNPRICED = {("aws", "eu-west-1", "g6.xlarge")}


def _missing(preview: Preview) -> set[tuple[str, str, str]]:
    cloud = preview.config.get("elastic-gpu:cloud")
    rows = to_json(preview)["cost"]["pools"]
    assert rows, "the program declares pools"
    found = set()
    for row in rows:
        for item in row["missing"]:
            found.add((cloud or _cloud_of(preview), row["region"], item))
    return found


def _cloud_of(preview: Preview) -> str:
    types = {r.type.split(":")[0] for r in preview.resources}
    [cloud] = {"aws": "aws", "azure-native": "azure", "gcp": "gcp"}.keys() & types
    return {"aws": "aws", "azure-native": "azure", "gcp": "gcp"}[cloud]


def _says_how_to_give(preview: Preview, unpriced: set[tuple[str, str, str]]) -> None:
    cost = to_json(preview)["cost"]
    mandatory = {v.message for v in run_policies(preview).violations if v.policy == "gpu-monthly-cost-ceiling"}
    for _, region, item in unpriced:
        assert any(f"no price for {item} ({region})" in h and "`elastic-gpu:prices.<item>.onDemand`" in h
                   for h in cost["hints"]), cost["hints"]  # fmt: skip
        assert any(f"`elastic-gpu:prices: {{{item}: {{onDemand: <USD/h>" in m for m in mandatory), mandatory


@pytest.mark.parametrize("name", NAMES)
def test_every_example_pool_is_priced_in_its_region(name: str) -> None:
    preview = example(name)
    missing = _missing(preview)
    assert missing <= UNPRICED, f"add rows to elastic_gpu/data/prices.csv: {sorted(missing - UNPRICED)}"
    _says_how_to_give(preview, missing)


#: The provider config a README program runs with: the EKS one's node groups bill in the AWS provider's region
#: (its resources name none), which its stack sets to the cluster's region.
README_STACK_CONFIG = ["config: {aws:region: eu-west-1}\n", "config: {}\n", "config: {}\n"]


@pytest.mark.parametrize("index", range(len(README_PROGRAMS)))
def test_every_readme_program_pool_is_priced_or_says_how(tmp_path: Path, index: int) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text("name: consumer\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks" / "Pulumi.test.yaml").write_text(README_STACK_CONFIG[index])
    (tmp_path / "__main__.py").write_text(_readme_block(LIBRARY_PROGRAMS, index))
    preview = run_preview("test", tmp_path)
    missing = _missing(preview)
    assert missing <= UNPRICED, f"add rows to elastic_gpu/data/prices.csv: {sorted(missing - UNPRICED)}"
    _says_how_to_give(preview, missing)
    if index == 0:  # the EKS program's GPU type in eu-west-1: the known gap, said where the user looks
        assert missing == UNPRICED
