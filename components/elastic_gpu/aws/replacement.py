"""EKS: the inputs whose change replaces its resources (elastic_gpu/tools/replacement.py merges every cloud's)."""

from __future__ import annotations

from elastic_gpu.aws import EKS_NODE_GROUP
from elastic_gpu.aws.node_spec import NODE_GROUP_SOURCE, AwsNodeSpec
from elastic_gpu.clouds import InlinePoolRule, ReplacementRows, ReplaceRule
from elastic_gpu.node_marks import marked_inputs

#: Node-pool resources: the fields that force replacement (the replace table of docs/day-two.md): the group's
#: name and cluster, the node spec's marked inputs (aws/node_spec.py AwsNodeSpec, `replaces`), and the ForceNew
#: inputs no spec field feeds (diskSize and remoteAccess: the launch template holds the disk and no SSH key is
#: set; the launch template's id and name: a new template, e.g. for a new capacity reservation target).
POOL_REPLACE_FIELDS = {
    EKS_NODE_GROUP: ReplaceRule(
        fields=(
            "nodeGroupName",
            "clusterName",
            *marked_inputs(AwsNodeSpec, "replaces"),
            "diskSize",
            "remoteAccess",
            "launchTemplate.id",
            "launchTemplate.name",
        ),
        source=f"pulumi-aws eks.NodeGroup = {NODE_GROUP_SOURCE}, ForceNew "
        "fields (version, labels, taints, scalingConfig, launchTemplate.version update in place)",
    ),
}

#: Other resources whose replacement the diff should name (same sources: the providers' ForceNew fields).
OTHER_REPLACE_FIELDS = {
    "aws:autoscaling/tag:Tag": ReplaceRule(
        ("autoscalingGroupName", "tag"), "terraform-provider-aws aws_autoscaling_group_tag: both ForceNew"
    ),
    "aws:eks/addon:Addon": ReplaceRule(
        ("clusterName", "addonName"), "terraform-provider-aws aws_eks_addon: cluster_name, addon_name ForceNew"
    ),
    "aws:eks/cluster:Cluster": ReplaceRule(
        ("name", "roleArn", "vpcConfig.subnetIds", "kubernetesNetworkConfig"),
        "terraform-provider-aws aws_eks_cluster: name, role_arn, subnet_ids, kubernetes_network_config ForceNew",
    ),
    "aws:ec2/vpc:Vpc": ReplaceRule(("cidrBlock",), "terraform-provider-aws aws_vpc: cidr_block ForceNew"),
    "aws:ec2/subnet:Subnet": ReplaceRule(
        ("vpcId", "cidrBlock", "availabilityZone"), "terraform-provider-aws aws_subnet: ForceNew fields"
    ),
    "aws:ec2/natGateway:NatGateway": ReplaceRule(
        ("subnetId", "allocationId"), "terraform-provider-aws aws_nat_gateway: ForceNew fields"
    ),
}

#: The input that is a pool's cloud name.
POOL_NAME_FIELD = {EKS_NODE_GROUP: "nodeGroupName"}

INLINE_POOL_REFUSED_FIELDS: dict[str, InlinePoolRule] = {}

#: Node-pool inputs whose in-place update replaces every node of the pool (each is cordoned and drained): a
#: new Kubernetes version, AMI release or launch template version is a rolling update of the managed node
#: group (EKS user guide, update-managed-node-group.md "Managed node update behavior"; terraform-provider-aws
#: eks/node_group.go resourceNodeGroupUpdate calls UpdateNodegroupVersion for these): the version and release,
#: which no spec field sets, and the spec's `rolls` marks (the launch template's version). `diff` marks them.
NODE_ROLLING_FIELDS = {
    EKS_NODE_GROUP: ReplaceRule(
        ("version", "releaseVersion", *marked_inputs(AwsNodeSpec, "rolls")), "EKS update-managed-node-group.md"
    ),
}


#: The rows above as one record (elastic_gpu/clouds.py ReplacementRows), for `diff` and the merged tables.
ROWS = ReplacementRows(
    pool_replace_fields=POOL_REPLACE_FIELDS,
    other_replace_fields=OTHER_REPLACE_FIELDS,
    pool_name_field=POOL_NAME_FIELD,
    inline_pool_refused_fields=INLINE_POOL_REFUSED_FIELDS,
    node_rolling_fields=NODE_ROLLING_FIELDS,
    kept_when_dropped={},
)
