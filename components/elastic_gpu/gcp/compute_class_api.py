"""GKE's ComputeClass API (cloud.google.com/v1) as the library uses it, as plain values: a pool's class
(the node pools' spot-first class, pools.py, and the auto-provisioning class, autoprovisioning/compute_class.py)
is declared with them."""

from __future__ import annotations

COMPUTE_CLASS_API = "cloud.google.com/v1"
#: With every ranked pool out of capacity, leave pods pending rather than use another pool.
WHEN_UNSATISFIABLE = "DoNotScaleUp"


def compute_class_name(pool: str) -> str:
    """The ComputeClass of a pool: the name its pods select (`cloud.google.com/compute-class`)."""
    return f"{pool}-spot-first"
