"""EKS's self-run cluster-autoscaler on a clock: its settings as the simulation reads them from the
cluster-autoscaler Deployment's flags (elastic_gpu/tools/simulation merges every cloud's)."""

from __future__ import annotations

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.simulation.backoff import AWS_ASG_REFRESH
from elastic_gpu.tools.simulation.timings import (
    CA_DEFAULT_EXPANDER,
    CA_DEFAULT_MAX_NODE_PROVISION_TIME,
    CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD,
    CA_DEFAULT_SCALE_DOWN_UNNEEDED,
    CA_DEFAULT_SCAN_INTERVAL,
    AutoscalerSettings,
    Evidence,
    autoscaler_flags,
    autoscaler_image,
    early_failure,
    listed_groups,
    minutes,
    priorities,
    seconds,
)


def autoscaler_settings(preview: Preview) -> AutoscalerSettings | None:
    """The self-run cluster-autoscaler's flags, when the preview has EKS node groups."""
    if not preview.of_type(EKS_NODE_GROUP):
        return None
    flags = autoscaler_flags(preview) or {}
    provision = minutes(flags.get("max-node-provision-time", CA_DEFAULT_MAX_NODE_PROVISION_TIME))
    return AutoscalerSettings(
        cloud="aws",
        expanders=tuple(flags.get("expander", CA_DEFAULT_EXPANDER).split(",")),
        priorities=priorities(preview),
        scale_down_unneeded=minutes(flags.get("scale-down-unneeded-time", CA_DEFAULT_SCALE_DOWN_UNNEEDED)),
        scale_down_delay_after_add=minutes(
            flags.get("scale-down-delay-after-add", CA_DEFAULT_SCALE_DOWN_DELAY_AFTER_ADD)
        ),
        max_node_provision=provision,
        machine=early_failure(
            seconds(flags.get("scan-interval", CA_DEFAULT_SCAN_INTERVAL)),
            round(provision * 60),
            AWS_ASG_REFRESH.seconds,
            "EKS: a failed spot launch (InsufficientInstanceCapacity) is a failed ASG scaling activity, "
            "which the next ASG cache refresh turns into an out-of-resources placeholder (autoscaler#4489)",
        ),
        source="cluster-autoscaler Deployment flags",
        groups=listed_groups(preview),
        # The autoscaler this stack runs, as is: its code is the evidence.
        evidence=Evidence(
            "source",
            f"kubernetes/autoscaler cluster-autoscaler-1.33.6 core, clusterstate and cloudprovider/aws (backoff and "
            f"loop code unchanged in 1.34.5 and 1.35.2), the image this stack deploys: "
            f"{autoscaler_image(preview) or 'its cluster-autoscaler Deployment'}",
        ),
    )
