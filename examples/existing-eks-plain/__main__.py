"""Elastic spot GPU pools on an EKS cluster that another stack owns.

The cluster, its node role, subnets and OIDC provider come from that stack's outputs. This
program adds its own small system node group (a plain aws.eks.NodeGroup), the GPU pools, the
device plugin and an autoscaler renamed so that it never clashes with one the cluster may run: its
objects and its priority ConfigMap go to a namespace of its own (`gpu-cluster-autoscaler`, created
here), as cluster-autoscaler reads that ConfigMap by a fixed name from its namespace. That autoscaler
lists only the GPU pools' groups (`--nodes`), never the system group or the cluster's others; the
cluster's own autoscaler must likewise not discover the GPU groups (give it an explicit list).
"""

import pulumi
import pulumi_aws as aws

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
infra = pulumi.StackReference(config.require("infraStack"))
cluster_name = infra.require_output("clusterName")
node_role_arn = infra.require_output("nodeRoleArn")
subnets = infra.require_output("privateSubnetIds")
# The zones must be known before deployment (they decide how many node groups there are).
ZONES = ["eu-west-1a", "eu-west-1b"]
SYSTEM_LABELS = {"node-role": "system"}
TAGS = {"project": "ml-platform", "cost-center": "research"}

aws.eks.NodeGroup(
    "system",
    cluster_name=cluster_name,
    node_role_arn=node_role_arn,
    subnet_ids=subnets.apply(lambda s: [s[z] for z in ZONES]),
    instance_types=["m6i.large"],
    labels=SYSTEM_LABELS,
    scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=2, min_size=2, max_size=3),
)

handle = EksCluster.existing(
    "prod-eu",
    cluster_name=cluster_name,
    kubernetes_version="1.35",
    node_role_arn=node_role_arn,
    subnet_ids={z: subnets.apply(lambda s, z=z: s[z]) for z in ZONES},
    oidc_provider_arn=infra.require_output("oidcProviderArn"),
    oidc_provider_url=infra.require_output("oidcProviderUrl"),
    region="eu-west-1",
    tags=TAGS,
)
a10 = SpotGpuPool(
    "a10",
    SpotGpuPoolArgs(cluster=handle, instance_types=["g5.xlarge"], max_size=4, on_demand_fallback=True, tags=TAGS),
)
NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=handle.provider, gpu_pools=[a10]))
autoscaler = ClusterAutoscaler(
    "autoscaler",
    ClusterAutoscalerArgs(
        cluster=handle,
        gpu_pools=[a10],
        # EKS labels managed node groups' nodes with their capacity type.
        node_selector={**SYSTEM_LABELS, "eks.amazonaws.com/capacityType": "ON_DEMAND"},
        # Also its namespace (created): the cluster's own autoscaler keeps kube-system's priority ConfigMap.
        workload_name="gpu-cluster-autoscaler",
    ),
)

pulumi.export("gpuNodeGroups", a10.node_group_names)
pulumi.export("autoscalerRoleArn", autoscaler.role_arn)
