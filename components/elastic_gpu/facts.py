"""Facts about the clouds as dated rows: every table of quota ids, retired sizes, boot-disk types, partitions and
support calendars carries, per row, where it was read (`source`), when (`read_on`) and the date its source gives
for its next change (`next_change`: a support-calendar row's last end date, a retirement date, else a review date
one year after reading). `stale_rows` lists the rows past that date, and a test runs it every day, so a table that
the clouds have moved on from fails CI rather than a user's `pulumi up`.

The tables themselves live next to their readers (one each, imported wherever the fact is needed):
elastic_gpu/aws/quotas.py, elastic_gpu/azure/quotas.py, elastic_gpu/gcp/quotas.py (quota ids per family and
capacity type), elastic_gpu/gpu_catalog.py RETIRED_TYPES, elastic_gpu/gcp/config_rules.py BOOT_DISK_TYPES,
elastic_gpu/aws/partitions.py PARTITIONS, and each cloud's versions.py KUBERNETES_SUPPORT; tests/test_fact_tables.py
lists them all (this module imports none: the tables import it).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta
from typing import Protocol

#: How long a row whose source names no date of its own is trusted before someone reads the source again.
REVIEW_AFTER = timedelta(days=365)


class DatedRow(Protocol):
    """A row of a fact table: what it rests on and until when."""

    @property
    def source(self) -> str: ...

    @property
    def next_change(self) -> date: ...


def review_by(read_on: date) -> date:
    """The review date of a row read on `read_on` whose source gives no date of its own."""
    return read_on + REVIEW_AFTER


class ReviewedRow:
    """A row whose source gives no date of its own: trusted until `REVIEW_AFTER` past its reading (`read_on`, a
    field of the dataclass that mixes this in)."""

    read_on: date

    @property
    def next_change(self) -> date:
        return review_by(self.read_on)


def stale_rows(rows: Iterable[DatedRow], today: date) -> list[str]:
    """Each row past the date its source gives for its next change, as `<row>: <date> passed (source)`."""
    return [f"{row!r}: {row.next_change.isoformat()} passed ({row.source})" for row in rows if today > row.next_change]
