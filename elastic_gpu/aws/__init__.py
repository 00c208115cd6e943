"""AWS: EKS clusters, managed node groups, IRSA and the cluster-autoscaler (elastic_gpu/clouds.py, `Cloud`)."""

from elastic_gpu.clouds import Cloud

#: Its resource types the cloud-neutral core reads (offline reports, policy rules).
EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
#: What a handle on an existing EKS cluster records: the ids of its subnets that map public IPs on launch
#: (read with aws.ec2.get_subnet), for the policy pack's no-public-node-ips.
PUBLIC_SUBNET_IDS_INPUT = "publicSubnetIds"
#: The handle on a cluster this library did not create (`existing()`, `from_*`; its `cluster` module).
EKS_EXISTING_CLUSTER = "elastic-gpu:index:ExistingEksCluster"

CLOUD = Cloud(
    name="aws",
    service="EKS",
    owner="an AWS",
    handle_attributes=(
        "region",
        "node_role_arn",
        "subnet_ids",
        "oidc_provider_arn",
        "oidc_issuer_url",
        "node_dependencies",
    ),
    existing_hint="EksCluster.existing(...), EksCluster.from_cluster(...) or EksCluster.from_pulumi_eks(...)",
    example_instance_type="m6i.xlarge",
    instance_type_pattern=r"[a-z][a-z0-9-]*\.[a-z0-9]+",
    pins_autoscaler_image=True,
    # An EKS managed node group holds several instance types (see validation.gpu_instance_type_problems).
    one_group_many_types=True,
    spot_fix="set capacityType: SPOT",
    prices_accelerators=False,
    creates_network=True,
    karpenter_node_class_group="karpenter.k8s.aws",
)
