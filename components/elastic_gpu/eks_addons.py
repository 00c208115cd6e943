"""`elastic_gpu.eks_addons`: the EKS managed add-ons, which live in `elastic_gpu.aws.addons` (a cloud is one folder,
elastic_gpu/clouds.py); this module keeps the documented import path."""

from elastic_gpu.aws.addons import (
    ADDON_NAMES,
    RESOLVE_CONFLICTS,
    TYPE_TOKEN,
    EksAddons,
    EksAddonsArgs,
    addon_versions,
)

__all__ = [
    "ADDON_NAMES",
    "RESOLVE_CONFLICTS",
    "TYPE_TOKEN",
    "EksAddons",
    "EksAddonsArgs",
    "addon_versions",
]
