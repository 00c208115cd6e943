"""`python -m components preview --stack aws-dev [--json]`: the offline preview.

`python -m components policy --stack aws-dev [--program DIR]`: the offline policy gate.
"""

from __future__ import annotations

import argparse
import json
import sys

from components.errors import ConfigError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m components", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    preview = sub.add_parser("preview", help="run a stack's program under the mock engine and show what it declares")
    preview.add_argument("--stack", required=True, help="stack name, e.g. aws-dev (stacks/Pulumi.<stack>.yaml)")
    preview.add_argument("--program", default=".", help="Pulumi program directory (default: .)")
    preview.add_argument("--json", action="store_true", help="print every captured resource as JSON")
    policy = sub.add_parser("policy", help="run the policy pack over a stack's captured resources (offline gate)")
    policy.add_argument("--stack", help="stack name; default: every stack of the program")
    policy.add_argument("--program", default=".", help="Pulumi Python program directory (default: .)")
    policy.add_argument("--config", help="policy-pack config file (JSON or YAML, as for --policy-pack-config)")
    policy.add_argument("--json", action="store_true", help="print the violations as JSON")
    args = parser.parse_args(argv)
    if args.command == "policy":
        from components.offline.policy_gate import gate

        return gate(args.program, args.stack, args.config, as_json=args.json)

    from components.offline.report import render_text, to_json
    from components.offline.runner import run_preview

    try:
        result = run_preview(args.stack, args.program)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from components.offline.policy_run import render_report, run_policies

    policy_report = run_policies(result)
    if args.json:
        print(json.dumps(to_json(result) | {"policy": policy_report.to_json()}, indent=2, sort_keys=True))
    else:
        print(render_text(result))
        print()
        print(render_report(policy_report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
