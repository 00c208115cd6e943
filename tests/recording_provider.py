"""The fake cloud (tests/fake_provider.py) with a log: every member the core asks of it, and every builder it
calls, in order, on this one instance; a member named in `failures` raises instead of answering, so a test sees
that a failure of the provider a component was handed is what the component reports.

Registered as a cloud (`monkeypatch.setitem(clouds.REGISTRY, "fake", "tests.recording_provider")`) it is what the
edges look up; made with another name and left out of the registry (`RecordingProvider("unregistered")`), only a
function that takes the provider it is handed can use it: one that looks a cloud up by name finds none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from elastic_gpu.provider import AutoscalerBuilder, CloudFacts, ConfigRules, PoolBuilder
from tests.fake_provider import FakeProvider


class RecordingProvider(FakeProvider):
    def __init__(self, name: str = "fake") -> None:
        self.name = name
        self.facts: CloudFacts = dataclasses.replace(FakeProvider.facts)
        #: (member or builder, the first argument when it is a name) in the order the core called them
        self.calls: list[tuple[str, ...]] = []
        #: member or builder name -> what it raises
        self.failures: dict[str, Exception] = {}

    def _asked(self, member: str, *detail: str) -> None:
        self.calls.append((member, *detail))
        if member in self.failures:
            raise self.failures[member]

    def _recorded(self, member: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            self._asked(member, *(a for a in args[:1] if isinstance(a, str)))
            return fn(*args)

        return call

    def config_rules(self) -> ConfigRules:
        self._asked("config_rules")
        return super().config_rules()

    def pool_builder(self) -> PoolBuilder:
        self._asked("pool_builder")
        built = super().pool_builder()
        return dataclasses.replace(
            built,
            override_problems=self._recorded("override_problems", built.override_problems),
            pool_problems=self._recorded("pool_problems", built.pool_problems),
            workload_contract=self._recorded("workload_contract", built.workload_contract),
            build_general_pool=self._recorded("build_general_pool", built.build_general_pool),
            build_spot_gpu_pool=self._recorded("build_spot_gpu_pool", built.build_spot_gpu_pool),
        )

    def autoscaler_builder(self) -> AutoscalerBuilder:
        self._asked("autoscaler_builder")
        built = super().autoscaler_builder()
        return dataclasses.replace(built, build_autoscaler=self._recorded("build_autoscaler", built.build_autoscaler))

    def asked(self, member: str) -> list[tuple[str, ...]]:
        """The calls of one member, in order."""
        return [c for c in self.calls if c[0] == member]


#: What the registry imports when a test registers this module as a cloud.
PROVIDER = RecordingProvider()
