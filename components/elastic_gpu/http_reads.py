"""Reads of a cloud's REST API that its Pulumi provider has no invoke for, made at preview with the user's
credentials (the provider's own token invoke): one function, so that the offline preview can answer them from the
described account as it answers the invokes (elastic_gpu/tools/offline/mocks.py sets `READERS`).

Today one: AKS's preflight reads the subscription's Compute usage (elastic_gpu/azure/preflight.py), which
azure-native's schema lacks.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

#: Seconds a read may take before the preflight reports it unread.
TIMEOUT_SECONDS = 20

Reader = Callable[[str, str], dict[str, Any]]
#: Reader name -> the function that answers it instead of the network (the offline preview's described account).
READERS: dict[str, Reader] = {}


def https_get_json(url: str, token: str) -> dict[str, Any]:
    """GET `url` with the bearer `token`; the service's own error body on a refusal (ARM: `{"error": {"code":
    "AuthorizationFailed", "message": ...}}`)."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            answer: dict[str, Any] = json.loads(response.read().decode())
            return answer
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"HTTP {exc.code}: {exc.read().decode(errors='replace')[:500]}") from None


def read_json(name: str, url: str, token: str) -> dict[str, Any]:
    """The JSON at `url`: through the reader registered as `name` (offline), else over HTTPS."""
    return READERS.get(name, https_get_json)(url, token)
