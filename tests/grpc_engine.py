"""A mock Pulumi engine over gRPC, for driving a provider process as `pulumi up` would.

The resource monitor answers as the offline preview does (elastic_gpu.tools.offline: the same mocks, the same
capture of every registration), but over gRPC, so a component provider running in its own process registers
its children here; the engine service takes its log messages. `Engine.construct` sends a ConstructRequest the
way the engine does: inputs on the wire (numbers as doubles, resource references as references).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from concurrent import futures
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
)

from elastic_gpu.tools.offline.mocks import StackMocks
from elastic_gpu.tools.offline.runner import WIRE_RESOURCE_SIG, WIRE_SIG_KEY, CapturedResource, _CapturingMonitor


class _Monitor(_CapturingMonitor):
    """The offline capture with this deployment's project and stack in its URNs (not the test process's)."""

    def __init__(self, project: str, stack: str) -> None:
        super().__init__(StackMocks())
        self.project, self.stack = project, stack

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        if parent:
            type_ = parent.split("::")[2].split("$")[-1] + "$" + type_
        return "urn:pulumi:" + "::".join([self.stack, self.project, type_, name])


class _MonitorService(resource_pb2_grpc.ResourceMonitorServicer):
    def __init__(self, monitor: _Monitor) -> None:
        self.monitor: Any = monitor  # the SDK's mock monitor is untyped
        self.lock = threading.Lock()

    def GetDeploymentInfo(self, request: Any, context: Any) -> Any:
        return self.monitor.GetDeploymentInfo(request)

    def SupportsFeature(self, request: Any, context: Any) -> Any:
        # As the SDK's mock monitor: no output values, so inputs arrive as plain data.
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id != "outputValues")

    def Invoke(self, request: Any, context: Any) -> Any:
        with self.lock:
            return self.monitor.Invoke(request)

    def ReadResource(self, request: Any, context: Any) -> Any:
        with self.lock:
            return self.monitor.ReadResource(request)

    def RegisterResource(self, request: Any, context: Any) -> Any:
        with self.lock:
            return self.monitor.RegisterResource(request)

    def RegisterResourceOutputs(self, request: Any, context: Any) -> Any:
        return empty_pb2.Empty()

    def RegisterPackage(self, request: Any, context: Any) -> Any:
        return self.monitor.RegisterPackage(request)

    def SignalAndWaitForShutdown(self, request: Any, context: Any) -> Any:
        return empty_pb2.Empty()


class _EngineService(engine_pb2_grpc.EngineServicer):
    def __init__(self) -> None:
        self.messages: list[str] = []

    def Log(self, request: Any, context: Any) -> Any:
        if request.severity >= engine_pb2.WARNING:  # the SDK's own debug lines aside
            self.messages.append(request.message)
        return empty_pb2.Empty()

    def GetRootResource(self, request: Any, context: Any) -> Any:
        return engine_pb2.GetRootResourceResponse(urn="")

    def SetRootResource(self, request: Any, context: Any) -> Any:
        return engine_pb2.SetRootResourceResponse()


#: The component provider as `pulumi` starts it (`python -m elastic_gpu.package ADDRESS`), with the REST reads
#: the library makes at preview (elastic_gpu/http_reads.py) answered from the new described account, as the offline
#: runner answers them in the Python program it is compared with: the provider process never touches the network.
_OFFLINE_PROVIDER = """
import runpy, sys
from elastic_gpu.tools.offline.mocks import StackMocks
StackMocks()
sys.argv = ["elastic_gpu.package", *sys.argv[1:]]
runpy.run_module("elastic_gpu.package", run_name="__main__")
"""


class Engine:
    """The mock engine's two services on local ports, and a provider process started against them."""

    def __init__(self, project: str, stack: str, config: dict[str, str]) -> None:
        self.project, self.stack, self.config = project, stack, config
        self.monitor = _Monitor(project, stack)
        self.engine = _EngineService()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        resource_pb2_grpc.add_ResourceMonitorServicer_to_server(_MonitorService(self.monitor), self.server)
        engine_pb2_grpc.add_EngineServicer_to_server(self.engine, self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _OFFLINE_PROVIDER, f"127.0.0.1:{self.port}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        self.channel = grpc.insecure_channel(f"127.0.0.1:{int(self.process.stdout.readline().decode().strip())}")
        self.provider = provider_pb2_grpc.ResourceProviderStub(self.channel)

    @property
    def stack_urn(self) -> str:
        return f"urn:pulumi:{self.stack}::{self.project}::pulumi:pulumi:Stack::{self.project}-{self.stack}"

    def construct(self, type_: str, name: str, inputs: dict[str, Any], dependencies: dict[str, list[str]]) -> Any:
        request = provider_pb2.ConstructRequest(
            project=self.project,
            stack=self.stack,
            config=self.config,
            dryRun=True,
            parallel=1,
            monitorEndpoint=f"127.0.0.1:{self.port}",
            type=type_,
            name=name,
            parent=self.stack_urn,
            inputs=wire(inputs),
            inputDependencies={
                k: provider_pb2.ConstructRequest.PropertyDependencies(urns=v) for k, v in dependencies.items()
            },
            organization="organization",
        )
        return self.provider.Construct(request, timeout=120)

    @property
    def captured(self) -> list[CapturedResource]:
        return sorted(self.monitor.captured, key=lambda r: r.urn)

    def close(self) -> None:
        self.channel.close()
        self.process.terminate()
        self.process.wait(timeout=30)
        self.server.stop(grace=None)


def reference(urn: str) -> dict[str, Any]:
    """A resource reference as the engine sends one."""
    return {WIRE_SIG_KEY: WIRE_RESOURCE_SIG, "urn": urn, "packageVersion": ""}


def wire(inputs: dict[str, Any]) -> struct_pb2.Struct:
    """Inputs as the engine puts them on the wire (a Struct: every number a double)."""
    loop = asyncio.new_event_loop()
    try:
        struct: struct_pb2.Struct = loop.run_until_complete(rpc.serialize_properties(inputs, {}))
    finally:
        loop.close()
    return struct
