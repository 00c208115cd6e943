"""Small Pulumi programs that declare raw provider resources for the policy tests.

Each program declares compliant resources named `ok-*` and one violating resource per
rule named `bad-*`, so one mock-engine preview per cloud serves every rule's pair of cases.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from elastic_gpu.tools.offline.policy_run import PolicyReport, run_policies
from elastic_gpu.tools.offline.runner import Preview, run_preview

PROJECT = "name: policy-test\nruntime: python\nstackConfigDir: stacks\n"

AWS = """
import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from elastic_gpu.aws.asg_tags import node_template_tags
from elastic_gpu.scheduling import GPU_TAINT, node_labels, tolerations_for

TAGS = {"project": "p", "cost-center": "cc"}
TAINT = {"key": GPU_TAINT.key, "value": GPU_TAINT.value, "effect": "NO_SCHEDULE"}


def lt(name, *, encrypted="true", tokens="required", public=None):
    return aws.ec2.LaunchTemplate(
        name,
        block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"encrypted": encrypted, "volume_size": 100}}],
        metadata_options={"http_tokens": tokens, "http_put_response_hop_limit": 1},
        network_interfaces=[{"associate_public_ip_address": public}] if public else None,
        tags=TAGS,
    )


def ng(name, *, pool="ok", spot=True, capacity=None, types=("g4dn.xlarge",), ami="AL2023_x86_64_NVIDIA",
       min_size=0, max_size=4, desired=0, taints=(TAINT,), tags=TAGS, template=True, asg_tags=True, ignore=True,
       owned_tags=False, extra_labels=None):
    labels = node_labels(pool=pool, node_class="gpu", spot=spot) | (extra_labels or {})
    if capacity:
        labels["elastic-gpu.io/capacity"] = capacity
    group = aws.eks.NodeGroup(
        name,
        cluster_name="c1",
        node_group_name=f"c1-{name}",
        node_role_arn="arn:aws:iam::1:role/n",
        subnet_ids=["s1"],
        ami_type=ami,
        capacity_type="SPOT" if spot else "ON_DEMAND",
        instance_types=list(types),
        labels=labels,
        taints=list(taints),
        scaling_config={"min_size": min_size, "max_size": max_size, "desired_size": desired},
        launch_template={"id": lt(f"{name}-lt").id, "version": "1"} if template else None,
        tags=tags,
        opts=pulumi.ResourceOptions(ignore_changes=["scalingConfig.desiredSize"] if ignore else []),
    )
    if asg_tags:
        from elastic_gpu.scheduling import Taint
        tags_ = node_template_tags(
            labels=labels, taints=[Taint(t["key"], t["value"]) for t in taints], resources={"nvidia.com/gpu": "1"}
        )
        if owned_tags:  # EKS sets these itself: declaring them is flagged
            tags_ |= {"k8s.io/cluster-autoscaler/enabled": "true", "k8s.io/cluster-autoscaler/c1": "owned"}
        for i, (k, v) in enumerate(sorted(tags_.items())):
            aws.autoscaling.Tag(f"{name}-t{i}", autoscaling_group_name=f"eks-c1-{name}-uuid",
                                tag={"key": k, "value": v, "propagate_at_launch": False})
    return group


ng("ok-spot")
ng("ok-fallback", spot=False)
ng("bad-notaint", taints=())
ng("bad-minsize", min_size=1)
ng("bad-notspot", spot=False, capacity="spot")
ng("bad-noasgtags", asg_tags=False)
ng("bad-ownedtags", owned_tags=True)
ng("bad-pinned", ignore=False)
ng("bad-nolt", template=False)
ng("bad-untagged", tags={"project": "p"})
ng("bad-nofallback", pool="lonely")
ng("bad-toobig", max_size=50)
ng("ok-onemodel", types=("g5.xlarge", "g5.2xlarge"), extra_labels={"k8s.amazonaws.com/accelerator": "nvidia-a10g"})
ng("bad-twomodels", types=("g5.xlarge", "g6.xlarge"), extra_labels={"k8s.amazonaws.com/accelerator": "nvidia-a10g"})


def irsa_role(name, federated):
    import json
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Federated": federated},
                                                     "Action": "sts:AssumeRoleWithWebIdentity"}]}
    aws.iam.Role(name, assume_role_policy=json.dumps(trust), tags=TAGS)


irsa_role("ok-irsa", "arn:aws:iam::1:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC")
irsa_role("bad-irsa", "")  # pulumi-eks without create_oidc_provider: oidcProviderArn is ""
lt("bad-lt-unencrypted", encrypted="false")
lt("bad-lt-imdsv1", tokens="optional")
lt("bad-lt-public", public="true")
aws.ec2.Vpc("ok-vpc", cidr_block="10.0.0.0/16", tags=TAGS)
aws.ec2.Vpc("bad-vpc-untagged", cidr_block="10.1.0.0/16")


def plugin(name, tolerations):
    k8s.apps.v1.DaemonSet(name, metadata={"name": name, "namespace": "kube-system"}, spec={
        "selector": {"match_labels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {
            "containers": [{"name": "p", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"}],
            "tolerations": tolerations}}})


plugin("ok-plugin", tolerations_for([GPU_TAINT]))
plugin("bad-plugin", [{"key": "other", "operator": "Exists", "effect": "NoSchedule"}])


def autoscaler(name, node_selector, tolerations=None):
    k8s.apps.v1.Deployment(name, metadata={"name": name, "namespace": "kube-system"}, spec={
        "selector": {"match_labels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {
            "containers": [{"name": "ca", "image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.6"}],
            "node_selector": node_selector, "tolerations": tolerations}}})


autoscaler("ok-ca", {"elastic-gpu.io/capacity": "on-demand", "elastic-gpu.io/node-class": "general"})
# An autoscaler that lists its groups: every GPU group but bad-unlisted (ASG names eks-<group>-<uuid>).
LISTED = [n for n in ("ok-spot", "ok-fallback", "bad-notaint", "bad-minsize", "bad-notspot", "bad-noasgtags",
                      "bad-ownedtags", "bad-pinned", "bad-nolt", "bad-untagged", "bad-nofallback", "bad-toobig",
                      "ok-onemodel", "bad-twomodels")]
ng("bad-unlisted")
k8s.apps.v1.Deployment("ok-ca-listed", metadata={"name": "ca2", "namespace": "kube-system"}, spec={
    "selector": {"match_labels": {"app": "ca2"}},
    "template": {"metadata": {"labels": {"app": "ca2"}}, "spec": {
        "containers": [{"name": "ca", "image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.6",
                        "command": ["./cluster-autoscaler", "--cloud-provider=aws",
                                    *[f"--nodes=0:4:eks-c1-{n}-uuid" for n in LISTED]]}],
        "node_selector": {"elastic-gpu.io/capacity": "on-demand", "elastic-gpu.io/node-class": "general"}}}})
autoscaler("bad-ca", None, [{"key": "nvidia.com/gpu", "operator": "Exists"}])
# The general pool the ok-* autoscalers run on (its labels are what they select), and controllers that fit no pool:
# an autoscaler pinned to a label no node group has, one that tolerates nothing, a Karpenter chart on the system
# nodes of a user's own labels.
ng("ok-general", pool="general", spot=False, types=("m6i.large",), ami="AL2023_x86_64_STANDARD", taints=(),
   min_size=1, asg_tags=False, extra_labels={"elastic-gpu.io/node-class": "general"})
autoscaler("bad-ca-nowhere", {"elastic-gpu.io/capacity": "on-demand", "node-role": "system"})
autoscaler("ok-ca-nodegroup",
           {"eks.amazonaws.com/nodegroup": "c1-ok-general", "eks.amazonaws.com/capacityType": "ON_DEMAND"})
autoscaler("bad-ca-spot-only", {"eks.amazonaws.com/capacityType": "SPOT", "elastic-gpu.io/node-class": "general"})
k8s.helm.v3.Release("bad-karpenter-nowhere", chart="oci://registry.example/karpenter/karpenter", values={
    "nodeSelector": {"node-role": "system"}})
k8s.helm.v3.Release("ok-karpenter", chart="oci://registry.example/karpenter/karpenter", values={
    "nodeSelector": {"elastic-gpu.io/pool": "general"}})
"""

AZURE = """
import pulumi
import pulumi_azure_native.containerservice as cs
import pulumi_kubernetes as k8s

from elastic_gpu.scheduling import GPU_TAINT, node_labels, tolerations_for

TAGS = {"project": "p", "cost-center": "cc"}


def pool(name, *, pool="ok", spot=True, priority=None, eviction="Delete", size="Standard_NC4as_T4_v3", taints=None,
         min_count=0, max_count=3, count=None, public=False, tags=TAGS, ignore=()):
    cs.AgentPool(
        name,
        resource_group_name="rg",
        resource_name_="aks",
        agent_pool_name=name.replace("-", "")[:12],
        mode="User",
        vm_size=size,
        scale_set_priority=priority or ("Spot" if spot else "Regular"),
        scale_set_eviction_policy=eviction if spot else None,
        enable_auto_scaling=True,
        min_count=min_count,
        max_count=max_count,
        count=count,
        node_taints=[str(GPU_TAINT)] if taints is None else taints,
        node_labels=node_labels(pool=pool, node_class="gpu", spot=spot),
        enable_node_public_ip=public,
        tags=tags,
        opts=pulumi.ResourceOptions(ignore_changes=list(ignore)),
    )


cs.ManagedCluster(
    "ok-aks",
    resource_group_name="rg",
    location="eastus",  # the agent pools' region (for the cost ceiling)
    agent_pool_profiles=[{"name": "system", "mode": "System", "vm_size": "Standard_D4s_v3", "count": 2,
                          "enable_auto_scaling": True, "min_count": 2, "max_count": 3}],
    tags=TAGS,
    opts=pulumi.ResourceOptions(ignore_changes=["agentPoolProfiles[0].count"]),
)
pool("ok-spot", count=0, ignore=["count"])
pool("ok-fallback", spot=False)
pool("bad-notaint", taints=[])
pool("bad-minsize", min_count=1)
pool("bad-deallocate", eviction="Deallocate")
pool("bad-notspot", priority="Regular")  # labelled spot, billed regular
pool("bad-pinned", count=1)
pool("bad-public", public=True)
pool("bad-untagged", tags={"cost-center": "cc"})
pool("bad-toobig", max_count=40)
pool("bad-nofallback", pool="lonely")

for name, taints in (("ok-plugin", [GPU_TAINT]), ("bad-plugin", None)):
    from elastic_gpu.scheduling import AKS_SPOT_TAINT
    tols = tolerations_for(taints + [AKS_SPOT_TAINT]) if taints else tolerations_for([GPU_TAINT])
    k8s.apps.v1.DaemonSet(name, metadata={"name": "nvidia-device-plugin-" + name}, spec={
        "selector": {"match_labels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {
            "containers": [{"name": "p", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"}],
            "tolerations": tols}}})
"""

GCP = """
import pulumi
import pulumi_gcp as gcp

from elastic_gpu.scheduling import node_labels

LABELS = {"project": "p", "cost-center": "cc"}
TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}


def pool(name, *, pool="ok", spot=True, preemptible=None, taints=(TAINT,), autoscaling=True, min_nodes=0,
         max_nodes=3, node_count=None, private=True, labels=LABELS, ignore=()):
    gcp.container.NodePool(
        name,
        name=name,
        cluster="c1",
        location="us-central1-c",  # a zone: the cost ceiling prices the pool in its region, us-central1
        node_count=node_count,
        node_config={
            "machine_type": "n1-standard-4",
            "spot": spot or None,
            "preemptible": preemptible,
            "guest_accelerators": [{"type": "nvidia-tesla-t4", "count": 1}],
            "taints": list(taints),
            "labels": node_labels(pool=pool, node_class="gpu", spot=spot or bool(preemptible)),
            "resource_labels": labels,
        },
        autoscaling={"total_min_node_count": min_nodes, "total_max_node_count": max_nodes} if autoscaling else None,
        network_config={"enable_private_nodes": private},
        opts=pulumi.ResourceOptions(ignore_changes=list(ignore)),
    )


pool("ok-spot", node_count=0, ignore=["nodeCount"])
pool("ok-fallback", spot=False)
pool("bad-notaint", taints=())
pool("bad-minsize", min_nodes=1)
pool("bad-preemptible", spot=False, preemptible=True)
pool("bad-pinned", node_count=1)
pool("bad-public", private=False)
pool("bad-unlabelled", labels={"project": "p"})
pool("bad-unbounded", autoscaling=False)
pool("bad-toobig", max_nodes=30)
pool("bad-nofallback", pool="lonely")
"""

PROGRAMS = {"aws": AWS, "azure": AZURE, "gcp": GCP}
#: The AWS program uses the default provider: its region comes from the stack config, as under the engine.
CONFIGS = {"aws": "config:\n  aws:region: us-east-1\n"}
_ROOT = Path(tempfile.mkdtemp(prefix="policy-programs-"))
atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)


def write_program(source: str, directory: Path, config: str = "config: {}\n") -> Path:
    (directory / "stacks").mkdir(parents=True, exist_ok=True)
    (directory / "Pulumi.yaml").write_text(PROJECT)
    (directory / "__main__.py").write_text(source)
    (directory / "stacks" / "Pulumi.test.yaml").write_text(config)
    return directory


@cache
def program_preview(cloud: str) -> Preview:
    """The cloud's test program under the mock engine (cached: read-only)."""
    return run_preview("test", write_program(PROGRAMS[cloud], _ROOT / cloud, CONFIGS.get(cloud, "config: {}\n")))


#: The test programs declare raw provider resources, not elastic-gpu components: they opt in, as a user
#: opts in resources of their own (policy_rules/scope.py).
OPT_IN: dict[str, Any] = {"all": {"includeResources": ["*"]}}


def judge(preview: Preview, config: dict[str, Any] | None = None) -> PolicyReport:
    """The pack over a test program's resources (opted in), with `config` on top."""
    return run_policies(preview, config={**OPT_IN, **(config or {})})


@cache
def program_report(cloud: str) -> PolicyReport:
    return judge(program_preview(cloud))


def flagged(cloud: str, policy: str) -> set[str]:
    """Names of the resources the policy flags in the cloud's program (stack-wide violations as '<stack>')."""
    return {v.name or "<stack>" for v in program_report(cloud).of(policy)}
