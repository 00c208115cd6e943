"""The described account the offline preview's invokes answer from (elastic_gpu/preflight.py).

By default every cloud's account is a new one, with the limits its documentation gives a new account (each
cloud's `mocks` part: `NEW_ACCOUNT`), so that previewing a shipped stack offline shows what a new user must
request. Describe your own with a YAML file passed as `--account FILE` (preview, policy, cost, simulate): one
section per cloud, each key replacing the new account's, e.g.

    aws:
      quotas: {L-3819A6DF: 96, L-DB2E81BA: 64}   # EC2 quota code (or EKS quota name) -> value
      spotServiceLinkedRole: true
    gcp:
      quotas: {PREEMPTIBLE-NVIDIA-T4-GPUS-per-project-region: 8, GPUS-ALL-REGIONS-per-project: 16}

A `quotas` map is merged into the new account's (a quota you do not name keeps its default; one set to null
cannot be read, as with credentials without the right to; so does `gcp.services: null`); any other key replaces
the default. An unknown cloud or key is refused by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from elastic_gpu.errors import ConfigError
from elastic_gpu.tools.offline.cloud_mocks import mock_clouds

#: Keys whose maps are merged with the new account's rather than replacing them.
MERGED_KEYS = ("quotas", "usages")
#: Keys that may be null: a fact the credentials cannot read (GCP `services`: no serviceusage.services.get).
NULLABLE_KEYS = ("services",)


def new_account() -> dict[str, dict[str, Any]]:
    """Every cloud's new account (its mocks' `new_account`)."""
    return {c.name: dict(c.mocks().new_account) for c in mock_clouds()}


def described_account(described: dict[str, Any] | None = None, source: str = "account") -> dict[str, dict[str, Any]]:
    """The new account with `described` laid over it; a cloud or key the new account lacks is a ConfigError."""
    account = new_account()
    problems = []
    for cloud, section in (described or {}).items():
        if cloud not in account:
            problems.append(f"{cloud}: not a cloud; allowed: {', '.join(account)}")
            continue
        if not isinstance(section, dict):
            problems.append(f"{cloud}: must be a mapping of {', '.join(account[cloud])} (got {section!r})")
            continue
        for key, value in section.items():
            if key not in account[cloud]:
                problems.append(f"{cloud}.{key}: unknown key; allowed: {', '.join(account[cloud])}")
            elif value is None and key in NULLABLE_KEYS:
                account[cloud][key] = None
            elif key in MERGED_KEYS and isinstance(value, dict):
                account[cloud][key] = {**account[cloud][key], **value}
            elif type(value) is not type(account[cloud][key]):
                problems.append(
                    f"{cloud}.{key}: must be a {type(account[cloud][key]).__name__} like the new account's "
                    f"{account[cloud][key]!r} (got {value!r})"
                )
            else:
                account[cloud][key] = value
    if problems:
        raise ConfigError(problems, source=source)
    return account


def load_account(path: str | Path | None) -> dict[str, dict[str, Any]]:
    """The account described in the YAML file `path` (None: a new account everywhere)."""
    if path is None:
        return described_account()
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError([f"{path}: cannot read the account description: {exc}"], source="--account") from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError([f"{path}: must be a mapping of clouds (got {data!r})"], source="--account")
    return described_account(data, source=f"account {path}")
