"""Every fact table's rows carry a source and the date their source gives for their next change; a row past that
date fails here, so a table the clouds have moved on from shows in CI, not at a user's `pulumi up`."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from elastic_gpu.clouds import MinorSupport
from elastic_gpu.facts import DatedRow, stale_rows


def all_fact_rows() -> list[DatedRow]:
    """Every dated row of every fact table."""
    from elastic_gpu.aws.partitions import PARTITIONS
    from elastic_gpu.aws.quotas import EC2_QUOTAS
    from elastic_gpu.azure.quotas import AZURE_QUOTAS
    from elastic_gpu.gcp.config_rules import BOOT_DISK_TYPES
    from elastic_gpu.gcp.quotas import GPU_QUOTAS
    from elastic_gpu.gpu_catalog import RETIRED_TYPES
    from elastic_gpu.versions import KUBERNETES_SUPPORT

    rows: list[DatedRow] = [*EC2_QUOTAS, *AZURE_QUOTAS, *GPU_QUOTAS, *RETIRED_TYPES.values(), *BOOT_DISK_TYPES]
    rows += PARTITIONS
    rows += [r for cloud in KUBERNETES_SUPPORT.values() for r in cloud.values()]
    return rows


def test_no_fact_row_is_past_the_date_its_source_gives_for_its_next_change() -> None:
    assert stale_rows(all_fact_rows(), date.today()) == []


def test_every_fact_table_is_covered_and_every_row_names_its_source() -> None:
    rows = all_fact_rows()
    kinds = {type(r).__name__ for r in rows}
    assert kinds == {"Ec2Quota", "AzureQuota", "GpuQuota", "RetiredType", "BootDiskType", "Partition", "MinorSupport"}
    assert all(r.source.strip() for r in rows)


def test_a_support_calendar_row_past_its_end_is_stale() -> None:
    from elastic_gpu.versions import KUBERNETES_SUPPORT

    row = KUBERNETES_SUPPORT["gcp"]["1.35"]
    assert stale_rows([row], row.end_of_life) == []
    [stale] = stale_rows([row], date(2027, 4, 12))
    assert "2027-04-11 passed" in stale and row.source in stale


def test_an_lts_row_lives_until_its_lts_end_and_an_estimated_row_until_its_review() -> None:
    from elastic_gpu.versions import KUBERNETES_SUPPORT

    aks = KUBERNETES_SUPPORT["azure"]["1.33"]
    assert aks.end_of_life == date(2026, 7, 31) and aks.next_change == date(2027, 7, 31)
    gke = KUBERNETES_SUPPORT["gcp"]["1.37"]
    assert gke.review_by is not None and gke.next_change == gke.review_by < gke.end_of_life
    row = MinorSupport("1.99", date(2030, 1, 1), date(2030, 1, 1), "test", review_by=date(2029, 1, 1))
    assert stale_rows([row], date(2029, 1, 2)) and not stale_rows([replace(row, review_by=None)], date(2029, 1, 2))


def test_a_quota_row_is_stale_a_year_after_it_was_read() -> None:
    from elastic_gpu.aws.quotas import EC2_QUOTAS

    row = EC2_QUOTAS[0]
    assert stale_rows([row], date(2027, 12, 1)) == []
    assert stale_rows([row], date(2027, 12, 2))
