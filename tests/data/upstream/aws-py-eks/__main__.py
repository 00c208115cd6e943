import iam
import vpc
import utils
import pulumi
from pulumi_aws import eks

## EKS Cluster

eks_cluster = eks.Cluster(
    "eks-cluster",
    role_arn=iam.eks_role.arn,
    tags={
        "Name": "pulumi-eks-cluster",
    },
    vpc_config=eks.ClusterVpcConfigArgs(
        public_access_cidrs=["0.0.0.0/0"],
        security_group_ids=[vpc.eks_security_group.id],
        subnet_ids=vpc.subnet_ids,
    ),
)

eks_node_group = eks.NodeGroup(
    "eks-node-group",
    cluster_name=eks_cluster.name,
    node_group_name="pulumi-eks-nodegroup",
    node_role_arn=iam.ec2_role.arn,
    subnet_ids=vpc.subnet_ids,
    tags={
        "Name": "pulumi-cluster-nodeGroup",
    },
    scaling_config=eks.NodeGroupScalingConfigArgs(
        desired_size=2,
        max_size=2,
        min_size=1,
    ),
)

pulumi.export("cluster-name", eks_cluster.name)
pulumi.export("kubeconfig", utils.generate_kube_config(eks_cluster))

# --- elastic-gpu: the lines a user adds for spot GPU pools on this cluster ---
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster, NvidiaDevicePlugin,
                         NvidiaDevicePluginArgs, SpotGpuPool, SpotGpuPoolArgs)

TAGS = {"project": "ml-platform", "cost-center": "research"}
# vpc.py's subnets are all public (mapPublicIpOnLaunch, a route to the internet gateway), so `zones=` is refused
# (no private subnet in us-east-2a): the GPU nodes go in them knowingly, and the gate's no-public-node-ips fails.
gpu_cluster = EksCluster.from_cluster("gpu", eks_cluster, node_role_arn=iam.ec2_role.arn,
                                      subnet_ids=dict(zip(vpc.zones.names, vpc.subnet_ids, strict=True)),
                                      create_oidc_provider=True, tags=TAGS)
l4 = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=gpu_cluster, instance_types=["g6.xlarge"], max_size=4,
                                       on_demand_fallback=True, tags=TAGS))
NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=gpu_cluster.provider, gpu_pools=[l4]))
ClusterAutoscaler("autoscaler", ClusterAutoscalerArgs(cluster=gpu_cluster, gpu_pools=[l4], node_selector={
    "eks.amazonaws.com/nodegroup": "pulumi-eks-nodegroup", "eks.amazonaws.com/capacityType": "ON_DEMAND"}))
pulumi.export("gpuNodeGroups", l4.node_group_names)
