"""`python -m elastic_gpu diff --stack S --base REF | --base-file FILE`: what a change will do, offline.

Both sides run under the mock engine: the base is the program and stack file at a git ref (run from that ref's own
tree) or the working tree's program with a second stack file; the head is the working tree. A base whose preview
completes is a base whatever the policy pack says of it (an end-of-life minor, missing tags: the change that fixes
them is the diff to see); each side is judged by the pack and the diff says which violations the change fixes,
keeps and adds (diff_policy), while the exit code is the new side's verdict. Each cluster's Kubernetes version
comes from the cluster resource the program declares, the library's handles and the stack file, and its change
follows the cloud's upgrade rules (diff_versions). Resources are matched by URN and sorted into created, deleted,
updated in place (with the inputs that changed) and replaced (an input that forces a replacement changed:
elastic_gpu.tools.replacement), create-first or delete-first as the resource's options say. A change the cloud refuses
and the engine cannot replace (a field of the AKS System pool inline in its cluster) is refused, exit 2, with the
steps. The plan is then walked in the engine's order (creates and replacements in dependency order, deletes at the
end) to count the general pool's node groups alive after every step, and the changed resources are put in
dependency waves, which is the order an upgrade moves in (control plane, node groups, then add-ons and the
autoscaler): a resource depends on its dependsOn, its parent and its provider, as the engine's dependency graph
has it (pulumi/pulumi pkg/resource/graph/dependency_graph.go DependenciesOf), so a Kubernetes object comes after
the provider it is created through. Each update shows its old and new values; an unknown (known only after
deployment) is the same unknown on both sides. Changes that interrupt running GPU nodes are marked
(mark_interruptions), and version skew and a resize riding on a version change are warnings.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pulumi.runtime import rpc

import elastic_gpu
from elastic_gpu.cluster_handle import VERSION_INPUT
from elastic_gpu.errors import ConfigError
from elastic_gpu.files import read_stack_file
from elastic_gpu.scheduling import NODE_CLASS_GENERAL, NODE_CLASS_LABEL
from elastic_gpu.tools.clouds import all_clouds
from elastic_gpu.tools.node_group_reading import pools_of
from elastic_gpu.tools.node_group_view import KARPENTER_NODE_CLASS_CLOUDS, KARPENTER_NODE_POOL
from elastic_gpu.tools.offline.diff_policy import PolicyChanges, policy_changes, render_policy_changes
from elastic_gpu.tools.offline.diff_versions import (
    ClusterVersion,
    cluster_versions,
    config_version,
    version_lines,
    version_verdict,
)
from elastic_gpu.tools.offline.policy_run import PolicyReport, Violation, run_policies
from elastic_gpu.tools.offline.runner import UNKNOWN_TEXT, CapturedResource, Preview, Program, run_preview, shown
from elastic_gpu.tools.offline.terminal import paint
from elastic_gpu.tools.replacement import (
    KEPT_WHEN_DROPPED,
    NODE_ROLLING_FIELDS,
    POOL_NAME_FIELD,
    POOL_REPLACE_FIELDS,
    inline_pool_refusals,
    kept_by_provider,
    replacing_paths,
)

Op = Literal["create", "delete", "update", "replace"]
PROJECT_NS = "elastic-gpu:"
#: `preview`'s exit code for a mandatory policy violation (elastic_gpu/__main__.py EXIT_CODES): the base's preview
#: ran to the end, and its JSON holds its resources and its verdict.
EXIT_MANDATORY = 1


class DiffError(Exception):
    """A diff that must not be applied (or cannot be computed): exit code 2."""


@dataclass
class Side:
    """One side of the diff: its resources by URN and its stack config."""

    label: str
    resources: dict[str, CapturedResource]
    config: dict[str, Any]
    #: the side's whole preview, where it ran in this process (the head: the policy pack judges it)
    preview: Preview | None = None
    #: the pack's verdict on the side (None: not judged, or a base whose preview printed none)
    policy: PolicyReport | None = None

    @property
    def kubernetes_version(self) -> str | None:
        """The stack config's `cluster.kubernetesVersion`; in any other program, the minor its cluster
        handles record (cluster_handle.VERSION_INPUT: what its pools follow), else the version its one declared
        cluster resource declares (`clusters`); None when there is none, several, or it is unknown at preview (a
        new pulumi-eks cluster without `version`)."""
        cluster = self.config.get(f"{PROJECT_NS}cluster") or {}
        version = cluster.get("kubernetesVersion") if isinstance(cluster, dict) else None
        if version is not None:
            return str(version)
        handles = {
            str(v)
            for r in self.resources.values()
            if not r.custom and isinstance(v := r.inputs.get(VERSION_INPUT), str | int | float) and v != rpc.UNKNOWN
        }
        if not handles:
            handles = {c.declared for c in self.clusters.values() if isinstance(c.declared, str)} - {rpc.UNKNOWN}
        return handles.pop() if len(handles) == 1 else None

    @property
    def clusters(self) -> dict[str, ClusterVersion]:
        """Each cluster's declared version (diff_versions): from the program's resources, or, before the
        program ran, from the stack file."""
        return cluster_versions(self.resources) if self.resources else config_version(self.config)

    @property
    def general_pools(self) -> int:
        return sum(is_general_pool(r) for r in self.resources.values())


@dataclass
class Change:
    urn: str
    type: str
    name: str
    op: Op
    #: input paths that differ (update, replace)
    changed: list[str] = field(default_factory=list)
    #: the changed paths that force the replacement
    forced_by: list[str] = field(default_factory=list)
    delete_first: bool = False
    #: each changed path's old and new value (an unknown as the engine's marker)
    values: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: how this change interrupts running GPU nodes (a drained node group, a rolling version bump, drift)
    interrupts: list[str] = field(default_factory=list)
    #: input paths that differ in the program but not in the engine's plan (the provider keeps them:
    #: elastic_gpu.tools.replacement.kept_by_provider)
    kept: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"urn": self.urn, "type": self.type, "name": self.name, "op": self.op}
        if self.op in ("update", "replace"):
            out["changed"] = self.changed
            out["values"] = [{"path": p, "old": shown(old), "new": shown(new)} for p, (old, new) in self.values.items()]
        if self.kept:
            out["keptByProvider"] = self.kept
        if self.op == "replace":
            out["forcedBy"] = self.forced_by
            out["order"] = "delete-first" if self.delete_first else "create-first"
        out["interruptsGpuNodes"] = self.interrupts
        return out


@dataclass
class Diff:
    base: Side
    head: Side
    changes: list[Change]
    #: general-pool node groups alive after each step of the plan (the engine's order)
    general_alive: list[int]
    #: changed resources in dependency waves: every resource's changed dependencies are in earlier waves
    waves: list[list[Change]]
    #: what the plan risks beyond its changes: version skew, a resize riding on a version change, a version step
    #: that rests on a cloud's own upgrade path
    warnings: list[str] = field(default_factory=list)
    #: the violations the change fixes, keeps and adds (None: a side was not judged)
    policy: PolicyChanges | None = None

    def of(self, op: Op) -> list[Change]:
        return [c for c in self.changes if c.op == op]

    @property
    def has_general_pool(self) -> bool:
        """The base runs a general pool whose survival matters (a program need not declare one)."""
        return self.base.general_pools > 0

    def _clusters_json(self) -> list[dict[str, Any]]:
        """Each cluster's declared version on both sides (null: not on that side, or not declared)."""
        base, head = self.base.clusters, self.head.clusters
        out = []
        for key in dict.fromkeys([*head, *base]):
            b, h = base.get(key), head.get(key)
            where = (h or b).where  # type: ignore[union-attr]
            out.append(
                {"cluster": where, "base": shown(b.declared) if b else None, "head": shown(h.declared) if h else None}
            )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base.label,
            "head": self.head.label,
            "kubernetesVersion": {"base": self.base.kubernetes_version, "head": self.head.kubernetes_version},
            "clusters": self._clusters_json(),
            "changes": [c.to_json() for c in self.changes],
            "summary": {op: len(self.of(op)) for op in ("create", "update", "replace", "delete")},
            "generalPoolMinAlive": min(self.general_alive, default=None) if self.has_general_pool else None,
            "waves": [[c.name for c in wave] for wave in self.waves],
            "warnings": self.warnings,
            "policyChanges": self.policy.to_json() if self.policy is not None else None,
        }


# --- input comparison ------------------------------------------------------------------------------


def changed_values(old: Any, new: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """(dotted path, old, new) where two input trees differ; a list that differs counts as one path. An
    unknown (rpc.UNKNOWN) equals an unknown: a value known only after deployment on both sides is not a
    change the diff can show (the engine compares it once it is known); against a known value it differs."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in sorted(set(old) | set(new)):
            out += changed_values(old.get(key), new.get(key), f"{prefix}.{key}" if prefix else key)
        return out
    return [] if old == new else [(prefix or ".", old, new)]


def changed_paths(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted paths where two input trees differ (changed_values)."""
    return [path for path, _, _ in changed_values(old, new, prefix)]


def _ignored(path: str, ignore_changes: Iterable[str]) -> bool:
    return any(path == i or path.startswith(f"{i}.") or path.startswith(f"{i}[") for i in ignore_changes)


def compare(base: Side, head: Side) -> list[Change]:
    changes: list[Change] = []
    for urn, new in head.resources.items():
        old = base.resources.get(urn)
        if old is None:
            changes.append(Change(urn, new.type, new.name, "create"))
            continue
        if not new.custom:
            continue  # components have no inputs the engine acts on
        values = {
            p: (a, b) for p, a, b in changed_values(old.inputs, new.inputs) if not _ignored(p, new.ignore_changes)
        }
        kept = [p for p, (a, b) in values.items() if kept_by_provider(new.type, p, a, b)]
        values = {p: v for p, v in values.items() if p not in kept}
        if not values:
            continue
        paths = list(values)
        forced = replacing_paths(new.type, paths)
        op: Op = "replace" if forced else "update"
        # A pool replaced under the same cloud name must be deleted first: the name is taken.
        same_name = new.type in POOL_NAME_FIELD and POOL_NAME_FIELD[new.type] not in paths
        first = new.delete_before_replace or same_name
        changes.append(Change(urn, new.type, new.name, op, paths, forced, first, values, kept=kept))
    for urn, old in base.resources.items():
        if urn not in head.resources:
            changes.append(Change(urn, old.type, old.name, "delete"))
    return sorted(changes, key=lambda c: (["create", "update", "replace", "delete"].index(c.op), c.type, c.name))


# --- the engine's order -----------------------------------------------------------------------------


def _direct(r: CapturedResource) -> list[str]:
    """What the engine makes `r` wait for: its dependsOn (implicit ones included), its parent and its provider (a
    reference `<provider urn>::<id>`), as pulumi/pulumi pkg/resource/graph/dependency_graph.go DependenciesOf
    lists them."""
    out = list(r.depends_on)
    if r.parent:
        out.append(r.parent)
    if r.provider:
        out += [r.provider, r.provider.rsplit("::", 1)[0]]
    return out


def _ancestors(resources: dict[str, CapturedResource]) -> dict[str, set[str]]:
    """Every resource's transitive dependencies (`_direct`), by URN."""
    memo: dict[str, set[str]] = {}

    def visit(urn: str, stack: tuple[str, ...] = ()) -> set[str]:
        if urn in memo:
            return memo[urn]
        found: set[str] = set()
        r = resources.get(urn)
        for dep in _direct(r) if r else ():
            if dep in resources and dep not in stack:
                found |= {dep} | visit(dep, (*stack, urn))
        memo[urn] = found
        return found

    for urn in resources:
        visit(urn)
    return memo


def _topological(resources: dict[str, CapturedResource]) -> list[str]:
    ancestors = _ancestors(resources)
    return sorted(resources, key=lambda u: (len(ancestors[u]), u))


def is_general_pool(r: CapturedResource) -> bool:
    """A stand-alone node pool of the general (CPU) class; an AKS System pool inline in the cluster is not."""
    if r.type not in POOL_REPLACE_FIELDS:
        return False
    return any(
        not p.gpu and p.labels.get(NODE_CLASS_LABEL) == NODE_CLASS_GENERAL for p in pools_of(r.type, r.name, r.inputs)
    )


def general_pools_alive(base: Side, head: Side, changes: list[Change]) -> list[int]:
    """General-pool node groups alive after each step, as the engine orders them: creates, updates and
    replacements in dependency order (a delete-first replacement deletes the old pool at its turn), then
    the deletes of removed resources and of the pools replaced create-first."""
    by_urn = {c.urn: c for c in changes}
    alive = {u for u, r in base.resources.items() if is_general_pool(r)}
    counts = [len(alive)]
    deferred: list[str] = []
    for urn in _topological(head.resources):
        c = by_urn.get(urn)
        if c is None or c.op == "update":
            continue
        general = is_general_pool(head.resources[urn])
        if c.op == "create" and general:
            alive.add(urn)
        elif c.op == "replace":
            if c.delete_first:
                alive.discard(urn)
                counts.append(len(alive))
                if general:
                    alive.add(urn)
            else:
                if general:
                    alive.add(f"{urn}#new")
                deferred.append(urn)
        counts.append(len(alive))
    for c in changes:
        if c.op == "delete":
            deferred.append(c.urn)
    for urn in deferred:
        alive.discard(urn)
        counts.append(len(alive))
    return counts


def waves(head: Side, changes: list[Change]) -> list[list[Change]]:
    """Changed resources in dependency waves (a resource's wave is one past its latest changed ancestor)."""
    moving = {c.urn: c for c in changes if c.op != "delete"}
    ancestors = _ancestors(head.resources)
    level: dict[str, int] = {}
    for urn in _topological(head.resources):
        if urn in moving:
            level[urn] = 1 + max((level[a] for a in ancestors[urn] if a in level), default=-1)
    out: list[list[Change]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for urn, lvl in level.items():
        out[lvl].append(moving[urn])
    return [sorted(w, key=lambda c: (c.type, c.name)) for w in out]


def inline_pool_problems(base: Side, head: Side) -> list[str]:
    """Changes of a pool declared inside its cluster (the AKS System pool) that the cloud refuses in place and
    the engine cannot replace (elastic_gpu.tools.replacement.INLINE_POOL_REFUSED_FIELDS)."""
    return [
        problem
        for urn, new in head.resources.items()
        if (old := base.resources.get(urn)) is not None
        for problem in inline_pool_refusals(new.type, new.name, old.inputs, new.inputs)
    ]


# --- what interrupts running GPU nodes -------------------------------------------------------------


def _touches(paths: Iterable[str], fields: Iterable[str]) -> list[str]:
    fields = tuple(fields)
    return [p for p in paths if any(p == f or p.startswith(f"{f}.") for f in fields)]


def _gpu_pools(r: CapturedResource) -> list[str]:
    return [p.name for p in pools_of(r.type, r.name, r.inputs) if p.gpu]


def _is_node_class(resource_type: str) -> bool:
    """A Karpenter node class (EC2NodeClass, AKSNodeClass): `kubernetes:<group>/<version>:<Kind>`."""
    group = resource_type.removeprefix("kubernetes:").split("/", 1)[0]
    return group in KARPENTER_NODE_CLASS_CLOUDS and resource_type.endswith("NodeClass")


def _drift_budget(node_pool: CapturedResource) -> str | None:
    """The node count of the NodePool's unscheduled budget that covers Drifted (every reason, or Drifted), the
    smallest if several: Karpenter disrupts drifted nodes only as far as it allows (kubernetes-sigs/karpenter
    v1.14.1 pkg/apis/v1/nodepool.go Budget); None without one (Karpenter's default, 10% of the nodes)."""
    budgets = ((node_pool.inputs.get("spec") or {}).get("disruption") or {}).get("budgets") or []
    counts = [
        str(b.get("nodes")).strip()
        for b in budgets
        if isinstance(b, dict) and not b.get("schedule") and (not b.get("reasons") or "Drifted" in b["reasons"])
    ]
    return min(counts, key=lambda c: (not c.startswith("0"), c), default=None)


def _drift(node_pool: CapturedResource, why: str) -> str:
    name = (node_pool.inputs.get("metadata") or {}).get("name") or node_pool.name
    budget = _drift_budget(node_pool)
    head = f"drifts the GPU nodes of NodePool {name} ({why})"
    if budget in ("0", "0%"):
        return (
            f"{head}; its disruption budget (nodes: 0 for Drifted) keeps running nodes until they are empty or "
            "expire, new nodes get the change"
        )
    if budget is not None:
        return (
            f"{head}: Karpenter replaces running GPU nodes, {budget} at a time (its Drifted budget), new node first; "
            "pods annotated karpenter.sh/do-not-disrupt keep their node until they end"
        )
    return f"{head}: Karpenter replaces running GPU nodes (drain, evict)"


def mark_interruptions(base: Side, head: Side, changes: list[Change]) -> None:
    """Set each change's `interrupts`: a GPU node group replaced or deleted (its nodes are drained and go), an
    in-place update that rolls its nodes (NODE_ROLLING_FIELDS: a version bump), and a Karpenter NodePool or
    node class change that drifts the nodes. Karpenter hashes a NodePool's spec.template to find drift
    (pkg/apis/v1/nodepool.go Hash); a changed requirement drifts only the nodes that no longer meet it."""
    node_pools = [r for r in head.resources.values() if r.type == KARPENTER_NODE_POOL and _gpu_pools(r)]
    for c in changes:
        r = head.resources.get(c.urn) or base.resources[c.urn]
        gpu = _gpu_pools(r) or _gpu_pools(base.resources.get(c.urn) or r)
        if r.type == KARPENTER_NODE_POOL and gpu:
            if c.op in ("replace", "delete"):
                c.interrupts.append(f"{c.op}s a GPU NodePool: Karpenter drains and deletes its nodes")
            template = _touches(c.changed, ("spec.template",))
            others = [p for p in template if not p.startswith("spec.template.spec.requirements")]
            if c.op == "update" and others:
                c.interrupts.append(_drift(r, f"changed: {', '.join(others)}"))
            elif c.op == "update" and template:
                c.interrupts.append(_drift(r, "changed requirements: the nodes that no longer meet them"))
        elif _is_node_class(r.type) and c.op == "update" and _touches(c.changed, ("spec",)):
            name = (r.inputs.get("metadata") or {}).get("name") or r.name
            for pool in node_pools:
                ref = (((pool.inputs.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef")
                if isinstance(ref, dict) and ref.get("name") == name:
                    c.interrupts.append(_drift(pool, f"its node class {name} changed"))
        elif gpu and c.op in ("replace", "delete"):
            what = "replaces" if c.op == "replace" else "deletes"
            c.interrupts.append(
                f"{what} GPU node group(s) {', '.join(gpu)}: every running GPU node is drained and deleted"
            )
        elif gpu and c.op == "update" and r.type in NODE_ROLLING_FIELDS:
            rolling = _touches(c.changed, NODE_ROLLING_FIELDS[r.type].fields)
            if rolling:
                c.interrupts.append(
                    f"rolls every GPU node of {', '.join(gpu)} (changed: {', '.join(rolling)}): each node is "
                    f"cordoned and drained ({NODE_ROLLING_FIELDS[r.type].source})"
                )


def _minor(value: Any) -> tuple[int, int] | None:
    match = re.match(r"^v?(\d+)\.(\d+)", value) if isinstance(value, str) else None
    return (int(match[1]), int(match[2])) if match else None


def _version_inputs() -> tuple[dict[str, str], dict[str, str]]:
    clouds = all_clouds()
    return (
        {t: f for c in clouds for t, f in c.versions().version_inputs.items()},
        {t: f for c in clouds for t, f in c.versions().node_version_inputs.items()},
    )


def version_skew_warnings(head: Side, changes: list[Change]) -> list[str]:
    """Node pools whose Kubernetes minor is not the control plane's after the change, where the change moves
    either. A kubelet newer than its kube-apiserver is not supported (Kubernetes version skew policy); an
    older one works up to three minors behind, but the clouds upgrade a pool only to the control plane's
    minor, so a pool left behind must be moved before the next control-plane upgrade."""
    cluster_inputs, node_inputs = _version_inputs()
    planes = {(r.urn, _minor(r.inputs.get(f))) for r in head.resources.values() if (f := cluster_inputs.get(r.type))}
    minors = {m for _, m in planes if m}
    if len(minors) != 1:
        return []  # no control plane in the program (an existing cluster), or several: nothing to compare
    (plane,) = minors
    moved = {c.urn for c in changes if c.op != "delete"}
    plane_moved = any(urn in moved for urn, _ in planes)
    out = []
    for r in head.resources.values():
        field_name = node_inputs.get(r.type)
        node = _minor(r.inputs.get(field_name)) if field_name else None
        if node is None or node == plane or not (plane_moved or r.urn in moved):
            continue
        shown_plane, shown_node = ".".join(map(str, plane)), ".".join(map(str, node))
        if node > plane:
            why = "newer than the control plane, which Kubernetes' version skew policy does not allow"
        else:
            why = f"behind the control plane ({shown_plane}); upgrade it to {shown_plane} before the next minor"
        out.append(f"version skew: node pool {r.name} runs Kubernetes {shown_node} ({field_name}), {why}")
    return out


def resize_with_version_warnings(base: Side, head: Side, changes: list[Change]) -> list[str]:
    """A pool's min/max changed in the same `up` as a version change. The refresh (`refresh: always`) reads
    the live node count once, at the start; the version change rolls nodes for many minutes while the
    autoscaler moves the count; then the pool's update sends the whole scaling config with the count read at
    the start (terraform-provider-aws eks/node_group.go sends the whole ScalingConfig), so the count jumps
    back. A resize goes in its own `up`."""
    cluster_inputs, _ = _version_inputs()
    version_fields = {t: (f,) for t, f in cluster_inputs.items()} | {
        t: rule.fields for t, rule in NODE_ROLLING_FIELDS.items()
    }
    versions = [
        f"{c.name} {'/'.join(hit)}"
        for c in changes
        if c.op == "update" and (hit := _touches(c.changed, version_fields.get(c.type, ())))
    ]
    if not versions:
        return []
    resized = []
    for c in changes:
        if c.op != "update" or c.type not in POOL_NAME_FIELD:
            continue
        old = {p.name: p for p in pools_of(c.type, c.name, base.resources[c.urn].inputs)}
        for pool in pools_of(c.type, c.name, head.resources[c.urn].inputs):
            before = old.get(pool.name)
            if before is None or (before.min_size, before.max_size) == (pool.min_size, pool.max_size):
                continue
            resized.append(f"{pool.name} {before.min_size}/{before.max_size} -> {pool.min_size}/{pool.max_size}")
    if not resized:
        return []
    more = f" and {len(versions) - 3} more" if len(versions) > 3 else ""
    return [
        f"min/max of {len(resized)} node pool(s) change in the same `up` as a version change "
        f"({', '.join(versions[:3])}{more}): {'; '.join(resized)}. The pool's update sends the node count read "
        "when the `up` started (`refresh: always` reads it once), stale once the upgrade has rolled the nodes, "
        "so the count jumps back to it. Resize in its own `up`, before or after the upgrade."
    ]


def build_diff(base: Side, head: Side) -> Diff:
    verdict = version_verdict(base.clusters, head.clusters)
    if verdict.problems:
        raise DiffError("\n".join(verdict.problems))
    if problems := inline_pool_problems(base, head):
        raise DiffError("\n".join(problems))
    changes = compare(base, head)
    mark_interruptions(base, head, changes)
    warnings = verdict.notes + version_skew_warnings(head, changes) + resize_with_version_warnings(base, head, changes)
    judged = policy_changes(base.policy, head.policy) if base.policy and head.policy else None
    return Diff(base, head, changes, general_pools_alive(base, head, changes), waves(head, changes), warnings, judged)


# --- loading the two sides ---------------------------------------------------------------------------


def head_side(stack: str, program_dir: Path | str, policy_config: dict[str, Any] | None = None) -> Side:
    """The working tree, judged by the pack (as `pulumi preview --policy-pack` judges what a change leads to)."""
    preview = run_preview(stack, program_dir)
    report = run_policies(preview, config=policy_config)
    return Side("working tree", {r.urn: r for r in preview.resources}, preview.config, preview, report)


def base_file_side(
    stack: str, program_dir: Path | str, base_file: Path | str, policy_config: dict[str, Any] | None = None
) -> Side:
    """The working tree's program with another stack file, run as the same stack (same URNs), in its own
    directory: its own modules (an `iam.py` beside `__main__.py`) and offline mocks are there. Judged by the
    same pack as the head, whatever it finds."""
    source = Path(base_file)
    if not source.is_file():
        raise DiffError(f"--base-file: {source} is not a file")
    preview = run_preview(stack, program_dir, stack_file=source)
    report = run_policies(preview, config=policy_config)
    return Side(f"file {source}", {r.urn: r for r in preview.resources}, preview.config, policy=report)


def _git(args: list[str], cwd: Path) -> bytes:
    run = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    if run.returncode != 0:
        raise DiffError(f"git {' '.join(args)}: {run.stderr.decode().strip() or 'failed'}")
    return run.stdout


def _tree_filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's "data" filter, except that a link pointing out of the tree (a symlink to an absolute path,
    which many repositories hold) is left out instead of failing the whole diff: the program never needs it."""
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        if member.issym() or member.islnk():
            return None
        raise


def _library(root: Path) -> Path:
    """The `elastic_gpu` package a ref's program runs with: the ref's own folder where its tree holds the library
    (this repository: `components/elastic_gpu/`; earlier refs held it in `elastic_gpu/`, and before that in
    `components/` itself), else the one running now, as the working tree's program does (a user's program imports
    the installed library)."""
    for folder in ("components/elastic_gpu", "elastic_gpu", "components"):
        if (root / folder / "__init__.py").is_file():
            return root / folder
    return Path(elastic_gpu.__file__).resolve().parent


def _base_report(data: dict[str, Any]) -> PolicyReport | None:
    """The base's verdict as its `preview --json` printed it (None from a ref whose preview prints none)."""
    policy = data.get("policy")
    if not isinstance(policy, dict):
        return None
    fields = ("policy", "level", "message", "urn", "type", "name")
    violations = [Violation(**{k: v.get(k) for k in fields}) for v in policy.get("violations") or []]
    return PolicyReport(pack=str(policy.get("pack", "")), violations=violations)


def base_ref_side(stack: str, program_dir: Path | str, ref: str, policy_config: dict[str, Any] | None = None) -> Side:
    """The program at git ref `ref`, run from that ref's own tree (its code, its stack file), with the pack's
    config `policy_config`. A preview that ends in a policy verdict (exit 0, or EXIT_MANDATORY with its JSON) is
    the base; one that does not run (the program raised, a bad config: exit 2) is no base, with its reason."""
    program = Program(Path(program_dir).resolve())
    top = Path(_git(["rev-parse", "--show-toplevel"], program.directory).decode().strip())
    sub = program.directory.relative_to(top)
    archive = _git(["archive", "--format=tar", ref], top)
    with tempfile.TemporaryDirectory(prefix="elastic-gpu-diff-") as tmp:
        root = Path(tmp)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            try:
                tar.extractall(root, filter=_tree_filter)  # no links or paths out of `root`
            except TypeError:  # Python before 3.10.12 / 3.11.4: no filter argument (git archive is ours)
                tar.extractall(root)
        base_program = root / sub
        # The ref's package, not the working tree's: `elastic_gpu` is its elastic_gpu/ folder (a ref from
        # before the folder carried the import name keeps it in components/).
        shim = root / ".elastic-gpu-shim"
        shim.mkdir()
        (shim / "elastic_gpu").symlink_to(_library(root), target_is_directory=True)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), str(root)])}
        command = [sys.executable, "-m", "elastic_gpu", "preview", "--stack", stack]
        command += ["--program", str(base_program), "--json"]
        if policy_config is not None:
            (shim / "policy-config.json").write_text(json.dumps(policy_config))
            command += ["--policy-config", str(shim / "policy-config.json")]
        run = subprocess.run(command, capture_output=True, text=True, cwd=root, env=env)
        data = _preview_json(run.stdout) if run.returncode in (0, EXIT_MANDATORY) else None
        if data is None:
            raise DiffError(f"the base ({ref}) does not preview: {run.stderr.strip() or run.stdout.strip()}")
        config_dir = yaml.safe_load((base_program / "Pulumi.yaml").read_text()).get("stackConfigDir", ".")
        stack_file = base_program / config_dir / f"Pulumi.{stack}.yaml"
        config = (yaml.safe_load(stack_file.read_text()) or {}).get("config") or {}
    resources = {r["urn"]: _captured(r) for r in data["resources"]}
    return Side(f"git {ref}", resources, config, policy=_base_report(data))


def _preview_json(stdout: str) -> dict[str, Any] | None:
    """`preview --json`'s output, or None where the preview printed none (it failed before its report)."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("resources"), list) else None


def _unshown(value: Any) -> Any:
    """`preview --json`'s inputs back as captured: UNKNOWN_TEXT is the engine's unknown again, so that an
    unknown compares as unknown on both sides (runner.shown wrote it)."""
    if isinstance(value, dict):
        return {k: _unshown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unshown(v) for v in value]
    return rpc.UNKNOWN if value == UNKNOWN_TEXT else value


def _captured(r: dict[str, Any]) -> CapturedResource:
    opts = r.get("options") or {}
    return CapturedResource(
        type=r["type"],
        name=r["name"],
        urn=r["urn"],
        id=None,
        parent=r.get("parent"),
        custom=r.get("custom", True),
        inputs=_unshown(r.get("inputs") or {}),
        protect=bool(opts.get("protect")),
        ignore_changes=list(opts.get("ignoreChanges") or []),
        provider=opts.get("provider"),
        depends_on=list(opts.get("dependsOn") or []),
        delete_before_replace=bool(opts.get("deleteBeforeReplace")),
    )


def _stack_config(text: str) -> dict[str, Any]:
    return (yaml.safe_load(text) or {}).get("config") or {}


def _base_config(stack: str, program: Program, base_ref: str | None, base_file: str | None) -> dict[str, Any]:
    if base_file is not None:
        if not Path(base_file).is_file():
            raise DiffError(f"--base-file: {base_file} is not a file")
        return _stack_config(Path(base_file).read_text())
    top = Path(_git(["rev-parse", "--show-toplevel"], program.directory).decode().strip())
    path = program.stack_file(stack).resolve().relative_to(top.resolve())
    return _stack_config(_git(["show", f"{base_ref}:{path.as_posix()}"], top).decode())


def run_diff(
    stack: str,
    program_dir: Path | str,
    *,
    base_ref: str | None,
    base_file: str | None,
    policy_config: dict[str, Any] | None = None,
) -> Diff:
    """Both sides previewed and judged by the pack (its config `policy_config`), then compared."""
    if (base_ref is None) == (base_file is None):
        raise DiffError("give exactly one of --base REF (a git ref) or --base-file FILE (a stack file)")
    try:
        program = Program(Path(program_dir).resolve())
        # The stack files' version step first: a jump the clouds refuse needs no preview to be refused. Without
        # the programs' cluster resources it knows least of each cloud's path (GKE: no channel, so the kindest),
        # so what it refuses the clouds refuse; the resources are judged again after the previews.
        head_config = read_stack_file(program.stack_file(stack))
        base_config = _base_config(stack, program, base_ref, base_file)
        verdict = version_verdict(Side("base", {}, base_config).clusters, Side("head", {}, head_config).clusters)
        if verdict.problems:
            raise DiffError("\n".join(verdict.problems))
        base = (
            base_ref_side(stack, program_dir, base_ref, policy_config)
            if base_ref is not None
            else base_file_side(stack, program_dir, str(base_file), policy_config)
        )
        head = head_side(stack, program_dir, policy_config)
    except ConfigError as exc:
        raise DiffError(str(exc)) from None
    return build_diff(base, head)


# --- text -------------------------------------------------------------------------------------------

SYMBOL = {"create": "+", "delete": "-", "update": "~", "replace": "+-"}
#: A value in the text diff is cut here: a whole user-data script or policy document is not what a reader wants.
VALUE_WIDTH = 100


def _value(value: Any) -> str:
    """One value for people: unknowns as UNKNOWN_TEXT, absent as (none), structures as compact JSON."""
    if value is None:
        return "(none)"
    text = json.dumps(shown(value), sort_keys=True, separators=(",", ":"))
    return text if len(text) <= VALUE_WIDTH else text[: VALUE_WIDTH - 3] + "..."


def render_diff(stack: str, diff: Diff) -> str:
    b, h = diff.base.kubernetes_version, diff.head.kubernetes_version
    lines = [f"elastic-gpu diff: stack {stack}, {diff.base.label} -> {diff.head.label} (mock engine)"]
    if diff.base.clusters or diff.head.clusters:
        lines += version_lines(diff.base.clusters, diff.head.clusters)
    elif b != h:
        lines.append(f"Kubernetes: {b or 'not declared'} -> {h or 'not declared'}")
    elif h is not None:
        lines.append(f"Kubernetes: {h} (unchanged)")
    lines.append("")
    for c in diff.changes:
        detail = ""
        if c.op == "replace":
            order = "DELETE FIRST" if c.delete_first else "create first"
            detail = f"  ({order}; forced by: {', '.join(c.forced_by)})"
        lines.append(f"  {SYMBOL[c.op]:>2} {c.op:<8} {c.type}  {c.name}{detail}")
        for path, (old, new) in c.values.items():
            lines.append(f"        {path}: {_value(old)} -> {_value(new)}")
        if c.kept:
            lines.append(
                f"        dropped, kept by the provider as they are ({KEPT_WHEN_DROPPED[c.type].source}): "
                + ", ".join(c.kept)
            )
        for why in c.interrupts:
            lines.append(f"        {paint('! interrupts running GPU nodes:', 'red')} {why}")
    if not diff.changes:
        lines.append("  no changes")
    summary = ", ".join(f"{len(diff.of(op))} to {op}" for op in ("create", "update", "replace", "delete"))
    interrupting = [c for c in diff.changes if c.interrupts]
    if interrupting:
        summary += f"; {len(interrupting)} interrupt running GPU nodes"
    lines += ["", summary]
    for warning in diff.warnings:
        lines.append(f"{paint('warning:', 'yellow')} {warning}")
    if diff.general_alive and diff.has_general_pool:
        low = min(diff.general_alive)
        state = "never absent" if low > 0 else "ABSENT during the plan"
        lines.append(f"General pool: {state} (fewest node groups alive at any step: {low})")
    if len(diff.waves) > 1:
        lines.append("")
        lines.append("Order (each wave waits for the one before):")
        for i, wave in enumerate(diff.waves, 1):
            lines.append(f"  {i}. " + ", ".join(f"{c.name} ({c.op})" for c in wave))
    if diff.head.policy is not None:
        lines += ["", *render_policy_changes(diff.policy, diff.base.label)]
    return "\n".join(lines)
