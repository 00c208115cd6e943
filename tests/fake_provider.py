"""A cloud that does not exist, as one class implementing both protocols a cloud gives: the library's deploy
protocol `CloudProvider` (elastic_gpu/provider.py) and the tools' `ToolCloud` (elastic_gpu/tools/tool_cloud.py): what
adding a cloud takes. Registered by tests/test_fake_provider.py (`clouds.REGISTRY` and the tools' registry), it
drives the cloud-neutral core, config rules, builders, pool reader, policy rules, report and simulation, with no
cloud SDK. It records every member called (`calls`) and raises a failure a test gives it (`fail`), so a test can
say what the core asked of a cloud and what it does when a cloud's part breaks.

Its node group is one resource, `fake:compute:NodeGroup`, whose inputs say everything the readers need:
`name`, `instanceType`, `spot`, `minSize`, `maxSize`, `region`, `zones`, `labels`, `taints` ("key=value:Effect").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date
from typing import Any

import pulumi

from elastic_gpu.clouds import MinorSupport, ReplacementRows
from elastic_gpu.config import GpuPoolConfig, StackConfig
from elastic_gpu.general_pool import GeneralPoolArgs
from elastic_gpu.pool_types import BuiltPool, NodeGroupRef
from elastic_gpu.provider import (
    AutoscalerBuilder,
    CloudFacts,
    CloudProvider,
    ConfigRules,
    PoolBuilder,
    StackBuilder,
    VersionRows,
)
from elastic_gpu.scheduling import CAPACITY_LABEL, EPHEMERAL_STORAGE, GPU_RESOURCE, POOL_LABEL, Taint
from elastic_gpu.spot_gpu_pool import SpotGpuPoolArgs
from elastic_gpu.tools.node_group_view import NodeGroupView, StackResource, intends_spot, parse_taint_string
from elastic_gpu.tools.offline.cloud_mocks import Mocks
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.policy.pack_parts import PackRules
from elastic_gpu.tools.simulation.fit import NodeTemplate
from elastic_gpu.tools.simulation.templates import NodeGroupReader
from elastic_gpu.tools.simulation.timings import AutoscalerTiming, Evidence, timeout_only
from elastic_gpu.tools.tool_cloud import ToolCloud
from elastic_gpu.validation import Bounds, TagRules
from elastic_gpu.workload import WorkloadContract

FAKE_NODE_GROUP = "fake:compute:NodeGroup"
#: The fake's GPU instance types are named fake/gpu<n>, with n GPUs; CPU types fake/<size>.
GPU_TYPE = re.compile(r"^fake/gpu(?P<gpus>[0-9]+)$")
#: One minor, supported until a day far ahead (so no test depends on today's date).
SUPPORT = MinorSupport("1.33", date(2099, 1, 1), date(2099, 1, 1), "the fake cloud's release notes")
GPU_TAINT = Taint(GPU_RESOURCE, "present", "NoSchedule")


def _gpus(instance_type: str) -> int:
    match = GPU_TYPE.match(instance_type)
    return int(match["gpus"]) if match else 0


def _read(resource: StackResource, stack: Sequence[StackResource] | None) -> list[NodeGroupView]:
    """Its one reader: a node group from its own props; where it bills only when read against the stack."""
    if resource.resource_type != FAKE_NODE_GROUP:
        return []
    props = resource.props
    name = props.get("name") or resource.name
    labels = dict(props.get("labels") or {})
    instance_type = props.get("instanceType") or ""
    taints = [parse_taint_string(t) for t in props.get("taints") or []]
    region = props.get("region")
    return [
        NodeGroupView(
            cloud="fake",
            name=name,
            pool=labels.get(POOL_LABEL, name),
            gpu=_gpus(instance_type) > 0,
            spot=bool(props.get("spot")),
            intends_spot=intends_spot(labels, name),
            instance_types=[instance_type] if instance_type else [],
            min_size=props.get("minSize"),
            max_size=props.get("maxSize"),
            pinned_size_path=None,
            autoscaled=True,
            taints=taints,
            labels=labels,
            region=region if stack is not None and isinstance(region, str) else None,
            resource=resource.name,
            declared_name=resource.name,
            zones=list(props.get("zones") or []),
            shown_taints=[str(t) for t in taints],
            capacity_types=["spot" if props.get("spot") else "on-demand"],
        )
    ]


def _templates(preview: Preview, views: list[NodeGroupView]) -> list[NodeTemplate]:
    """Every node of the fake cloud has 8 vCPUs, 32 GiB and 100 GiB of disk, and the GPUs its type names."""
    return [
        NodeTemplate(
            name=v.name,
            resource=v.resource,
            autoscaler_name=v.name,
            pool=v.pool,
            capacity="spot" if v.spot else "on-demand",
            instance_type=v.instance_types[0],
            labels=dict(v.labels),
            taints=list(v.taints),
            allocatable={
                "cpu": 8.0,
                "memory": 32 * 2.0**30,
                EPHEMERAL_STORAGE: 100 * 2.0**30,
                "pods": 110.0,
                GPU_RESOURCE: float(_gpus(v.instance_types[0])),
            },
            min_size=v.min_size or 0,
            max_size=v.max_size or 0,
            zones=list(v.zones),
            region=v.region,
            instance_types=list(v.instance_types),
        )
        for v in views
    ]


def _problems(cfg: StackConfig) -> list[str]:
    if cfg.cluster.region.startswith("fake-"):
        return []
    return [f"cluster.region: {cfg.cluster.region!r} is not a fake region; allowed: fake-<name>"]


def _declare(name: str, args: GeneralPoolArgs | SpotGpuPoolArgs, spot: bool, parent: pulumi.Resource) -> BuiltPool:
    labels = {POOL_LABEL: name, CAPACITY_LABEL: "spot" if spot else "on-demand"}
    taints = [GPU_TAINT] if isinstance(args, SpotGpuPoolArgs) else []
    group = pulumi.CustomResource(
        FAKE_NODE_GROUP,
        name,
        {
            "name": name,
            "instanceType": args.instance_types[0],
            "spot": spot,
            "minSize": args.min_size,
            "maxSize": args.max_size,
            "labels": labels,
            "taints": [str(t) for t in taints],
        },
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return BuiltPool(
        node_groups=[
            NodeGroupRef(
                name=name,
                capacity="spot" if spot else "on-demand",
                name_regex=f"^{re.escape(name)}$",
                min_size=args.min_size,
                max_size=args.max_size,
            )
        ],
        taints=taints,
        labels=labels,
        resources=[group],
    )


def _contract(name: str, args: SpotGpuPoolArgs) -> WorkloadContract:
    return WorkloadContract(pool=name, taints=(GPU_TAINT,), node_selector={POOL_LABEL: name})


def _no_stack(cfg: StackConfig, general: object, gpu_pools: object) -> dict[str, Any]:
    raise NotImplementedError("the fake cloud composes no stack: the tests drive its parts one by one")


class FakeCloud:
    """The fake cloud: every member of `CloudProvider` and of `ToolCloud`, and none of the optional capabilities.
    Each method call is recorded in `calls` (its name), and so is each call of a builder it hands out (with the
    pool's name: `build_spot_gpu_pool gpu`); either raises the error `fail` set for it, if any. Made with another
    name and left out of the registry (`FakeCloud("unregistered")`), only a function that takes the provider it is
    handed can use it: one that looks a cloud up by name finds none."""

    name = "fake"
    facts = CloudFacts(
        service="FKS",
        handle_attributes=("zone_group",),
        existing_hint="FakeCluster.existing(...)",
        instance_type_pattern=r"fake/[a-z0-9]+",
        example_instance_type="fake/medium",
        spot_fix="set spot: true",
        one_group_many_types=False,
        prices_accelerators=False,
        pins_autoscaler_image=False,
    )
    owner = "a fake"

    def __init__(self, name: str = "fake") -> None:
        self.name = name
        #: the members called, in order (not the plain attributes: name, facts, owner)
        self.calls: list[str] = []
        self._failures: dict[str, Exception] = {}

    def _called(self, member: str, detail: str = "") -> None:
        self.calls.append(f"{member} {detail}" if detail else member)
        if (error := self._failures.get(member)) is not None:
            raise error

    def _recorded(self, member: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn`, a builder the provider hands out, recorded as `member <pool name>` when called."""

        def call(name: str, *args: Any) -> Any:
            self._called(member, name)
            return fn(name, *args)

        return call

    @contextmanager
    def fail(self, member: str, error: Exception) -> Iterator[None]:
        """Within the block, calling `member` raises `error` (as a cloud's part that breaks would)."""
        self._failures[member] = error
        try:
            yield
        finally:
            del self._failures[member]

    def reset(self) -> None:
        """Forget the calls and the failures (between tests: the registry holds one instance)."""
        self.calls.clear()
        self._failures.clear()

    def config_rules(self) -> ConfigRules:
        self._called("config_rules")
        return ConfigRules(
            problems=_problems,
            warnings=lambda cfg: [f"gpuPools: {len(cfg.gpu_pools)} pool(s) on a cloud that does not exist"],
            gpus_per_node_selects=lambda pool: False,
            provisioners=("cluster-autoscaler",),
            splits_per_zone=False,
            default_per_zone=False,
            priority_expander=True,
            machine_type_pattern=r"fake/(small|medium|large|gpu[0-9]+)",
            machine_type_source="the fake cloud's type list",
            tag_rules=TagRules(what="tag", max_count=10, key_max=64, value_max=64),
            disk_gib=Bounds(10, 100, "the fake cloud's disks"),
            time_slicing_replicas=Bounds(2, 4, "the fake cloud's GPUs"),
        )

    def ignored_settings(self) -> Mapping[tuple[str, str | None], str]:
        self._called("ignored_settings")
        return {("cluster", "network_cidr"): "the fake cloud has no network of its own; remove it"}

    def stack_builder(self) -> StackBuilder:
        self._called("stack_builder")
        return StackBuilder(cluster_problems=lambda cfg: [], pool_args=_pool_args, build_stack=_no_stack)

    def pool_builder(self) -> PoolBuilder:
        self._called("pool_builder")
        return PoolBuilder(
            override_problems=lambda where, args: [],
            pool_problems=lambda where, args: [],
            node_group_counts=lambda args: (1, 1 if args.on_demand_fallback else 0),
            workload_contract=self._recorded("workload_contract", _contract),
            build_general_pool=self._recorded(
                "build_general_pool", lambda name, args, parent: _declare(name, args, False, parent)
            ),
            build_spot_gpu_pool=self._recorded(
                "build_spot_gpu_pool", lambda name, args, parent: _declare(name, args, args.spot, parent)
            ),
            default_max_minutes_to_fallback=20.0,
        )

    def autoscaler_builder(self) -> AutoscalerBuilder:
        # The fake cloud runs its own autoscaler, as AKS does: nothing of ours to declare.
        self._called("autoscaler_builder")
        return AutoscalerBuilder(build_autoscaler=lambda name, args, parent: {}, runs_pod=False)

    def reader(self) -> NodeGroupReader:
        self._called("reader")
        return NodeGroupReader(read_node_groups=_read, node_templates=_templates)

    def autoscaler_timing(self, preview: Preview) -> AutoscalerTiming | None:
        self._called("autoscaler_timing")
        if not preview.of_type(FAKE_NODE_GROUP):
            return None
        provision_minutes = float(preview.config.get("fake:maxNodeProvisionMinutes", 15))
        return AutoscalerTiming(
            cloud="fake",
            expanders=("priority", "least-waste"),
            priorities={20: [".*spot.*"], 10: [".*"]},
            scale_down_unneeded=10.0,
            scale_down_delay_after_add=10.0,
            max_node_provision=provision_minutes,
            machine=timeout_only(10, round(provision_minutes * 60), "the fake cloud reports no failed launch"),
            source="the fake cloud's defaults",
            evidence=Evidence("docs", "the fake cloud's autoscaler page"),
        )

    def mocks(self) -> Mocks:
        self._called("mocks")
        return Mocks(
            resources={FAKE_NODE_GROUP: lambda name, inputs: {"selfLink": f"fake://groups/{name}"}}, invokes={}
        )

    def pack(self) -> PackRules:
        self._called("pack")
        return PackRules(policies=(), public_node_ips=_no_public_ips, cost_tags={})

    def versions(self) -> VersionRows:
        self._called("versions")
        return VersionRows(kubernetes_support=(SUPPORT,), version_inputs={}, node_version_inputs={})

    def replacement(self) -> ReplacementRows:
        self._called("replacement")
        return ReplacementRows({}, {}, {FAKE_NODE_GROUP: "name"}, {}, {}, {})


def _pool_args(cfg: StackConfig, pool: GpuPoolConfig) -> dict[str, Any]:
    return {}


def _no_public_ips(resources: Sequence[Any]) -> Iterator[tuple[Any, str]]:
    return iter(())  # the fake cloud's nodes have no public IPs


#: The one fake cloud, as the registries import it (clouds.REGISTRY["fake"] = "tests.fake_provider": `PROVIDER`;
#: the tools' REGISTRY: `TOOLS`); the annotations make the type checker hold the class to both protocols.
CLOUD = FakeCloud()
PROVIDER: CloudProvider = CLOUD
TOOLS: ToolCloud = CLOUD
