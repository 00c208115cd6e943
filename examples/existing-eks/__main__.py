"""A pulumi-eks cluster with its own system nodes, plus elastic spot GPU pools from elastic-gpu."""

import json

import pulumi
import pulumi_aws as aws
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
    authentication_mode="API",
    create_oidc_provider=True,  # the autoscaler's IRSA role needs it
    # pulumi-eks refuses node_group_options next to the singular options (instance_type, min_size, ...):
    # every setting of its default node group goes here.
    node_group_options=eks.ClusterNodeGroupOptionsArgs(
        instance_type="m6i.large",
        desired_capacity=2,
        min_size=2,
        max_size=3,
        node_associate_public_ip_address=False,
        labels=SYSTEM_LABELS,
    ),
)

# The GPU node groups get a role of their own: when the last managed node group using a role is deleted, EKS
# drops that role's mapping, and the cluster's self-managed nodes (which use its instance role) would go NotReady.
gpu_node_role = aws.iam.Role(
    "gpu-nodes",
    assume_role_policy=json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ],
        }
    ),
    tags=TAGS,
)
attachments = [
    aws.iam.RolePolicyAttachment(
        f"gpu-nodes-{policy}", role=gpu_node_role.name, policy_arn=f"arn:aws:iam::aws:policy/{policy}"
    )
    for policy in ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly")
]
# The ARN once the policies are attached: the node groups wait for them (and are deleted before them).
gpu_node_role_arn = pulumi.Output.all(gpu_node_role.arn, *[a.id for a in attachments]).apply(lambda a: a[0])

# The Kubernetes minor is the cluster's own `version` (1.35): it picks the autoscaler image and the node groups'
# version. Without `version=` above it would be unknown until EKS creates the cluster (preview warns).
handle = EksCluster.from_pulumi_eks("ml-gpu", cluster, subnet_ids=subnets, node_role_arn=gpu_node_role_arn, tags=TAGS)
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
