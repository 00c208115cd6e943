"""The installable package: import name `elastic_gpu`, built from the `components/` folder."""

from __future__ import annotations

import tomllib

from tests.conftest import ROOT


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_subpackage_of_components_is_packaged_as_elastic_gpu() -> None:
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    on_disk = {
        "elastic_gpu"
        + ("." + ".".join(p.parent.relative_to(ROOT / "components").parts) if p.parent != ROOT / "components" else "")
        for p in (ROOT / "components").rglob("__init__.py")
    }
    assert listed == on_disk


def test_nothing_is_installed_under_a_generic_top_level_name() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]
    assert {p.split(".")[0] for p in setuptools["packages"]} == {"elastic_gpu"}
    assert setuptools["package-dir"] == {"elastic_gpu": "components"}


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
