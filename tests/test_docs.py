"""Every command and code block of README.md and docs/*.md is run or checked here (or by the test named for it),
every relative link resolves, and the README is the front page the docs promise: install, then the user's own
program on each cloud, then the shipped stacks, the stack file and the commands.

Block kinds:
- Python: the README's per-cloud lines are appended to Pulumi's own templates (tests/data/upstream's copies without
  their GPU lines, with the published Pulumi.yaml of tests/data/docs/templates) and
  run offline through the policy gate; the other programs are run by
  tests/test_examples.py, which this file checks by comparing their text.
- Shell: `python -m elastic_gpu ...` lines run (once each), `make` lines are checked against the Makefile and
  run as the command their recipe runs, `pip install` and requirement lines against pyproject's extras, and
  commands of other tools against the table of those the docs may use.
- YAML: stack files and stack-file fragments are validated against schema/stack.schema.json; the component
  package example, the workload examples and the schema modeline are the other tests' (named below).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from dataclasses import dataclass
from functools import cache
from itertools import product
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from elastic_gpu.__main__ import main
from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.report import to_json
from elastic_gpu.tools.offline.runner import Preview, run_preview
from elastic_gpu.tools.reference_tables import Table, settings_table
from elastic_gpu.tools.reference_tables import section as table_section
from elastic_gpu.tools.reference_tables import tables as reference_tables
from elastic_gpu.workload import README_BEGIN as WORKLOAD_BEGIN
from elastic_gpu.workload import README_END as WORKLOAD_END
from tests.conftest import UPSTREAM
from tests.docs_pages import DOCS, ROOT, all_pages, page

TEMPLATES = ROOT / "tests" / "data" / "docs" / "templates"
MARKER = re.compile(r"<!-- docs-test: (.+?) -->\n$")


@dataclass(frozen=True)
class Block:
    path: Path
    lang: str
    text: str
    marker: str | None  # the `<!-- docs-test: ... -->` line right above the fence, if any
    start: int  # offset of the fence in the page

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)} ```{self.lang} at {self.start}"


@cache
def blocks() -> tuple[Block, ...]:
    out = []
    for path, text in all_pages().items():
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.M | re.S):
            before = text[: m.start()]
            marker = MARKER.search(before[-200:])
            out.append(Block(path, m.group(1), m.group(2), marker.group(1) if marker else None, m.start()))
    return tuple(out)


def of_lang(*langs: str) -> list[Block]:
    return [b for b in blocks() if b.lang in langs]


def marked(marker: str) -> Block:
    [block] = [b for b in blocks() if b.marker == marker]
    return block


# --- the front page ------------------------------------------------------------------------------------------


def test_the_readme_is_a_front_page_that_starts_with_install_then_your_program() -> None:
    readme = page("README.md")
    assert len(readme.splitlines()) <= 320, "README.md is the front page: move detail into docs/"
    sections = re.findall(r"^## (.+)$", readme, re.M)
    assert sections == [
        "Two commands (a fresh machine with Python 3.10+ and make)",
        "Install into your program",
        "Add GPU pools to the cluster your program already declares",
        "The shipped stacks",
        "The stack file",
        "The commands",
    ]
    your_program = readme.index("## Add GPU pools to the cluster your program already declares")
    assert [readme.index(f"### {cloud} (", your_program) for cloud in ("EKS", "AKS", "GKE")] == sorted(
        readme.index(f"### {cloud} (", your_program) for cloud in ("EKS", "AKS", "GKE")
    )
    # the handles the library really has, each named where the user looks first
    for handle in (
        "EksCluster.from_pulumi_eks",
        "EksCluster.from_cluster",
        "AksCluster.from_managed_cluster",
        "GkeCluster.from_cluster",
    ):
        cls, method = handle.split(".")
        module = {"Eks": "eks_cluster", "Aks": "aks_cluster", "Gke": "gke_cluster"}[cls[:3]]
        imported = __import__(f"elastic_gpu.{module}", fromlist=[cls])
        assert callable(getattr(getattr(imported, cls), method)), handle
        assert handle in readme[your_program : readme.index("## The shipped stacks")], handle


def test_the_readme_links_every_docs_page() -> None:
    readme = page("README.md")
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)", readme))
    assert linked == {p.name for p in DOCS.glob("*.md")}


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lowercase, punctuation but `-` and `_` dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(text: str) -> set[str]:
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S), re.M)}


def test_relative_links_resolve() -> None:
    problems = []
    for path, text in all_pages().items():
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            if not dest.exists():
                problems.append(f"{path.name}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text(encoding="utf-8")):
                problems.append(f"{path.name}: {target}: no such heading")
    assert problems == []


def test_the_slug_is_githubs() -> None:
    """The anchors the pages link to, as GitHub renders them (checked by hand on these headings)."""
    assert _slug("Two commands (a fresh machine with Python 3.10+ and make)") == (
        "two-commands-a-fresh-machine-with-python-310-and-make"
    )
    assert _slug("Your own program: `--program` and `offline_mocks.py`") == (
        "your-own-program---program-and-offline_mockspy"
    )


# --- Python blocks -----------------------------------------------------------------------------------------


#: Where the published template's program stops in its copy under tests/data/upstream, and that copy's own GPU
#: lines begin (tests/data/upstream/SOURCE.md).
UPSTREAM_GPU_LINES = "\n# --- elastic-gpu: the lines a user adds"


def template_source(template: str) -> str:
    """The template's `__main__.py` as published: the one copy, tests/data/upstream's, without its GPU lines."""
    text = (UPSTREAM / template / "__main__.py").read_text()
    assert UPSTREAM_GPU_LINES in text, template
    return text[: text.index(UPSTREAM_GPU_LINES)].rstrip("\n") + "\n"


def _template_program(tmp_path: Path, template: str, config: dict[str, Any], lines: str, mocks: str | None) -> Path:
    """Pulumi's template as `pulumi new` writes it (its published Pulumi.yaml, tests/data/docs/templates; its program
    and requirements, tests/data/upstream's copy without that copy's GPU lines), the README's lines appended, and a
    `dev` stack file."""
    program = tmp_path / template
    program.mkdir(parents=True)
    project = TEMPLATES / template / "Pulumi.yaml"
    (program / "Pulumi.yaml").write_text(
        project.read_text().replace("${PROJECT}", "tpl").replace("${DESCRIPTION}", "a template")
    )
    shutil.copy(UPSTREAM / template / "requirements.txt", program / "requirements.txt")
    (program / "__main__.py").write_text(
        template_source(template) + "\n# --- elastic-gpu: the lines the README shows ---\n" + lines
    )
    (program / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    if mocks is not None:
        (program / "offline_mocks.py").write_text(mocks)
    return program


#: The stack config each template runs with: its own defaults (Pulumi.yaml's `template.config`), and for AKS
#: the two values it requires and the minor the README says to set (its default, 1.33, is past end of life).
TEMPLATE_CONFIG: dict[str, dict[str, Any]] = {
    "kubernetes-aws-python": {"aws:region": "us-west-2"},
    "kubernetes-azure-python": {
        "azure-native:location": "westus2",
        "tpl:mgmtGroupId": "00000000-0000-0000-0000-000000000000",
        "tpl:sshPubKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample user@example",
        "tpl:kubernetesVersion": "1.35",
    },
    "kubernetes-gcp-python": {"gcp:project": "my-project"},
}

#: What each template's GPU pool declares: its pool resource type and the pool name the README uses.
TEMPLATE_POOLS = {
    "kubernetes-aws-python": ("aws:eks/nodeGroup:NodeGroup", "l4"),
    "kubernetes-azure-python": ("azure-native:containerservice:AgentPool", "t4"),
    "kubernetes-gcp-python": ("gcp:container/nodePool:NodePool", "l4"),
}


def _pool_label(inputs: dict[str, Any]) -> str | None:
    labels = inputs.get("labels") or inputs.get("nodeLabels") or (inputs.get("nodeConfig") or {}).get("labels") or {}
    return labels.get("elastic-gpu.io/pool")


def _run_template(tmp_path: Path, template: str, config: dict[str, Any] | None = None) -> Preview:
    lines = marked(f"lines for {template}").text
    program = _template_program(
        tmp_path,
        template,
        TEMPLATE_CONFIG[template] if config is None else config,
        lines,
        None,
    )
    return run_preview("dev", program)


@pytest.mark.parametrize("template", sorted(TEMPLATE_CONFIG))
def test_the_readme_lines_run_on_pulumis_template_and_pass_the_gate(tmp_path: Path, template: str) -> None:
    preview = _run_template(tmp_path, template)
    pool_type, pool = TEMPLATE_POOLS[template]
    labelled = {_pool_label(r.inputs) for r in preview.of_type(pool_type)}
    assert pool in labelled, labelled
    assert run_policies(preview).mandatory == []
    # the GPU pool is priced in the template's region (docs/cost.md: the programs in these docs are covered; the
    # templates' own CPU pools are theirs)
    rows = [row for row in to_json(preview)["cost"]["pools"] if row["pool"] == pool]
    assert len(rows) >= 2 and all(row["missing"] == [] for row in rows), rows


def test_the_aks_agent_pool_names_the_readme_shows_are_the_ones_declared(tmp_path: Path) -> None:
    preview = _run_template(tmp_path, "kubernetes-azure-python")
    names = {r.inputs["agentPoolName"] for r in preview.of_type("azure-native:containerservice:AgentPool")}
    readme = page("README.md")
    shown = set(re.findall(r"`(t4[so][0-9a-f]{6})`", readme))
    assert shown == {n for n in names if n.startswith("t4")}, (shown, names)
    # and what the AKS page says a name is made of
    for name in shown:
        assert len(name) <= 12 and re.fullmatch(r"[a-z][a-z0-9]{0,11}", name)
    assert "aks-t4s63bf57-" in page("azure.md") and "t4s63bf57" in names


def test_the_aks_template_previews_without_a_mock_of_its_own(tmp_path: Path) -> None:
    """The template's own admin-credentials invoke is answered as AKS answers it (local accounts on): the README
    shows no offline_mocks.py; without the README's `entra_login` the device-code kubeconfig is a finding."""
    assert not [b for b in blocks() if (b.marker or "").startswith("offline_mocks for")]
    preview = _run_template(tmp_path, "kubernetes-azure-python")
    assert not [w for w in preview.warnings if "waits for a person to sign in" in w]
    lines = marked("lines for kubernetes-azure-python").text.replace(' entra_login="azurecli",', "")
    program = _template_program(
        tmp_path / "without", "kubernetes-azure-python", TEMPLATE_CONFIG["kubernetes-azure-python"], lines, None
    )
    assert [w for w in run_preview("dev", program).warnings if "waits for a person to sign in" in w]


def test_the_aks_templates_default_minor_fails_the_gate_as_the_readme_says(tmp_path: Path) -> None:
    config = {k: v for k, v in TEMPLATE_CONFIG["kubernetes-azure-python"].items() if k != "tpl:kubernetesVersion"}
    preview = _run_template(tmp_path, "kubernetes-azure-python", config=config)
    assert [v.policy for v in run_policies(preview).mandatory] == ["kubernetes-version-not-end-of-life"]
    assert "`pulumi config set kubernetesVersion 1.35`" in page("README.md")
    project = yaml.safe_load((TEMPLATES / "kubernetes-azure-python" / "Pulumi.yaml").read_text())
    assert project["template"]["config"]["kubernetesVersion"]["default"] == "1.33"


def test_every_python_block_is_run() -> None:
    """Each Python block is run here (marked) or is, verbatim, a program another test runs."""
    from tests.test_examples import LIBRARY_PROGRAMS, README_PROGRAMS, _readme_block

    elsewhere = {_readme_block(LIBRARY_PROGRAMS, i) for i in range(len(README_PROGRAMS))}
    elsewhere.add(_readme_block("# A cluster you already have", name="existing-clusters.md"))  # test_examples
    unrun = []
    for block in of_lang("python"):
        if block.marker is not None:
            kind, _, template = block.marker.partition(" for ")
            assert kind in ("lines", "offline_mocks") and (TEMPLATES / template).is_dir(), block.marker
        elif block.text not in elsewhere:
            unrun.append(str(block))
    assert unrun == []
    assert {b.marker for b in of_lang("python") if b.marker and b.marker.startswith("lines for ")} == {
        f"lines for {t}" for t in TEMPLATE_CONFIG
    }


# --- shell blocks ------------------------------------------------------------------------------------------


def _commands() -> list[tuple[Block, str, str]]:
    """(block, command, its comment) for each command of every sh block (`a && b` is two)."""
    out = []
    for block in of_lang("sh"):
        for line in block.text.splitlines():
            parts = re.split(r"\s+#\s", line, maxsplit=1)
            command, comment = parts[0].strip(), (parts[1].strip() if len(parts) > 1 else "")
            for one in command.split(" && "):
                if one.strip():
                    out.append((block, one.strip(), comment))
    return out


@cache
def _makefile() -> dict[str, Any]:
    """Targets (with prerequisites and recipe lines) and variables with their defaults."""
    text = (ROOT / "Makefile").read_text()
    variables = dict(re.findall(r"^(\w+) \?= (.*)$", text, re.M))
    targets: dict[str, dict[str, Any]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^([\w$().-]+):(?!=)\s*([^#]*)", line)
        if m:
            current = m.group(1)
            targets[current] = {"prereqs": m.group(2).split(), "recipe": []}
        elif line.startswith("\t") and current:
            targets[current]["recipe"].append(line.strip())
    return {"vars": variables, "targets": targets}


def _make_to_cli(command: str) -> list[list[str]]:
    """The `python -m elastic_gpu` commands a `make` line runs, its variables filled in."""
    words = shlex.split(command)[1:]
    target = next((w for w in words if "=" not in w), None) or "install"
    make = _makefile()
    assert target in make["targets"], f"{command}: no target {target!r} in the Makefile"
    given = dict(w.split("=", 1) for w in words if "=" in w)
    for var in given:
        assert var in make["vars"], f"{command}: the Makefile has no variable {var}"
    values = {**make["vars"], **given}
    out = []
    for recipe in make["targets"][target]["recipe"]:
        if "-m elastic_gpu " in recipe:
            cli = re.sub(r"\$\((\w+)\)", lambda m: values[m.group(1)], recipe.split("-m elastic_gpu ", 1)[1])
            out.append(shlex.split(cli))
    return out


#: What the front door's `make` lines claim, checked against their recipes: the tool each one runs.
MAKE_CLAIMS = {"test": "-m pytest", "lint": "ruff check", "typecheck": "-m mypy"}


def test_make_lines_name_real_targets_and_do_what_they_say() -> None:
    make = _makefile()
    seen = set()
    for block, command, comment in _commands():
        if not command.startswith("make"):
            continue
        clis = _make_to_cli(command)
        target = next((w for w in shlex.split(command)[1:] if "=" not in w), "install")
        seen.add(target)
        if target in MAKE_CLAIMS:
            assert any(MAKE_CLAIMS[target] in r for r in make["targets"][target]["recipe"]), command
        else:
            assert clis, f"{block}: {command} runs no elastic_gpu command"
        if "creates .venv, installs the pins" in comment:  # the front door
            stamp = make["targets"][target]["prereqs"]
            assert stamp == ["$(STAMP)"], stamp
            recipe = " ".join(make["targets"]["$(STAMP)"]["recipe"])
            assert "-m venv" in recipe and "-r requirements-dev.txt" in recipe
            assert "previews stack aws-dev" in comment and clis == [["preview", "--stack", "aws-dev"]]
        if "same set-up, then the whole test suite" in comment:
            assert make["targets"][target]["prereqs"] == ["$(STAMP)"]
    assert {"preview", "test", "cost"} <= seen
    # the make targets the prose names exist too
    for text in all_pages().values():
        for target in re.findall(r"`make ([\w-]+)", text):
            assert target in make["targets"], target


#: Commands the docs run against a checkout that may differ from the reader's, and why.
SUBSTITUTE = {
    # a CI checkout may have no `main` branch: the diff runs against the commit under test
    "--base main": "--base HEAD",
    # the reader's old stack file: this stack's own file stands for it
    "--base-file old.yaml": "--base-file stacks/Pulumi.aws-prod.yaml",
}
#: Exit codes other than 0 that a documented command gives, with the doc's reason.
EXPECTED_EXIT: dict[str, int] = {}


def _cli_commands() -> list[str]:
    out = []
    for _, command, _ in _commands():
        if command.startswith("python -m elastic_gpu "):
            cli = command.removeprefix("python -m elastic_gpu ")
        elif command.startswith("make"):
            out += [" ".join(c) for c in _make_to_cli(command)]
            continue
        else:
            continue
        for old, new in SUBSTITUTE.items():
            cli = cli.replace(old, new)
        out.append(cli)
    return sorted(set(out))


def test_the_commands_are_few_enough_to_run() -> None:
    """Each documented elastic_gpu command runs once per suite; keep it a few dozen."""
    assert 5 <= len(_cli_commands()) <= 30


@pytest.mark.parametrize("cli", _cli_commands())
def test_each_documented_command_runs(cli: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(shlex.split(cli))
    out, err = capsys.readouterr()
    assert code == EXPECTED_EXIT.get(cli, 0), f"{cli}: exit {code}\n{err[-3000:]}"
    assert out.strip(), cli


def _extras() -> dict[str, list[str]]:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def test_pip_and_requirement_lines_name_real_extras() -> None:
    extras = _extras()
    named = []
    for _, command, _comment in _commands():
        if command.startswith("pip install"):
            for spec in shlex.split(command)[2:]:
                named += re.findall(r"\[([\w,]+)\]", spec)
    for block in of_lang("text"):
        for line in block.text.splitlines():
            requirement, _, comment = line.partition("#")
            if not requirement.strip():
                continue
            req = Requirement(requirement.strip())
            assert req.name == "elastic-gpu", line
            named += list(req.extras)
            for sdk in re.findall(r"brings ((?:pulumi-[\w-]+(?: and )?)+)", comment):
                for name in sdk.split(" and "):
                    assert any(Requirement(r).name == name for e in req.extras for r in extras[e]), (line, name)
    for text in all_pages().values():
        named += re.findall(r"elastic-gpu\[(\w+)\]", text)
    flat = {e for group in named for e in group.split(",")}
    assert flat and flat <= set(extras), flat - set(extras)


#: Commands of other tools the docs may show, with what the test can check of each, and the tool's docs.
EXTERNAL = {
    "pulumi login": "https://www.pulumi.com/docs/iac/cli/commands/pulumi_login/",
    "pulumi stack select": "https://www.pulumi.com/docs/iac/cli/commands/pulumi_stack_select/",
    "pulumi preview": "https://www.pulumi.com/docs/iac/cli/commands/pulumi_preview/",
    "pulumi up": "https://www.pulumi.com/docs/iac/cli/commands/pulumi_up/",
    "pulumi stack output": "https://www.pulumi.com/docs/iac/cli/commands/pulumi_stack_output/",
    "pulumi package add": "https://www.pulumi.com/docs/iac/cli/commands/pulumi_package_add/",
    "az login": "https://learn.microsoft.com/cli/azure/reference-index#az-login",
    "gcloud auth application-default login": "https://cloud.google.com/sdk/gcloud/reference/auth/application-default/login",
    "gcloud components install": "https://cloud.google.com/sdk/gcloud/reference/components/install",
    "kubectl get": "https://kubernetes.io/docs/reference/kubectl/generated/kubectl_get/",
}


def test_other_tools_commands_are_known_and_name_what_exists() -> None:
    outputs = run_preview("aws-dev", ROOT).outputs
    for block, command, _ in _commands():
        if command.startswith(("python -m elastic_gpu ", "make", "pip install")):
            continue
        words = [w for w in shlex.split(command) if "=" not in w.split("/")[0] or w.startswith("-")]
        known = [c for c in EXTERNAL if words[: len(c.split())] == c.split()]
        assert known, f"{block}: {command}: not a command the docs may show (EXTERNAL)"
        if command.startswith("pulumi stack select"):
            assert (ROOT / "stacks" / f"Pulumi.{words[3]}.yaml").exists(), command
        if command.startswith("pulumi stack output"):
            assert words[3] in outputs, command
        if "--policy-pack" in words:
            assert (ROOT / words[words.index("--policy-pack") + 1] / "PulumiPolicy.yaml").exists()
        if command.startswith("pulumi package add"):
            [folder] = re.findall(r"/(\w+)$", command)  # `<path to this repository>/provider`
            assert (ROOT / folder / "PulumiPlugin.yaml").exists()


# --- YAML and JSON blocks ----------------------------------------------------------------------------------


@cache
def _stack_schema() -> dict[str, Any]:
    return json.loads((ROOT / "schema" / "stack.schema.json").read_text())


def _yaml_kind(block: Block) -> str:
    text = page("README.md") if block.path.name == "README.md" else block.path.read_text()
    begin, end = text.find(WORKLOAD_BEGIN), text.find(WORKLOAD_END)
    if begin != -1 and begin < block.start < end:
        return "workload"  # generated from the pools' contracts: tests/test_simulation.py compares them
    if block.text.startswith("# yaml-language-server:"):
        return "modeline"  # tests/test_stack_schema.py loads a stack file with it
    if "resources" in (yaml.safe_load(block.text) or {}):
        return "package"  # tests/test_package_examples.py compares it with examples/package/yaml-eks
    return "stack"


def _stack_errors(data: dict[str, Any]) -> list[str]:
    """Schema errors of a stack file, or of a fragment of one (`required` keys of its top-level values aside)."""
    schema = _stack_schema()
    if "config" in data:
        return [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(data)]
    config_schema = schema["properties"]["config"]
    errors = []
    for key, value in data.items():
        sub = {**config_schema["properties"][key], "definitions": schema["definitions"]}
        for e in jsonschema.Draft7Validator(sub).iter_errors(value):
            if not (e.validator == "required" and not e.absolute_path):
                errors.append(f"{key}: {e.message}")
    return errors


def test_stack_file_blocks_validate_against_the_schema() -> None:
    kinds = {}
    for block in of_lang("yaml"):
        kind = _yaml_kind(block)
        kinds[str(block)] = kind
        if kind == "stack":
            data = yaml.safe_load(block.text)
            assert _stack_errors(data) == [], block
    assert "stack" in kinds.values() and "workload" in kinds.values()


def test_the_schema_check_catches_a_misspelt_key() -> None:
    data = yaml.safe_load(marked("stack file").text)
    data["config"]["elastic-gpu:gpuPools"][0]["maxSise"] = 4
    assert _stack_errors(data)
    assert _stack_errors({"elastic-gpu:prices": {"g5.xlarge": {"spott": 0.4}}})


def test_the_readme_stack_file_previews(program_dir: Any) -> None:
    config = yaml.safe_load(marked("stack file").text)["config"]
    preview = run_preview("test", program_dir(config))
    assert {_pool_label(r.inputs) for r in preview.of_type("aws:eks/nodeGroup:NodeGroup")} == {"general", "t4"}


def test_the_reserved_capacity_stack_file_previews_its_tier_first(program_dir: Any) -> None:
    """docs/reserved-capacity.md's stack file: Karpenter's reserved NodePool at the top weight, then spot."""
    config = yaml.safe_load(marked("reserved stack file").text)["config"]
    preview = run_preview("test", program_dir(config))
    pools = {
        r.inputs["metadata"]["name"]: r.inputs["spec"] for r in preview.of_type("kubernetes:karpenter.sh/v1:NodePool")
    }
    reserved, spot = pools["inference-reserved"], pools["inference-spot"]
    assert reserved["weight"] > spot["weight"] and reserved["limits"]["nodes"] == "2"
    node_class = preview.one("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "inference-nodeclass").inputs["spec"]
    assert node_class["capacityReservationSelectorTerms"] == [{"id": "cr-0a1b2c3d4e5f60001"}]


def test_json_blocks_parse() -> None:
    for block in of_lang("json"):
        json.loads(block.text)  # the editor settings: tests/test_stack_schema.py checks what they name


def test_every_block_has_a_checked_kind() -> None:
    assert {b.lang for b in blocks()} <= {"python", "sh", "yaml", "json", "text"}


# --- the compatibility table -------------------------------------------------------------------------------


def _versions() -> list[Version]:
    return [Version(f"{a}.{b}.{c}") for a, b, c in product(range(13), range(0, 300, 1), (0, 1))]


def _overlap(a: SpecifierSet, b: SpecifierSet) -> bool:
    """Some release satisfies both (over every x.y.0 and x.y.1 up to 12.299)."""
    return any(v in a and v in b for v in _versions())


def _pins(path: Path) -> dict[str, SpecifierSet]:
    reqs = [Requirement(line) for line in path.read_text().splitlines() if line.strip() and line[0] != "#"]
    return {r.name: r.specifier for r in reqs}


def _needs(extra: str) -> dict[str, SpecifierSet]:
    reqs = [Requirement(r) for r in _extras()[extra]]
    return {r.name: r.specifier for r in reqs}


def _table() -> dict[str, list[str]]:
    readme = page("README.md")
    start = readme.index("| Extra | Needs |")
    rows = readme[start:].split("\n\n", 1)[0].splitlines()[2:]
    return {row.split("|")[1].strip().strip("`"): [c.strip() for c in row.split("|")[2:-1]] for row in rows}


def test_the_compatibility_table_is_pyproject_and_the_pins() -> None:
    table = _table()
    import tomllib

    base = [Requirement(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    pins = {Requirement(line).name: str(Requirement(line).specifier)[2:] for line in
            (ROOT / "requirements.txt").read_text().splitlines() if line.strip() and line[0] != "#"}  # fmt: skip
    for extra in ("aws", "azure", "gcp"):
        needs, pinned = table[extra][0], table[extra][1]
        sdks = [r for r in (Requirement(x) for x in _extras()[extra]) if r.name != "pulumi-policy"]
        shown = [Requirement(x) for x in re.findall(r"`([^`]+)`", needs)]
        assert [(r.name, r.specifier) for r in shown] == [(r.name, r.specifier) for r in sdks], extra
        assert pinned == ", ".join(pins[r.name] for r in sdks)
    everyone = re.findall(r"`([^`]+)`", table["every extra"][0])
    policy = Requirement(_extras()["policy"][0])
    shown = {Requirement(x).name: Requirement(x).specifier for x in everyone}
    assert shown == {
        **{r.name: r.specifier for r in base if r.name in ("pulumi", "pulumi-kubernetes")},
        policy.name: policy.specifier,
    }


def _spec(text: str) -> SpecifierSet:
    return SpecifierSet(text)


def test_the_aws_template_conflicts_with_the_aws_extra_and_the_changed_line_fits() -> None:
    cell = _table()["aws"][2]
    [pinned, changed] = re.findall(r"`pulumi-eks([^`]+)`", cell)
    template = _pins(UPSTREAM / "kubernetes-aws-python" / "requirements.txt")
    assert template["pulumi-eks"] == _spec(pinned)  # the line the README quotes is the template's
    assert "ResolutionImpossible" in cell
    needs = _needs("aws")
    assert not _overlap(template["pulumi-eks"], needs["pulumi-eks"])
    assert _overlap(_spec(changed), needs["pulumi-eks"]) and _spec(changed).contains("4.4.0")


@pytest.mark.parametrize("cloud", ["azure", "gcp"])
def test_the_other_templates_fit_their_extra(cloud: str) -> None:
    assert _table()[cloud][2] == f"`kubernetes-{cloud}-python` fits"
    template = _pins(UPSTREAM / f"kubernetes-{cloud}-python" / "requirements.txt")
    needs = _needs(cloud)
    shared = set(template) & set(needs)
    assert shared and all(_overlap(template[n], needs[n]) for n in shared)


def test_the_examples_column_says_which_upstream_programs_conflict() -> None:
    table = _table()
    claims = {
        "aws-py-eks": ("aws", True),
        "managed-nodegroups-py": ("aws", True),
        "azure-py-aks": ("azure", False),
        "azure-py-aks-managed-identity": ("azure", False),
        "azure-py-aks-multicluster": ("azure", False),
        "gcp-py-gke": ("gcp", False),
    }
    for program, (extra, fits) in claims.items():
        pins = _pins(UPSTREAM / program / "requirements.txt")
        needs = _needs(extra)
        assert all(_overlap(pins[n], needs[n]) for n in set(pins) & set(needs)) is fits, program
    assert "`azure-py-aks*` pin `pulumi-azure-native" in table["azure"][3]
    changed = SpecifierSet(re.findall(r"change it to `([^`]+)`", table["azure"][3])[0])
    assert all(changed.contains(v) for v in ("3.0.0", "3.29.0")) and not changed.contains("2.90.0")
    changed = SpecifierSet(re.findall(r"change it to `([^`]+)`", table["gcp"][3])[0])
    assert _overlap(changed, _needs("gcp")["pulumi-gcp"]) and changed.contains("10.2.0")


def test_every_template_fits_the_base_requirements() -> None:
    """The "every extra" row: each template's own pins (pulumi, and pulumi-kubernetes where it names it) meet
    the base install's and pulumi-policy's ranges, and the one example that pins pulumi-kubernetes does too."""
    assert _table()["every extra"][2] == "fits"
    import tomllib

    base = {
        r.name: r.specifier
        for r in (
            Requirement(x) for x in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
        )
    }
    for template in TEMPLATE_CONFIG:
        pins = _pins(UPSTREAM / template / "requirements.txt")
        assert "pulumi" in pins and all(_overlap(pins[n], base[n]) for n in set(pins) & set(base)), template
    gke = _pins(UPSTREAM / "gcp-py-gke" / "requirements.txt")
    [shown] = re.findall(r"`pulumi-kubernetes([^`]+)`", _table()["every extra"][3])
    assert SpecifierSet(shown) == gke["pulumi-kubernetes"]
    assert _overlap(gke["pulumi-kubernetes"], base["pulumi-kubernetes"])


# --- the generated reference tables ------------------------------------------------------------------------


@pytest.mark.parametrize("table", reference_tables(), ids=lambda t: t.name)
def test_each_reference_table_is_what_its_facts_give(table: Table) -> None:
    """The settings, policy rules, replace, inline-pool and support tables are generated: `python -m elastic_gpu
    tables` rewrites a stale one."""
    text = (ROOT / table.page).read_text()
    assert table_section(text, table) == table.text(), f"{table.page}: run `python -m elastic_gpu tables`"


def _pages_copy(tmp_path: Path) -> Path:
    for table in reference_tables():
        (tmp_path / table.page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / table.page, tmp_path / table.page)
    return tmp_path


def test_the_tables_command_finds_a_stale_table_and_writes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _pages_copy(tmp_path)
    day_two = root / "docs" / "day-two.md"
    shipped = day_two.read_text()
    # a replace row edited by hand (a field dropped) is stale
    day_two.write_text(shipped.replace("`nodeRoleArn`, ", "", 1))
    assert main(["tables", "--check", "--root", str(root)]) == 1
    assert "stale: docs/day-two.md: the replacements table" in capsys.readouterr().out
    assert day_two.read_text() != shipped  # --check writes nothing
    assert main(["tables", "--root", str(root)]) == 0
    assert day_two.read_text() == shipped
    assert main(["tables", "--check", "--root", str(root)]) == 0
    # only the tables are touched: the prose around them stays as written
    assert "written" in capsys.readouterr().out


def test_the_tables_command_names_a_page_without_its_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _pages_copy(tmp_path)
    settings = next(t for t in reference_tables() if t.name == "settings")
    page_path = root / settings.page
    page_path.write_text(page_path.read_text().replace(settings.end, ""))
    assert main(["tables", "--root", str(root)]) == 2
    assert "docs/stack-config.md: the settings table's markers are missing" in capsys.readouterr().out


def test_the_settings_table_says_which_cloud_a_key_is_for() -> None:
    from elastic_gpu.settings.azure import AzureGpuPoolOptions

    table = settings_table()
    row = next(line for line in table.splitlines() if line.startswith("| `gpuPools[].spotMaxPrice`"))
    assert "| azure |" in row and AzureGpuPoolOptions.model_fields["spot_max_price"].description.split()[0] in row
    assert "| `gpuPools[].maxSize` | required | all |" in table
