"""The AWS partition of each region: the one table the EKS config rules read.

ARNs and service principals differ per partition (`arn:aws:`, `arn:aws-us-gov:`, `arn:aws-cn:`; China's EC2
principal is `ec2.amazonaws.com.cn`), as botocore's data/partitions.json (regionRegex of each partition) and the
AWS General Reference "Amazon Resource Names" give them. The library writes the `aws` partition's managed-policy
ARNs (elastic_gpu/aws/iam.py, elastic_gpu/aws/karpenter/iam.py) and principals, so a stack in another partition
is refused at preview, naming `cluster.region`, instead of failing at its first IAM call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from elastic_gpu.facts import ReviewedRow

_SOURCE = "boto/botocore botocore/data/partitions.json (regionRegex per partition)"


@dataclass(frozen=True)
class Partition(ReviewedRow):
    name: str
    #: the regions it holds (botocore's regionRegex)
    regions: str
    #: whether this library's ARNs and principals are right in it
    supported: bool
    source: str = _SOURCE
    read_on: date = date(2026, 12, 1)


PARTITIONS = (
    Partition("aws", r"^(us|eu|ap|sa|ca|me|af|il|mx)\-\w+\-\d+$", True),
    Partition("aws-cn", r"^cn\-\w+\-\d+$", False),
    Partition("aws-us-gov", r"^us\-gov\-\w+\-\d+$", False),
)


def partition(region: str) -> Partition | None:
    """The partition of `region` (the more specific GovCloud pattern first: `us-gov-west-1` also fits `us-...`)."""
    return next(
        (p for p in sorted(PARTITIONS, key=lambda p: not p.name.startswith("aws-")) if re.match(p.regions, region)),
        None,
    )


def partition_problems(where: str, region: str) -> list[str]:
    """A region outside the partitions whose ARNs this library writes, refused by name."""
    found = partition(region)
    if found is None or found.supported:
        return []
    return [
        f"{where}: {region!r} is in the AWS partition {found.name}, whose ARNs (arn:{found.name}:...) and service "
        "principals differ from the ones this library writes (arn:aws:iam::aws:policy/..., elastic_gpu/aws/iam.py); "
        "allowed: a region of the aws partition"
    ]
