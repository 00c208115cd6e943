"""elastic-gpu: one stack = one cluster with elastic spot GPU pools (config in stacks/)."""

from components.program import main

main()
