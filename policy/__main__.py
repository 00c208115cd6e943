"""The elastic-gpu CrossGuard pack: `pulumi preview --policy-pack policy`.

Constructing a PolicyPack starts the analyzer server and blocks, so nothing
imports this file: tests and `python -m components policy` import `policy_rules`.
"""

import sys
from pathlib import Path

# The rules live in the repository's `policy_rules` package and read `components`' single sources.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import EnforcementLevel, PolicyPack

from policy_rules import ALL_POLICIES, PACK_NAME

PolicyPack(PACK_NAME, policies=ALL_POLICIES, enforcement_level=EnforcementLevel.ADVISORY)
