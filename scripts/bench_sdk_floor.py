"""The floor under `bench_policy.py`'s preview figure: the same resources, declared without elastic-gpu.

`sdk_floor/` is a bare Pulumi program that declares, for N pools, what the benchmark's stack declares for its
GPU pools (a component, and per node group a launch template and a managed node group with the same inputs
and dependencies) and a few base resources. It runs through the same offline runner (`run_preview`: the
mock engine, the runner's capture, its pause of the cyclic garbage collector). No library code and no policy
runs, so its CPU seconds are what the Pulumi SDK costs to register those resources: no gate built on the SDK's
mock engine can preview and judge such a stack in less.
    .venv/bin/python scripts/bench_sdk_floor.py [N ...]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from elastic_gpu.tools.offline.runner import run_preview

PROGRAM = Path(__file__).resolve().parent / "sdk_floor"


def floor(pools: int) -> tuple[int, float]:
    """The resources the bare program declares for `pools` pools, and its preview's CPU seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name in ("Pulumi.yaml", "__main__.py"):
            shutil.copy(PROGRAM / name, d / name)
        (d / "Pulumi.floor.yaml").write_text(f"config:\n  floor:pools: {pools}\n  aws:region: us-east-1\n")
        c0 = time.process_time()
        preview = run_preview("floor", d)
        return len(preview.resources), time.process_time() - c0


def main(argv: list[str]) -> None:
    if argv[:1] == ["--one"]:
        floor(1)  # imports the SDK once, so the figures are the program's own
        count, cpu = floor(int(argv[1]))
        print(f"{argv[1]:>9} {count:>9} {cpu:>9.2f} {1000 * cpu / int(argv[1]):>12.0f}")
        return
    sizes = [int(a) for a in argv] or [100, 200]
    print(f"{'pools':>9} {'resources':>9} {'cpu s':>9} {'cpu ms/pool':>12}", flush=True)
    for n in sizes:  # each size in a process of its own, as bench_policy.py runs them
        subprocess.run([sys.executable, __file__, "--one", str(n)], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
