"""elastic-gpu: one stack = one cluster with elastic spot GPU pools (config in stacks/).

The library's source is components/elastic_gpu; `pulumi up` here runs it from this checkout (Pulumi.yaml's
virtualenv holds only requirements.txt's pins), as `pip install .` would install it for another program.
"""

import sys
from pathlib import Path

SOURCE = str(Path(__file__).resolve().parent / "components")
if SOURCE not in sys.path:
    sys.path.insert(0, SOURCE)

from elastic_gpu.program import main  # noqa: E402  (after the source folder is on the path)

main()
