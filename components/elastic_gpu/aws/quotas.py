"""EC2's vCPU quotas per instance family and capacity type: the one table the EKS preflight
(elastic_gpu/aws/preflight.py) and the offline new account (elastic_gpu/tools/aws/mocks.py) read.

Codes and names as the EC2 User Guide's quota tables list them ("Amazon EC2 service quotas",
docs.aws.amazon.com/ec2/latest/instancetypes/ec2-instance-quotas.html: On-Demand and Spot Instance quotas, read
2026-12-01): spot P5 instances (p5, p5e, p5en) draw on "All P5 Spot Instance Requests" (L-C4BD4855, default 0),
P2-P4 on "All P4, P3 and P2 Spot Instance Requests" (L-7212CCBC); every P family's on-demand instances on "Running
On-Demand P instances" (L-417A185B). A family no row matches (inf, trn, dl, P6) is not checked: its quota was not
read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from elastic_gpu.facts import ReviewedRow

_SOURCE = "Amazon EC2 service quotas, docs.aws.amazon.com/ec2/latest/instancetypes/ec2-instance-quotas.html"
_READ = date(2026, 12, 1)


@dataclass(frozen=True)
class Ec2Quota(ReviewedRow):
    """The vCPU quota the instances of some families draw on, for one capacity type."""

    #: the families it covers, as a pattern on the instance type's family (`p5en` of `p5en.48xlarge`)
    families: str
    spot: bool
    code: str
    name: str
    #: what a new account has (the table's Default column)
    default: int
    source: str = _SOURCE
    read_on: date = _READ

    def covers(self, instance_type: str) -> bool:
        return re.fullmatch(self.families, instance_type.split(".")[0]) is not None


EC2_QUOTAS = (
    Ec2Quota(r"(g|gr|vt)[0-9][a-z0-9-]*", True, "L-3819A6DF", "All G and VT Spot Instance Requests", 0),
    Ec2Quota(r"(g|gr|vt)[0-9][a-z0-9-]*", False, "L-DB2E81BA", "Running On-Demand G and VT instances", 0),
    Ec2Quota(r"p[234][a-z0-9-]*", True, "L-7212CCBC", "All P4, P3 and P2 Spot Instance Requests", 0),
    Ec2Quota(r"p5[a-z0-9-]*", True, "L-C4BD4855", "All P5 Spot Instance Requests", 0),
    Ec2Quota(r"p[0-9][a-z0-9-]*", False, "L-417A185B", "Running On-Demand P instances", 0),
    # The general pool's on-demand standard families (default 5, as `aws service-quotas
    # get-aws-default-service-quota --service-code ec2 --quota-code L-1216C47A` answers in the AWS CLI User Guide).
    Ec2Quota(
        r"(a|c|d|h|i|m|r|t|z)[0-9][a-z0-9-]*",
        False,
        "L-1216C47A",
        "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances",
        5,
    ),
)
#: The standard families' on-demand quota (the general pool; never spot on EKS, config_rules.validate).
STANDARD_QUOTA = next(q for q in EC2_QUOTAS if q.code == "L-1216C47A")


def ec2_quota(instance_type: str, spot: bool) -> Ec2Quota | None:
    """The quota an instance of `instance_type` draws on as spot or on-demand (None: not in the table)."""
    return next((q for q in EC2_QUOTAS if q.spot == spot and q.covers(instance_type)), None)
