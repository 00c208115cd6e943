"""`python -m elastic_gpu ...`: the offline tools' command line. Its body is elastic_gpu/tools/cli.py (the
workbench); this module, the one library module that imports the tools, only hands the command line over."""

from __future__ import annotations

import sys

from elastic_gpu.tools.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
