"""A pulumi-eks cluster with its own system nodes, plus elastic spot GPU pools from elastic-gpu."""

import pulumi
import pulumi_eks as eks

from elastic_gpu import (
    ClusterAutoscaler,
    ClusterAutoscalerArgs,
    EksCluster,
    NvidiaDevicePlugin,
    NvidiaDevicePluginArgs,
    SpotGpuPool,
    SpotGpuPoolArgs,
)

config = pulumi.Config()
subnets: dict[str, str] = config.require_object("privateSubnetIds")
TAGS = {"project": "ml-platform", "cost-center": "research"}
# The cluster's own on-demand CPU nodes, labelled so the autoscaler can be pinned there (and the
# policy pack can tell that they are on-demand: elastic-gpu.io/capacity=on-demand).
SYSTEM_LABELS = {"node-role": "system", "elastic-gpu.io/capacity": "on-demand"}

cluster = eks.Cluster(
    "ml",
    name="ml",
    version="1.35",
    vpc_id=config.require("vpcId"),
    private_subnet_ids=list(subnets.values()),
    node_associate_public_ip_address=False,
    authentication_mode="API",
    create_oidc_provider=True,  # the autoscaler's IRSA role needs it
    instance_type="m6i.large",
    desired_capacity=2,
    min_size=2,
    max_size=3,
    node_group_options=eks.ClusterNodeGroupOptionsArgs(labels=SYSTEM_LABELS),
)

handle = EksCluster.from_pulumi_eks("ml-gpu", cluster, subnet_ids=subnets, kubernetes_version="1.35", tags=TAGS)
l4 = SpotGpuPool(
    "l4",
    SpotGpuPoolArgs(cluster=handle, instance_types=["g6.xlarge"], max_size=4, on_demand_fallback=True, tags=TAGS),
)
plugin = NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=handle.provider, gpu_pools=[l4]))
autoscaler = ClusterAutoscaler(
    "autoscaler", ClusterAutoscalerArgs(cluster=handle, gpu_pools=[l4], node_selector=SYSTEM_LABELS)
)

pulumi.export("gpuNodeGroups", l4.node_group_names)
pulumi.export("gpuAutoScalingGroups", l4.cloud_outputs["asg_names"])
pulumi.export("autoscalerRoleArn", autoscaler.role_arn)
