"""Mock provider answers: each resource echoes its inputs plus the outputs the program reads (each cloud's
answers are its provider's `mocks()`: elastic_gpu/provider.py).

Values here stand in for what the cloud would return (an ARN, an endpoint, an
ASG name), shaped like the real thing and derived only from names, so two runs
of the same stack give identical results.
"""

from __future__ import annotations

import runpy
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import pulumi

from elastic_gpu.clouds import all_clouds

MOCK_UUID = "00000000-0000-0000-0000-000000000000"
MOCK_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCm1vY2sKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="


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


# --- each cloud's mocks (its provider's `mocks()`), merged on first use -----------------------------------


@cache
def _resource_mocks() -> dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]]:
    """Resource type -> the outputs the cloud would add to its inputs (every cloud's `Mocks.resources`)."""
    return {t: f for c in all_clouds() for t, f in c.mocks().resources.items()}


@cache
def _invoke_mocks() -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    """Invoke token -> the answer the cloud would give, derived only from the arguments (`Mocks.invokes`)."""
    return {t: f for c in all_clouds() for t, f in c.mocks().invokes.items()}


@cache
def _account_invokes() -> dict[str, tuple[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]]]:
    """Invoke token -> (its cloud, the answer from that cloud's part of the described account)."""
    return {t: (c.name, f) for c in all_clouds() for t, f in c.mocks().account_invokes.items()}


@cache
def _provider_defaults() -> dict[str, Callable[[str, str], dict[str, Any]]]:
    """Type prefix -> outputs every resource of that provider has unless its inputs give them (an AWS ARN)."""
    return {t: f for c in all_clouds() for t, f in c.mocks().provider_defaults.items()}


@cache
def remote_components() -> dict[str, RemoteComponentMock]:
    """Remote (multi-language) components (pulumi-eks's Cluster): their mock registers the children a real run
    would create and returns the component's outputs, resource references included (`Mocks.remote_components`)."""
    return {t: f for c in all_clouds() for t, f in c.mocks().remote_components.items()}


STACK_REFERENCE = "pulumi:pulumi:StackReference"


class StackMocks(pulumi.runtime.Mocks):
    """The built-in mocks, plus what a program adds in `offline_mocks.py` (see `UserMocks`)."""

    def __init__(self, user: UserMocks | None = None, account: dict[str, dict[str, Any]] | None = None) -> None:
        from elastic_gpu.tools.offline.account import described_account

        self.user = user or UserMocks()
        #: the account the preflight's invokes are answered from (offline/account.py; default: a new one)
        self.account = account if account is not None else described_account()
        #: id -> (type, state) of every custom resource the program declared so far: an invoke standing for a
        #: read of the cloud answers for them as the cloud would once they exist (a declared subnet's
        #: mapPublicIpOnLaunch, the route table associated with it), under DECLARED in its account section
        self.declared: dict[str, tuple[str, dict[str, Any]]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        if args.typ == STACK_REFERENCE:  # read (not registered): its mock args carry no `custom`
            return self._stack_reference(args)
        if not args.custom:
            return None, {}
        state = dict(args.inputs)
        state.setdefault("name", args.name)
        for prefix, defaults in _provider_defaults().items():
            if args.typ.startswith(prefix):
                for key, value in defaults(args.typ, args.name).items():
                    state.setdefault(key, value)
        if extra := _resource_mocks().get(args.typ):
            state.update(extra(args.name, args.inputs))
        if extra := self.user.resources.get(args.typ):
            state.update(extra(args.name, dict(args.inputs)))
        # IDs shaped like "subnet-<name>": unique across types, stable across runs.
        resource_id = f"{args.typ.split(':')[-1].lower()}-{args.name}"
        self.declared[resource_id] = (args.typ, state)
        return resource_id, state

    def _stack_reference(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        ref = args.inputs.get("name") or args.resource_id or args.name
        if ref not in self.user.stack_references:
            self.user.missing.append(
                f"StackReference {ref!r} has no offline outputs: give them in the program's {USER_MOCKS_FILE} "
                f"as STACK_REFERENCES = {{{ref!r}: {{...}}}}"
            )
        outputs = dict(self.user.stack_references.get(ref, {}))
        return ref, {"name": ref, "outputs": outputs, "secretOutputNames": []}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        if invoke := self.user.invokes.get(args.token) or _invoke_mocks().get(args.token):
            return invoke(dict(args.args)), []
        if found := _account_invokes().get(args.token):
            cloud, answer = found
            try:
                return answer(dict(args.args), {**self.account[cloud], DECLARED: self.declared}), []
            except (KeyError, PermissionError) as exc:  # the provider's error: the SDK raises it at the invoke
                return {}, [("", str(exc))]
        raise NotImplementedError(
            f"the offline preview has no mock for the invoke {args.token!r}; add one to the program's "
            f"{USER_MOCKS_FILE} as INVOKES = {{{args.token!r}: lambda args: {{...}}}}"
        )


#: The key under which an account invoke finds the resources the program declared (StackMocks.declared).
DECLARED = "declared resources"


#: The file in a program's directory whose names extend the mocks (all optional):
#: STACK_REFERENCES = {"org/project/stack": {"output": value}},
#: RESOURCES = {"type token": lambda name, inputs: {extra outputs}},
#: INVOKES = {"invoke token": lambda args: {result}},
#: REMOTE_COMPONENTS = {"pkg:index:Component": lambda name, inputs, children: {outputs}}: a remote
#: (multi-language) component of the program's own, which runs in its provider's process in a real run (see
#: `RemoteChildren`; elastic_gpu/aws/mocks.py mocks pulumi-eks's this way). A remote component without a
#: mock is registered with no children and no outputs, and the report says so.
USER_MOCKS_FILE = "offline_mocks.py"


@dataclass
class UserMocks:
    stack_references: dict[str, dict[str, Any]] = field(default_factory=dict)
    resources: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)
    invokes: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)
    remote_components: dict[str, RemoteComponentMock] = field(default_factory=dict)
    #: what the program used and the hook did not answer (warnings for the report)
    missing: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, program_dir: Path) -> UserMocks:
        path = program_dir / USER_MOCKS_FILE
        if not path.exists():
            return cls()
        values = runpy.run_path(str(path), run_name="offline_mocks")
        return cls(
            stack_references=dict(values.get("STACK_REFERENCES", {})),
            resources=dict(values.get("RESOURCES", {})),
            invokes=dict(values.get("INVOKES", {})),
            remote_components=dict(values.get("REMOTE_COMPONENTS", {})),
        )


def remote_component_mock(user: UserMocks, type_: str) -> RemoteComponentMock | None:
    """The mock of a remote component: the program's own (`REMOTE_COMPONENTS` in its offline_mocks.py) first,
    then the built-in ones (each cloud's REMOTE_COMPONENTS); None when neither has one."""
    return user.remote_components.get(type_) or remote_components().get(type_)


def missing_remote_component(type_: str, name: str) -> str:
    """What the report says of a remote component that has no mock."""
    return (
        f"remote component {type_} {name!r} has no offline mock: it declares nothing here and its outputs are "
        f"empty; give one in the program's {USER_MOCKS_FILE} as REMOTE_COMPONENTS = "
        f"{{{type_!r}: lambda name, inputs, children: {{...outputs}}}}"
    )
