"""GCP's own settings of a GPU pool and of the cluster (merged into elastic_gpu.settings' sections; refused on
other clouds)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from elastic_gpu.settings.base import CloudOptions

ReleaseChannel = Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"]
#: GKE's recommended release channel for production clusters.
DEFAULT_RELEASE_CHANNEL: ReleaseChannel = "REGULAR"
#: Nodes with public IPs by default; private nodes get a Cloud NAT for image pulls.
DEFAULT_PRIVATE_NODES = False
#: Zonal control plane by default (the free tier covers one zonal cluster); regional for production.
DEFAULT_REGIONAL = False
#: GKE control plane range for private clusters (a /28 outside the VPC's ranges; GKE docs' example).
DEFAULT_GKE_CONTROL_PLANE_CIDR = "172.16.0.0/28"

#: A pulumi_gcp.container.NodePoolNodeConfigArgs, checked when the pool is declared (gcp/node_spec.py
#: node_config_problems). Not spelled as that class here: the settings load, and `from elastic_gpu import ...` is
#: type-checked, without pulumi_gcp (an AWS-only install; tests/test_packaging.py).
NodeConfigInput = Any

GpuDriverVersion = Literal["DEFAULT", "LATEST"]
#: GKE installs the "Default" NVIDIA driver of the node's GKE version ("LATEST" for the newest).
DEFAULT_GPU_DRIVER_VERSION: GpuDriverVersion = "DEFAULT"


class GcpProjectOptions(CloudOptions):
    """The stack file's project (GkeClusterArgs require theirs: `project: str`)."""

    cloud: ClassVar[str] = "gcp"

    project: str | None = None
    """GCP only, required there: the project that holds the cluster (and its Workload Identity pool)."""


class GkeClusterOptions(CloudOptions):
    """GCP's own settings of a GKE cluster: the stack file's `cluster` and GkeClusterArgs."""

    cloud: ClassVar[str] = "gcp"

    release_channel: ReleaseChannel = DEFAULT_RELEASE_CHANNEL
    """GCP only: GKE release channel (default REGULAR). On RAPID, REGULAR and STABLE `kubernetesVersion` is a
    floor that GKE upgrades the cluster (minors too) past as the channel moves; EXTENDED keeps that minor until
    shortly before its end of extended support (billed past standard support)."""
    private_nodes: bool = DEFAULT_PRIVATE_NODES
    """GCP only: nodes without public IPs (default false), with a Cloud NAT for the cluster's own subnetwork
    (in a brought `network`, say whether one exists: `cloudNat`)."""
    regional: bool = DEFAULT_REGIONAL
    """GCP only: regional control plane across the region's zones (default false: zonal, in zones[0])."""
    control_plane_cidr: str = DEFAULT_GKE_CONTROL_PLANE_CIDR
    """GCP only, with privateNodes: the control plane's /28 (the firewall for webhooks such as Kueue's
    allows it); default 172.16.0.0/28. Changing it replaces the cluster."""
    network: str | None = None
    """GCP only: the VPC network (name or self link) the cluster joins. Default: the stack creates
    `<name>-net` and a subnetwork of `networkCidr` (GkeClusterArgs: `node_cidr`) with Pod and Service ranges
    (VPC-native; it never uses the project's `default` network). In a network given, GKE allocates the Pod and
    Service ranges itself. Changing it replaces the cluster."""
    subnetwork: str | None = None
    """GCP only, required with `network`: the subnetwork of it the nodes use in the region."""
    cloud_nat: bool = False
    """GCP only, with `network` and privateNodes: true when a Cloud NAT already serves the nodes' subnetwork
    (the stack creates a Router and NAT only in the network it creates). Default false: the preview warns which
    registries (nvcr.io, docker.io, quay.io, registry.k8s.io) the private nodes cannot pull from."""
    node_service_account: str | None = None
    """GCP only: the service account email every node runs as, node pools and auto-created ones alike.
    Default: the stack creates `<name>-nodes` with roles/container.defaultNodeServiceAccount only (never
    the Compute Engine default account); an email given must hold that role (grant it yourself). Changing it
    replaces the node pools."""
    enable_services: bool = False
    """GCP only: enable the APIs the stack calls (compute, container, and iam for the node service account)
    in the project; never disabled on destroy. Default false: enable them yourself."""


class GcpClusterOptions(GkeClusterOptions, GcpProjectOptions):
    """GCP's own `cluster` settings: the project, then the cluster's (GkeClusterArgs take those too, but for
    `nodeAutoProvisioning`, which a program gives as GkeClusterArgs.auto_provisioning's limits)."""

    cloud: ClassVar[str] = "gcp"

    node_auto_provisioning: bool | None = None
    """GCP only, with provisioner auto-provisioning: cluster-wide node auto-provisioning. Default None: on only
    where the cluster's version needs it for a ComputeClass to get node pools (below 1.33.3-gke.1136000). True: on,
    with resource limits summed from every pool's maxSize, which then cap the pools, but GKE may also create node
    pools for any other pending Pod within the limits' spare room. False: off (every version the stack file accepts
    is past 1.33.3-gke.1136000); GKE creates node pools only for Pods that select a pool's ComputeClass, and only the
    project's regional GPU quota bounds them."""


class GcpGpuPoolOptions(CloudOptions):
    cloud: ClassVar[str] = "gcp"

    gpu_driver_version: GpuDriverVersion = DEFAULT_GPU_DRIVER_VERSION
    """GCP only: the NVIDIA driver GKE installs on the nodes, "DEFAULT" (default) or "LATEST"."""
    queued_provisioning: bool = False
    """GCP only: Dynamic Workload Scheduler queued provisioning (flex-start capacity via ProvisioningRequests
    and Kueue, not spot); needs spot false and min size 0 (default false)."""
    max_run_hours: int | None = None
    """GCP only, with queued provisioning: hours a node runs before GKE removes it (nodeConfig.maxRunDuration),
    1 to 168; default None: 168, GKE's most for flex-start. Changing it replaces the node pool."""


class GcpGpuPoolArgsOptions(GcpGpuPoolOptions):
    """What a program sets beyond the stack file's GCP settings (a stack file's `gpusPerNode` picks it)."""

    cloud: ClassVar[str] = "gcp"

    gpu_count: int | None = None
    """GCP N1 only: GPUs attached per node (1, 2, 4 or 8 by the catalog's `gpu_counts`); default None: the
    catalog's count for the machine type."""
    node_config: NodeConfigInput = None
    """GCP only, node pools: the node pool's own `nodeConfig` inputs this library has no setting for
    (pulumi_gcp.container.NodePoolNodeConfigArgs, e.g. metadata, min_cpu_platform, shielded_instance_config,
    local_ssd_count), merged over what the pool declares. The inputs the pool sets itself (machine type, spot,
    disk, image, labels, taints, accelerators, service account, kubelet, reservation affinity, ...) are
    refused; one that forces a new node pool is part of the pool's name, so a change of it replaces the pool
    (create first). Not under auto-provisioning (GKE creates those pools from the ComputeClass)."""
