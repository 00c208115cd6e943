"""A cloud is one folder (components/clouds.py): the cloud-neutral modules never branch on a cloud's name."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

from elastic_gpu.clouds import CLOUDS, all_clouds, get_cloud

COMPONENTS = ROOT / "components"
CLOUD_FOLDERS = {COMPONENTS / name for name in CLOUDS}
#: Where a cloud's name may appear as data: the registry that maps names to folders, and the config schema's
#: Literal of names (allowed by the check itself).
REGISTRY = COMPONENTS / "clouds.py"
#: Modules still branching on a cloud's name, and why (each entry is work left; the list only shrinks).
NOT_YET = {
    # The schema's cloud-only settings (cluster keys of one cloud, GKE's control-plane range, the AKS
    # System pool's price item) are checked here until they move onto each Cloud as data.
    COMPONENTS / "config.py",
}


def _neutral_modules() -> list[Path]:
    return sorted(
        p
        for p in COMPONENTS.rglob("*.py")
        if not any(folder in p.parents for folder in CLOUD_FOLDERS) and p != REGISTRY and p not in NOT_YET
    )


def _names(node: ast.AST) -> list[str]:
    """The cloud names a comparison operand, a match pattern or a dict key spells out."""
    if isinstance(node, ast.Constant) and node.value in CLOUDS:
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [n for elt in node.elts for n in _names(elt)]
    if isinstance(node, ast.MatchValue):
        return _names(node.value)
    if isinstance(node, ast.MatchOr):
        return [n for p in node.patterns for n in _names(p)]
    return []


def cloud_branches(source: str) -> list[tuple[int, str]]:
    """(line, what) of each comparison, match case or dict key against a cloud's name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                found += [(node.lineno, f"compares with {n!r}") for n in _names(operand)]
        elif isinstance(node, ast.match_case):
            found += [(node.pattern.lineno, f"matches {n!r}") for n in _names(node.pattern)]
        elif isinstance(node, ast.Dict):
            found += [(k.lineno, f"keys a dict by {n!r}") for k in node.keys if k is not None for n in _names(k)]
    return found


def test_the_check_finds_each_kind_of_branch() -> None:
    source = """
if cloud == "aws": pass
if cfg.cloud in ("azure", "gcp"): pass
match cloud:
    case "gcp": pass
TABLE = {"aws": 1}
Cloud = Literal["aws", "azure", "gcp"]
"""
    assert cloud_branches(source) == [
        (2, "compares with 'aws'"),
        (3, "compares with 'azure'"),
        (3, "compares with 'gcp'"),
        (5, "matches 'gcp'"),
        (6, "keys a dict by 'aws'"),
    ]


def test_no_cloud_neutral_module_branches_on_a_cloud_name() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in _neutral_modules()
        for line, what in cloud_branches(path.read_text())
    ]
    assert found == []


def test_each_folder_exports_its_cloud() -> None:
    assert [c.name for c in all_clouds()] == list(CLOUDS)
    for cloud in all_clouds():
        assert get_cloud(cloud.name) is cloud
        # What the core reads of every folder is there, in the folder.
        for part in ("pool_view", "node_templates", "replacement", "versions", "rules", "cluster", "pools"):
            assert (COMPONENTS / cloud.name / f"{part}.py").is_file(), (cloud.name, part)
