"""Time preview + policy of an AWS stack with N GPU pools (default 10, 30, 100).

Not a test: prints figures so growth can be checked by eye (it should be linear).
    .venv/bin/python scripts/bench_policy.py [N ...]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

from elastic_gpu.offline.policy_run import run_policies
from elastic_gpu.offline.runner import run_preview

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


def bench(pools: int) -> tuple[int, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "stacks").mkdir()
        shutil.copy(ROOT / "Pulumi.yaml", d / "Pulumi.yaml")
        shutil.copy(ROOT / "__main__.py", d / "__main__.py")
        (d / "stacks" / "Pulumi.bench.yaml").write_text(yaml.safe_dump(stack_config(pools)))
        t0 = time.perf_counter()
        preview = run_preview("bench", d)
        t1 = time.perf_counter()
        run_policies(preview)
        t2 = time.perf_counter()
    return len(preview.resources), t1 - t0, t2 - t1


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [10, 30, 100]
    bench(1)  # imports the SDKs once, so the figures are the stacks' own
    print(f"{'pools':>5} {'resources':>9} {'preview s':>9} {'policy s':>8} {'total s':>7} {'ms/pool':>7}")
    for n in sizes:
        count, preview, policy = bench(n)
        total = preview + policy
        print(f"{n:>5} {count:>9} {preview:>9.2f} {policy:>8.2f} {total:>7.2f} {1000 * total / n:>7.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
