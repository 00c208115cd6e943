"""AWS: EKS clusters, managed node groups, IRSA and the cluster-autoscaler; its provider is `AwsProvider`
(provider.py, the `CloudProvider` protocol of elastic_gpu/provider.py)."""

#: Its resource types the cloud-neutral core reads (offline reports, policy rules).
EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
#: What a handle on an existing EKS cluster records: the ids of its subnets that map public IPs on launch
#: (read with aws.ec2.get_subnet), for the policy pack's no-public-node-ips.
PUBLIC_SUBNET_IDS_INPUT = "publicSubnetIds"
#: The handle on a cluster this library did not create (`existing()`, `from_*`; its `cluster` module).
EKS_EXISTING_CLUSTER = "elastic-gpu:index:ExistingEksCluster"
#: The authentication modes in which EKS takes access entries (EKS API CreateAccessEntry; pulumi-eks
#: nodejs/eks/cluster/authenticationMode.ts supportsAccessEntries). A cluster created through the EKS API, an SDK or
#: CloudFormation without one is in CONFIG_MAP (EKS API Reference, CreateAccessConfigRequest: authenticationMode).
ACCESS_ENTRY_MODES = ("API", "API_AND_CONFIG_MAP")
DEFAULT_AUTHENTICATION_MODE = "CONFIG_MAP"
