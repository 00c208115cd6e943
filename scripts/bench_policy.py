"""Time preview + policy of an AWS stack with N GPU pools (default 10, 30, 100, 200).

Not a test: prints figures so growth can be checked by eye (it should be linear). Each size runs in a process of
its own. Wall-clock seconds depend on what else the machine runs; the CPU seconds (the process's user + system
time, all threads) do not, so compare those.
    .venv/bin/python scripts/bench_policy.py [N ...]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from elastic_gpu.tools.offline.policy_run import run_policies
from elastic_gpu.tools.offline.runner import run_preview

ROOT = Path(__file__).resolve().parent.parent
GPU_TYPES = [["g4dn.xlarge"], ["g5.xlarge"], ["g6.xlarge"]]


def stack_config(pools: int) -> dict:
    base = yaml.safe_load((ROOT / "stacks" / "Pulumi.aws-prod.yaml").read_text())["config"]
    base["elastic-gpu:gpuPools"] = [
        {
            "name": f"pool-{i}",
            "instanceTypes": GPU_TYPES[i % len(GPU_TYPES)],
            "maxSize": 6,
            "onDemandFallback": i % 2 == 0,
        }
        for i in range(pools)
    ]
    base["elastic-gpu:autoscaler"]["expander"] = ["priority", "least-waste"]
    return {"config": base}


def bench(pools: int) -> tuple[int, float, float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "stacks").mkdir()
        shutil.copy(ROOT / "Pulumi.yaml", d / "Pulumi.yaml")
        shutil.copy(ROOT / "__main__.py", d / "__main__.py")
        (d / "stacks" / "Pulumi.bench.yaml").write_text(yaml.safe_dump(stack_config(pools)))
        t0, c0 = time.perf_counter(), time.process_time()
        preview = run_preview("bench", d)
        t1, c1 = time.perf_counter(), time.process_time()
        run_policies(preview)
        t2, c2 = time.perf_counter(), time.process_time()
    return len(preview.resources), t1 - t0, t2 - t1, c1 - c0, c2 - c1


def row(pools: int) -> str:
    """One size's figures, in this process: the SDKs imported first (a 1-pool stack), so they are the stack's own."""
    bench(1)
    count, preview, policy, cpu_preview, cpu_policy = bench(pools)
    cpu = cpu_preview + cpu_policy
    figures = (preview, policy, preview + policy, cpu_preview, cpu_policy, cpu)
    return f"{pools:>9} {count:>9} " + " ".join(f"{x:>9.2f}" for x in figures) + f" {1000 * cpu / pools:>9.0f}"


def main(argv: list[str]) -> None:
    if argv[:1] == ["--one"]:
        print(row(int(argv[1])))
        return
    sizes = [int(a) for a in argv] or [10, 30, 100, 200]
    head = ("pools", "resources", "preview s", "policy s", "total s", "cpu prev", "cpu pol", "cpu tot", "cpu ms/pool")
    print(" ".join(f"{h:>9}" for h in head), flush=True)
    for n in sizes:
        # Each size in a new process, as `pulumi preview` and the CLI run: nothing one size read or cached
        # (the policies' per-URN answers, the SDK's) is there for the next.
        subprocess.run([sys.executable, __file__, "--one", str(n)], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
