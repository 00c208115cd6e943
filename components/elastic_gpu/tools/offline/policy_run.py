"""Run the policy pack offline over the resources the mock runner captured.

Builds the same argument objects the Pulumi engine hands a CrossGuard pack
(`ResourceValidationArgs` per resource, `StackValidationArgs` once) from the
captured resources, with each policy's config (schema defaults overlaid with
the user's policy config, in the shape of `pulumi preview --policy-pack-config`).
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from elastic_gpu.tools.node_group_reading import reading_each_resource_once
from elastic_gpu.tools.offline.collector import collected_at_end
from elastic_gpu.tools.offline.runner import Preview
from elastic_gpu.tools.offline.stack_resources import stack_resources
from elastic_gpu.tools.offline.terminal import paint
from elastic_gpu.tools.policy.scope import SCOPE_PROPERTIES


@dataclass
class Violation:
    policy: str
    level: str  # "mandatory" | "advisory"
    message: str
    urn: str | None
    type: str | None
    name: str | None
    #: what was unknown when the policy could not run (`can't run policy ... during preview`), else None
    unknown: str | None = field(default=None, compare=False)


@dataclass
class PolicyReport:
    pack: str
    violations: list[Violation]

    @property
    def mandatory(self) -> list[Violation]:
        return [v for v in self.violations if v.level == EnforcementLevel.MANDATORY.value]

    def of(self, policy: str) -> list[Violation]:
        return [v for v in self.violations if v.policy == policy]

    def to_json(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "passed": not self.mandatory,
            "violations": [asdict(v) for v in self.violations],
        }


def policy_config(
    policy: ResourceValidationPolicy | StackValidationPolicy, user: dict[str, Any] | None
) -> tuple[dict[str, Any], str]:
    """(config, enforcement level) for one policy: schema defaults, then the user's `all` entry, then its own.

    An entry is either a level ("advisory") or an object whose optional `enforcementLevel`
    key sets the level, as in Pulumi's policy-pack config files; `all` applies to every policy
    (e.g. `{"all": {"exemptResources": ["*legacy*"]}}`).
    """
    config = {}
    if policy.config_schema:
        config = {k: v["default"] for k, v in policy.config_schema.properties.items() if "default" in v}
    level = (policy.enforcement_level or EnforcementLevel.ADVISORY).value
    # `all` first (a level, or a level and the scope settings every policy takes), then the policy's own.
    for entry in ((user or {}).get(ALL_ENTRY), (user or {}).get(policy.name)):
        if isinstance(entry, str):
            level = entry
        elif isinstance(entry, dict):
            entry = dict(entry)
            level = entry.pop("enforcementLevel", level)
            config.update(entry)
    return config, level


#: Enforcement levels a policy-pack config may set for these validation policies (`remediate` is for
#: remediation policies, which the pack has none of).
LEVELS = tuple(
    level.value for level in (EnforcementLevel.ADVISORY, EnforcementLevel.MANDATORY, EnforcementLevel.DISABLED)
)
#: The config entry that applies to every policy (as in `pulumi preview --policy-pack-config`).
ALL_ENTRY = "all"
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}


def _level_problem(where: str, level: Any) -> list[str]:
    if level in LEVELS:
        return []
    close = difflib.get_close_matches(str(level), LEVELS, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return [f"{where}: unknown enforcement level {level!r}; {hint}allowed: {', '.join(LEVELS)}"]


def _value_problems(where: str, spec: dict[str, Any], value: Any) -> list[str]:
    """The subset of JSON Schema the pack's config schemas use: type, items.type, minimum, maximum, enum."""
    kind = spec.get("type")
    types = _JSON_TYPES.get(kind, (object,)) if isinstance(kind, str) else (object,)
    is_bool = isinstance(value, bool)
    if not isinstance(value, types) or (is_bool and kind in ("number", "integer")):
        return [f"{where}: must be {'an' if kind in ('integer', 'array', 'object') else 'a'} {kind} (got {value!r})"]
    if isinstance(value, float) and not math.isfinite(value):
        return [f"{where}: must be a finite number (got {value!r})"]
    problems = []
    if "enum" in spec and value not in spec["enum"]:
        problems.append(f"{where}: {value!r} is not allowed; allowed: {', '.join(map(str, spec['enum']))}")
    if isinstance(value, int | float) and not is_bool:
        if "minimum" in spec and value < spec["minimum"]:
            problems.append(f"{where}: must be >= {spec['minimum']} (got {value!r})")
        if "maximum" in spec and value > spec["maximum"]:
            problems.append(f"{where}: must be <= {spec['maximum']} (got {value!r})")
    if isinstance(value, list) and isinstance(spec.get("items"), dict):
        for i, item in enumerate(value):
            problems += _value_problems(f"{where}[{i}]", spec["items"], item)
    return problems


def policy_config_problems(
    user: dict[str, Any], policies: list[ResourceValidationPolicy | StackValidationPolicy] | None = None
) -> list[str]:
    """Every problem of a policy-pack config: unknown policy names, unknown levels, unknown settings and
    values of the wrong type. A typo must never switch a policy off (or to advisory) silently."""
    if policies is None:
        from elastic_gpu.tools import policy as policy_rules

        policies = policy_rules.ALL_POLICIES
    by_name = {p.name: p for p in policies}
    problems: list[str] = []
    for name, entry in user.items():
        policy = by_name.get(name)
        if policy is None and name != ALL_ENTRY:
            close = difflib.get_close_matches(name, by_name, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            problems.append(f"{name}: unknown policy; {hint}allowed: {ALL_ENTRY}, {', '.join(by_name)}")
            continue
        if isinstance(entry, str):
            problems += _level_problem(name, entry)
            continue
        if not isinstance(entry, dict):
            problems.append(f"{name}: must be a level or a mapping of enforcementLevel and settings (got {entry!r})")
            continue
        if "enforcementLevel" in entry:
            problems += _level_problem(f"{name}.enforcementLevel", entry["enforcementLevel"])
        # `all` takes the scope settings every policy has (tools/policy/scope.py).
        properties = (
            SCOPE_PROPERTIES
            if policy is None
            else (policy.config_schema.properties if policy.config_schema else None) or {}
        )
        for key, value in entry.items():
            if key == "enforcementLevel":
                continue
            if key not in properties:
                close = difflib.get_close_matches(key, properties, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                allowed = ", ".join(["enforcementLevel", *properties])
                problems.append(f"{name}.{key}: unknown setting; {hint}allowed: {allowed}")
                continue
            problems += _value_problems(f"{name}.{key}", properties[key], value)
    return problems


def _settle(result: Any) -> None:
    if inspect.isawaitable(result):
        asyncio.run(_await(result))


async def _await(result: Any) -> None:
    await result


def _reporter(record: Callable[[str, str | None], None], resource_urn: str | None) -> ReportViolation:
    """A policy's report callback: a resource policy's violations are on the resource it validates (whatever
    URN it names); a stack policy's (resource_urn None) on the URN it names, if any."""

    def report(message: str, urn: str | None = None) -> None:
        record(message, resource_urn if resource_urn is not None else urn)

    return report


def run_policies(
    preview: Preview,
    policies: list[ResourceValidationPolicy | StackValidationPolicy] | None = None,
    config: dict[str, Any] | None = None,
    pack: str | None = None,
) -> PolicyReport:
    """Validate every captured resource and the whole stack; collect the violations."""
    # The stack read once for every stack rule (Preview.reading), each resource's node groups once for every
    # resource rule (reading_each_resource_once); no full collections over the preview's heap mid-run
    # (offline/collector.py).
    with preview.reading(), reading_each_resource_once(), collected_at_end():
        return _run_policies(preview, policies, config, pack)


def _run_policies(
    preview: Preview,
    policies: list[ResourceValidationPolicy | StackValidationPolicy] | None,
    config: dict[str, Any] | None,
    pack: str | None,
) -> PolicyReport:
    if policies is None or pack is None:
        from elastic_gpu.tools import policy as policy_rules

        policies = policy_rules.ALL_POLICIES if policies is None else policies
        pack = pack or policy_rules.PACK_NAME
    resources = stack_resources(preview)
    by_urn = {r.urn: r for r in resources}
    config = with_stack_reservations(with_stack_prices(config, preview), preview)
    violations: list[Violation] = []
    for policy in policies:
        cfg, level = policy_config(policy, config)
        if level == EnforcementLevel.DISABLED.value:
            continue

        def record(
            message: str,
            urn: str | None = None,
            _p: str = policy.name,
            _level: str = level,
            unknown: str | None = None,
        ) -> None:
            target = by_urn.get(urn) if urn else None
            kind, name = (target.resource_type, target.name) if target else (None, None)
            violations.append(Violation(_p, _level, message, urn, kind, name, unknown))

        def cannot_run(exc: UnknownValueError, urn: str | None, _p: str = policy.name) -> None:
            # What the Pulumi CLI reports for an unknown value: an advisory note, not a pass or a failure.
            note = f"can't run policy '{_p}' during preview: {exc.message}"
            record(note, urn, _level=EnforcementLevel.ADVISORY.value, unknown=exc.message)

        if isinstance(policy, ResourceValidationPolicy):
            for r in resources:
                args = ResourceValidationArgs(r.resource_type, r.props, r.urn, r.name, r.opts, r.provider, cfg)
                try:
                    _settle(policy.validate(args, _reporter(record, r.urn)))
                except UnknownValueError as exc:
                    cannot_run(exc, r.urn)
        else:
            try:
                _settle(policy.validate(StackValidationArgs(resources, cfg), _reporter(record, None)))
            except UnknownValueError as exc:
                cannot_run(exc, None)
    return PolicyReport(pack=pack, violations=violations)


#: The policy that prices pools, and its setting that takes the stack config's `elastic-gpu:prices`.
PRICED_POLICY = "gpu-monthly-cost-ceiling"


def with_stack_prices(config: dict[str, Any] | None, preview: Preview) -> dict[str, Any] | None:
    """The gate prices pools as the preview does: the stack's `elastic-gpu:prices` fill the cost policy's `prices`
    (a `prices` the user's policy config sets wins)."""
    from elastic_gpu.tools.offline.price_overrides import price_overrides

    stack = {item: o.model_dump(by_alias=True, exclude_none=True) for item, o in price_overrides(preview).items()}
    entry = (config or {}).get(PRICED_POLICY)
    if not stack or (isinstance(entry, dict) and "prices" in entry):
        return config
    if isinstance(entry, str):  # a level alone
        entry = {"enforcementLevel": entry}
    return {**(config or {}), PRICED_POLICY: {**(entry or {}), "prices": stack}}


#: The policies that read the reservations the stack file names (tools/policy/reservation_rules.py).
RESERVATION_POLICIES = ("gpu-pool-uses-its-reservations", "reservation-used")


def with_stack_reservations(config: dict[str, Any] | None, preview: Preview) -> dict[str, Any] | None:
    """The gate judges the reservations the stack file names and the account holds: each pool's
    `gpuPools[].reservations` ids and tags fill the reservation rules' `reservations`, and the described account's
    reservations (Preview.account_reservations) their `accountReservations` (what the user's policy config sets
    wins). Read from the raw config, as the program's own validation already judged it."""
    from elastic_gpu.config import PROJECT
    from elastic_gpu.tools.policy.reservation_rules import ACCOUNT_KEY, RESERVATIONS_KEY

    pools = preview.config.get(f"{PROJECT}:gpuPools")
    named = {
        p["name"]: {"ids": list(r.get("ids") or []), "tags": dict(r.get("tags") or {})}
        for p in (pools if isinstance(pools, list) else [])
        if isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(r := p.get("reservations"), dict)
    }
    given = {RESERVATIONS_KEY: named, ACCOUNT_KEY: preview.account_reservations}
    given = {k: v for k, v in given.items() if v}
    if not given:
        return config
    out = dict(config or {})
    for policy in RESERVATION_POLICIES:
        entry = out.get(policy)
        if isinstance(entry, str):  # a level alone
            entry = {"enforcementLevel": entry}
        entry = dict(entry or {}) if isinstance(entry, dict) or entry is None else entry
        out[policy] = {**{k: v for k, v in given.items() if k not in entry}, **entry}
    return out


#: How many resources a violation repeated on several names before "and N more".
SHOWN_RESOURCES = 5
_LEVEL_COLOUR = {EnforcementLevel.MANDATORY.value: "red", EnforcementLevel.ADVISORY.value: "yellow"}


def _where(group: list[Violation]) -> str:
    """The resources one message was reported on: `(type: name)`, or `(N resources: type: a, b ...)`."""
    named = [v for v in group if v.urn]
    if not named:
        return ""
    if len(named) == 1:
        return f" ({named[0].type}: {named[0].name})"
    types = list(dict.fromkeys(v.type for v in named))
    names = [v.name if len(types) == 1 else f"{v.type}: {v.name}" for v in named]
    more = f" and {len(names) - SHOWN_RESOURCES} more" if len(names) > SHOWN_RESOURCES else ""
    prefix = f"{types[0]}: " if len(types) == 1 else ""
    return f" ({len(named)} resources: {prefix}{', '.join(map(str, names[:SHOWN_RESOURCES]))}{more})"


def render_report(report: PolicyReport) -> str:
    """Like the Pulumi CLI's policy section: level, pack, policy, resource, then the message; the same
    message of one policy on several resources is one entry naming them all."""
    if not report.violations:
        return f"Policies:\n    {paint('✅', 'green')} {report.pack}: no violations"
    lines = ["Policy Violations:"]
    groups: dict[tuple[str, str, str], list[Violation]] = {}
    for v in report.violations:
        if v.unknown is None:
            groups.setdefault((v.level, v.policy, v.message), []).append(v)
    for (level, policy, message), group in groups.items():
        tag = paint(f"[{level}]", _LEVEL_COLOUR.get(level, "bold"))
        lines.append(f"    {tag}  {report.pack}  {policy}{_where(group)}")
        lines.append(f"    {message}")
    if line := _cannot_run_line(report):
        lines.append(line)
    lines.append(
        f"{len(report.mandatory)} mandatory, {len(report.violations) - len(report.mandatory)} advisory violation(s)"
    )
    return "\n".join(lines)


def _cannot_run_line(report: PolicyReport) -> str:
    """The checks that could not run while a value is unknown, as one entry: which policies, and the values
    they waited for (each value once; the Pulumi CLI prints one advisory per policy and resource)."""
    notes = [v for v in report.violations if v.unknown is not None]
    if not notes:
        return ""
    policies = list(dict.fromkeys(v.policy for v in notes))
    values = list(dict.fromkeys(str(v.unknown).removesuffix(" can't be known during preview") for v in notes))
    tag = paint(f"[{EnforcementLevel.ADVISORY.value}]", _LEVEL_COLOUR[EnforcementLevel.ADVISORY.value])
    return (
        f"    {tag}  {report.pack}  {len(policies)} check(s) can't run during preview while a value is unknown "
        f"(they run at `pulumi up`, once it is known): {', '.join(policies)}\n"
        f"    unknown: {'; '.join(values)}"
    )
