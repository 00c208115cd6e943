"""The installable package: import name `elastic_gpu`, built from the `elastic_gpu/` folder."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tests.conftest import PACKAGE, ROOT


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_subpackage_of_the_source_folder_is_packaged() -> None:
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(PACKAGE.parent).parts) for p in PACKAGE.rglob("__init__.py")}
    assert listed == on_disk


def test_nothing_is_installed_under_a_generic_top_level_name() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]
    assert {p.split(".")[0] for p in setuptools["packages"]} == {"elastic_gpu"}
    assert setuptools["package-dir"] == {"": "components"}  # components/ holds the package, named as imported


def test_base_install_pulls_no_cloud_sdk() -> None:
    project = _pyproject()["project"]
    base = " ".join(project["dependencies"])
    for sdk in ("pulumi-aws", "pulumi-eks", "pulumi-azure-native", "pulumi-gcp", "pulumi-policy"):
        assert sdk not in base
    extras = project["optional-dependencies"]
    assert any(d.startswith("pulumi-eks") for d in extras["aws"])
    assert any(d.startswith("pulumi-azure-native") for d in extras["azure"])
    assert any(d.startswith("pulumi-gcp") for d in extras["gcp"])


def test_version_is_defined_once() -> None:
    import elastic_gpu
    from elastic_gpu._version import __version__

    assert elastic_gpu.__version__ == __version__
    assert "version" in _pyproject()["project"]["dynamic"]


def test_every_lazy_export_is_listed_and_resolves() -> None:
    import elastic_gpu

    assert set(elastic_gpu._LAZY) <= set(elastic_gpu.__all__)
    for name in elastic_gpu.__all__:
        assert getattr(elastic_gpu, name) is not None


CLOUD_SDKS = {"pulumi_aws", "pulumi_eks", "pulumi_azure_native", "pulumi_gcp"}


def _module_file(module: str):
    path = PACKAGE / Path(*module.split(".")[1:])
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def type_checked_imports(module: str) -> set[str]:
    """The top-level packages a type checker reads for `import <module>`: every import statement of every
    elastic_gpu module it reaches, run-time, `if TYPE_CHECKING:` or inside a function (mypy and pyright
    follow them all), and the packages above each module."""
    seen: set[str] = set()
    external: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        path = _module_file(name)
        if path is None:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            for imported in names:
                if imported.split(".")[0] == "elastic_gpu":
                    todo += [imported] if _module_file(imported) else []
                else:
                    external.add(imported.split(".")[0])
    return external


def test_type_checking_the_package_reads_no_cloud_sdk() -> None:
    """`from elastic_gpu import SpotGpuPool` must not make mypy read pulumi_aws, pulumi_azure_native and
    pulumi_gcp (each is minutes and gigabytes cold); a cluster class's module reads its own cloud only."""
    assert type_checked_imports("elastic_gpu") & CLOUD_SDKS == set()
    assert "pulumi_kubernetes" in type_checked_imports("elastic_gpu")  # the walk does see third-party imports
    assert type_checked_imports("elastic_gpu.eks_cluster") & CLOUD_SDKS == {"pulumi_aws", "pulumi_eks"}
    assert type_checked_imports("elastic_gpu.aks_cluster") & CLOUD_SDKS == {"pulumi_azure_native"}
    assert type_checked_imports("elastic_gpu.gke_cluster") & CLOUD_SDKS == {"pulumi_gcp"}


#: Run `python -m elastic_gpu` with some top-level packages made unimportable, as if not installed:
#: argv[1] = comma-separated packages to block, then one command line per further argument (shell-split).
_BLOCKED_RUN = """
import importlib.abc, shlex, sys
from contextlib import redirect_stdout
from io import StringIO

blocked = set(sys.argv[1].split(","))


class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Blocker())
from elastic_gpu.__main__ import main

for line in sys.argv[2:]:
    with redirect_stdout(StringIO()):
        code = main(shlex.split(line))
    print(f"{code} {line}")
"""


def _run_blocked(blocked: set[str], *commands: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BLOCKED_RUN, ",".join(sorted(blocked)), *commands],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _import_name(requirement: str) -> str:
    return re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0].replace("-", "_")


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_each_cloud_extra_runs_every_offline_command(cloud: str) -> None:
    """`pip install 'elastic-gpu[<cloud>]'` (the README's install line) runs every offline command on that cloud's
    stack: every SDK its extra does not bring is blocked."""
    extras = _pyproject()["project"]["optional-dependencies"]
    brought = {_import_name(r) for r in extras[cloud]}
    sdks = {_import_name(r) for name, reqs in extras.items() if name != "all" for r in reqs}
    stack = f"{cloud}-dev"
    commands = [
        f"preview --stack {stack}",
        f"policy --stack {stack}",
        f"simulate --stack {stack}",
        f"cost --stack {stack} --gpu-hours 100",
        f"workload --stack {stack} --pool t4",
        f"diff --stack {stack} --base-file stacks/Pulumi.{stack}.yaml",
    ]
    run = _run_blocked(sdks - brought, *commands)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == [f"0 {c}" for c in commands], run.stderr[-3000:]


def test_a_missing_extra_is_one_line_naming_it() -> None:
    run = _run_blocked({"pulumi_policy"}, "preview --stack aws-dev", "policy --stack aws-dev")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == ["2 preview --stack aws-dev", "2 policy --stack aws-dev"]
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 2, run.stderr
    for line in lines:
        assert line.startswith("error: python -m elastic_gpu p")
        assert line.endswith(
            "needs the pulumi_policy package, which the [policy] extra installs: pip install 'elastic-gpu[policy]'"
        )
