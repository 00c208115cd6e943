"""NvidiaDevicePlugin: NVIDIA's device plugin, only on GPU nodes, tolerating what they carry."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import yaml
from pydantic import Field

from elastic_gpu.args_doc import documented, documented_component
from elastic_gpu.errors import ConfigError
from elastic_gpu.karpenter_core import time_slicing_problem
from elastic_gpu.scheduling import GPU_NODE_LABEL, GPU_NODE_LABEL_VALUE, GPU_RESOURCE, POOL_LABEL, tolerations_for
from elastic_gpu.settings import DevicePluginSettings, device_plugin_settings_problems
from elastic_gpu.settings.base import ArgsModel
from elastic_gpu.spot_gpu_pool import SpotGpuPool
from elastic_gpu.validation import args_type_problems
from elastic_gpu.versions import DEVICE_PLUGIN_IMAGE

TYPE_TOKEN = "elastic-gpu:index:NvidiaDevicePlugin"

#: Names and paths as in NVIDIA's static manifest (deployments/static/nvidia-device-plugin.yml).
DAEMONSET_NAME = "nvidia-device-plugin-daemonset"
SELECTOR_LABELS = {"name": "nvidia-device-plugin-ds"}
DEVICE_PLUGIN_PATH = "/var/lib/kubelet/device-plugins"
CONFIG_MAP_NAME = "nvidia-device-plugin-config"
CONFIG_DIR = "/etc/nvidia-device-plugin"
DEFAULT_NAMESPACE = "kube-system"


@documented
class NvidiaDevicePluginArgs(ArgsModel, DevicePluginSettings):
    """Settings of the NvidiaDevicePlugin: elastic_gpu.settings.DevicePluginSettings (a stack file's
    `devicePlugin`) and what only a program gives; keyword arguments."""

    model_config = ArgsModel.model_config

    provider: k8s.Provider
    """The cluster's Kubernetes provider (`cluster.provider`; never the ambient kubeconfig)."""
    gpu_pools: list[SpotGpuPool]
    """The GPU pools it serves: it tolerates every taint they carry."""
    namespace: str = DEFAULT_NAMESPACE
    """Where the DaemonSet and ConfigMap go."""
    image: str = DEVICE_PLUGIN_IMAGE
    """The pinned NVIDIA image (elastic_gpu/versions.py)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Extra labels on the DaemonSet and ConfigMap."""
    daemonset_name: str = DAEMONSET_NAME
    """As in NVIDIA's manifest; change it when the cluster already runs a device plugin under that name."""
    config_map_name: str = CONFIG_MAP_NAME
    """The time-slicing ConfigMap's name."""


def time_slicing_config(replicas: int) -> str:
    """The plugin's config file (format `version: v1`, sharing.timeSlicing)."""
    return yaml.safe_dump(
        {"version": "v1", "sharing": {"timeSlicing": {"resources": [{"name": GPU_RESOURCE, "replicas": replicas}]}}},
        sort_keys=False,
    )


@documented_component(NvidiaDevicePluginArgs)
class NvidiaDevicePlugin(pulumi.ComponentResource):
    """NVIDIA's k8s-device-plugin as a DaemonSet on the stack's GPU nodes.

    Follows NVIDIA's static manifest (kube-system, system-node-critical, no
    privilege escalation, all capabilities dropped, the kubelet's device-plugins
    hostPath), plus what the manifest leaves to the user: a node selector on our
    GPU label and tolerations derived from the GPU pools' taints, so adding a
    taint to a pool never strands the plugin. Pools whose node image ships its
    own plugin (Bottlerocket NVIDIA) are left out; if every pool does, nothing is
    declared. On GKE every GPU pool reports `ships_device_plugin`: GKE installs
    and manages its own NVIDIA device plugin (and driver) on GPU nodes, so this
    component declares nothing there (no second plugin fighting for the GPUs).
    With `time_slicing_replicas`, a ConfigMap enables GPU sharing.
    """

    daemonset: k8s.apps.v1.DaemonSet | None
    """The plugin's DaemonSet; None when every pool's nodes run their own plugin (GKE, Bottlerocket)."""
    served_pools: list[SpotGpuPool]
    """The GPU pools whose nodes it runs on."""
    tolerations: list[dict[str, str]]
    """The tolerations it carries: every taint of the pools it serves."""

    def __init__(self, name: str, args: NvidiaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        where = f"NvidiaDevicePlugin '{name}': NvidiaDevicePluginArgs."
        problems = args_type_problems(where, args)
        if not problems:
            problems = device_plugin_settings_problems(f"{where}time_slicing_replicas", args)
        if not problems and args.time_slicing_replicas is not None:
            # A pool whose provisioner sizes nodes by physical GPUs (Karpenter) would over-launch.
            physical = [
                p.pool_name for p in args.gpu_pools if getattr(p.args.provisioner, "plans_physical_gpus", False)
            ]
            if physical:
                problems.append(
                    time_slicing_problem(f"{where}time_slicing_replicas", args.time_slicing_replicas)
                    + f" (pools {', '.join(physical)})"
                )
        if problems:
            raise ConfigError(problems, source=f"NvidiaDevicePlugin '{name}'")
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.served_pools = [p for p in args.gpu_pools if not p.ships_device_plugin]
        self.daemonset = None
        if self.served_pools:
            self.daemonset = self._declare(name, args)
        self.tolerations = tolerations_for([t for p in self.served_pools for t in p.taints])
        self.register_outputs({"daemonset_name": self.daemonset.metadata.name if self.daemonset else None})

    def _declare(self, name: str, args: NvidiaDevicePluginArgs) -> k8s.apps.v1.DaemonSet:
        opts = pulumi.ResourceOptions(parent=self, provider=args.provider)
        taints = [t for p in self.served_pools for t in p.taints]
        volumes = [
            k8s.core.v1.VolumeArgs(
                name="device-plugin",
                host_path=k8s.core.v1.HostPathVolumeSourceArgs(path=DEVICE_PLUGIN_PATH, type="Directory"),
            )
        ]
        mounts = [k8s.core.v1.VolumeMountArgs(name="device-plugin", mount_path=DEVICE_PLUGIN_PATH)]
        env = [k8s.core.v1.EnvVarArgs(name="FAIL_ON_INIT_ERROR", value="false")]
        if args.time_slicing_replicas:
            k8s.core.v1.ConfigMap(
                f"{name}-config",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=args.config_map_name, namespace=args.namespace, labels=args.labels
                ),
                data={"config.yaml": time_slicing_config(args.time_slicing_replicas)},
                opts=opts,
            )
            volumes.append(
                k8s.core.v1.VolumeArgs(
                    name="config", config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(name=args.config_map_name)
                )
            )
            mounts.append(k8s.core.v1.VolumeMountArgs(name="config", mount_path=CONFIG_DIR, read_only=True))
            env.append(k8s.core.v1.EnvVarArgs(name="CONFIG_FILE", value=f"{CONFIG_DIR}/config.yaml"))

        affinity = None
        if len(self.served_pools) < len(args.gpu_pools):
            # Some pools run their own plugin: stay off their nodes.
            affinity = k8s.core.v1.AffinityArgs(
                node_affinity=k8s.core.v1.NodeAffinityArgs(
                    required_during_scheduling_ignored_during_execution=k8s.core.v1.NodeSelectorArgs(
                        node_selector_terms=[
                            k8s.core.v1.NodeSelectorTermArgs(
                                match_expressions=[
                                    k8s.core.v1.NodeSelectorRequirementArgs(
                                        key=POOL_LABEL,
                                        operator="In",
                                        values=sorted(p.pool_name for p in self.served_pools),
                                    )
                                ]
                            )
                        ]
                    )
                )
            )
        # A renamed plugin gets its own selector: two DaemonSets must never select each other's pods.
        selector = SELECTOR_LABELS if args.daemonset_name == DAEMONSET_NAME else {"name": args.daemonset_name}
        return k8s.apps.v1.DaemonSet(
            f"{name}-ds",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=args.daemonset_name, namespace=args.namespace, labels=args.labels),
            spec=k8s.apps.v1.DaemonSetSpecArgs(
                selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector),
                update_strategy=k8s.apps.v1.DaemonSetUpdateStrategyArgs(type="RollingUpdate"),
                template=k8s.core.v1.PodTemplateSpecArgs(
                    metadata=k8s.meta.v1.ObjectMetaArgs(labels=selector),
                    spec=k8s.core.v1.PodSpecArgs(
                        node_selector={GPU_NODE_LABEL: GPU_NODE_LABEL_VALUE},
                        affinity=affinity,
                        tolerations=[
                            k8s.core.v1.TolerationArgs(key=t["key"], operator=t["operator"], effect=t["effect"])
                            for t in tolerations_for(taints)
                        ],
                        priority_class_name="system-node-critical",
                        containers=[
                            k8s.core.v1.ContainerArgs(
                                name="nvidia-device-plugin-ctr",
                                image=args.image,
                                env=env,
                                security_context=k8s.core.v1.SecurityContextArgs(
                                    allow_privilege_escalation=False,
                                    capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"]),
                                ),
                                volume_mounts=mounts,
                            )
                        ],
                        volumes=volumes,
                    ),
                ),
            ),
            opts=opts,
        )
