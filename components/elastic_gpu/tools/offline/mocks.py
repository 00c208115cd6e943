"""Mock provider answers: each resource echoes its inputs plus the outputs the program reads (each cloud's
answers are its provider's `mocks()`: elastic_gpu/provider.py).

Values here stand in for what the cloud would return (an ARN, an endpoint, an
ASG name), shaped like the real thing and derived only from names, so two runs
of the same stack give identical results.
"""

from __future__ import annotations

import contextvars
import runpy
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import grpc
import pulumi
from pulumi.runtime import rpc

import elastic_gpu
from elastic_gpu import http_reads
from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.cloud_mocks import RemoteComponentMock, mock_clouds

MOCK_UUID = "00000000-0000-0000-0000-000000000000"
MOCK_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCm1vY2sKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="


# --- each cloud's mocks (its provider's `mocks()`), merged on first use -----------------------------------


@cache
def _resource_mocks() -> dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]]:
    """Resource type -> the outputs the cloud would add to its inputs (every cloud's `Mocks.resources`)."""
    return {t: f for c in mock_clouds() for t, f in c.mocks().resources.items()}


@cache
def _invoke_mocks() -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    """Invoke token -> the answer the cloud would give, derived only from the arguments (`Mocks.invokes`)."""
    return {t: f for c in mock_clouds() for t, f in c.mocks().invokes.items()}


@cache
def _account_invokes() -> dict[str, tuple[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]]]:
    """Invoke token -> (its cloud, the answer from that cloud's part of the described account)."""
    return {t: (c.name, f) for c in mock_clouds() for t, f in c.mocks().account_invokes.items()}


@cache
def _provider_defaults() -> dict[str, Callable[[str, str], dict[str, Any]]]:
    """Type prefix -> outputs every resource of that provider has unless its inputs give them (an AWS ARN)."""
    return {t: f for c in mock_clouds() for t, f in c.mocks().provider_defaults.items()}


@cache
def remote_components() -> dict[str, RemoteComponentMock]:
    """Remote (multi-language) components (pulumi-eks's Cluster): their mock registers the children a real run
    would create and returns the component's outputs, resource references included (`Mocks.remote_components`)."""
    return {t: f for c in mock_clouds() for t, f in c.mocks().remote_components.items()}


STACK_REFERENCE = "pulumi:pulumi:StackReference"

#: The library's own source (what `pulumi up` loads), as against the program's and the workbench's.
_LIBRARY = Path(elastic_gpu.__file__).parent
_WORKBENCH = _LIBRARY / "tools"


_COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


class CallSite(NamedTuple):
    """Where an invoke was made: the first frame outside the Pulumi SDKs (pulumi, pulumi_aws, ...)."""

    file: str
    line: int
    function: str
    #: made by elastic_gpu itself (a handle reading the cluster's subnets, the preflight), not by the program
    by_library: bool

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"

    @classmethod
    def of(cls, frame: Any) -> CallSite | None:
        """The call site of the SDK function called from `frame` (a frame object) or one of its callers."""
        while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("pulumi"):
            frame = frame.f_back
        if frame is None:
            return None
        path = Path(frame.f_code.co_filename)
        name = frame.f_code.co_name
        if name in _COMPREHENSIONS and frame.f_back is not None:  # its own frame before Python 3.12: name the function
            name = frame.f_back.f_code.co_name
        library = path.is_relative_to(_LIBRARY) and not path.is_relative_to(_WORKBENCH)
        shown = str(path.relative_to(_LIBRARY.parent)) if library else str(path)
        return cls(shown, frame.f_lineno, name, library)


#: The call site of the invoke being made: the offline runner sets it around the SDK's invoke functions, and
#: the invoke's task and the executor thread that asks the mocks inherit it (the SDK copies the context).
INVOKE_ORIGIN: contextvars.ContextVar[CallSite | None] = contextvars.ContextVar("invoke_origin", default=None)


class MockFailed(ConfigError):
    """A function of the program's offline_mocks.py raised: named by that file and line, not as the program's
    error (the SDK hands the exception to whatever awaited the invoke or the resource)."""

    def __init__(self, hook: str, exc: BaseException, path: Path | None, asked: str = "") -> None:
        frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
        own = [f for f in frames if path is not None and Path(f.filename) == path]
        beside = [f for f in frames if path is not None and Path(f.filename).parent == path.parent]
        found = own or beside
        where = f"{found[-1].filename}:{found[-1].lineno}" if found else str(path or USER_MOCKS_FILE)
        problem = f"{where}: {hook} raised {type(exc).__name__}: {exc}"
        super().__init__([problem + (f"; {asked}" if asked else "")], source="offline mocks")


class StackMocks(pulumi.runtime.Mocks):
    """The built-in mocks, plus what a program adds in `offline_mocks.py` (see `UserMocks`)."""

    def __init__(self, user: UserMocks | None = None, account: dict[str, dict[str, Any]] | None = None) -> None:
        from elastic_gpu.tools.offline.account import described_account

        self.user = user or UserMocks()
        #: the account the preflight's invokes are answered from (offline/account.py; default: a new one)
        self.account = account if account is not None else described_account()
        #: the invoke tokens whose incomplete answers were already warned about
        self._warned: set[str] = set()
        #: id -> (type, state) of every custom resource the program declared so far: an invoke standing for a
        #: read of the cloud answers for them as the cloud would once they exist (a declared subnet's
        #: mapPublicIpOnLaunch, the route table associated with it), under DECLARED in its account section
        self.declared: dict[str, tuple[str, dict[str, Any]]] = {}
        # the account's REST reads (elastic_gpu/http_reads.py): no network offline
        for cloud in mock_clouds():
            for name, answer in cloud.mocks().account_readers.items():
                http_reads.READERS[name] = self._reader(cloud.name, answer)

    def _reader(
        self, cloud: str, answer: Callable[[str, dict[str, Any]], dict[str, Any]]
    ) -> Callable[[str, str], dict[str, Any]]:
        return lambda url, token: answer(url, self.account[cloud])

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
            state.update(self.user_hook(f"RESOURCES[{args.typ!r}]", lambda: extra(args.name, dict(args.inputs))))
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
        origin = INVOKE_ORIGIN.get()
        by_library = origin is not None and origin.by_library
        if by_library and (declared := self._declared(args.token, dict(args.args))) is not None:
            return declared, []
        if own := self.user.invokes.get(args.token):
            asked = self._library_asked(origin, args) if by_library else ""
            answer = self.user_hook(f"INVOKES[{args.token!r}]", lambda: own(dict(args.args)), asked)
            lacking = sorted(set(self._built_in(args)) - set(answer)) if by_library else []
            if lacking and args.token not in self._warned:
                self._warned.add(args.token)  # once per token, not once per subnet asked
                self.user.missing.append(
                    f"{USER_MOCKS_FILE}: INVOKES[{args.token!r}] answered without {', '.join(lacking)}; "
                    f"{self._library_asked(origin, args)}"
                )
            return answer, []
        return self._answer(args)

    def _answer(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        """The built-in answer: the cloud's invoke mocks, else the described account's."""
        if invoke := _invoke_mocks().get(args.token):
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

    def _built_in(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        """The built-in answer to these arguments ({} when there is none, or it is the provider's error)."""
        try:
            answer, failures = self._answer(args)
        except Exception:  # a built-in mock's own error is the cloud's: no example to show
            return {}
        return {} if failures else answer

    def _library_asked(self, origin: CallSite | None, args: pulumi.runtime.MockCallArgs) -> str:
        """What the message of a library-made invoke adds: who asked, with what, and what it needs back."""
        built_in = self._built_in(args)
        needs = f"; it needs back what the built-in answer gives for them: {_short(built_in)}" if built_in else ""
        return (
            f"this invoke is the library's own, not the program's: {origin} asked {args.token} with "
            f"{_short(dict(args.args))}{needs}. Answer these arguments too, or leave this token to the built-in "
            "answer (drop it from INVOKES)"
        )

    def _declared(self, token: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """A read by id of a resource the program declares (`aws:ec2/getSubnet:getSubnet` of an
        `aws:ec2/subnet:Subnet`): the built-in answer with what the program declared in place of the account's
        guess. None when the id names no declared resource of that type (or the token is no such read)."""
        type_ = _read_type(token)
        wanted = args.get("id")
        if type_ is None or not isinstance(wanted, str):
            return None
        found = self.declared.get(wanted)
        if found is None or found[0] != type_:
            return None
        base = self._built_in(pulumi.runtime.MockCallArgs(token=token, args=args, provider=""))
        if not base:
            return None
        declared = {k: v for k, v in found[1].items() if k in base and v is not None and v != rpc.UNKNOWN}
        # What the program leaves out stays the built-in answer: for a subnet declared without
        # map_public_ip_on_launch, false (its default: pulumi-aws 7.51 ec2/subnet.py, "Default is `false`") unless
        # the described account lists its id as public.
        return {**base, **declared}

    def user_hook(self, hook: str, run: Callable[[], dict[str, Any]], asked: str = "") -> dict[str, Any]:
        """`run()`, a function of the program's offline_mocks.py: its failure names that file and line. A
        `grpc.RpcError` is no failure of the mock but the provider's error it answers with, as the built-in mocks
        answer (tools/aws/mocks.py InvokeFailed): the program's invoke raises it."""
        try:
            return dict(run())
        except (MockFailed, grpc.RpcError):
            raise
        except Exception as exc:
            raise MockFailed(hook, exc, self.user.path, asked) from exc


def _read_type(token: str) -> str | None:
    """The resource type a `get<Type>` invoke reads, by the providers' token naming (`aws:ec2/getSubnet:getSubnet`
    reads `aws:ec2/subnet:Subnet`); None for other invokes."""
    parts = token.split(":")
    if len(parts) != 3 or not parts[2].startswith("get") or len(parts[2]) < 4:
        return None
    name = parts[2][3:]
    module = parts[1].rsplit("/", 1)[0]
    return f"{parts[0]}:{module}/{name[0].lower()}{name[1:]}:{name}"


def _short(value: dict[str, Any]) -> str:
    """A mock's arguments or answer in a message: None values left out, long ones cut."""
    text = repr({k: v for k, v in value.items() if v is not None})
    return text if len(text) <= 300 else text[:297] + "..."


#: The key under which an account invoke finds the resources the program declared (StackMocks.declared).
DECLARED = "declared resources"


#: The file in a program's directory whose names extend the mocks (all optional):
#: STACK_REFERENCES = {"org/project/stack": {"output": value}},
#: RESOURCES = {"type token": lambda name, inputs: {extra outputs}},
#: INVOKES = {"invoke token": lambda args: {result}},
#: REMOTE_COMPONENTS = {"pkg:index:Component": lambda name, inputs, children: {outputs}}: a remote
#: (multi-language) component of the program's own, which runs in its provider's process in a real run (see
#: `RemoteChildren`; elastic_gpu/tools/aws/mocks.py mocks pulumi-eks's this way). A remote component without a
#: mock is registered with no children and no outputs, and the report says so.
#: The library's own invokes (a cluster handle's aws.ec2.getSubnet, the preflight's quotas) are answered by these
#: INVOKES too, except a read by id of a resource the program declares, answered from that declaration; a function
#: here that raises is reported by its file and line, with who made the invoke and with which arguments.
USER_MOCKS_FILE = "offline_mocks.py"


@dataclass
class UserMocks:
    stack_references: dict[str, dict[str, Any]] = field(default_factory=dict)
    resources: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)
    invokes: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)
    remote_components: dict[str, RemoteComponentMock] = field(default_factory=dict)
    #: what the program used and the hook did not answer (warnings for the report)
    missing: list[str] = field(default_factory=list)
    #: the program's offline_mocks.py (None: it has none)
    path: Path | None = None

    @classmethod
    def load(cls, program_dir: Path) -> UserMocks:
        path = program_dir / USER_MOCKS_FILE
        if not path.exists():
            return cls()
        try:
            values = runpy.run_path(str(path), run_name="offline_mocks")
        except Exception as exc:
            raise MockFailed("loading it", exc, path) from exc
        return cls(
            stack_references=dict(values.get("STACK_REFERENCES", {})),
            resources=dict(values.get("RESOURCES", {})),
            invokes=dict(values.get("INVOKES", {})),
            remote_components=dict(values.get("REMOTE_COMPONENTS", {})),
            path=path,
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
