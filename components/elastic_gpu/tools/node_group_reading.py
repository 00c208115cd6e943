"""The node groups of a resource and of a stack, read by every cloud's reader and each read once: within a policy
run (`reading_each_resource_once`, by the identity of the props read) and per `Stack` (what the readers derive
from the whole stack, and every resource's node groups read against it).

What a node group is, is the read model (tools/node_group_view.py); which cloud reads a resource is known only by
its type, so every registered cloud's reader is asked (`ReaderParts`, the read model's view of a cloud).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar, cast

from pulumi_policy.proxy import UnknownValueError

from elastic_gpu.tools.clouds import CloudTools, all_clouds
from elastic_gpu.tools.engine_props import StrictDict
from elastic_gpu.tools.node_group_view import NodeGroupView, Resource, StackResource


class NodeGroupReading(Protocol):
    """What this module reads of a cloud's reader (`NodeGroupReader`, tools/simulation/templates.py, has it)."""

    @property
    def read_node_groups(self) -> Callable[[StackResource, Sequence[StackResource] | None], list[NodeGroupView]]:
        """The node groups a resource declares (empty for a type it does not read), from its props alone (a
        resource policy) or placed against the stack's resources (region, zones, shared caps) when given; props
        may be the policy engine's proxies, which raise on an unknown value."""
        ...


class ReaderParts(CloudTools, Protocol):
    """A cloud as the read model asks for it: its reader of node groups."""

    def reader(self) -> NodeGroupReading:
        """How its node groups are read from captured resources (policy, cost, report, simulation, diff): the
        one place the tools learn what a node group of this cloud is."""
        ...


def reader_clouds() -> list[ReaderParts]:
    """Every registered cloud, viewed by its reader (the registry's order). Sound because each cloud's class is
    checked against `ToolCloud` (tools/tool_cloud.py), which extends `ReaderParts`."""
    return cast(list[ReaderParts], all_clouds())


def read_node_groups(resource: StackResource, stack: Sequence[StackResource] | None = None) -> list[NodeGroupView]:
    """The node groups a resource declares (a ManagedCluster may declare several inline), read by the
    reader of each cloud (its provider's `reader().read_node_groups`): a resource's cloud is known only by its
    type, which one cloud's reader reads."""
    return [view for cloud in reader_clouds() for view in cloud.reader().read_node_groups(resource, stack)]


#: `pools_of`'s answers within a `reading_each_resource_once` block, by the identity of the props read (each
#: entry keeps its props alive, so an id is never reused within the block).
_POOLS_READ: ContextVar[dict[int, tuple[str, str, Mapping[str, Any], list[NodeGroupView]]] | None] = ContextVar(
    "elastic_gpu_pools_read", default=None
)


@contextmanager
def reading_each_resource_once() -> Iterator[None]:
    """A block in which props are not edited (a policy run): each resource's node groups are read once, however
    many resource rules ask `pools_of` for them. Outside such a block every call reads the props again."""
    token = _POOLS_READ.set({})
    try:
        yield
    finally:
        _POOLS_READ.reset(token)


def pools_of(resource_type: str, name: str, props: Mapping[str, Any]) -> list[NodeGroupView]:
    """The node groups a resource declares, from its props alone (a resource policy: no region)."""
    read = _POOLS_READ.get()
    if read is None:
        return read_node_groups(Resource(resource_type, name, props))
    entry = read.get(id(props))
    if entry is None or entry[2] is not props or entry[:2] != (resource_type, name):
        entry = (resource_type, name, props, read_node_groups(Resource(resource_type, name, props)))
        read[id(props)] = entry
    return list(entry[3])


def gpu_pools_of(resource_type: str, name: str, props: Mapping[str, Any]) -> list[NodeGroupView]:
    return [p for p in pools_of(resource_type, name, props) if p.gpu]


T = TypeVar("T")


class Stack(list[Any]):
    """The resources of one stack (a list, as the policy engine hands them), with what the readers derive
    from the whole stack (subnet -> zone, the cluster's region and limits ...) built once per stack by
    `derived`, not once per node group: a stack of N node groups is read in O(N), not O(N^2).

    Treat it as read-only: a derived value is kept while the list keeps its length, so a caller that edits
    the resources makes a new Stack (`as_stack` of its own list)."""

    def __init__(self, resources: Iterable[Any] = ()) -> None:
        super().__init__(resources)
        self._derived: dict[Callable[..., Any], tuple[int, Any]] = {}

    def derived(self, build: Callable[[Sequence[Any]], T]) -> T:
        """`build(self)`, built at the first call for this stack; an error (a value not known yet) is raised
        again at every call, as `build` would."""
        held = self._derived.get(build)
        if held is not None and held[0] == len(self):
            return cast(T, held[1])
        value = build(self)
        self._derived[build] = (len(self), value)
        return value


def as_stack(stack: Iterable[StackResource]) -> Stack:
    """`stack` itself when it is a Stack already (one stack's derived values shared by every reader and
    every rule that reads it), else a Stack of its resources."""
    return stack if isinstance(stack, Stack) else Stack(stack)


def stack_derived(stack: Sequence[StackResource], build: Callable[[Sequence[StackResource]], T]) -> T:
    """What a reader derives from the whole stack: built once per Stack (`Stack.derived`), or at each call
    for any other sequence."""
    return stack.derived(build) if isinstance(stack, Stack) else build(stack)


def resource_pools(
    resource: StackResource, stack: Iterable[StackResource] = (), *, gpu_only: bool = False
) -> list[NodeGroupView]:
    """The node groups ``resource`` declares, read against ``stack`` (region, zones, shared caps).

    None when a prop they need is not known yet (a real preview): in a stack policy one
    unknown value would otherwise abort the whole policy; the resource policies check the
    resource once its values are known. Props read by `strict_props` (for a rule whose figure needs every
    node group, such as the simulation's) raise instead: a group left out would change the figure.
    """
    stack = as_stack(stack)
    read = stack.derived(_pools_read)
    held = read.get(id(resource))
    if held is None or held[0] is not resource:
        try:
            held = (resource, read_node_groups(resource, stack))
        except UnknownValueError:
            if isinstance(resource.props, StrictDict):
                raise
            return []
        read[id(resource)] = held
    return [p for p in held[1] if p.gpu or not gpu_only]


def _pools_read(stack: Sequence[StackResource]) -> dict[int, tuple[StackResource, list[NodeGroupView]]]:
    """`resource_pools`' reads for one Stack, by the identity of the resource (each entry keeps its resource):
    every rule that asks for a resource's node groups gets the views read at the first ask."""
    return {}


def stack_pools(stack: Iterable[StackResource], *, gpu_only: bool = False) -> list[NodeGroupView]:
    """Every node group the stack's resources declare, each read against the stack: read once per Stack
    (every rule, report and simulation step that asks gets the same views)."""
    return [p for p in as_stack(stack).derived(_read_stack) if p.gpu or not gpu_only]


def _read_stack(stack: Sequence[StackResource]) -> list[NodeGroupView]:
    return [pool for r in stack for pool in resource_pools(r, stack)]
