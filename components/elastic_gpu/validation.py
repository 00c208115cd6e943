"""Pure validation rules shared by the stack config and the components' Args (this module imports neither).

Each returns a list of messages (empty when fine); callers collect them all and
raise one ConfigError. `where` prefixes each message with the field path.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from types import UnionType
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from elastic_gpu.cloud_facts import Bounds as Bounds
from elastic_gpu.cloud_facts import KnownCloud, RuledCloud
from elastic_gpu.cloud_facts import TagRules as TagRules
from elastic_gpu.clouds import all_clouds
from elastic_gpu.durations import DURATION_HELP, DURATION_PATTERN, parse_duration
from elastic_gpu.errors import Problem, about
from elastic_gpu.gpu_catalog import GPU_MODELS, GpuResolver, GpuSpec, gpu_instance_type, retired_type
from elastic_gpu.versions import KUBERNETES_MINOR_PATTERN

#: A name the stack gives (the cluster, a GPU pool): it prefixes node-group names, so it is short and DNS-safe.
NAME_PATTERN = r"^[a-z]([a-z0-9-]{0,18}[a-z0-9])?$"
#: What each pattern of a setting means, for the error message (pydantic would print the regex).
PATTERN_HELP = {
    DURATION_PATTERN: DURATION_HELP,
    NAME_PATTERN: "lowercase letters, digits and '-', starting with a letter, at most 20 characters",
    KUBERNETES_MINOR_PATTERN: 'a Kubernetes minor such as "1.33" (quoted, so YAML keeps it a string)',
}


def size_problems(where: str, min_name: str, min_size: int, max_name: str, max_size: int) -> list[str]:
    """Node counts of a pool: 0 to Kubernetes' 5,000 nodes per cluster (bounded before any arithmetic or
    serialization: 10**400 is no float), min <= max."""
    sizes = ((min_name, min_size), (max_name, max_size))
    problems = [f"{where}{n}: must be >= 0 (got {shown_number(v)})" for n, v in sizes if v < 0]
    problems += [
        bounds_problems(f"{where}{n}", v, NODES_PER_CLUSTER)[0] for n, v in sizes if v > NODES_PER_CLUSTER.high
    ]
    if min_size > max_size:
        problems.append(f"{where}{max_name}: must be >= {min_name} (got {min_name}={min_size}, {max_name}={max_size})")
    return problems


def gpu_instance_type_problems(
    where: str,
    provider: RuledCloud,
    instance_types: list[str],
    gpu: str | None = None,
    types_field: str = "instanceTypes",
    mixed_models: bool = False,
    mixed_field: str = "mixedGpuModels: true",
    spec_field: str = "gpuSpec: {model, count, vcpus, memoryGib}",
    spec: GpuSpec | None = None,
    unresolved: Mapping[str, str] | None = None,
) -> list[str]:
    """Every type must be a GPU type of `cloud` (of model `gpu` if given; the catalog's, else one `spec` gives),
    all with one GPU count and, unless `mixed_models` (the user's "any of these GPUs", spelled `mixed_field`),
    one GPU model. `unresolved`: why the cloud's API gave no GPU for a type (asked at preview)."""
    cloud = provider.name
    if gpu is not None and gpu not in GPU_MODELS:
        return [f"{where}gpu: unknown GPU {gpu!r}; allowed: {', '.join(GPU_MODELS)}"]
    problems: list[str] = []
    counts: set[int] = set()
    models: dict[str, list[str]] = {}
    shapes: dict[tuple[int, int], str] = {}
    for j, name in enumerate(instance_types):
        row = gpu_instance_type(cloud, name, spec)
        if (retired := retired_type(cloud, name)) is not None:
            problems.append(f"{where}{types_field}[{j}]: {retired.refusal()}")
        elif row is None:
            problems.append(
                f"{where}{types_field}[{j}]: {name!r} carries no GPU we know on {cloud}"
                f"{_unresolved(provider, name, unresolved)}; "
                "allowed: a GPU type listed in elastic_gpu/gpu_catalog.py, or give the pool its GPU with "
                f"{spec_field}"
            )
        elif gpu is not None and row.gpu != gpu:
            problems.append(f"{where}{types_field}[{j}]: {name!r} has {row.model.name}, not gpu {gpu!r}")
        else:
            counts.add(row.gpus)
            models.setdefault(row.model.name, []).append(name)
            shapes.setdefault((row.vcpus, row.memory_gib), name)
    if len(models) > 1 and not mixed_models:
        listed = "; ".join(f"{m}: {', '.join(types)}" for m, types in models.items())
        problems.append(
            f"{where}{types_field}: a pool's nodes carry one GPU model (its accelerator label says which, and a pod "
            f"that asks for one model must not land on another); got {listed}. Make one pool per model, or set "
            f"{mixed_field} to accept any of these GPUs (then no accelerator label is set)"
        )
    if len(counts) > 1:
        problems.append(
            f"{where}{types_field}: all types in a pool must carry the same GPU count "
            f"(the autoscaler builds one node template per group); got counts {sorted(counts)}"
        )
    if len(shapes) > 1 and provider.facts.one_group_many_types:
        # cluster-autoscaler's AWS provider builds an empty group's node template from the first
        # type only (aws_wrapper.go, instanceTypesOverrides[0]); its README: the types of one group
        # "should have the same amount of RAM and number of CPU cores".
        listed = ", ".join(f"{n} ({c} vCPU, {m} GiB)" for (c, m), n in shapes.items())
        problems.append(
            f"{where}{types_field}: all types of one node group must have the same vCPUs and memory, because the "
            f"autoscaler scales an empty group from the first type's shape; got {listed}. Keep one shape "
            "(e.g. the first), or make one pool per shape"
        )
    return problems


def _unresolved(cloud: KnownCloud, name: str, unresolved: Mapping[str, str] | None) -> str:
    """Why the cloud did not tell a type's GPU: its answer at preview, or that its provider cannot be asked."""
    if not isinstance(cloud, GpuResolver):
        # azure-native has no invoke that describes a VM size (no Resource SKUs or VM sizes list in its
        # compute module), so an AKS pool gives the GPU of a size the catalog lacks itself.
        return f" (the {cloud.name} Pulumi provider has no invoke that describes an instance type's GPU)"
    if unresolved and name in unresolved:
        return f" (the cloud, asked at preview: {unresolved[name]})"
    return ""


def tag_problems(where: str, tags: Mapping[str, str], rules: TagRules) -> list[str]:
    """Every way `tags` breaks the cloud's tag rules, one message each."""
    what = rules.what
    problems = []
    if len(tags) > rules.max_count:
        problems.append(f"{where}: at most {rules.max_count} {what}s on {what}ged resources (got {len(tags)})")
    for key, value in tags.items():
        at = f"{where}.{key}" if key else f"{where}.''"
        if not key:
            problems.append(f"{at}: a {what} key may not be empty")
            continue
        if len(key) > rules.key_max:
            problems.append(f"{at}: {what} key is {len(key)} characters; allowed: at most {rules.key_max}")
        if len(value) > rules.value_max:
            problems.append(f"{at}: {what} value is {len(value)} characters; allowed: at most {rules.value_max}")
        if bad := sorted({c for c in key if c in rules.forbidden_key_chars}):
            problems.append(
                f"{at}: {what} key may not contain {' '.join(bad)} (forbidden: {rules.forbidden_key_chars})"
            )
        if rules.allowed_punctuation is not None:
            for part, text in (("key", key), ("value", value)):
                if bad := sorted({c for c in text if not _tag_char_ok(c, rules.allowed_punctuation)}):
                    problems.append(
                        f"{at}: {what} {part} may not contain {' '.join(repr(c) for c in bad)}; allowed: letters, "
                        f"digits, spaces and {' '.join(rules.allowed_punctuation)}"
                    )
        if rules.key_pattern and not re.fullmatch(rules.key_pattern, key):
            problems.append(f"{at}: {what} key {key!r} is not allowed; allowed: {rules.pattern_help}")
        if rules.value_pattern and not re.fullmatch(rules.value_pattern, value):
            problems.append(f"{at}: {what} value {value!r} is not allowed; allowed: {rules.pattern_help}")
        if prefix := next((p for p in rules.reserved_key_prefixes if key.lower().startswith(p)), None):
            problems.append(f"{at}: the {what} key prefix {prefix!r} is reserved for the cloud provider")
        if prefix := next((p for p in rules.reserved_value_prefixes if value.lower().startswith(p)), None):
            problems.append(f"{at}: the {what} value prefix {prefix!r} is reserved for the cloud provider")
        if key in rules.reserved_keys:
            problems.append(f"{at}: the components set the {what} {key!r} themselves; use another key")
    return problems


def _tag_char_ok(char: str, punctuation: str) -> bool:
    """A Unicode letter (\\p{L}), separator (\\p{Z}), number (\\p{N}) or one of `punctuation`."""
    import unicodedata

    return char in punctuation or unicodedata.category(char)[0] in "LZN"


def bounds_problems(where: str, value: int, bounds: Bounds, unit: str = "") -> list[str]:
    if bounds.low <= value <= bounds.high:
        return []
    return [
        f"{where}: {shown_number(value)}{unit} is out of range; allowed: {bounds.low} to {bounds.high}{unit} "
        f"({bounds.source})"
    ]


def owner_of(cloud: str) -> str:
    """How messages name the cloud called `cloud` as a setting's owner ("an AWS"-only setting). The settings'
    owners are cloud names (elastic_gpu.settings.CLOUD_ONLY_POOL_SETTINGS, CLOUD_ONLY_CLUSTER_SETTINGS) and the
    owner is another cloud than the stack's, so this is the one pass over the registry that words them."""
    return next(c.owner for c in all_clouds() if c.name == cloud)


def cloud_only_problems(
    field: Callable[[str], str],
    cloud: str,
    owners: Mapping[str, tuple[str, object]],
    values: Mapping[str, object],
    given: Callable[[str], bool] = lambda _: False,
) -> list[str]:
    """Each setting of another cloud that is set (not its unset value, or `given`); `owners` says whose each
    setting is and its unset value (elastic_gpu.settings.CLOUD_ONLY_POOL_SETTINGS); `field` spells it."""
    problems = []
    for key, value in values.items():
        owner, unset = owners[key]
        if owner != cloud and (value != unset or given(key)):
            problems.append(
                f"{field(key)}: {owner_of(owner)}-only setting; remove it for cloud {cloud!r} (got {said(value)})"
            )
    return problems


#: A cluster-autoscaler duration is a Go `time.Duration` ("90s", "14m30s", "1h30m"): elastic_gpu.durations.
duration_seconds = parse_duration


#: The autoscaler durations that must be longer than 0. A scale-down delay or unneeded time of 0 means no
#: wait (the AKS docs' bursty-workload profile sets scale-down-delay-after-add=0m, cluster-autoscaler.md);
#: a zero provision time would give up on every node that is still starting.
ZERO_DURATION_REFUSED = ("max_node_provision_time",)


def autoscaler_settings_problems(
    field: Callable[[str], str],
    durations: Mapping[str, str],
    expander: Sequence[str],
    fallback: str | None,
    cloud: RuledCloud,
    example: str,
) -> list[str]:
    """The autoscaler's rules beyond each value's type and pattern, for the stack config and the
    ClusterAutoscalerArgs alike: `field(name)` spells a setting (`autoscaler.expander`,
    `ClusterAutoscalerArgs.expander`); `fallback` names a pool with an on-demand fallback, if any;
    `example` is a working expander chain in the caller's language."""

    problems = [
        f"{field(key)}: must be longer than 0 (got {said(value)})"
        for key, value in durations.items()
        if key in ZERO_DURATION_REFUSED and duration_seconds(value) == 0
    ]
    problems += autoscaler_duration_problems(cloud, durations, {key: field(key) for key in durations})
    if not expander:
        problems.append(f"{field('expander')}: at least one expander is required, e.g. {example}")
    problems += duplicate_problems(field("expander"), list(expander))
    if fallback is not None and cloud.config_rules().priority_expander and "priority" not in expander:
        problems.append(
            f"{field('expander')}: {fallback} needs `priority` in the expander chain, or the autoscaler may pick the "
            f"on-demand group before the spot ones (got {list(expander)}); put priority first, e.g. {example}"
        )
    return problems


def instance_type_cloud(name: str) -> str | None:
    """Which cloud's naming an instance type follows (`m5.large`, `Standard_D4s_v5`, `e2-standard-4`)."""
    return next((c.name for c in all_clouds() if re.fullmatch(c.facts.instance_type_pattern, name)), None)


def instance_type_problems(where: str, provider: RuledCloud, names: list[str]) -> list[str]:
    """Types that are not named as the cloud names its types (a CPU type of another cloud, a typo), or
    whose family the cloud's table (its ConfigRules.machine_type_pattern) does not know; and
    each type once."""

    cloud = provider.name
    rules = provider.config_rules()
    example = provider.facts.example_instance_type
    problems = []
    for j, name in enumerate(names):
        owner = instance_type_cloud(name) if isinstance(name, str) else None
        if owner != cloud:
            looks = f"looks like a {owner} type" if owner else "is no instance type name we know"
            problems.append(f"{where}[{j}]: {name!r} {looks}; allowed: a {cloud} type such as {example}")
        elif not re.fullmatch(rules.machine_type_pattern, name):
            problems.append(
                f"{where}[{j}]: {name!r} is not a {cloud} machine type we know; allowed: a type of a known family "
                f"such as {example} ({rules.machine_type_source})"
            )
    return problems + duplicate_problems(where, list(names))


def cloud_args_problems(where: str, cloud: RuledCloud, tags: Mapping[str, str]) -> list[str]:
    """A pool component's tags against its cloud's rules (its provider's ConfigRules); its disk is a setting,
    checked by disk_problems with the pool's other settings."""

    rules = cloud.config_rules()
    return about("tags", tag_problems(f"{where}tags", tags, rules.tag_rules))


def disk_bounds(cloud: RuledCloud) -> Bounds:
    """The node disk sizes a pool may have on `cloud`: the cloud's own bounds (its config_rules' DISK_GIB, with their
    source) within the ones every cloud shares (NODE_DISK_GIB, the settings' field bounds)."""
    own = cloud.config_rules().disk_gib
    return Bounds(max(own.low, NODE_DISK_GIB.low), min(own.high, NODE_DISK_GIB.high), own.source)


def disk_problems(path: str, cloud: RuledCloud, disk_size_gib: int) -> list[str]:
    """A pool's node disk (GiB) against disk_bounds: the one rule a stack file's `diskSizeGib` and a program's
    `disk_size_gib` run (elastic_gpu.settings); `path` names it as the caller does."""
    return bounds_problems(path, disk_size_gib, disk_bounds(cloud), " GiB")


#: Kubernetes' own scale limits ("Considerations for large clusters", kubernetes.io/docs/setup/best-practices/
#: cluster-large): at most 5,000 nodes per cluster and 110 pods per node. No pool of one cluster can hold more
#: nodes than the cluster; every node count is checked against this before any arithmetic.
NODES_PER_CLUSTER = Bounds(0, 5000, "Kubernetes supports at most 5,000 nodes per cluster")
PODS_PER_NODE = Bounds(2, 110, "Kubernetes supports at most 110 pods per node")
#: A node disk (GiB) of any cloud: at least what the smallest node image boots from (the EKS AMIs' 20 GiB root
#: snapshot), at most the largest any cloud's node takes (GKE's 65,536 GB boot disk); larger is a typo. The
#: settings' field bounds (settings.base MIN_DISK_GIB, MAX_DISK_GIB); each cloud's own are its DISK_GIB.
NODE_DISK_GIB = Bounds(20, 65536, "no cloud's node disk is larger")


def shown_number(value: object) -> str:
    """A number for a message: a huge int is named by its size, not printed in full."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**18:
        try:
            return f"a {len(str(abs(value)))}-digit number"
        except ValueError:  # over Python's int-to-text limit (sys.get_int_max_str_digits, 4300 by default)
            return f"a number of more than {sys.get_int_max_str_digits()} digits"
    return repr(value)


def duplicate_problems(where: str, items: list[object] | tuple[object, ...]) -> list[str]:
    """Each item may appear once in the list at `where` (zones, instance types, expanders, ranges ...)."""
    repeated = [item for i, item in enumerate(items) if item in items[:i]]
    if not repeated:
        return []
    shown = ", ".join(str(x) for x in dict.fromkeys(repeated))
    return [f"{where}: each value may appear once (repeated: {shown})"]


def cidr_problems(
    where: str,
    text: str,
    prefixes: range | None = None,
    example: str = "10.0.0.0/16",
    invalid: str = "is not a network address",
) -> list[str]:
    """`text` is an IPv4 network address (no host bits) with a prefix length in `prefixes`, written as the
    clouds' APIs take it: canonically, so `10.0.0.0/016` is refused (Python's ipaddress reads it as /16)."""
    import ipaddress

    if prefixes is None:
        allowed = f"an IPv4 range such as {example}"
    elif len(prefixes) == 1:
        allowed = f"an IPv4 /{prefixes[0]} such as {example}"
    else:
        allowed = f"an IPv4 range from /{prefixes[0]} to /{prefixes[-1]}, such as {example}"
    try:
        net = ipaddress.ip_network(text, strict=True)
    except ValueError as exc:
        hint = ""
        if "host bits set" in str(exc):
            hint = f"; did you mean {str(ipaddress.ip_network(text, strict=False))!r}?"
        return [f"{where}: {text!r} {invalid} ({exc}){hint}"]
    if net.version != 4 or (prefixes is not None and net.prefixlen not in prefixes):
        return [f"{where}: {text!r}: allowed: {allowed}"]
    if str(net) != text:
        return [
            f"{where}: {text!r} is not written canonically (no leading zeros or spaces); did you mean {str(net)!r}?"
        ]
    return []


#: Address space a cluster network may take: the RFC 1918 private blocks and RFC 6598 shared space. A publicly
#: routable range (8.8.0.0/16) would shadow those internet addresses for everything in the network.
PRIVATE_NETWORKS = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")


def private_cidr_problems(where: str, text: str, prefixes: range | None = None) -> list[str]:
    """`cidr_problems`, and the range lies in PRIVATE_NETWORKS."""
    import ipaddress

    if problems := cidr_problems(where, text, prefixes):
        return problems
    net = ipaddress.ip_network(text)
    if any(net.subnet_of(ipaddress.ip_network(block)) for block in PRIVATE_NETWORKS):  # type: ignore[arg-type]
        return []
    return [
        f"{where}: {text!r} is publicly routable: the cluster could no longer reach those internet addresses; "
        f"allowed: a range inside {', '.join(PRIVATE_NETWORKS)}, such as 10.0.0.0/16"
    ]


#: Kubernetes label syntax (k8s.io/apimachinery pkg/util/validation: IsQualifiedName, IsValidLabelValue): a key
#: is an optional DNS-subdomain prefix (<= 253) and "/", then a name of <= 63 alphanumerics, "-", "_", "."
#: beginning and ending alphanumeric; a value is empty or such a name.
_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"


def label_problems(where: str, labels: Mapping[str, str]) -> list[str]:
    """Node labels the API server accepts (keys and values), each bad one named."""
    import re

    problems = []
    for key, value in labels.items():
        prefix, _, name = str(key).rpartition("/")
        if not re.fullmatch(_LABEL_NAME, name) or (
            "/" in str(key) and (len(prefix) > 253 or not re.fullmatch(_DNS_SUBDOMAIN, prefix))
        ):
            problems.append(
                f"{where}[{key!r}]: not a Kubernetes label key; allowed: an optional DNS prefix and '/', then up to "
                "63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit (e.g. team/gpu-jobs)"
            )
        elif not isinstance(value, str) or (value and not re.fullmatch(_LABEL_NAME, value)):
            problems.append(
                f"{where}[{key!r}]: {value!r} is not a Kubernetes label value; allowed: empty, or up to 63 letters, "
                "digits, '-', '_' or '.', beginning and ending with a letter or digit"
            )
    return problems


def duration_problems(where: str, seconds: float, text: str, bounds: Bounds) -> list[str]:
    """A duration (already parsed to seconds) within `bounds` (in seconds)."""

    def show(s: int) -> str:
        return f"{s // 3600}h" if s % 3600 == 0 and s >= 3600 else f"{s // 60}m" if s % 60 == 0 else f"{s}s"

    problems = []
    if not bounds.low <= seconds <= bounds.high:
        problems.append(
            f"{where}: {text!r} is out of range; allowed: {show(bounds.low)} to {show(bounds.high)} ({bounds.source})"
        )
    return problems


def autoscaler_duration_problems(
    cloud: RuledCloud, durations: Mapping[str, str], label: Mapping[str, str]
) -> list[str]:
    """The autoscaler's durations (by attribute name: max_node_provision_time ...) within the cloud's bounds
    (ConfigRules.autoscaler_durations), written as the cloud takes them (duration_format, if
    any); `label` names each field for the message. A zero duration is left to the caller's own "must be
    longer than 0"."""
    rules = cloud.config_rules()
    table = rules.autoscaler_durations
    written = rules.duration_format
    problems = []
    for key, text in durations.items():
        if written is not None and not re.fullmatch(written[0], text):
            problems.append(f"{label[key]}: {text!r} is not allowed; allowed: {written[1]}")
            continue
        seconds = duration_seconds(text)
        if key in table and seconds > 0:
            problems += duration_problems(label[key], seconds, text, table[key])
    return problems


def time_slicing_problems(where: str, cloud: RuledCloud, replicas: int | None) -> list[str]:
    """GPU time-slicing replicas within the cloud's bound (ConfigRules.time_slicing_replicas)."""
    if replicas is None:
        return []
    return bounds_problems(where, replicas, cloud.config_rules().time_slicing_replicas)


def general_pool_problems(
    where: str, cloud: RuledCloud, instance_types: list[str], types_field: str = "instanceTypes"
) -> list[str]:
    """The general (CPU) pool's types: the cloud's, known, each once, and as many as one pool of the cloud takes."""
    problems = instance_type_problems(f"{where}{types_field}", cloud, list(instance_types))
    limit = cloud.config_rules().general_pool_types
    if limit is not None and len(instance_types) > limit[0]:
        problems.append(f"{where}{types_field}: {limit[1]} (got {list(instance_types)})")
    return problems


# --- the Args classes' field types, checked as the stack config's are (pydantic, strict) ----------

#: The clouds' SDK classes and ours that an Args field may name: checked with isinstance.
_PLAIN_TYPES = (int, float, bool, str, type(None))


def _checkable(hint: Any) -> bool:
    """Whether pydantic can check `hint` without guessing: plain values, Literals, containers of them,
    and classes of this library or pulumi_kubernetes (isinstance). Protocols (the cluster handle,
    checked by handle_problems) and the SDKs' input classes (which also take dicts) are left out."""
    origin = get_origin(hint)
    if origin is Annotated:
        return _checkable(get_args(hint)[0])
    if origin is Literal:
        return True
    if origin in (list, dict, tuple, Union, UnionType):
        return all(a is Ellipsis or _checkable(a) for a in get_args(hint))
    if hint in _PLAIN_TYPES:
        return True
    if not isinstance(hint, type) or getattr(hint, "_is_protocol", False):
        return False
    module = getattr(hint, "__module__", "")
    return module.startswith("elastic_gpu.") or (hint.__name__ == "Provider" and module.startswith("pulumi_kubernetes"))


def _sequence_ok(hint: Any) -> Any:
    """A `tuple[X, ...]` field takes a list too (a default may be a tuple only to stay immutable)."""
    if get_origin(hint) is tuple and len(get_args(hint)) == 2 and get_args(hint)[1] is Ellipsis:
        return hint | list.__class_getitem__(get_args(hint)[0])
    return hint


def _annotated(annotation: Any, metadata: list[Any]) -> Any:
    """`Annotated[annotation, *metadata]`, written so Python 3.10 parses it."""
    params = (annotation, *metadata)
    return Annotated[params]


def _field_hints(cls: type) -> dict[str, Any]:
    """Each field's type: a dataclass's annotations, or a settings model's types with their patterns (a
    number's bounds are the components' own rules, with the cloud's limits and their sources)."""
    if issubclass(cls, BaseModel):
        return {
            name: _annotated(f.annotation, patterns) if (patterns := _patterns(f.metadata)) else f.annotation
            for name, f in cls.model_fields.items()
        }
    hints = get_type_hints(cls, include_extras=True)
    return {f.name: hints[f.name] for f in dataclasses.fields(cast(Any, cls))}


def _patterns(metadata: list[Any]) -> list[Any]:
    return [m for m in metadata if getattr(m, "pattern", None) is not None]


#: Each Args class's type-checking model (None: nothing to check), made on first use.
_ARGS_MODELS: dict[type, type[BaseModel] | None] = {}


def _args_model(cls: type) -> type[BaseModel] | None:
    if cls not in _ARGS_MODELS:
        _ARGS_MODELS[cls] = _make_args_model(cls)
    return _ARGS_MODELS[cls]


def _make_args_model(cls: type) -> type[BaseModel] | None:
    hints = _field_hints(cls)
    fields = {name: (_sequence_ok(hint), ...) for name, hint in hints.items() if _checkable(hint)}
    if not fields:
        return None
    config = ConfigDict(strict=True, arbitrary_types_allowed=True, allow_inf_nan=False)
    return create_model(f"{cls.__name__}Types", __config__=config, **fields)  # type: ignore[call-overload,no-any-return]


#: How a message says an Output: its repr is an address (`<pulumi.output.Output object at 0x...>`).
OUTPUT_WORDS = "an Output (known only at deploy time)"


def shown_value(value: Any) -> str:
    """A value for a message: its type and what it holds (`said`), an Output in words."""
    import pulumi

    if isinstance(value, pulumi.Output):
        return OUTPUT_WORDS
    if isinstance(value, pulumi.Resource):  # e.g. a cluster passed where its name goes
        return said(value)
    if isinstance(value, list | tuple) and any(isinstance(v, pulumi.Output) for v in value):
        return f"a {type(value).__name__} of {len(value)} values"
    return f"{type(value).__name__} {said(value)}"


class _Said:
    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def said(value: Any) -> str:
    """`repr(value)` for a message, without the reprs that are addresses: an Output (also within a list or a
    dict) in words, a Pulumi resource by its type and name, any other object without a repr of its own by its
    type."""
    import pulumi

    def plain(v: Any, top: bool) -> Any:
        if isinstance(v, pulumi.Output):
            return _Said(OUTPUT_WORDS if top else "<an Output>")
        if isinstance(v, pulumi.Resource):
            return _Said(f"the {type(v).__name__} {v._name!r}")
        if isinstance(v, dict):
            return {plain(k, False): plain(x, False) for k, x in v.items()}
        if isinstance(v, list | tuple):
            items = [plain(x, False) for x in v]
            return items if isinstance(v, list) else tuple(items)
        if type(v).__repr__ is vars(object)["__repr__"]:  # the default repr: an address
            kind = type(v).__name__
            return _Said(f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}")
        return v

    return repr(plain(value, True))


_TYPE_WORDS = {
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "True or False",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a dict",
    "tuple_type": "a tuple",
}


def _type_message(err: Mapping[str, Any]) -> str:
    value = err.get("input")
    kind = err["type"]
    if kind in _TYPE_WORDS:
        extra = " (a fraction is never rounded)" if kind.startswith("int") and isinstance(value, float) else ""
        return f"must be {_TYPE_WORDS[kind]}{extra}, got {shown_value(value)}"
    if kind == "literal_error":
        expected = str((err.get("ctx") or {}).get("expected", ""))
        allowed = [a.strip().strip("'") for a in expected.replace(" or ", ", ").split(",")]
        close = difflib.get_close_matches(str(value), allowed, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return f"{value!r} is not allowed; {hint}allowed: {', '.join(allowed)}"
    if kind == "string_pattern_mismatch":
        pattern = (err.get("ctx") or {}).get("pattern")
        return f"{value!r} is not allowed; allowed: {PATTERN_HELP.get(str(pattern), pattern)}"
    if kind == "is_instance_of":
        return f"must be a {(err.get('ctx') or {}).get('class')}, got {shown_value(value)}"
    if kind == "finite_number":
        return f"must be a finite number, got {said(value)}"
    return f"{err['msg']}, got {shown_value(value)}"


def args_type_problems(where: str, args: Any) -> list[str]:
    """Each field of an Args (a settings model or a dataclass) whose value is not of its declared type, one
    message each, `{where}<field>[index]: must be ...`. Strict, as the stack config is: "4" is no integer and 4.5 is
    not rounded. Run before any rule compares or iterates a field."""
    model = _args_model(type(args))
    if model is None:
        return []
    values = {name: getattr(args, name) for name in model.model_fields}
    try:
        model.model_validate(values)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = err["loc"]
            path = str(loc[0]) + "".join(f"[{p!r}]" if isinstance(p, str) else f"[{p}]" for p in loc[1:])
            problems.append(Problem(f"{where}{path}: {_type_message(err)}", str(loc[0])))
        return list(dict.fromkeys(problems))
    return []
