"""A cloud is one folder with one provider class (elastic_gpu/provider.py, listed in elastic_gpu/clouds.py): the
cloud-neutral modules never branch on a cloud's name and never import a cloud's folder."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
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
from elastic_gpu.tools import clouds as tool_clouds

COMPONENTS = PACKAGE
TOOLS = COMPONENTS / "tools"
#: A cloud's folders: its library part (builders, rules, rows) and its tools part (mocks, reader, timing, pack).
CLOUD_FOLDERS = {COMPONENTS / name for name in CLOUDS} | {TOOLS / name for name in CLOUDS}
#: Where a cloud's name may appear as data: the registry that maps names to folders, and the config schema's
#: Literal of names (allowed by the check itself).
REGISTRY = COMPONENTS / "clouds.py"
TOOLS_REGISTRY = TOOLS / "clouds.py"

#: The public re-exports of the cluster handles and add-ons (`elastic_gpu.eks_cluster` etc.): they name a
#: cloud's folder by design.
REEXPORTS = {COMPONENTS / f for f in ("eks_cluster.py", "aks_cluster.py", "gke_cluster.py", "eks_addons.py")}
#: Cloud-neutral modules that still import a cloud's folder, and why (each entry is work left; the list only shrinks).
IMPORTS_NOT_YET: set[Path] = set()


def _neutral_modules() -> list[Path]:
    return sorted(
        p
        for p in COMPONENTS.rglob("*.py")
        if not any(folder in p.parents for folder in CLOUD_FOLDERS) and p not in {REGISTRY, TOOLS_REGISTRY}
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
    assert [c.name for c in tool_clouds.all_clouds()] == list(CLOUDS)
    for cloud, tools in zip(all_clouds(), tool_clouds.all_clouds(), strict=True):
        assert get_cloud(cloud.name) is cloud and tool_clouds.get_cloud(cloud.name) is tools
        # One class per cloud, in its folder's provider.py (the type checker holds it to CloudProvider), and its
        # tools' class in tools/<cloud>/cloud.py, the same cloud with the tools' members (ToolCloud).
        assert type(cloud).__module__ == f"elastic_gpu.{cloud.name}.provider"
        assert type(tools).__module__ == f"elastic_gpu.tools.{cloud.name}.cloud"
        assert isinstance(tools, type(cloud)) and tools.facts is cloud.facts
        # What each wraps is there, in its folder: what a `pulumi up` loads in the cloud's folder, what only the
        # tools read under tools/<cloud>/.
        for part in ("replacement", "versions", "config_rules", "cluster", "pools", "stack", "autoscaler"):
            assert (COMPONENTS / cloud.name / f"{part}.py").is_file(), (cloud.name, part)
        for part in ("reader", "autoscaler_templates", "autoscaler_timing", "mocks"):
            assert (TOOLS / cloud.name / f"{part}.py").is_file(), (cloud.name, part)


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
    # Each is declared by one cloud's settings (elastic_gpu/settings/<cloud>.py), merged into ClusterConfig.
    owners = {key: owner for key, (owner, _) in CLOUD_ONLY_CLUSTER_SETTINGS.items()}
    assert set(owners) <= set(ClusterConfig.model_fields) and set(owners.values()) == set(CLOUDS)
    for key, owner in owners.items():
        [declared] = [k for k in ClusterConfig.__mro__ if key in vars(k).get("__annotations__", {})]
        assert declared.__module__ == f"elastic_gpu.settings.{owner}", key


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
from elastic_gpu.tools.node_group_view import NodeGroupView
"""
    assert cloud_imports(source) == [
        (2, "elastic_gpu.aws"),
        (3, "elastic_gpu.azure.cluster"),
        (6, "elastic_gpu.gcp"),
        (5, "elastic_gpu.gcp.autoprovisioning.pools"),
    ]


def test_no_cloud_neutral_module_imports_a_cloud_folder() -> None:
    # The core reaches a cloud through its provider (get_cloud / all_clouds).
    # (A cloud's own settings are its part of the settings, elastic_gpu/settings/<cloud>.py, which its folder
    # imports: the settings import no cloud's folder.)
    neutral = [p for p in _neutral_modules() if p not in REEXPORTS | IMPORTS_NOT_YET]
    found = [f"{p.relative_to(ROOT)}:{line}: imports {m}" for p in neutral for line, m in cloud_imports(p.read_text())]
    assert found == []
    # An exemption that no longer imports a folder is dropped from the list.
    assert [p for p in IMPORTS_NOT_YET if not cloud_imports(p.read_text())] == []


def test_each_cloud_mocks_its_own_types_once() -> None:
    # offline/mocks.py merges the folders' tables: a token answered by two folders would hide one of them.
    for table in ("resources", "invokes"):
        tokens = [(c.name, t) for c in tool_clouds.all_clouds() for t in getattr(c.mocks(), table)]
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


# --- the library never imports the workbench ----------------------------------------------------------------

#: The CLI's edge: `python -m elastic_gpu` hands the command line to the tools (elastic_gpu/tools/cli.py).
CLI_EDGE = COMPONENTS / "__main__.py"


def tools_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of each import of `elastic_gpu.tools` or below, at any depth: type-only (under
    TYPE_CHECKING) and function-local imports included, since each ties the library to the tools' names."""
    found = []
    for node in ast.walk(ast.parse(source)):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names if node.module == "elastic_gpu"]
        found += [(node.lineno, m) for m in modules if m == "elastic_gpu.tools" or m.startswith("elastic_gpu.tools.")]
    return sorted(found)


def _library_modules() -> list[Path]:
    return sorted(p for p in COMPONENTS.rglob("*.py") if TOOLS not in p.parents)


def test_the_tools_import_check_finds_each_kind_of_import() -> None:
    source = """
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from elastic_gpu.tools.offline.runner import Preview
import elastic_gpu.tools.policy
def f():
    from elastic_gpu.tools.simulation import fit
from elastic_gpu import tools
from elastic_gpu import clouds
from elastic_gpu.toolsmith import x
"""
    assert tools_imports(source) == [
        (4, "elastic_gpu.tools.offline.runner"),
        (5, "elastic_gpu.tools.policy"),
        (7, "elastic_gpu.tools.simulation"),
        (8, "elastic_gpu.tools"),
    ]


def test_no_library_module_imports_the_tools() -> None:
    # What a `pulumi up` may load (everything under elastic_gpu/ but tools/) never names the tools, not even for a
    # type: the tools build on the library, never the other way round.
    found = [
        f"{p.relative_to(ROOT)}:{line}: imports {m}"
        for p in _library_modules()
        if p != CLI_EDGE
        for line, m in tools_imports(p.read_text())
    ]
    assert found == []


def test_the_cli_edge_only_hands_over_to_the_tools() -> None:
    # `python -m elastic_gpu` is the one library file that imports the tools: one import, of the CLI's body.
    assert tools_imports(CLI_EDGE.read_text()) == [(8, "elastic_gpu.tools.cli")]
    assert len(CLI_EDGE.read_text().splitlines()) < 20


#: A program as a user writes one, on each cloud's handle, run under Pulumi's own mocks (`pulumi.runtime.set_mocks`:
#: no engine, no CLI, no offline runner): it prints the elastic_gpu modules it loaded once its resources are declared.
#: Its mocks refuse every invoke, as an account without read rights would: the pools' account preflight then says
#: what it could not read (warnings) instead of judging empty answers.
MOCKED_PROGRAM = """
import json, sys
import pulumi
import pulumi_kubernetes as k8s


class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return [args.name + "_id", dict(args.inputs)]

    def call(self, args):
        raise Exception(f"AccessDenied: not authorized to perform {args.token}")


pulumi.runtime.set_mocks(Mocks(), project="p", stack="s", preview=True)

from elastic_gpu import AksCluster, EksCluster, GeneralPool, GeneralPoolArgs, GkeCluster, SpotGpuPool, SpotGpuPoolArgs

k8s_provider = k8s.Provider("k8s", kubeconfig="{}")
cluster = %s
GeneralPool("general", GeneralPoolArgs(cluster=cluster, instance_types=[%r], min_size=1, max_size=3))
SpotGpuPool("gpu", SpotGpuPoolArgs(cluster=cluster, instance_types=[%r], max_size=2, on_demand_fallback=True))
print(json.dumps(sorted(m for m in sys.modules if m.startswith("elastic_gpu"))))
"""

HANDLES = {
    "aws": (
        'EksCluster.existing("c", cluster_name="c", kubernetes_version="1.33", region="us-east-1", '
        'node_role_arn="arn:aws:iam::123456789012:role/nodes", subnet_ids={"us-east-1a": "subnet-1"}, '
        'oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/x", oidc_provider_url="https://x", '
        "k8s_provider=k8s_provider)",
        "m6i.xlarge",
        "g6.xlarge",
    ),
    "azure": (
        'AksCluster.existing("c", cluster_name="c", resource_group_name="rg", location="eastus", zones=["1"], '
        'kubernetes_version="1.33", k8s_provider=k8s_provider)',
        "Standard_D4s_v5",
        "Standard_NC4as_T4_v3",
    ),
    "gcp": (
        'GkeCluster.existing("c", cluster_name="c", project="p", location="us-central1", zones=["us-central1-a"], '
        'kubernetes_version="1.33", k8s_provider=k8s_provider)',
        "e2-standard-4",
        "g2-standard-4",
    ),
}


@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_program_under_pulumis_own_mocks_loads_no_tools_module(cloud: str, tmp_path: Path) -> None:
    handle, general, gpu = HANDLES[cloud]
    program = tmp_path / "program.py"
    program.write_text(MOCKED_PROGRAM % (handle, general, gpu))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(COMPONENTS.parent), str(ROOT)])}
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    # The components ran through the cloud's builders (its folder's pools module is loaded) ...
    assert f"elastic_gpu.{cloud}.pools" in loaded and "elastic_gpu.spot_gpu_pool" in loaded
    # ... and nothing of the workbench came with them.
    assert [m for m in loaded if m == "elastic_gpu.tools" or m.startswith("elastic_gpu.tools.")] == []


# --- a cloud's records are typed: a member it lacks fails the type check -------------------------------------

#: (module of a cloud, a name its record is built from): deleting the name must fail `make typecheck`, not a run.
RECORD_MEMBERS = [
    ("gcp/config_rules.py", "DISK_GIB"),
    ("aws/pools.py", "pool_problems"),
    ("azure/versions.py", "NODE_VERSION_INPUTS"),
]


def _without(source: str, name: str) -> str:
    """`source` with the top-level definition of `name` renamed away (as if deleted), its record left as it is."""
    lines = source.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith((f"def {name}(", f"{name} =", f"{name}: "))]
    assert len(starts) == 1, (name, starts)  # the definition is there: a test that edits nothing fails
    lines[starts[0]] = lines[starts[0]].replace(name, f"_deleted_{name}", 1)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("module", "name"), RECORD_MEMBERS)
def test_the_type_checker_fails_a_cloud_without_a_member_of_its_record(module: str, name: str, tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    source = (COMPONENTS / module).read_text()
    # the record's line that reads the name (at the module's end: `RULES = ConfigRules(..., disk_gib=DISK_GIB, ...)`)
    record_line = max(i for i, line in enumerate(source.splitlines(), 1) if re.search(rf"={name}\b", line))
    flags = ["--follow-imports=skip", "--ignore-missing-imports", "--no-error-summary", "--show-error-codes"]
    flags += ["--cache-dir", str(tmp_path / "cache")]
    (tmp_path / "whole.py").write_text(source)
    (tmp_path / "lacking.py").write_text(_without(source, name))
    whole, _, _ = api.run([*flags, str(tmp_path / "whole.py")])
    lacking, _, status = api.run([*flags, str(tmp_path / "lacking.py")])
    assert f'Name "{name}" is not defined' not in whole
    assert status == 1
    error = f'lacking.py:{record_line}: error: Name "{name}" is not defined'
    assert [line for line in lacking.splitlines() if error in line and line.endswith("[name-defined]")], lacking


def test_each_provider_hands_back_the_records_its_cloud_builds() -> None:
    # No record is read from a module by name: each is the one its cloud's module built (typed, above).
    import elastic_gpu.aws.pools
    import elastic_gpu.azure.versions
    import elastic_gpu.gcp.config_rules
    import elastic_gpu.gcp.replacement
    import elastic_gpu.tools.aws.pack

    assert get_cloud("gcp").config_rules() is elastic_gpu.gcp.config_rules.RULES
    assert get_cloud("aws").pool_builder() is elastic_gpu.aws.pools.BUILDER
    assert get_cloud("azure").versions() is elastic_gpu.azure.versions.ROWS
    assert tool_clouds.get_cloud("gcp").replacement() is elastic_gpu.gcp.replacement.ROWS
    assert tool_clouds.get_cloud("aws").pack() is elastic_gpu.tools.aws.pack.RULES


# --- the imports run one way: no circle among the library's modules, nor among its rooms ---------------------

#: The folders the import drawing counts as one room each: every arrow inside a circle of rooms runs back up.
ROOMS = ("aws", "azure", "gcp", "package", "tools")


def _module_names(package: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package's __init__) of every module under `package`."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports: every import statement as written (at the top, under
    TYPE_CHECKING or inside a function alike: each is an arrow a reader follows), relative ones resolved;
    `from pkg import name` is the module `pkg.name` when there is one, else `pkg`."""
    modules = _module_names(package)
    root = package.name

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, (path, is_package) in modules.items():
        here = module if is_package else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    base = ".".join(parent + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                if (target == root or target.startswith(f"{root}.")) and (found := known(target)) not in (None, module):
                    graph[module].add(str(found))
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def room_of(module: str) -> str:
    """The room a module stands in: its folder when that is one of ROOMS (`elastic_gpu.aws/`), else itself."""
    parts = module.split(".")
    return f"{parts[0]}.{parts[1]}/" if len(parts) > 1 and parts[1] in ROOMS else module


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for module, targets in graph.items():
        rooms.setdefault(room_of(module), set()).update(room_of(t) for t in targets if room_of(t) != room_of(module))
    return rooms


def _described(found: list[list[str]], graph: dict[str, set[str]]) -> str:
    """Each circle, with its arrows (`a -> b`), for the failure message."""
    lines = []
    for members in found:
        inside = set(members)
        arrows = [f"{a} -> {b}" for a in members for b in sorted(graph[a] & inside)]
        lines.append(f"{len(members)} modules: {', '.join(members)}\n    " + "\n    ".join(arrows))
    return "\n".join(lines)


def test_the_circle_check_finds_a_circle_through_any_kind_of_import(tmp_path: Path) -> None:
    package = tmp_path / "elastic_gpu"
    (package / "aws").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "aws" / "__init__.py").write_text("")
    (package / "low.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .high import X\n")
    (package / "high.py").write_text("def f():\n    import elastic_gpu.low\n")
    (package / "settings.py").write_text("from elastic_gpu.aws import options\n")
    (package / "aws" / "options.py").write_text("")
    (package / "aws" / "pools.py").write_text("from elastic_gpu import settings\n")
    graph = import_graph(package)
    assert circles(graph) == [["elastic_gpu.high", "elastic_gpu.low"]]
    # module by module settings -> aws.options and aws.pools -> settings run one way; as rooms they meet
    assert sorted(circles(room_graph(graph))) == [
        ["elastic_gpu.aws/", "elastic_gpu.settings"],
        ["elastic_gpu.high", "elastic_gpu.low"],
    ]


def test_the_packages_imports_run_one_way() -> None:
    # The library and the workbench alike: each layer takes what it asks of a cloud from its own small protocol
    # (elastic_gpu/provider.py and elastic_gpu/tools/tool_cloud.py combine them at the top).
    graph = import_graph(PACKAGE)
    found = circles(graph)
    assert not found, "the package's imports run in a circle (take the type from below, or hand it in):\n" + (
        _described(found, graph)
    )


def test_the_rooms_imports_run_one_way() -> None:
    # aws/, azure/, gcp/, package/ and tools/ each count as one room: a module of a room that imports a module
    # which imports back into the room closes a circle, even if no single module does.
    rooms = room_graph(import_graph(PACKAGE))
    found = circles(rooms)
    assert not found, "the rooms' imports run in a circle:\n" + _described(found, rooms)
