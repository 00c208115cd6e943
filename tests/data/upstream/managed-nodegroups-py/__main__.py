import pulumi
import pulumi_aws as aws
import pulumi_eks as eks

import iam

# IAM roles for the node groups.
role0 = iam.create_role("example-role0")
role1 = iam.create_role("example-role1")
role2 = iam.create_role("example-role2")

# Create an EKS cluster.
cluster = eks.Cluster("example-managed-nodegroups",
                      skip_default_node_group=True,
                      instance_roles=[role0, role1, role2])

# Export the cluster's kubeconfig.
pulumi.export("kubeconfig", cluster.kubeconfig)

# Create a simple AWS managed node group using a cluster as input and the
# refactored API.
managed_node_group0 = eks.ManagedNodeGroup("example-managed-ng0",
                                           cluster=cluster,
                                           node_role=role0)

# Create a simple AWS managed node group using a cluster as input and the
# initial API.
managed_node_group1 = eks.ManagedNodeGroup("example-managed-ng1",
                                           cluster=cluster,
                                           node_group_name="aws-managed-ng1",
                                           node_role_arn=role1.arn,
                                           opts=pulumi.ResourceOptions(parent=cluster))

# Create an explicit AWS managed node group using a cluster as input and the
# initial API.
managed_node_group2 = eks.ManagedNodeGroup("example-managed-ng2",
                                           cluster=cluster,
                                           node_group_name="aws-managed-ng2",
                                           node_role_arn=role2.arn,
                                           scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                                              desired_size=1,
                                              min_size=1,
                                              max_size=2,
                                           ),
                                           disk_size=20,
                                           instance_types=["t3.medium"],
                                           labels={"ondemand": "true"},
                                           tags={"org": "pulumi"},
                                           taints=[aws.eks.NodeGroupTaintArgs(effect="NO_SCHEDULE", key="dedicated", value="gpuGroup")],
                                           opts=pulumi.ResourceOptions(parent=cluster))

# --- elastic-gpu: the lines a user adds for spot GPU pools on this cluster ---
from elastic_gpu import (ClusterAutoscaler, ClusterAutoscalerArgs, EksCluster, NvidiaDevicePlugin,
                         NvidiaDevicePluginArgs, SpotGpuPool, SpotGpuPoolArgs)

TAGS = {"project": "ml-platform", "cost-center": "research"}
gpu_role = iam.create_role("gpu-nodes")
gpu_cluster = EksCluster.from_pulumi_eks("gpu", cluster, node_role_arn=gpu_role.arn,
                                         zones=["us-west-2a", "us-west-2b"], create_oidc_provider=True, tags=TAGS)
l4 = SpotGpuPool("l4", SpotGpuPoolArgs(cluster=gpu_cluster, instance_types=["g6.xlarge"], max_size=4,
                                       on_demand_fallback=True, tags=TAGS))
NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(provider=gpu_cluster.provider, gpu_pools=[l4]))
ClusterAutoscaler("autoscaler", ClusterAutoscalerArgs(cluster=gpu_cluster, gpu_pools=[l4], node_selector={
    "eks.amazonaws.com/nodegroup": "aws-managed-ng1", "eks.amazonaws.com/capacityType": "ON_DEMAND"}))
pulumi.export("gpuNodeGroups", l4.node_group_names)
