"""Which input changes make the engine replace a resource, and the names that let it create first.

One table, per resource type, of the inputs whose change forces a replacement (the provider
marks them ForceNew, or the cloud API refuses to change them in place). The node-pool builders
put the values of those fields into the pool's name (`pool_name`), so a change that forces a
replacement also gives the replacement a new name: the engine then creates the new pool before
it deletes the old one (`delete_before_replace=False`), and the cluster never loses its general
pool. The `diff` command reads the same table to say which changes replace a resource.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from elastic_gpu.azure.system_pool import system_pool_rotation_steps
from elastic_gpu.pool_view import AKS_AGENT_POOL, AKS_MANAGED_CLUSTER, EKS_NODE_GROUP, GKE_NODE_POOL

#: Hex digits of the digest appended to a node-pool name: 16^6 = 16.7M values.
DIGEST_LEN = 6


@dataclass(frozen=True)
class ReplaceRule:
    #: input paths (camelCase, as the engine sees them; "a.b" = nested key) whose change replaces
    fields: tuple[str, ...]
    #: where the list comes from
    source: str


#: Node-pool resources: the fields that force replacement, per cloud (shown in the README).
POOL_REPLACE_FIELDS: dict[str, ReplaceRule] = {
    EKS_NODE_GROUP: ReplaceRule(
        fields=(
            "nodeGroupName",
            "clusterName",
            "nodeRoleArn",
            "subnetIds",
            "instanceTypes",
            "capacityType",
            "amiType",
            "diskSize",
            "remoteAccess",
            "launchTemplate.id",
            "launchTemplate.name",
        ),
        source="pulumi-aws eks.NodeGroup = terraform-provider-aws internal/service/eks/node_group.go, ForceNew "
        "fields (version, labels, taints, scalingConfig, launchTemplate.version update in place)",
    ),
    AKS_AGENT_POOL: ReplaceRule(
        fields=(
            "agentPoolName",
            "resourceName",
            "resourceGroupName",
            "vmSize",
            "availabilityZones",
            "osDiskSizeGB",
            "osType",
            "scaleSetPriority",
            "scaleSetEvictionPolicy",
            "spotMaxPrice",
            "gpuInstanceProfile",
            "vnetSubnetID",
            "kubeletConfig",
        ),
        source="azure-native containerservice.AgentPool replaces on its URL parameters (agentPoolName, "
        "resourceName, resourceGroupName); AKS refuses in-place changes of the rest: terraform-provider-azurerm "
        "kubernetes_cluster_node_pool marks priority, eviction_policy, spot_max_price, os_type, gpu_instance "
        "ForceNew and rotates the pool (temporary_name_for_rotation) for vm_size, zones, os_disk_size_gb, "
        "vnet_subnet_id, kubelet_config",
    ),
    GKE_NODE_POOL: ReplaceRule(
        fields=(
            "name",
            "cluster",
            "location",
            "project",
            "initialNodeCount",
            "queuedProvisioning",
            "maxPodsPerNode",
            "placementPolicy",
            "nodeConfig.guestAccelerators",
            "nodeConfig.spot",
            "nodeConfig.preemptible",
            "nodeConfig.oauthScopes",
            "nodeConfig.serviceAccount",
            "nodeConfig.reservationAffinity",
            "nodeConfig.metadata",
            "nodeConfig.minCpuPlatform",
            "nodeConfig.shieldedInstanceConfig",
            "nodeConfig.flexStart",
            "nodeConfig.maxRunDuration",
        ),
        source="pulumi-gcp container.NodePool = terraform-provider-google google/services/container/"
        "resource_container_node_pool.go and node_config.go, ForceNew fields (flex_start and max_run_duration "
        "ForceNew in schemaNodeConfig; machineType, diskSizeGb, diskType, labels, taints, nodeLocations, "
        "autoscaling update in place)",
    ),
}

#: Other resources whose replacement the diff should name (same sources: the providers' ForceNew fields).
OTHER_REPLACE_FIELDS: dict[str, ReplaceRule] = {
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

REPLACE_FIELDS: dict[str, ReplaceRule] = POOL_REPLACE_FIELDS | OTHER_REPLACE_FIELDS

#: The input that is a pool's cloud name. Replacing a pool whose name stays the same cannot create the
#: new pool first (the name is taken): the provider deletes first (pulumi-terraform-bridge
#: nameRequiresDeleteBeforeReplace; azure-native replaces on the same URL). Hence the digest in names.
POOL_NAME_FIELD: dict[str, str] = {
    EKS_NODE_GROUP: "nodeGroupName",
    AKS_AGENT_POOL: "agentPoolName",
    GKE_NODE_POOL: "name",
}


@dataclass(frozen=True)
class InlinePoolRule:
    """Node pools declared inside their cluster resource (a list input, one entry per pool, by name)."""

    #: the list input holding the pools, and the key that names each entry
    list_field: str
    key: str
    #: fields of one pool the cloud refuses to change on an existing pool
    fields: tuple[str, ...]
    source: str
    #: the steps that make such a change by hand: (pool name, cluster inputs, the pool's new inputs) -> text
    way_out: Callable[[str, Mapping[str, Any], Mapping[str, Any]], str]


#: Inline pools whose change is refused, not replaced: the cluster resource updates in place (the provider
#: marks none of these ForceNew), the cloud refuses the change, and renaming the inline pool is no way out
#: either. `diff` refuses such a change (exit 2) with the steps that do it (inline_pool_refusals).
INLINE_POOL_REFUSED_FIELDS: dict[str, InlinePoolRule] = {
    AKS_MANAGED_CLUSTER: InlinePoolRule(
        list_field="agentPoolProfiles",
        key="name",
        fields=(
            "vmSize",
            "availabilityZones",
            "osDiskSizeGB",
            "osDiskType",
            "kubeletDiskType",
            "maxPods",
            "vnetSubnetID",
            "podSubnetID",
            "kubeletConfig",
            "linuxOSConfig",
            "enableEncryptionAtHost",
            "enableNodePublicIP",
            "enableFIPS",
            "enableUltraSSD",
            "creationData",
        ),
        source="AKS refuses these on an existing agent pool (ARM PropertyChangeNotAllowed, e.g. "
        "'Changing property agentPoolProfile.vmSize is not allowed', Azure/bicep-registry-modules#7130; "
        "manage-node-pools.md: 'You can't change the VM size of a node pool after you create it'); "
        "terraform-provider-azurerm kubernetes_cluster_resource.go rotates the default node pool "
        "(temporary_name_for_rotation) for exactly these (vm_size, zones, os_disk_size_gb, ...); azure-native "
        "updates agentPoolProfiles in place (pulumi-azure-native#2774), and a ManagedCluster PUT cannot add "
        "or rename an inline pool ('A new agent pool was introduced', pulumi-azure-native#579)",
        way_out=system_pool_rotation_steps,
    ),
}


def inline_pool_refusals(
    resource_type: str, resource_name: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> list[str]:
    """What an update of `resource_type` would ask of its inline pools that the cloud refuses, each with
    the way to do it by hand (empty: nothing refused)."""
    rule = INLINE_POOL_REFUSED_FIELDS.get(resource_type)
    if rule is None:
        return []
    before = {p.get(rule.key): p for p in old.get(rule.list_field) or [] if isinstance(p, Mapping)}
    after = {p.get(rule.key): p for p in new.get(rule.list_field) or [] if isinstance(p, Mapping)}
    where = f"{resource_type} {resource_name}: {rule.list_field}"
    problems = [
        f"{where}[{n}]: a new inline pool; an update of the cluster cannot add or rename one "
        f"(was: {', '.join(sorted(map(str, before))) or 'none'}); add it as its own agent pool"
        for n in after
        if n not in before and before
    ]
    for n, pool in after.items():
        if n not in before:
            continue
        changed = [f for f in rule.fields if before[n].get(f) != pool.get(f)]
        if changed:
            moves = ", ".join(f"{where}[{n}].{f}: {before[n].get(f)!r} -> {pool.get(f)!r}" for f in changed)
            problems.append(f"{moves}. {rule.way_out(n, new, pool)}")
    return problems


def short_digest(values: Mapping[str, Any]) -> str:
    """A stable short digest of `values` (JSON, sorted keys): equal inputs, equal digest."""
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LEN]


def pool_name(base: str, forcing: Mapping[str, Any], *, max_len: int, sep: str = "-") -> str:
    """`<base><sep><digest>`: the digest covers the base and the replacement-forcing values, so a change
    that forces a replacement also renames the pool (create the new one, then delete the old one).
    A base too long for `max_len` is cut; the digest still tells pools apart."""
    digest = short_digest({"base": base, **forcing})
    return f"{base[: max_len - len(sep) - DIGEST_LEN]}{sep}{digest}"


def replacing_paths(resource_type: str, changed: list[str]) -> list[str]:
    """The changed input paths that force `resource_type` to be replaced (empty: updated in place)."""
    rule = REPLACE_FIELDS.get(resource_type)
    if rule is None:
        return []
    return [p for p in changed if any(p == f or p.startswith(f"{f}.") or p.startswith(f"{f}[") for f in rule.fields)]


def replace_table_markdown() -> str:
    """The README's table of pool fields that force a replacement."""
    rows = ["| Resource | Fields that force a replacement | Source |", "| --- | --- | --- |"]
    for type_, rule in POOL_REPLACE_FIELDS.items():
        rows.append(f"| `{type_}` | {', '.join(f'`{f}`' for f in rule.fields)} | {rule.source} |")
    return "\n".join(rows)


def inline_pool_table_markdown() -> str:
    """The README's table of inline-pool fields whose change `diff` refuses."""
    rows = ["| Resource | Inline-pool fields whose change is refused | Source |", "| --- | --- | --- |"]
    for type_, rule in INLINE_POOL_REFUSED_FIELDS.items():
        fields = ", ".join(f"`{rule.list_field}[].{f}`" for f in rule.fields)
        rows.append(f"| `{type_}` | {fields} | {rule.source} |")
    return "\n".join(rows)
