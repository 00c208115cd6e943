"""The elastic-gpu CrossGuard pack: `pulumi preview --policy-pack policy`.

Constructing a PolicyPack starts the analyzer server and blocks, so nothing
imports this file: tests and `python -m elastic_gpu policy` import `elastic_gpu.tools.policy`.
The pack's virtualenv installs the library (policy/requirements.txt), so the rules read the
same single sources (taints, tag keys, GPU and price tables) as the components.
"""

from pulumi_policy import EnforcementLevel, PolicyPack

from elastic_gpu.tools.policy import ALL_POLICIES, PACK_NAME

PolicyPack(PACK_NAME, policies=ALL_POLICIES, enforcement_level=EnforcementLevel.ADVISORY)
