"""elastic-gpu: one stack = one cluster with elastic spot GPU pools (config in stacks/)."""

from elastic_gpu.program import main

main()
