"""Run a Pulumi Python program under the mock engine and capture what it would declare.

The program is the real `__main__.py`, with the real stack config; only the
engine is mocked. Every registration is captured: type, name, parent, inputs,
and the options that matter (protect, ignore_changes, provider, depends_on).
Tests, the offline preview and the offline policy run all use this.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import logging
import runpy
import sys
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime.stack import run_pulumi_func

from elastic_gpu.errors import ConfigError
from elastic_gpu.files import read_project_file, read_stack_file
from elastic_gpu.tools.offline.cloud_mocks import mock_clouds as all_clouds
from elastic_gpu.tools.offline.collector import collected_at_end
from elastic_gpu.tools.offline.mocks import (
    INVOKE_ORIGIN,
    USER_MOCKS_FILE,
    CallSite,
    StackMocks,
    UserMocks,
    missing_remote_component,
    remote_component_mock,
)
from elastic_gpu.tools.offline.sdk_compat import faster_sdk
from elastic_gpu.tools.replacement import POOL_NAME_FIELD

SECRET_MASK = "[secret]"
#: How an unknown value (known only after deployment) shows in reports. The captured inputs keep
#: the engine's own marker, so the policies see an unknown as the Pulumi CLI hands it to them.
UNKNOWN_TEXT = "[unknown]"
UNKNOWN = rpc.UNKNOWN
#: Pulumi's wire format marks a secret or a resource reference as a map holding WIRE_SIG_KEY: the protocol's
#: constants, as pulumi/pulumi sdk/go/common/resource/sig/sig.go exports them (Key, Secret, ResourceReference).
WIRE_SIG_KEY = "4dabf18193072939515e22adb298388d"
WIRE_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
WIRE_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
T = TypeVar("T")
P = ParamSpec("P")


@dataclass
class CapturedResource:
    type: str
    name: str
    urn: str
    id: str | None
    parent: str | None
    custom: bool
    inputs: dict[str, Any]
    protect: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    provider: str | None = None
    depends_on: list[str] = field(default_factory=list)
    delete_before_replace: bool = False
    #: `pulumi destroy` (or dropping it from the program) leaves the cloud resource in place
    retain_on_delete: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "urn": self.urn,
            "parent": self.parent,
            "custom": self.custom,
            "inputs": shown(self.inputs),
            "options": {
                "protect": self.protect,
                "ignoreChanges": self.ignore_changes,
                "provider": self.provider,
                "dependsOn": self.depends_on,
                "deleteBeforeReplace": self.delete_before_replace,
            },
        }


@dataclass
class StackOutput:
    value: Any
    secret: bool

    def to_json(self) -> dict[str, Any]:
        return {"value": SECRET_MASK if self.secret else self.value, "secret": self.secret}


class _Reads:
    """Preview.memo's store: how many `reading` blocks are open, and what `memo` built within them. A copy of a
    preview (`copy.deepcopy`, made to be edited) starts without any."""

    def __init__(self) -> None:
        self.depth = 0
        self.values: dict[str, Any] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> _Reads:
        return _Reads()


@dataclass
class Preview:
    project: str
    stack: str
    resources: list[CapturedResource]
    outputs: dict[str, StackOutput]
    config: dict[str, Any]
    #: what the program logged as warnings (pulumi.log.warn), as `pulumi preview` shows them
    warnings: list[str] = field(default_factory=list)
    #: the reservations the described account holds, every cloud's ({id, instanceType, zone, count}: the
    #: reservation rules' `accountReservations`)
    account_reservations: list[dict[str, Any]] = field(default_factory=list)
    #: resources by type, for the resources it was built from (their ids): of_type is asked once per pool
    _by_type: tuple[tuple[int, ...], dict[str, list[CapturedResource]]] | None = field(
        default=None, repr=False, compare=False
    )
    #: what `memo` built within the open `reading` blocks
    _reads: _Reads = field(default_factory=lambda: _Reads(), init=False, repr=False, compare=False)

    @contextmanager
    def reading(self) -> Iterator[Preview]:
        """A block that reads the preview and does not edit it (a policy run, a simulation): within it, what
        `memo` builds is built once. Outside any block `memo` builds at each call, so code that edits a
        captured resource's inputs (a test's variant of a stack) is never answered from an older read."""
        self._reads.depth += 1
        try:
            yield self
        finally:
            self._reads.depth -= 1
            if not self._reads.depth:
                self._reads.values.clear()

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """`build()`, made once per `reading` block: what every tool reads of the whole stack (the engine's
        view of its resources, and so its node groups) is read once, however many pods, pools or rules ask."""
        if not self._reads.depth:
            return build()
        if key not in self._reads.values:
            self._reads.values[key] = build()
        return cast(T, self._reads.values[key])

    def of_type(self, type_: str) -> list[CapturedResource]:
        ids = tuple(map(id, self.resources))
        if self._by_type is None or self._by_type[0] != ids:
            by_type: dict[str, list[CapturedResource]] = {}
            for r in self.resources:
                by_type.setdefault(r.type, []).append(r)
            self._by_type = (ids, by_type)
        return list(self._by_type[1].get(type_, []))

    def one(self, type_: str, name: str) -> CapturedResource:
        found = [r for r in self.resources if r.type == type_ and r.name == name]
        if len(found) != 1:
            raise KeyError(f"{len(found)} resources of type {type_} named {name}")
        return found[0]

    def by_id(self) -> dict[str, CapturedResource]:
        return {r.id: r for r in self.resources if r.id}

    def provider_inputs(self, r: CapturedResource) -> dict[str, Any]:
        """The inputs of `r`'s provider: its explicit provider resource's, else those of the engine's
        default provider, which are the package's stack config (`aws:region: ...` -> {"region": ...}).
        The mock engine registers no default provider, so this builds what the engine would pass."""
        if r.provider:
            # A provider reference is `<provider urn>::<id>`.
            by_urn = {p.urn: p for p in self.resources if p.type.startswith("pulumi:providers:")}
            provider = by_urn.get(r.provider) or by_urn.get(r.provider.rsplit("::", 1)[0])
            return dict(provider.inputs) if provider is not None else {}
        package = r.type.split(":", 1)[0]
        return {k.split(":", 1)[1]: v for k, v in self.config.items() if k.startswith(f"{package}:")}

    def children(self, parent: CapturedResource) -> list[CapturedResource]:
        return [r for r in self.resources if r.parent == parent.urn]

    def to_json(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "stack": self.stack,
            "resources": [r.to_json() for r in self.resources],
            "outputs": {k: v.to_json() for k, v in sorted(self.outputs.items())},
        }


def reads_preview(fn: Callable[Concatenate[Preview, P], T]) -> Callable[Concatenate[Preview, P], T]:
    """`fn(preview, ...)` run in a `preview.reading()` block: a tool that reads a preview without editing it
    (the simulation asks for the node groups once per pod) reads the stack once."""

    @functools.wraps(fn)
    def read(preview: Preview, /, *args: P.args, **kwargs: P.kwargs) -> T:
        with preview.reading():
            return fn(preview, *args, **kwargs)

    return read


def shown(value: Any) -> Any:
    """Inputs for people: unknowns as UNKNOWN_TEXT."""
    if isinstance(value, dict):
        return {k: shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shown(v) for v in value]
    return UNKNOWN_TEXT if value == rpc.UNKNOWN else value


class _CapturingMonitor(pulumi_mocks.MockMonitor):
    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.captured: list[CapturedResource] = []
        #: a remote component's inputs by URN (its registration's state holds only its outputs)
        self.remote_inputs: dict[str, dict[str, Any]] = {}

    def RegisterResource(self, request: Any) -> Any:
        # MockMonitor's gRPC methods are unannotated (pulumi/runtime/mocks.py).
        response = (
            self._remote_component(request) if request.remote else super().RegisterResource(request)  # type: ignore[no-untyped-call]
        )
        self.captured.append(
            CapturedResource(
                type=request.type,
                name=request.name,
                urn=response.urn,
                id=response.id or None,
                parent=request.parent or None,
                custom=request.custom,
                inputs=_plain(_wire_to_data(json_format.MessageToDict(request.object))),
                protect=bool(request.protect),
                ignore_changes=list(request.ignoreChanges),
                provider=request.provider or None,
                depends_on=sorted(request.dependencies),
                delete_before_replace=bool(request.deleteBeforeReplace),
                retain_on_delete=bool(request.retainOnDelete),
            )
        )
        return response

    def _remote_component(self, request: Any) -> Any:
        """A remote component runs in its own provider: its mock registers the children and gives its outputs.

        Its inputs are read from the wire as data, resource references kept as references: turning one into
        a Python resource here (what `rpc.deserialize_properties` does) would start its read on this thread's
        event loop, which the program's loop then awaits ("attached to a different loop").
        """
        from pulumi.runtime.proto import resource_pb2

        urn = self.make_urn(request.parent, request.type, request.name)
        inputs = _wire_inputs(json_format.MessageToDict(request.object))
        mocks = self.mocks if isinstance(self.mocks, StackMocks) else StackMocks()
        mock = remote_component_mock(mocks.user, request.type)
        state: dict[str, Any] = {}
        self.remote_inputs[urn] = inputs
        if mock is None:
            mocks.user.missing.append(missing_remote_component(request.type, request.name))
        elif mock is mocks.user.remote_components.get(request.type):
            state = mocks.user_hook(
                f"REMOTE_COMPONENTS[{request.type!r}]", lambda: mock(request.name, inputs, _Children(self, urn))
            )
        else:
            state = mock(request.name, inputs, _Children(self, urn))
        self.resources[urn] = pulumi_mocks.MockMonitor.ResourceRegistration(urn, "", state)
        # The state serialized as MockMonitor.RegisterResource serializes a mock's (pulumi/runtime/mocks.py), on a
        # loop of its own: this runs on one of the SDK's executor threads, whose loop is not running.
        serializing = asyncio.new_event_loop()
        try:
            obj = serializing.run_until_complete(rpc.serialize_properties(state, {}))
        finally:
            serializing.close()
        return resource_pb2.RegisterResourceResponse(urn=urn, object=obj)


class _Children:
    """The `RemoteChildren` a remote-component mock is given (elastic_gpu/tools/offline/mocks.py)."""

    def __init__(self, monitor: _CapturingMonitor, urn: str) -> None:
        self.monitor = monitor
        self.urn = urn

    def __call__(self, type_: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        monitor = self.monitor
        args = pulumi.runtime.MockResourceArgs(
            typ=type_, name=name, inputs=inputs, provider="", resource_id="", custom=True
        )
        id_, state = monitor.mocks.new_resource(args)
        child_urn = monitor.make_urn(self.urn, type_, name)
        # Registered with the id as the mocks give it, None included, as MockMonitor.RegisterResource does
        # (pulumi/runtime/mocks.py), though ResourceRegistration declares `id: str`.
        monitor.resources[child_urn] = pulumi_mocks.MockMonitor.ResourceRegistration(child_urn, cast(str, id_), state)
        monitor.captured.append(
            CapturedResource(
                type=type_, name=name, urn=child_urn, id=id_, parent=self.urn, custom=True, inputs=_plain(inputs)
            )
        )
        return {
            WIRE_SIG_KEY: WIRE_RESOURCE_SIG,
            "urn": child_urn,
            "id": id_ or "",
            "packageVersion": "",
        }

    def state(self, ref: Any) -> dict[str, Any]:
        """What the referenced resource holds (its inputs and outputs); {} for no reference."""
        if not isinstance(ref, dict) or ref.get(WIRE_SIG_KEY) != WIRE_RESOURCE_SIG:
            return {}
        urn = ref.get("urn", "")
        found = self.monitor.resources.get(urn)
        return {**self.monitor.remote_inputs.get(urn, {}), **(dict(found.state) if found is not None else {})}


def _wire_inputs(value: Any) -> Any:
    """A remote component's inputs as its provider gets them: secrets unwrapped, resource references kept as
    references (dicts with the resource signature), numbers that are integers as ints."""
    if isinstance(value, dict):
        sig = value.get(WIRE_SIG_KEY)
        if sig == WIRE_SECRET_SIG:
            return _wire_inputs(value.get("value"))
        if sig == WIRE_RESOURCE_SIG:
            return value
        return {k: _wire_inputs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wire_inputs(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _wire_to_data(value: Any) -> Any:
    """Pulumi's wire format as data: secrets masked (as `pulumi preview` shows them), refs by URN."""
    if isinstance(value, dict):
        sig = value.get(WIRE_SIG_KEY)
        if sig == WIRE_SECRET_SIG:
            return SECRET_MASK
        if sig == WIRE_RESOURCE_SIG:
            return f"<ref {value.get('urn')}>"
        return {k: _wire_to_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wire_to_data(v) for v in value]
    return value  # an unknown stays the engine's marker (rpc.UNKNOWN); reports show it as UNKNOWN_TEXT


def _plain(value: Any) -> Any:
    """Inputs as JSON-able data (resource references become their URN)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, pulumi.Resource):
        return f"<ref {value.pulumi_resource_name}>"
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire format has only floats; sizes and ports are ints
    return value


@dataclass
class Program:
    """A Pulumi Python program directory: its project name and stack config files."""

    directory: Path

    @property
    def project_file(self) -> dict[str, Any]:
        if not self.directory.is_dir():
            raise ConfigError(
                [f"{self.directory}: not a directory; --program must be a Pulumi project directory"], source="program"
            )
        return read_project_file(self.directory / "Pulumi.yaml")

    @property
    def config_dir(self) -> Path:
        config_dir: str = self.project_file.get("stackConfigDir", ".")
        return self.directory / config_dir

    def stack_file(self, stack: str) -> Path:
        path = self.config_dir / f"Pulumi.{stack}.yaml"
        if not path.exists():
            raise ConfigError(
                [f"stack {stack!r}: no {path}; known stacks: {', '.join(self.stacks()) or 'none'}"], source="stack"
            )
        return path

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in self.config_dir.glob("Pulumi.*.yaml"))

    @property
    def main(self) -> Path:
        main = self.directory / "__main__.py"
        if not main.is_file():
            raise ConfigError(
                [f"{main}: not found; the offline runner runs a Python program's __main__.py"], source="program"
            )
        return main


#: How the SDK's output translation fails when a value does not have the declared output type.
OUTPUT_TYPE_ASSERTION = "Unexpected type. Expected"


class ProgramError(ConfigError):
    """The program itself raised (not a config problem we found): its error, without our traceback."""

    def __init__(self, main: Path, exc: BaseException) -> None:
        tb = exc.__traceback__
        frames = [f for f in traceback.extract_tb(tb) if f.filename.startswith(str(main.parent))] if tb else []
        at = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        problems = [f"{main}: the program raised {type(exc).__name__}{at}: {exc}"]
        if isinstance(exc, AssertionError) and str(exc).startswith(OUTPUT_TYPE_ASSERTION):
            # pulumi's output translation (pulumi/runtime/rpc.py): a mock's value does not have the output's type.
            problems.append(
                "that is an output of another shape than the provider's SDK declares: offline, a resource echoes its "
                "inputs as outputs, and this one's output differs from its input (a list where a map comes back); "
                f"give that resource's outputs in the program's {USER_MOCKS_FILE}: RESOURCES = {{'<type token>': "
                "lambda name, inputs: {'<output>': <a value of the output's type>}}"
            )
        super().__init__(problems, source="program")


def run_preview(
    stack: str,
    program_dir: Path | str = ".",
    account: dict[str, dict[str, Any]] | None = None,
    *,
    stack_file: Path | str | None = None,
) -> Preview:
    """Run `program_dir`'s `__main__.py` for `stack` under the mock engine, the account preflight's invokes
    answered from `account` (offline/account.py; default: a new account). The config is the stack's
    `Pulumi.<stack>.yaml`, or `stack_file` (another config for the same stack: `diff --base-file`).

    Raises ConfigError for every problem with the files or the config (the program's own
    errors as ProgramError) exactly as a real run would fail.
    """
    program = Program(Path(program_dir).resolve())
    project = program.project_file["name"]
    config = read_stack_file(program.stack_file(stack) if stack_file is None else Path(stack_file))
    # The engine hands structured values to the program as JSON strings.
    engine_config = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    main = program.main
    # A fresh context: Pulumi keeps its settings and root stack in context variables. The collector off for the
    # run (offline/collector.py), and the SDK's two slow spots replaced (offline/sdk_compat.py).
    with collected_at_end(), faster_sdk():
        preview = contextvars.Context().run(_run, project, stack, engine_config, main, config, account)
    preview.warnings += refresh_warnings(program.project_file, preview.resources)
    return preview


#: What a project file needs so that `pulumi up` sends the live node count (Pulumi project file reference:
#: `options.refresh: always` runs a refresh as part of every preview, update and destroy).
REFRESH_OPTION = "options: {refresh: always}"


def refresh_warnings(project_file: dict[str, Any], resources: list[CapturedResource]) -> list[str]:
    """A program whose node pools leave their size to the autoscaler (ignore_changes) needs a refresh before
    each update: the engine fills an ignored input with its old value, and the provider's update sends it
    with the rest of the scaling config (terraform-provider-aws eks/node_group.go resourceNodeGroupUpdate
    sends the whole scaling_config), so without a refresh an EKS group goes back to its size at creation."""
    options = project_file.get("options")
    if isinstance(options, dict) and options.get("refresh") == "always":
        return []
    pools = [r for r in resources if r.type in POOL_NAME_FIELD and r.ignore_changes]
    if not pools:
        return []
    sizes = sorted({path for r in pools for path in r.ignore_changes})
    return [
        f"Pulumi.yaml: add `{REFRESH_OPTION}`: {len(pools)} node pool(s) leave their size to the autoscaler "
        f"(ignore_changes: {', '.join(sizes)}), but an update of such a pool (a new min or max size) sends the "
        "size last read into the state, the size at creation unless refreshed: 0 for a GPU group, so `pulumi up` "
        "drains the nodes the autoscaler started. With the option every preview and up reads the live size "
        "first (or run `pulumi up --refresh`)."
    ]


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _run(
    project: str,
    stack: str,
    engine_config: dict[str, str],
    main: Path,
    config: dict[str, Any],
    account: dict[str, dict[str, Any]] | None = None,
) -> Preview:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    # The SDK calls the mock monitor from the loop's executor threads, and each thread makes itself an
    # event loop there (pulumi.runtime.sync_await._ensure_event_loop) that nothing closes. A loop left for
    # the garbage collector may be collected at interpreter exit after its self-pipe socket was: its
    # __del__ then prints "Exception ignored ... Invalid file descriptor: -1" (some runs of a failing
    # program). So the threads get their loop from us, and we close each one once the threads have ended.
    thread_loops: list[asyncio.AbstractEventLoop] = []
    loop.set_default_executor(ThreadPoolExecutor(initializer=_thread_loop, initargs=(thread_loops,)))
    unretrieved = _Unretrieved()
    loop.set_exception_handler(unretrieved)
    # The program's directory is on the import path, as in a real run; its mocks hook may import from it.
    modules_before = set(sys.modules)
    sys.path.insert(0, str(main.parent))
    try:
        user = UserMocks.load(main.parent)
    except BaseException:
        sys.path.remove(str(main.parent))
        raise
    mocks = StackMocks(user, account)
    monitor = _CapturingMonitor(mocks)
    logger = logging.getLogger(f"elastic_gpu.tools.offline.program.{id(monitor)}")
    logger.propagate = False
    collect = _Collect()
    logger.addHandler(collect)
    sdk_invokes = {name: getattr(pulumi.runtime, name) for name in INVOKE_FUNCTIONS}
    for name, function in sdk_invokes.items():
        setattr(pulumi.runtime, name, _with_origin(function))
    try:
        # The run's own SDK state (the root directory, as the CLI gives it: Pulumi.yaml's). A program that fails
        # leaves its pending Output tasks, bound to this loop, in the SDK's set of outputs to wait for: the next
        # run starts with a set of its own.
        pulumi.runtime.reset_options(project=project, stack=stack, root_directory=str(main.parent), preview=True)
        pulumi.runtime.set_all_config(engine_config)
        pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=True, monitor=monitor, logger=logger)

        def program() -> None:
            runpy.run_path(str(main), run_name="__main__")

        loop.run_until_complete(run_pulumi_func(program))
        root = pulumi.runtime.get_root_resource()
        outputs = loop.run_until_complete(_resolve_outputs(getattr(root, "outputs", {})))
    except pulumi.RunError as exc:
        if isinstance(exc.__cause__, ConfigError):
            raise exc.__cause__ from None
        _missing_mocks(user, main, exc)
        raise ProgramError(main, exc) from exc
    except ConfigError:
        raise
    except Exception as exc:  # the program's own failure, reported like the CLI does, not as our traceback
        if (config_error := _config_error_cause(exc)) is not None:
            raise config_error from None
        _missing_mocks(user, main, exc)
        raise ProgramError(main, exc) from exc
    finally:
        unretrieved.end(failed=sys.exc_info()[1] is not None)
        for name, function in sdk_invokes.items():
            setattr(pulumi.runtime, name, function)
        sys.path.remove(str(main.parent))
        _forget_modules(main.parent, modules_before)
        # The program's tasks still pending on this loop end here, quietly (no "Task was destroyed").
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        # Pulumi's RPC threads each make an event loop; ending the threads now lets those
        # loops close cleanly instead of failing noisily at interpreter exit.
        loop.run_until_complete(loop.shutdown_default_executor())
        for thread_loop in thread_loops:
            thread_loop.close()
        loop.close()
        asyncio.set_event_loop(None)
    resources = sorted(monitor.captured, key=lambda r: r.urn)  # registration order is async; URNs are stable
    held = [r for cloud in all_clouds() for r in cloud.mocks().account_reservations(mocks.account.get(cloud.name, {}))]
    return Preview(
        project=project,
        stack=stack,
        resources=resources,
        outputs=outputs,
        config=config,
        # A warning logged from an Output's apply, or about a remote component registered without a mock, arrives
        # when its values do, in no fixed order: sorted, as the resources are, so two previews of one program print
        # the same.
        warnings=[*sorted(user.missing), *sorted(collect.messages)],
        account_reservations=held,
    )


#: The SDK's invoke functions the providers' SDKs call (`pulumi.runtime.invoke_output(...)` in every generated
#: `get_*_output`): wrapped during a run so that the mocks know who made each invoke (mocks.INVOKE_ORIGIN).
INVOKE_FUNCTIONS = ("invoke", "invoke_output", "invoke_single", "invoke_output_single", "invoke_async")


def _with_origin(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, run with INVOKE_ORIGIN set to its caller: the invoke's task (and the thread that asks the
    mocks) copies the context as it is made, within the call."""
    if asyncio.iscoroutinefunction(function):

        @functools.wraps(function)
        async def traced_async(*args: Any, **kwargs: Any) -> Any:
            token = INVOKE_ORIGIN.set(CallSite.of(sys._getframe(1)))
            try:
                return await function(*args, **kwargs)
            finally:
                INVOKE_ORIGIN.reset(token)

        return traced_async

    @functools.wraps(function)
    def traced(*args: Any, **kwargs: Any) -> Any:
        token = INVOKE_ORIGIN.set(CallSite.of(sys._getframe(1)))
        try:
            return function(*args, **kwargs)
        finally:
            INVOKE_ORIGIN.reset(token)

    return traced


#: What asyncio says of a future or task whose exception nothing read (asyncio/futures.py, asyncio/tasks.py).
UNRETRIEVED = ("Future exception was never retrieved", "Task exception was never retrieved")


class _Unretrieved:
    """The run's event-loop exception handler. A program that fails is reported once; the futures and tasks that
    failed with it and were never read (a resource's outputs; the SDK's task that logs a warning against the
    resource, pulumi/log.py) would each print it again, with a traceback, when collected, during the run or
    after. So those reports are held until the run ends: dropped if it failed, printed if it did not."""

    def __init__(self) -> None:
        self.failed: bool | None = None  # None: the run goes on
        self.held: list[tuple[asyncio.AbstractEventLoop, dict[str, Any]]] = []

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") not in UNRETRIEVED:
            loop.default_exception_handler(context)
        elif self.failed is None:
            self.held.append((loop, context))
        elif not self.failed:
            loop.default_exception_handler(context)

    def end(self, failed: bool) -> None:
        self.failed = failed
        held, self.held = self.held, []
        if not failed:
            for loop, context in held:
                loop.default_exception_handler(context)


def _forget_modules(directory: Path, before: set[str]) -> None:
    """Drop the modules the program imported from its own directory (its `iam.py`, `vpc.py`, a package
    folder beside them): a real run is a fresh process, and the next program run here may have modules of
    the same names. Only modules new since `before`, found by their name in the directory itself."""
    for name in set(sys.modules) - before:
        file = getattr(sys.modules[name], "__file__", None)
        if not file:
            continue
        path = Path(file).resolve()
        top = name.split(".")[0]
        own_module = path.parent == directory and path.stem == top
        own_package = (directory / top).is_dir() and path.is_relative_to(directory / top)
        if own_module or own_package:
            del sys.modules[name]


def _thread_loop(loops: list[asyncio.AbstractEventLoop]) -> None:
    """An executor thread's event loop, made before the SDK makes one, and kept to be closed."""
    thread_loop = asyncio.new_event_loop()
    asyncio.set_event_loop(thread_loop)
    loops.append(thread_loop)


def _config_error_cause(exc: BaseException) -> ConfigError | None:
    """The ConfigError an apply raised, when the SDK re-raised it wrapped ("While processing input: ...")
    while serializing a component's outputs."""
    seen: BaseException | None = exc.__cause__
    visited: set[int] = set()
    while seen is not None and id(seen) not in visited:  # a chain may loop back on itself
        if isinstance(seen, ConfigError):
            return seen
        visited.add(id(seen))
        seen = seen.__cause__ or seen.__context__
    return None


def _missing_mocks(user: UserMocks, main: Path, exc: BaseException) -> None:
    """A program that fails offline because a mock was missing: say which, not only the program's error."""
    if user.missing and not isinstance(exc, ConfigError):
        failed = ProgramError(main, exc).problems
        raise ConfigError([*user.missing, f"then {failed[0]}", *failed[1:]], source="offline preview") from exc


async def _resolve_outputs(outputs: dict[str, Any]) -> dict[str, StackOutput]:
    resolved: dict[str, StackOutput] = {}
    problems: list[str] = []
    for key, value in outputs.items():
        out = pulumi.Output.from_input(value)
        plain = _plain(await out.future())
        if bad := _not_exportable(plain):
            # The engine refuses it too (pulumi/runtime/rpc.py serialize_property: "unexpected input of type bytes").
            problems.append(
                f"stack output {key!r} holds {bad}, which Pulumi cannot export (it takes strings, numbers, booleans, "
                "lists and maps); export text instead, e.g. value.decode() or base64.b64encode(value).decode()"
            )
            continue
        resolved[key] = StackOutput(value=plain, secret=await out.is_secret())
    if problems:
        raise ConfigError(problems, source="stack outputs")
    return resolved


def _not_exportable(value: Any) -> str | None:
    """The first part of an output value the engine cannot serialize (its type name), or None."""
    if isinstance(value, dict):
        return next((bad for v in value.values() if (bad := _not_exportable(v))), None)
    if isinstance(value, list):
        return next((bad for v in value if (bad := _not_exportable(v))), None)
    if value is None or isinstance(value, str | int | float | bool):
        return None
    return f"a {type(value).__name__} value"
