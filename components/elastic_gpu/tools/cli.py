"""`python -m elastic_gpu preview --stack aws-dev [--json]`: the offline preview, and the policy pack over it.

`python -m elastic_gpu cost --stack aws-dev --gpu-hours 1000 [--eviction-rate R] [--json]`: N GPU-hours of
work on each GPU pool, on spot (with re-runs) against all on-demand.
`python -m elastic_gpu policy --stack aws-dev [--program DIR]`: the offline policy gate.
`python -m elastic_gpu simulate --stack aws-dev [--pod FILE] [--json]`: which node groups a pending
GPU pod scales, in which order, how fast it falls back and goes back to zero, and the worst case.
`python -m elastic_gpu workload --stack aws-dev --pool t4`: a ready Job manifest for that pool.
`python -m elastic_gpu diff --stack aws-prod --base main [--json]` (or `--base-file OLD.yaml`): what a change
does against a git ref or another stack file: created, deleted, updated and replaced resources, whether the
general pool stays up, the upgrade order, and the policy pack on the new side; a Kubernetes jump of more
than one minor fails (exit 2).
`python -m elastic_gpu schema stack|package [-o FILE]`: the JSON Schema of a stack file, generated from the config
models, or the Pulumi package schema of the components.
`python -m elastic_gpu tables [--check]`: the docs' reference tables (settings, replacements, Kubernetes support),
written from the facts they show.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, TypedDict

from elastic_gpu.errors import ConfigError

#: Where a stack's config lives is the program's business: Pulumi.<stack>.yaml next to its Pulumi.yaml, or in its
#: `stackConfigDir` (this repository's programs: stacks/).
STACK_HELP = "stack name, e.g. aws-dev: the program's Pulumi.<stack>.yaml (in its Pulumi.yaml's stackConfigDir, if set)"
#: As `pulumi preview --policy-pack` does: a mandatory violation fails a preview too (pulumi/pulumi
#: pkg/resource/deploy/analyze_snapshot.go analyzeResource: a mandatory diagnostic sets sawError in a
#: dry run), so `preview`, `diff` and `policy` exit EXIT_MANDATORY on one.
EXIT_CODES = """exit codes:
  0  done; no mandatory policy violation
  1  preview, diff and policy: a mandatory policy violation (the report says which)
  2  bad input (stack config, arguments, program), or a diff the clouds refuse"""


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {text!r})")
    return value


def _positive(text: str) -> float:
    value = _number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number > 0 (got {text})")
    return value


def _fraction(text: str) -> float:
    value = _number(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a fraction between 0 and 1, e.g. 0.05 (got {text})")
    return value


#: As `pulumi preview --policy-pack-config`: the pack's config for the policies `preview` and `diff` run.
POLICY_CONFIG_HELP = "policy-pack config file for the pack this command runs (JSON or YAML, as for `policy --config`)"

#: --account (elastic_gpu/tools/offline/account.py)
ACCOUNT_HELP = "YAML describing your account's quotas, roles and offerings for the preflight (default: a new account)"


class _ExitsHelp(TypedDict):
    """The keywords of a subcommand whose --help lists the exit codes."""

    epilog: str
    formatter_class: type[argparse.HelpFormatter]


def main(argv: list[str] | None = None) -> int:
    from elastic_gpu._version import __version__

    parser = argparse.ArgumentParser(
        prog="python -m elastic_gpu",
        description=__doc__,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"elastic-gpu {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    exits: _ExitsHelp = {"epilog": EXIT_CODES, "formatter_class": argparse.RawDescriptionHelpFormatter}
    preview = sub.add_parser(
        "preview",
        help="run a stack's program under the mock engine, show what it declares and run the policy pack",
        **exits,
    )
    preview.add_argument("--stack", required=True, help=STACK_HELP)
    preview.add_argument("--account", help=ACCOUNT_HELP)
    preview.add_argument("--policy-config", help=POLICY_CONFIG_HELP)
    preview.add_argument("--program", default=".", help="Pulumi program directory (default: .)")
    preview.add_argument("--json", action="store_true", help="print every captured resource as JSON")
    cost = sub.add_parser("cost", help="the cost of N GPU-hours of work on a stack's GPU pools, spot vs on-demand")
    cost.add_argument("--stack", required=True, help=STACK_HELP)
    cost.add_argument("--gpu-hours", required=True, type=_positive, help="GPU-hours of work, e.g. 1000")
    cost.add_argument(
        "--eviction-rate",
        type=_fraction,
        help="spot eviction (re-run) rate 0..1 where the price table publishes none (default: assumed 0.05)",
    )
    cost.add_argument("--account", help=ACCOUNT_HELP)
    cost.add_argument("--program", default=".", help="Pulumi program directory (default: .)")
    cost.add_argument("--json", action="store_true", help="print the figures as JSON")
    policy = sub.add_parser(
        "policy", help="run the policy pack over a stack's captured resources (offline gate)", **exits
    )
    policy.add_argument("--stack", help="stack name; default: every stack of the program")
    policy.add_argument("--account", help=ACCOUNT_HELP)
    policy.add_argument("--program", default=".", help="Pulumi Python program directory (default: .)")
    policy.add_argument("--config", help="policy-pack config file (JSON or YAML, as for --policy-pack-config)")
    policy.add_argument("--json", action="store_true", help="print the violations as JSON")
    simulate = sub.add_parser("simulate", help="which node groups a pending GPU pod scales, how fast, worst case")
    simulate.add_argument("--stack", required=True, help=STACK_HELP)
    simulate.add_argument("--account", help=ACCOUNT_HELP)
    simulate.add_argument("--program", default=".", help="Pulumi program directory (default: .)")
    simulate.add_argument("--pod", help="a Pod, Job or Deployment manifest (YAML); default: each GPU pool's own Job")
    simulate.add_argument("--json", action="store_true", help="print the outcome per pool as JSON")
    workload = sub.add_parser("workload", help="print a ready Job manifest for one GPU pool")
    workload.add_argument("--stack", required=True, help=STACK_HELP)
    workload.add_argument("--pool", required=True, help="the GPU pool's name, e.g. t4")
    workload.add_argument("--program", default=".", help="Pulumi program directory (default: .)")
    diff = sub.add_parser(
        "diff", help="what a change does against a git ref or another stack file, and the pack on the new side", **exits
    )
    diff.add_argument("--stack", required=True, help=STACK_HELP)
    diff.add_argument("--policy-config", help=POLICY_CONFIG_HELP)
    base = diff.add_mutually_exclusive_group(required=True)
    base.add_argument("--base", help="git ref of the base (its program and stack file), e.g. main or HEAD~1")
    base.add_argument("--base-file", help="the base stack file (this program, another config)")
    diff.add_argument("--program", default=".", help="Pulumi program directory (default: .)")
    diff.add_argument("--json", action="store_true", help="print the changes as JSON")
    schema = sub.add_parser("schema", help="print a generated schema: the stack file's, or the component package's")
    schema.add_argument(
        "kind",
        choices=["stack", "package"],
        help="stack: the JSON Schema of stacks/Pulumi.<stack>.yaml; package: the Pulumi package schema",
    )
    schema.add_argument("-o", "--output", help="write it to this file (default: print it)")
    tables = sub.add_parser("tables", help="write the docs' reference tables (settings, replacements, support)")
    tables.add_argument("--check", action="store_true", help="write nothing; exit 1 if a table is stale")
    tables.add_argument("--root", default=".", help="the repository whose docs/ holds the tables (default: .)")
    args = parser.parse_args(argv)
    try:
        return _dispatch(args)
    except ConfigError as exc:  # every bad input ends here, in the one format and exit 2, never a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # an SDK an extra brings: one line naming the extra
        from elastic_gpu.clouds import missing_extra

        if (error := missing_extra(exc, f"python -m elastic_gpu {args.command}")) is None:
            raise
        print(f"error: {error}", file=sys.stderr)
        return 2


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "schema":
        from elastic_gpu.files import json_text

        if args.kind == "package":
            from elastic_gpu.package.schema import package_schema

            text = json_text(package_schema())
        else:
            from elastic_gpu.tools.stack_schema import stack_file_schema

            text = json_text(stack_file_schema())
        if args.output is None:
            sys.stdout.write(text)
        else:
            with open(args.output, "w", encoding="utf-8") as out:
                out.write(text)
        return 0
    if args.command == "tables":
        from elastic_gpu.tools.reference_tables import main as write_tables

        return write_tables(args.root, check=args.check)
    if args.command == "diff":
        return _diff(args)
    if args.command in ("simulate", "workload"):
        return _simulate(args) if args.command == "simulate" else _workload(args)
    if args.command == "policy":
        from elastic_gpu.tools.offline.policy_gate import gate

        return gate(args.program, args.stack, args.config, as_json=args.json, account=args.account)

    from elastic_gpu.tools.offline.account import load_account
    from elastic_gpu.tools.offline.report import dump_json, preview_work, render_text, render_work, to_json, work_json
    from elastic_gpu.tools.offline.runner import run_preview

    try:
        policy_config = _policy_config(args)
        # The captured pools are what the program creates: the cost reads them, not the config.
        result = run_preview(args.stack, args.program, load_account(args.account))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from elastic_gpu.tools.offline.terminal import once_each

    for warning in once_each(result.warnings):  # as `pulumi preview` shows the program's warnings
        print(f"warning: {warning}", file=sys.stderr)
    if args.command == "cost":
        works = preview_work(result, args.gpu_hours, args.eviction_rate)
        if args.json:
            print(dump_json(work_json(args.stack, args.gpu_hours, works)))
        else:
            print(render_work(args.stack, args.gpu_hours, works))
        return 0
    from elastic_gpu.tools.offline.policy_run import render_report, run_policies

    policy_report = run_policies(result, config=policy_config)
    if args.json:
        print(dump_json(to_json(result) | {"policy": policy_report.to_json()}))
    else:
        print(render_text(result))
        print()
        print(render_report(policy_report))
    return _policy_exit("preview", policy_report)


def _policy_config(args: argparse.Namespace) -> dict[str, Any] | None:
    """The pack's config of `--policy-config`, for the commands that run the pack (ConfigError if bad)."""
    from elastic_gpu.tools.offline.policy_gate import load_policy_config

    return load_policy_config(getattr(args, "policy_config", None))


def _policy_exit(command: str, report: Any) -> int:
    """EXIT_MANDATORY, said on stderr, when the pack found a mandatory violation; else 0."""
    from elastic_gpu.tools.offline.policy_gate import EXIT_MANDATORY

    if report.mandatory:
        print(f"error: {command} failed: {len(report.mandatory)} mandatory policy violation(s)", file=sys.stderr)
        return EXIT_MANDATORY
    return 0


def _diff(args: argparse.Namespace) -> int:
    import json

    from elastic_gpu.tools.offline.diff import DiffError, render_diff, run_diff
    from elastic_gpu.tools.offline.policy_run import render_report

    try:
        policy_config = _policy_config(args)
        result = run_diff(
            args.stack, args.program, base_ref=args.base, base_file=args.base_file, policy_config=policy_config
        )
    except (DiffError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # The pack's verdict on what the change leads to, the new side, is the exit code, as `pulumi preview
    # --policy-pack` fails on it; the base's verdict only says what the change fixes (render_diff).
    policy_report = result.head.policy
    if args.json:
        out = result.to_json() | ({"policy": policy_report.to_json()} if policy_report else {})
        print(json.dumps(out, indent=2))
    else:
        print(render_diff(args.stack, result))
        if policy_report is not None:
            print()
            print(render_report(policy_report))
    return 0 if policy_report is None else _policy_exit("diff", policy_report)


def _simulate(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    import yaml

    from elastic_gpu.tools.offline.account import load_account
    from elastic_gpu.tools.offline.runner import run_preview
    from elastic_gpu.tools.simulation import render_text, simulate, to_json
    from elastic_gpu.tools.simulation.timings import autoscaler_settings

    try:
        manifest = None
        if args.pod:
            docs = [d for d in yaml.safe_load_all(Path(args.pod).read_text()) if d]
            if len(docs) != 1 or not isinstance(docs[0], dict):
                raise ConfigError(
                    [f"--pod {args.pod}: expected one Kubernetes manifest (got {len(docs)})"], source="pod"
                )
            manifest = docs[0]
        result = run_preview(args.stack, args.program, load_account(args.account))
        outcomes = simulate(result, manifest)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(to_json(args.stack, autoscaler_settings(result), outcomes), indent=2, sort_keys=True))
    else:
        print(render_text(args.stack, outcomes))
    return 0


def _workload(args: argparse.Namespace) -> int:
    import yaml

    from elastic_gpu.tools.offline.runner import run_preview
    from elastic_gpu.tools.simulation.run import pool_contracts
    from elastic_gpu.workload import job_manifest

    try:
        contracts = {c.pool: c for c in pool_contracts(run_preview(args.stack, args.program))}
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.pool not in contracts:
        print(
            f"error: --pool {args.pool!r}: no such GPU pool in {args.stack}; allowed: {', '.join(contracts)}",
            file=sys.stderr,
        )
        return 2
    print(yaml.safe_dump(job_manifest(contracts[args.pool]), sort_keys=False), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
