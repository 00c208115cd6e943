"""Go durations, parsed once for the stack config, the components, the simulation and the policies.

cluster-autoscaler's flags (`--max-node-provision-time` ...) are Go `flag.Duration`s and Karpenter's
NodePool durations unmarshal through the same function: both read `time.ParseDuration` (golang/go
src/time/format.go), whose grammar is `[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+` with the units ns, us (µs, μs), ms,
s, m and h, plus the bare "0". So "14m30s", "1h30m", "90s", "1.5h", ".5m" and "0" are all durations; "15"
(no unit), "1d" (no such unit) and "" are not. A service may take fewer forms (AKS's profile takes whole
minutes, Karpenter's CRD pattern whole units): that is its own rule on top of this one.
"""

from __future__ import annotations

import re

#: Nanoseconds per unit, as `time.ParseDuration`'s unitMap.
_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}
_UNIT = "|".join(sorted(map(re.escape, _UNITS), key=len, reverse=True))
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
#: A duration of zero or more (the sign is Go's, but no setting here takes a negative one).
DURATION_PATTERN = rf"^(?:0|(?:{_NUMBER}(?:{_UNIT}))+)$"
#: What DURATION_PATTERN takes, for people.
DURATION_HELP = "a Go duration such as 90s, 14m30s, 1h30m or 1.5h (units h, m, s, ms, us, ns; 0 alone)"
#: Karpenter's NodePool durations (consolidateAfter, expireAfter): kubernetes-sigs/karpenter v1.14.1
#: pkg/apis/v1/nodepool.go `+kubebuilder:validation:Pattern`. duration_text writes this form.
NODE_POOL_DURATION_PATTERN = r"^(([0-9]+(s|m|h))+|Never)$"
_TERM = re.compile(rf"({_NUMBER})({_UNIT})")
#: Go's time.Duration is an int64 of nanoseconds (about 290 years).
_MAX_NS = (1 << 63) - 1


def parse_duration(text: str) -> float:
    """Seconds of a Go duration ("14m30s" -> 870.0, "-1.5h" -> -5400.0, "0" -> 0.0); ValueError, with
    the text and what is allowed, for anything `time.ParseDuration` refuses."""
    if not isinstance(text, str):
        raise ValueError(f"not a duration: {text!r} (expected a string, {DURATION_HELP})")
    body = text[1:] if text[:1] in ("-", "+") else text
    sign = -1 if text[:1] == "-" else 1
    if body == "0":
        return 0.0
    pos, nanos = 0, 0
    while pos < len(body):
        match = _TERM.match(body, pos)
        if match is None:
            break
        whole, _, fraction = match[1].partition(".")
        unit = _UNITS[match[2]]
        nanos += int(whole or "0") * unit + (int(fraction) * unit // 10 ** len(fraction) if fraction else 0)
        pos = match.end()
    if not body or pos != len(body):
        raise ValueError(f"not a duration: {text!r}; allowed: {DURATION_HELP}")
    if nanos > _MAX_NS:
        raise ValueError(f"not a duration: {text!r} is longer than Go's largest duration (about 290 years)")
    return sign * nanos / 10**9


def duration_text(seconds: float) -> str:
    """Go's `Duration.String()` for whole seconds: 870 -> "14m30s", 5400 -> "1h30m0s", 0 -> "0s". The form
    every Go consumer takes back, Karpenter's NodePool pattern `^(([0-9]+(s|m|h))+|Never)$` included."""
    if seconds != int(seconds) or seconds < 0:
        raise ValueError(f"{seconds!r}: only whole, non-negative seconds are written here")
    s = int(seconds)
    hours, rest = divmod(s, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"
