"""Every offline command's output for every shipped stack, example and upstream program, one file each.

A refactoring that must not change what users see is checked by taking a snapshot before and after and
comparing the two folders byte for byte:

    python scripts/snapshot_outputs.py /tmp/before      # on the old tree
    python scripts/snapshot_outputs.py /tmp/after       # on the new tree
    diff -r /tmp/before /tmp/after

Each file holds the command line, its exit code, stdout and stderr. Commands run in subprocesses, two at a
time, from the repository root.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = ROOT / "tests" / "data" / "upstream"


def programs() -> list[tuple[str, list[str]]]:
    """(label, the arguments naming the program and its stack) of each shipped program."""
    found = [
        (f"stack-{f.name[len('Pulumi.') : -len('.yaml')]}", ["--stack", f.name[len("Pulumi.") : -len(".yaml")]])
        for f in sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))
    ]
    for folder in sorted(p for p in (ROOT / "examples").iterdir() if (p / "Pulumi.yaml").exists()):
        found.append((f"example-{folder.name}", ["--program", str(folder.relative_to(ROOT)), "--stack", "dev"]))
    for folder in sorted(p for p in UPSTREAM.iterdir() if (p / "Pulumi.yaml").exists()):
        extra = ["--program", str(folder.relative_to(ROOT)), "--stack", "dev"]
        found.append((f"upstream-{folder.name}", extra))
    return found


def commands() -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for label, where in programs():
        config = [a for a in where if a.startswith("tests/data/upstream/")]
        pack_config = Path(ROOT / config[0] / "policy-config.yaml") if config else None
        preview_config = (
            ["--policy-config", str(pack_config.relative_to(ROOT))] if pack_config and pack_config.exists() else []
        )
        gate_config = ["--config", str(pack_config.relative_to(ROOT))] if preview_config else []
        for fmt in ([], ["--json"]):
            suffix = "-json" if fmt else ""
            out.append((f"{label}.preview{suffix}", ["preview", *where, *preview_config, *fmt]))
            out.append((f"{label}.policy{suffix}", ["policy", *where, *gate_config, *fmt]))
            out.append((f"{label}.simulate{suffix}", ["simulate", *where, *fmt]))
            out.append((f"{label}.cost{suffix}", ["cost", *where, "--gpu-hours", "1000", *fmt]))
        if label.startswith("stack-") and label.endswith("-dev"):
            prod = f"stacks/Pulumi.{label[len('stack-') : -len('-dev')]}-prod.yaml"
            if (ROOT / prod).exists():
                out.append((f"{label}.diff-from-prod", ["diff", *where, "--base-file", prod]))
    return out


def run(target: Path, label: str, args: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "components")}  # this tree's package, installed or not
    done = subprocess.run(
        [sys.executable, "-m", "elastic_gpu", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    head = f"$ python -m elastic_gpu {' '.join(args)}\nexit {done.returncode}\n"
    text = f"{head}--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
    (target / f"{label}.txt").write_text(text)


def main() -> None:
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    todo = commands()
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda c: run(target, *c), todo))
    print(f"{len(todo)} outputs in {target}")


if __name__ == "__main__":
    main()
