"""What the core says of AWS or checks against (`CloudFacts`): plain values, apart from the provider class so that
this folder's builders read them without importing the provider that imports them."""

from __future__ import annotations

from elastic_gpu.cloud_facts import CloudFacts

FACTS = CloudFacts(
    service="EKS",
    handle_attributes=(
        "region",
        "node_role_arn",
        "subnet_ids",
        "oidc_provider_arn",
        "oidc_issuer_url",
        "node_dependencies",
    ),
    existing_hint="EksCluster.existing(...), EksCluster.from_cluster(...) or EksCluster.from_pulumi_eks(...)",
    instance_type_pattern=r"[a-z][a-z0-9-]*\.[a-z0-9]+",
    example_instance_type="m6i.xlarge",
    spot_fix="set capacityType: SPOT",
    # An EKS managed node group holds several instance types (see validation.gpu_instance_type_problems).
    one_group_many_types=True,
    prices_accelerators=False,
    pins_autoscaler_image=True,
    # The private-only endpoint answers in the VPC the stack creates (aws/cluster.py PRIVATE_ENDPOINT_WARNING).
    private_api_needs_runner=True,
    karpenter_node_class_group="karpenter.k8s.aws",
    node_label_howto=(
        "on an EKS managed node group, `labels` (aws.eks.NodeGroup, pulumi-eks ManagedNodeGroup; or `aws eks "
        "update-nodegroup-config --cluster-name C --nodegroup-name G --labels addOrUpdateLabels={{{labels}}}`); on "
        "a self-managed group (pulumi-eks NodeGroupV2 and its Cluster's default node group), `labels` (the "
        "kubelet's --node-labels, on nodes started after the change)"
    ),
    region_config=("aws", "region"),
    region_of_zone=r"(.+\d)[a-z]",
)
