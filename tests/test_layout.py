"""A cloud is one folder with one provider class (elastic_gpu/provider.py, listed in elastic_gpu/clouds.py): the
cloud-neutral modules never branch on a cloud's name and never import a cloud's folder."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import PACKAGE, ROOT, stack_values

from elastic_gpu.clouds import CLOUDS, all_clouds, get_cloud
from elastic_gpu.config import (
    CLOUD_ONLY_CLUSTER_SETTINGS,
    PROJECT,
    ClusterConfig,
    StackConfig,
    load_stack_config,
    stack_items,
)
from elastic_gpu.errors import ConfigError

COMPONENTS = PACKAGE
CLOUD_FOLDERS = {COMPONENTS / name for name in CLOUDS}
#: Where a cloud's name may appear as data: the registry that maps names to folders, and the config schema's
#: Literal of names (allowed by the check itself).
REGISTRY = COMPONENTS / "clouds.py"

#: The public re-exports of the cluster handles and add-ons (`elastic_gpu.eks_cluster` etc.): they name a
#: cloud's folder by design.
REEXPORTS = {COMPONENTS / f for f in ("eks_cluster.py", "aks_cluster.py", "gke_cluster.py", "eks_addons.py")}
#: The module that merges each cloud's typed settings (`<cloud>/options.py`, SDK-free) into the sections' models,
#: statically, so that the type checker knows every setting; it imports nothing else of a cloud's folder.
OPTIONS_MERGE = COMPONENTS / "settings.py"
#: Cloud-neutral modules that still import a cloud's folder, and why (each entry is work left; the list only shrinks).
IMPORTS_NOT_YET: set[Path] = set()


def _neutral_modules() -> list[Path]:
    return sorted(
        p
        for p in COMPONENTS.rglob("*.py")
        if not any(folder in p.parents for folder in CLOUD_FOLDERS) and p != REGISTRY
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


def test_each_folder_exports_its_provider() -> None:
    assert [c.name for c in all_clouds()] == list(CLOUDS)
    for cloud in all_clouds():
        assert get_cloud(cloud.name) is cloud
        # One class per cloud, in its folder's provider.py (the type checker holds it to CloudProvider).
        assert type(cloud).__module__ == f"elastic_gpu.{cloud.name}.provider"
        # What its provider wraps is there, in the folder.
        parts = ("reader", "node_templates", "timing", "replacement", "versions", "config_rules", "cluster", "pools")
        for part in (*parts, "mocks"):
            assert (COMPONENTS / cloud.name / f"{part}.py").is_file(), (cloud.name, part)


#: Names the core gives a provider (get_cloud's or all_clouds' result) when it reads one.
PROVIDER_NAMES = {"cloud", "c", "other", "spec", "rules", "part", "own", "stack"}


def provider_lookups(source: str) -> list[tuple[int, str]]:
    """(line, what) of each `getattr(...)` on a provider or on what it returns, and each import by a computed
    name: how the core found a cloud's optional parts before the protocol typed them."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or not node.args:
            continue
        target = node.args[0]
        while isinstance(target, ast.Attribute | ast.Call):
            target = target.value if isinstance(target, ast.Attribute) else target.func
        if node.func.id == "getattr" and isinstance(target, ast.Name) and target.id in PROVIDER_NAMES | {"get_cloud"}:
            found.append((node.lineno, f"getattr on {ast.unparse(node.args[0])}"))
        elif node.func.id == "import_module":
            found.append((node.lineno, f"import_module({ast.unparse(node.args[0])})"))
    return found


def test_the_lookup_check_finds_each_kind_of_lookup() -> None:
    source = """
resolve = getattr(get_cloud(cfg.cloud).rules, "resolve_gpu", None)
table = getattr(rules, "AUTOSCALER_DURATIONS", {})
merged = getattr(cloud.mocks, name, {})
module = import_module(f"elastic_gpu.{name}.{part}")
value = getattr(cfg.autoscaler, key)
"""
    assert provider_lookups(source) == [
        (2, "getattr on get_cloud(cfg.cloud).rules"),
        (3, "getattr on rules"),
        (4, "getattr on cloud.mocks"),
        (5, "import_module(f'elastic_gpu.{name}.{part}')"),
    ]


def test_the_core_reaches_a_cloud_only_through_its_typed_provider() -> None:
    # Optional capabilities are protocols checked with isinstance; only the registry imports by name (and the
    # package's lazy exports, elastic_gpu/__init__.py).
    neutral = [p for p in _neutral_modules() if p != COMPONENTS / "__init__.py"]
    found = [f"{p.relative_to(ROOT)}:{line}: {what}" for p in neutral for line, what in provider_lookups(p.read_text())]
    assert found == []


def test_each_cloud_only_cluster_key_is_a_cluster_field_of_one_cloud() -> None:
    # Each is declared by one cloud's options (elastic_gpu/<cloud>/options.py), merged into ClusterConfig.
    owners = {key: owner for key, (owner, _) in CLOUD_ONLY_CLUSTER_SETTINGS.items()}
    assert set(owners) <= set(ClusterConfig.model_fields) and set(owners.values()) == set(CLOUDS)
    for key, owner in owners.items():
        [declared] = [k for k in ClusterConfig.__mro__ if key in vars(k).get("__annotations__", {})]
        assert declared.__module__ == f"elastic_gpu.{owner}.options", key


def _problems(stack: str, **cluster: object) -> list[str]:
    values = stack_values(stack)
    values[f"{PROJECT}:cluster"].update(cluster)
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    return exc.value.problems


def test_a_cluster_key_of_another_cloud_is_named_with_its_owner_and_value() -> None:
    # Read from each cloud's options: the same message for every cloud, with the value set.
    assert [p for p in _problems("aws-dev", systemPool={"vmSize": "Standard_D8s_v5"}) if "only" in p] == [
        "cluster.systemPool: an Azure-only setting; remove it for cloud 'aws' (got {'vmSize': 'Standard_D8s_v5', "
        "'minSize': 1, 'maxSize': 3, 'spot': False, 'criticalAddonsOnly': False})"
    ]
    assert [p for p in _problems("gcp-dev", ecrEndpoints=True) if "only" in p] == [
        "cluster.ecrEndpoints: an AWS-only setting; remove it for cloud 'gcp' (got True)"
    ]
    assert [p for p in _problems("azure-dev", regional=False) if "only" in p] == [
        "cluster.regional: a GCP-only setting; remove it for cloud 'azure' (got False)"
    ]


def test_the_runner_setting_names_the_clouds_whose_private_api_needs_one() -> None:
    [problem] = [p for p in _problems("gcp-dev", apiAccess={"runnerInVnet": True}) if "runnerInVnet" in p]
    assert problem.startswith("cluster.apiAccess.runnerInVnet: set only on aws or azure with a private cluster")
    assert [c.name for c in all_clouds() if c.facts.private_api_needs_runner] == ["aws", "azure"]


def _config(stack: str, **cluster: object) -> StackConfig:
    values = stack_values(stack)
    values[f"{PROJECT}:cluster"].update(cluster)
    return load_stack_config(values)


def test_priced_items_beyond_the_pools_come_from_the_cloud() -> None:
    # The AKS System pool's VM size (AzureProvider.cluster_items); GKE's accelerators (prices_accelerators).
    azure = _config("azure-dev", systemPool={"vmSize": "Standard_D8s_v5"})
    aws, gcp = _config("aws-dev"), _config("gcp-dev")
    assert "Standard_D8s_v5" in stack_items(azure) and "Standard_D8s_v5" not in azure.general_pool.instance_types
    assert stack_items(aws) == list(
        dict.fromkeys([*aws.general_pool.instance_types, *aws.instance_types(aws.gpu_pools[0])])
    )
    assert "nvidia-tesla-t4" in stack_items(gcp)


def cloud_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of each import of a cloud's folder (`elastic_gpu.<cloud>` or below), at any depth."""
    found = []
    for node in ast.walk(ast.parse(source)):
        modules = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names if node.module == "elastic_gpu"]
        found += [(node.lineno, m) for m in modules if m.split(".")[:2][-1] in CLOUDS and m.startswith("elastic_gpu.")]
    return found


def test_the_import_check_finds_each_kind_of_import() -> None:
    source = """
from elastic_gpu.aws import EKS_NODE_GROUP
import elastic_gpu.azure.cluster
def f():
    from elastic_gpu.gcp.autoprovisioning.pools import apply_cluster_limits
from elastic_gpu import gcp
from elastic_gpu.clouds import get_cloud
from elastic_gpu.node_group_view import NodeGroupView
"""
    assert cloud_imports(source) == [
        (2, "elastic_gpu.aws"),
        (3, "elastic_gpu.azure.cluster"),
        (6, "elastic_gpu.gcp"),
        (5, "elastic_gpu.gcp.autoprovisioning.pools"),
    ]


def test_no_cloud_neutral_module_imports_a_cloud_folder() -> None:
    # The core reaches a cloud through its provider (get_cloud / all_clouds).
    neutral = [p for p in _neutral_modules() if p not in REEXPORTS | IMPORTS_NOT_YET | {OPTIONS_MERGE}]
    found = [f"{p.relative_to(ROOT)}:{line}: imports {m}" for p in neutral for line, m in cloud_imports(p.read_text())]
    assert found == []
    assert sorted(m for _, m in cloud_imports(OPTIONS_MERGE.read_text())) == [
        f"elastic_gpu.{c}.options" for c in CLOUDS
    ]
    # An exemption that no longer imports a folder is dropped from the list.
    assert [p for p in IMPORTS_NOT_YET if not cloud_imports(p.read_text())] == []


def test_each_cloud_mocks_its_own_types_once() -> None:
    # offline/mocks.py merges the folders' tables: a token answered by two folders would hide one of them.
    for table in ("resources", "invokes"):
        tokens = [(c.name, t) for c in all_clouds() for t in getattr(c.mocks(), table)]
        assert len({t for _, t in tokens}) == len(tokens), table
        providers = {"aws": "aws:", "azure": "azure-native:", "gcp": "gcp:"}
        assert [(c, t) for c, t in tokens if not t.startswith(providers[c])] == []


def test_settings_without_effect_are_read_from_each_cloud() -> None:
    # Each provider names the settings that do nothing on it (ignored_settings); config refuses them when set.
    assert [(c.name, list(c.ignored_settings())) for c in all_clouds()] == [
        ("aws", []),
        ("azure", [("cluster", "network_cidr")]),
        ("gcp", [("autoscaler", None)]),
    ]
    values = stack_values("gcp-dev")
    values[f"{PROJECT}:autoscaler"] = {"scaleDownUnneededTime": "5m"}
    with pytest.raises(ConfigError) as exc:
        load_stack_config(values)
    assert [p for p in exc.value.problems if "does nothing" in p] == [
        "autoscaler: does nothing on gcp: GKE runs its own cluster autoscaler (profile set by GkeCluster, limits per "
        "node pool); remove the section"
    ]
    values = stack_values("aws-dev")
    values[f"{PROJECT}:cluster"]["networkCidr"] = "10.1.0.0/16"
    values[f"{PROJECT}:autoscaler"] = {"scaleDownUnneededTime": "5m"}
    assert load_stack_config(values).cluster.network_cidr == "10.1.0.0/16"
    assert [p for p in _problems("azure-dev", networkCidr="10.1.0.0/16") if "does nothing" in p] == [
        "cluster.networkCidr: does nothing on azure: only the AWS and GCP stacks create a network (a VPC); AKS "
        "uses Azure CNI overlay; remove it"
    ]
