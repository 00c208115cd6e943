"""Offline scale-up simulation over a stack's captured resources (`python -m elastic_gpu simulate`).

`templates` builds each node group's scale-from-zero node as its cloud's autoscaler does, `fit`
is the scheduler's filter, `expanders` the autoscaler's choice, `timings` its settings and clocks per
cloud, `backoff` its scale-up state machine (attempts, backoff, the expander among groups not in
backoff) stepped on a clock that starts at the pending pod's creation, and `run` puts them together per
pool. Every figure carries its evidence (`timings.Evidence`: source, docs or proxy).
"""

from elastic_gpu.tools.simulation.run import PoolOutcome, render_text, simulate, to_json

__all__ = ["PoolOutcome", "render_text", "simulate", "to_json"]
