"""`python -m components preview --stack aws-dev [--json]`: the offline preview."""

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
    args = parser.parse_args(argv)

    from components.offline.report import render_text, to_json
    from components.offline.runner import run_preview

    try:
        result = run_preview(args.stack, args.program)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(to_json(result), indent=2, sort_keys=True))
    else:
        print(render_text(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
