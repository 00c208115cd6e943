"""account-preflight: what the user's account lacks for the stack, as the preview's preflight found it
(elastic_gpu/preflight.py), reported in the gate. Advisory: a pending quota request or an allow-list to fill in
is the user's to do, and a shipped stack stays gate-green on a new account."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs, StackValidationPolicy

from elastic_gpu.preflight import FINDINGS_INPUT, TYPE_TOKEN


def validate_account(args: StackValidationArgs, report: ReportViolation) -> None:
    for r in args.resources:
        if r.resource_type != TYPE_TOKEN:
            continue
        for f in (r.props or {}).get(FINDINGS_INPUT) or []:
            report(f"{f['pool']}: {f['message']}. Fix: {f['fix']}.", r.urn)


account_preflight = StackValidationPolicy(
    name="account-preflight",
    description=(
        "The account has what the stack needs at the pools' max: GPU quotas for spot and on-demand, service-linked "
        "roles and enabled services, zones that offer each type, and an API server reachable from where `pulumi up` "
        "runs (an allow-list of documentation ranges or none reaches nothing). Fix: the request or line each "
        "finding names."
    ),
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=validate_account,
)
