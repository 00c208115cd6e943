"""What `scripts/bench_policy.py`'s stack declares for its GPU pools, declared with the Pulumi SDK alone.

Per pool, what `SpotGpuPool` declares on EKS: a component, and per node group a launch template and a managed
node group with the same inputs and dependencies (a spot group per zone; for every other pool an on-demand
group per zone too). No elastic-gpu code runs: the time the offline runner takes for this program is what
registering those resources costs under the mock engine before any of the library's work.
"""

import pulumi
import pulumi_aws as aws

POOLS = pulumi.Config("floor").require_int("pools")
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
TAGS = {"team": "ml", "elastic-gpu.io/pool": "x", "managed-by": "elastic-gpu"}

role = aws.iam.Role("node-role", assume_role_policy="{}")
attachments = [
    aws.iam.RolePolicyAttachment(f"node-role-{i}", role=role.name, policy_arn=f"arn:aws:iam::aws:policy/P{i}")
    for i in range(4)
]
vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
subnets = {
    z: aws.ec2.Subnet(f"private-{z}", vpc_id=vpc.id, cidr_block=f"10.0.{i}.0/24", availability_zone=z)
    for i, z in enumerate(ZONES)
}
cluster = aws.eks.Cluster(
    "eks", role_arn=role.arn, vpc_config=aws.eks.ClusterVpcConfigArgs(subnet_ids=[s.id for s in subnets.values()])
)

for p in range(POOLS):
    parent = pulumi.ComponentResource("elastic-gpu:index:SpotGpuPool", f"pool-{p}")
    groups = [("SPOT", z) for z in ZONES] + ([("ON_DEMAND", z) for z in ZONES] if p % 2 == 0 else [])
    for g, (capacity, zone) in enumerate(groups):
        name = f"pool-{p}-{g}"
        lt = aws.ec2.LaunchTemplate(
            f"{name}-lt",
            description=pulumi.Output.concat("node group ", name),
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name="/dev/xvda",
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        volume_size=100, volume_type="gp3", encrypted="true", delete_on_termination="true"
                    ),
                )
            ],
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=2
            ),
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=k, tags={**TAGS, "Name": name})
                for k in ("instance", "volume")
            ],
            tags=TAGS,
            opts=pulumi.ResourceOptions(parent=parent),
        )
        aws.eks.NodeGroup(
            name,
            cluster_name=cluster.name,
            node_group_name=pulumi.Output.all(cluster.name, lt.id).apply(lambda a, n=name: f"{a[0]}-{n}"),
            node_role_arn=role.arn,
            version=cluster.version,
            subnet_ids=[subnets[zone].id],
            instance_types=["g5.xlarge"],
            capacity_type=capacity,
            ami_type="AL2023_x86_64_NVIDIA",
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=0, min_size=0, max_size=6),
            labels={"elastic-gpu.io/pool": f"pool-{p}"},
            taints=[aws.eks.NodeGroupTaintArgs(key="nvidia.com/gpu", value="true", effect="NO_SCHEDULE")],
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(id=lt.id, version=lt.latest_version.apply(str)),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            tags={**TAGS, "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu": "1"},
            opts=pulumi.ResourceOptions(
                parent=parent, ignore_changes=["scalingConfig.desiredSize"], depends_on=attachments
            ),
        )
