import pulumi
import pulumi_awsx as awsx
import pulumi_eks as eks

# Get some values from the Pulumi configuration (or use defaults)
config = pulumi.Config()
min_cluster_size = config.get_int("minClusterSize", 3)
max_cluster_size = config.get_int("maxClusterSize", 6)
desired_cluster_size = config.get_int("desiredClusterSize", 3)
eks_node_instance_type = config.get("eksNodeInstanceType", "t3.medium")
vpc_network_cidr = config.get("vpcNetworkCidr", "10.0.0.0/16")

# Create a VPC for the EKS cluster
eks_vpc = awsx.ec2.Vpc("eks-vpc",
    enable_dns_hostnames=True,
    cidr_block=vpc_network_cidr)

# Create the EKS cluster
eks_cluster = eks.Cluster("eks-cluster",
    # Put the cluster in the new VPC created earlier
    vpc_id=eks_vpc.vpc_id,
    # Use the "API" authentication mode to support access entries
    authentication_mode=eks.AuthenticationMode.API,
    # Public subnets will be used for load balancers
    public_subnet_ids=eks_vpc.public_subnet_ids,
    # Private subnets will be used for cluster nodes
    private_subnet_ids=eks_vpc.private_subnet_ids,
    # Change configuration values to change any of the following settings
    instance_type=eks_node_instance_type,
    desired_capacity=desired_cluster_size,
    min_size=min_cluster_size,
    max_size=max_cluster_size,
    # Do not give worker nodes a public IP address
    node_associate_public_ip_address=False,
    # Change these values for a private cluster (VPN access required)
    endpoint_private_access=False,
    endpoint_public_access=True
    )

# Export values to use elsewhere
pulumi.export("kubeconfig", eks_cluster.kubeconfig)
pulumi.export("vpcId", eks_vpc.vpc_id)

# --- elastic-gpu: the lines a user adds for spot GPU pools on this cluster ---
import json

import pulumi_aws as aws
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster, GeneralPool, GeneralPoolArgs,
                         NvidiaDevicePlugin, NvidiaDevicePluginArgs, SpotGpuPool, SpotGpuPoolArgs)

TAGS = {"project": "ml-platform", "cost-center": "research"}
trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"},
                                                 "Action": "sts:AssumeRole"}]}
gpu_role = aws.iam.Role("gpu-nodes", assume_role_policy=json.dumps(trust), tags=TAGS)
for i, policy in enumerate(["AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly"]):
    aws.iam.RolePolicyAttachment(f"gpu-nodes-{i}", role=gpu_role.name, policy_arn=f"arn:aws:iam::aws:policy/{policy}")
gpu_cluster = EksCluster.from_pulumi_eks("gpu", eks_cluster, node_role_arn=gpu_role.arn,
                                         zones=["us-west-2a", "us-west-2b"], create_oidc_provider=True, tags=TAGS)
general = GeneralPool("general", GeneralPoolArgs(cluster=gpu_cluster, instance_types=["m6i.large"], max_size=2,
                                                 tags=TAGS))
l4 = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=gpu_cluster, instance_types=["g6.xlarge"], max_size=4,
                                       on_demand_fallback=True, tags=TAGS))
NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=gpu_cluster.provider, gpu_pools=[l4]))
ClusterAutoscaler("autoscaler", ClusterAutoscalerArgs(cluster=gpu_cluster, general_pool=general, gpu_pools=[l4]))
pulumi.export("gpuNodeGroups", l4.node_group_names)
