"""What a cloud's mocks hand the offline mock engine (tools/offline/mocks.py): the `Mocks` record, and
`MockParts`, the view of a registered cloud that the engine, the described account (tools/offline/account.py)
and the offline runner ask for."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from elastic_gpu.tools.clouds import CloudTools, all_clouds

#: A child a remote-component mock registers: (type, name, inputs) -> its resource reference.
RegisterChild = Callable[[str, str, dict[str, Any]], dict[str, Any]]


class RemoteChildren(Protocol):
    """What a remote-component mock is given as its third argument: call it to register a child,
    `(type, name, inputs) -> resource reference`; `state(ref)` reads what a referenced resource holds.

    A remote component's inputs keep resource references as references (a dict with Pulumi's resource
    signature, its `urn` and `id`): the mock returns them as outputs unchanged, or reads the referenced
    resource's inputs and outputs with `state(ref)` (e.g. a role's `arn`, a cluster's `eksCluster`).
    """

    def __call__(self, type_: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]: ...

    def state(self, ref: Any) -> dict[str, Any]: ...


#: A remote (multi-language) component's mock: (name, inputs, children) -> the component's outputs.
RemoteComponentMock = Callable[[str, dict[str, Any], RemoteChildren], dict[str, Any]]


@dataclass(frozen=True)
class Mocks:
    """The mock engine's answers for the cloud's resource types and invokes (tools/offline/mocks.py)."""

    #: resource type -> the outputs the cloud would add to its inputs
    resources: Mapping[str, Callable[[str, dict[str, Any]], dict[str, Any]]]
    #: invoke token -> the answer, from its arguments alone
    invokes: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]
    #: type prefix -> the outputs every resource of that provider has unless its inputs give them
    provider_defaults: Mapping[str, Callable[[str, str], dict[str, Any]]] = field(default_factory=dict)
    #: remote (multi-language) components: their mock registers the children a real run would create
    remote_components: Mapping[str, RemoteComponentMock] = field(default_factory=dict)
    #: a new account's documented defaults (tools/offline/account.py), and the invokes answered from the
    #: described account: token -> (arguments, the cloud's part of the account) -> answer
    new_account: Mapping[str, Any] = field(default_factory=dict)
    account_invokes: Mapping[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = field(
        default_factory=dict
    )
    #: the REST reads the preflight makes where the provider has no invoke (elastic_gpu/http_reads.py), answered
    #: from the described account: reader name -> (URL, the cloud's part of the account) -> JSON answer
    account_readers: Mapping[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)
    #: the reservations the described account holds (its cloud's part -> each as {id, instanceType, zone, count}),
    #: which the offline gate hands the reservation rules as `accountReservations`
    account_reservations: Callable[[dict[str, Any]], list[dict[str, Any]]] = lambda part: []


class MockParts(CloudTools, Protocol):
    """A cloud as the mock engine asks for it."""

    def mocks(self) -> Mocks:
        """The offline mock engine's answers for its resource types and invokes, and its new account."""
        ...


def mock_clouds() -> list[MockParts]:
    """Every registered cloud, viewed by its mocks (the registry's order). Sound because each cloud's class is
    checked against `ToolCloud` (tools/tool_cloud.py), which extends `MockParts`."""
    return cast(list[MockParts], all_clouds())
