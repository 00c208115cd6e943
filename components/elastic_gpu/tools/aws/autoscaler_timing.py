"""EKS's self-run cluster-autoscaler on a clock: its settings as the simulation reads them from the
cluster-autoscaler Deployment's flags (elastic_gpu/tools/simulation merges every cloud's).

How it learns that a spot launch failed (kubernetes/autoscaler cluster-autoscaler-1.33.6, cloudprovider/aws;
the same lines in 1.30.7, renumbered in 1.35.2 and 1.36.1):
- A scale-up is SetDesiredCapacity; the group's `lastUpdateTime` is set to the ask
  (auto_scaling_groups.go:261-280, :276). Nothing else is learnt at the ask: SetDesiredCapacity returns no
  capacity error.
- Before every loop the provider's Refresh runs (core/static_autoscaler.go:319); it rebuilds the ASG cache
  only when refreshInterval (1 min) has passed since the last rebuild *ended* (aws_manager.go:49, :119-134),
  so on the 10 s loop a rebuild comes every 60 s + one loop.
- The rebuild gives each ASG with more desired than real instances placeholder instances
  (auto_scaling_groups.go:446, :500-530), and asks DescribeScalingActivities: an activity started since
  `lastUpdateTime` with StatusCode Failed makes them unfulfillable (:532-559, :517), which the node group reports
  as an out-of-resources creation error (aws_cloud_provider.go:383-391). The loop backs the group off, deletes
  the placeholder and asks the next group (backoff.py).
- Deleting the placeholder (core/static_autoscaler.go:429, before the scale-up at :559;
  aws_cloud_provider.go:351 DeleteInstances) forces a rebuild at the next loop (aws_manager.go:165): a group
  asked in that loop has its activity read one loop later, then every 60 s + one loop.

What AWS takes to record the failed launch as a Failed activity is not in that code, and AWS documents no
time for it (`FAILED_LAUNCH_RECORDED`).
"""

from __future__ import annotations

import math

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.backoff import AWS_ASG_REFRESH, SECOND, Machine
from elastic_gpu.tools.simulation.timings import (
    CA_DEFAULT_EXPANDER,
    CA_DEFAULT_MAX_NODE_PROVISION_TIME,
    CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD,
    CA_DEFAULT_SCALE_DOWN_UNNEEDED,
    CA_DEFAULT_SCAN_INTERVAL,
    AutoscalerTiming,
    Evidence,
    autoscaler_flags,
    autoscaler_image,
    listed_groups,
    minutes,
    priorities,
    seconds,
)

#: Seconds from the ask until EC2 Auto Scaling records the failed spot launch as a Failed scaling activity.
#: AWS documents no time for it: its API reference says only that an Activity is "a long-running process" and
#: that a failed launch ends as StatusCode Failed or Cancelled (EC2 Auto Scaling API Reference, Activity and
#: DescribeScalingActivities). A stated range: the one a run of the real cluster-autoscaler (1.30.7 and 1.33.6,
#: fake node groups over externalgrpc) reported its failures in, which holds the 62 s from the ask to "cannot
#: provision any more nodes" (a cache rebuild included) in the AWS log of kubernetes/autoscaler#5756.
FAILED_LAUNCH_RECORDED = (10 * SECOND, 70 * SECOND)
FAILED_LAUNCH_EVIDENCE = (
    "AWS's time to record a failed spot launch as a Failed scaling activity is not documented by AWS (EC2 Auto "
    f"Scaling API Reference, Activity, DescribeScalingActivities): a stated range, {FAILED_LAUNCH_RECORDED[0]} s "
    f"to {FAILED_LAUNCH_RECORDED[1]} s, from a run of the real cluster-autoscaler and the AWS log in "
    "kubernetes/autoscaler#5756"
)


def _loops(seconds: int, scan: int) -> int:
    """``seconds`` rounded up to a whole number of loops (at least one)."""
    return max(1, math.ceil(seconds / scan)) * scan


def failed_launch(scan: int, provision: int) -> Machine:
    """From the ask to the loop that sees the Failed activity. A group asked while the cache rebuilds at an
    unknown phase: at best the first loop after AWS records it, at worst a rebuild just before that, then
    the next one a refresh interval and a loop later. A group asked in the loop that saw the previous one
    fail: the forced rebuild a loop later, then one every refresh interval and a loop. Never later than the
    scale-up's timeout (max-node-provision-time)."""
    earliest, latest = FAILED_LAUNCH_RECORDED
    refresh = AWS_ASG_REFRESH.seconds
    period = refresh + scan

    def on_grid(t: int) -> int:
        """The first forced rebuild (a loop after the ask, then every period) at or after t."""
        return scan + math.ceil(max(t - scan, 0) / period) * period

    cap = (provision + SECOND, provision + scan)
    return Machine(
        attempt=(min(_loops(earliest, scan), cap[0]), min(_loops(latest, scan) + refresh, cap[1])),
        chained_attempt=(min(on_grid(earliest), cap[0]), min(on_grid(latest), cap[1])),
        scan=scan,
        source=(
            f"EKS: AWS records a failed spot launch (InsufficientInstanceCapacity) as a Failed ASG scaling activity "
            f"{earliest}s to {latest}s after the ask (not documented by AWS), which the next ASG cache rebuild "
            f"(every {refresh}s and a loop) turns into an out-of-resources placeholder (autoscaler#4489): seen "
            f"{_loops(earliest, scan)}s to {_loops(latest, scan) + refresh}s after the scale-up, "
            f"{on_grid(earliest)}s to {on_grid(latest)}s when asked in the loop that saw the previous group fail"
        ),
    )


def _deployed(image: str | None) -> str:
    if image is None:
        # A cluster that sets no version: the release is picked from the minor EKS gives it (versions.py).
        return "the release pinned for the cluster's minor, which is known only once the cluster exists"
    return f"the image this stack deploys: {image}"


def autoscaler_settings(preview: Preview) -> AutoscalerTiming | None:
    """The self-run cluster-autoscaler's flags, when the preview has EKS node groups."""
    if not preview.of_type(EKS_NODE_GROUP):
        return None
    flags = autoscaler_flags(preview) or {}
    provision = minutes(flags.get("max-node-provision-time", CA_DEFAULT_MAX_NODE_PROVISION_TIME))
    return AutoscalerTiming(
        cloud="aws",
        expanders=tuple(flags.get("expander", CA_DEFAULT_EXPANDER).split(",")),
        priorities=priorities(preview),
        scale_down_unneeded=minutes(flags.get("scale-down-unneeded-time", CA_DEFAULT_SCALE_DOWN_UNNEEDED)),
        scale_down_delay_after_add=minutes(
            flags.get("scale-down-delay-after-add", CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD)
        ),
        max_node_provision=provision,
        machine=failed_launch(seconds(flags.get("scan-interval", CA_DEFAULT_SCAN_INTERVAL)), round(provision * 60)),
        source="cluster-autoscaler Deployment flags",
        groups=listed_groups(preview),
        # The autoscaler this stack runs, as is: its code is the evidence.
        evidence=Evidence(
            "source",
            f"kubernetes/autoscaler cluster-autoscaler-1.33.6 core, clusterstate and cloudprovider/aws (backoff and "
            f"loop code unchanged in 1.34.5 and 1.35.2), {_deployed(autoscaler_image(preview))}; "
            f"{FAILED_LAUNCH_EVIDENCE}",
        ),
    )
