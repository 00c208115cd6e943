# Copyright 2016-2021, Pulumi Corporation.  All rights reserved.

import pulumi
from pulumi_azure_native import resources, containerservice
import pulumi_azuread as ad


config = pulumi.Config()
password = config.get_secret("password")
ssh_public_key = config.require("sshPublicKey")
location = config.get("location") or "eastus"

resource_group = resources.ResourceGroup("aks", location=location)

ad_app = ad.Application(
    "aks",
    display_name="my-aks-multicluster",
)

ad_sp = ad.ServicePrincipal("aksSp", client_id=ad_app.client_id)

ad_sp_password = ad.ServicePrincipalPassword(
    "aksSpPassword",
    service_principal_id=ad_sp.id,
    end_date="2099-01-01T00:00:00Z",
)

aks_cluster_configs = [
    {
        "name": "east",
        "location": "eastus",
        "node_count": 2,
        "node_size": "Standard_D2_v2",
    },
    {
        "name": "west",
        "location": "westus",
        "node_count": 2,
        "node_size": "Standard_D2_v2",
    },
]

cluster_names = []
clusters = []
for cluster_config in aks_cluster_configs:
    cluster = containerservice.ManagedCluster(
        "aksCluster-{}".format(cluster_config["name"]),
        resource_group_name=resource_group.name,
        linux_profile=containerservice.ContainerServiceLinuxProfileArgs(
            admin_username="aksuser",
            ssh=containerservice.ContainerServiceSshConfigurationArgs(
                public_keys=[
                    containerservice.ContainerServiceSshPublicKeyArgs(
                        key_data=ssh_public_key,
                    )
                ],
            ),
        ),
        service_principal_profile=containerservice.ManagedClusterServicePrincipalProfileArgs(
            client_id=ad_app.client_id, secret=ad_sp_password.value
        ),
        location=cluster_config["location"],
        agent_pool_profiles=[
            containerservice.ManagedClusterAgentPoolProfileArgs(
                name="aksagentpool",
                mode=containerservice.AgentPoolMode.SYSTEM,
                count=cluster_config["node_count"],
                vm_size=cluster_config["node_size"],
            )
        ],
        dns_prefix="{}-kube".format(pulumi.get_stack()),
        kubernetes_version="1.26.3",
    )
    cluster_names.append(cluster.name)
    clusters.append(cluster)

pulumi.export("aks_cluster_names", pulumi.Output.all(cluster_names))

# --- elastic-gpu: the lines a user adds for spot GPU pools on each cluster ---
from elastic_gpu import (AksCluster, ClusterAutoscaler, ClusterAutoscalerArgs, NvidiaDevicePlugin,
                         NvidiaDevicePluginArgs, SpotGpuPool, SpotGpuPoolArgs)

TAGS = {"project": "ml-platform", "cost-center": "research"}
ZONES = {"east": ["1", "2"], "west": []}  # westus has no availability zones: regional agent pools
gpu_agent_pools = {}
for cluster_config, managed_cluster in zip(aks_cluster_configs, clusters):
    name = cluster_config["name"]
    gpu_cluster = AksCluster.from_managed_cluster(f"gpu-{name}", managed_cluster,
                                                  resource_group_name=resource_group.name, zones=ZONES[name], tags=TAGS)
    a10 = SpotGpuPool(f"a10-{name}", SpotGpuPoolArgs(cluster=gpu_cluster, instance_types=["Standard_NV36ads_A10_v5"],
                                                     max_size=4, on_demand_fallback=True, tags=TAGS))
    NvidiaDevicePlugin(f"nvidia-{name}", NvidiaDevicePluginArgs(provider=gpu_cluster.provider, gpu_pools=[a10]))
    ClusterAutoscaler(f"autoscaler-{name}", ClusterAutoscalerArgs(cluster=gpu_cluster, gpu_pools=[a10]))
    gpu_agent_pools[name] = a10.node_group_names
pulumi.export("gpuAgentPools", gpu_agent_pools)
