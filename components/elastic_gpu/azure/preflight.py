"""The account preflight's AKS part (elastic_gpu/preflight.py): the vCPU quotas the pools need at their max.

azure-native has no invoke that reads a subscription's compute usage (the Compute `usages` API is not in its
schema; its `quota` module holds management-group quotas only), so the preflight reads it from ARM itself
(`GET .../providers/Microsoft.Compute/locations/<region>/usages`, api-version 2024-07-01) with the token of the
provider's own credentials (`azure-native:authorization:getClientToken`), through elastic_gpu/http_reads.py.
Spot VMs draw on the regional low-priority vCPU quota, on-demand ones (the fallback, the general pool, the System
pool) on their VM family's quota and on the regional total (elastic_gpu/azure/quotas.py). Where the usage is read,
a short quota's request asks for what is in use plus what the pools need; where it is not (no right to read it),
the finding says so and which command shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from elastic_gpu.azure.node_provisioning import PROVISIONER as NAP
from elastic_gpu.azure.quotas import LOW_PRIORITY, REGIONAL, AzureQuota, family_quota, size_vcpus
from elastic_gpu.azure.reservations import GroupId, parse_group_id
from elastic_gpu.gpu_catalog import gpu_instance_type
from elastic_gpu.http_reads import read_json
from elastic_gpu.preflight import Finding, QuotaNeed, add_need, attempt, capacities

if TYPE_CHECKING:
    from elastic_gpu.config import StackConfig


def pool_capacities(cfg: StackConfig) -> list[tuple[str, bool, int, list[str], int]]:
    """(pool, spot, nodes at its max, its sizes, vCPUs per node) of every pool: the GPU pools and their fallback,
    the general pool and the System pool (its vCPUs from the size's name: the catalog holds GPU sizes only)."""
    from elastic_gpu.settings.azure import SystemPoolConfig

    out = [(c.pool, c.spot, c.nodes, list(c.instance_types), c.per_node("azure", "vcpus")) for c in capacities(cfg)]
    general = cfg.general_pool
    sizes = list(general.instance_types)
    per_node = max((_vcpus(t) for t in sizes), default=0)
    out.append(("general", general.spot, general.max_size, sizes, per_node))
    system = cfg.cluster.system_pool or SystemPoolConfig()
    out.append(("system", False, system.max_size, [system.vm_size], _vcpus(system.vm_size)))
    return out


def _vcpus(size: str) -> int:
    row = gpu_instance_type("azure", size)
    return row.vcpus if row is not None else size_vcpus(size)


#: The reader name of the Compute usage list (elastic_gpu/http_reads.py) and its API version (azure-rest-api-specs
#: specification/compute/resource-manager/Microsoft.Compute/ComputeRP/stable/2024-07-01/computeRPCommon.json
#: Usage_List: each entry's `name.value`, `currentValue` and `limit`).
USAGES_READER = "azure-compute-usages"
USAGES_API_VERSION = "2024-07-01"


def usages_url(subscription: str, region: str) -> str:
    return (
        f"https://management.azure.com/subscriptions/{subscription}/providers/Microsoft.Compute/locations/{region}"
        f"/usages?api-version={USAGES_API_VERSION}"
    )


def read_usages(region: str) -> tuple[str, dict[str, tuple[float, float]]] | str:
    """(subscription id, quota resource name -> (current usage, limit)) in `region`, or why it could not be read."""

    def read() -> tuple[str, dict[str, tuple[float, float]]]:
        from pulumi_azure_native import authorization

        subscription = authorization.get_client_config().subscription_id
        token = authorization.get_client_token().token
        answer = read_json(USAGES_READER, usages_url(subscription, region), token)
        usages = {
            str(u["name"]["value"]): (float(u.get("currentValue") or 0), float(u.get("limit") or 0))
            for u in answer.get("value") or []
        }
        return subscription, usages

    return attempt(read)


def findings(cfg: StackConfig) -> list[Finding]:
    region = cfg.cluster.region
    needs: dict[AzureQuota, dict[str, int]] = {}
    unknown: dict[str, set[str]] = {}
    for pool, spot, nodes, sizes, per_node in pool_capacities(cfg):
        vcpus = nodes * per_node
        if spot:
            add_need(needs, LOW_PRIORITY, pool, vcpus)
            continue
        add_need(needs, REGIONAL, pool, vcpus)
        for size in sizes:
            quota = family_quota(size)
            if quota is None:
                unknown.setdefault(size, set()).add(pool)
            else:  # a pool of two families may draw on either: each must cover it
                add_need(needs, quota, pool, vcpus)
    found = []
    read = read_usages(region)
    subscription, usages = read if not isinstance(read, str) else ("<subscription id>", {})
    scope = f"/subscriptions/{subscription}/providers/Microsoft.Compute/locations/{region}"
    for quota, by_pool in needs.items():
        kind = "lowPriority" if quota is LOW_PRIORITY else "dedicated"
        check = "spot-quota" if quota is LOW_PRIORITY else "on-demand-quota"
        shares = ", ".join(f"{pool} {n}" for pool, n in by_pool.items())
        need_total = sum(by_pool.values())
        raise_to = f"az quota update --resource-name {quota.name} --scope {scope} --resource-type {kind}"
        where = f"'{quota.shown}' ({quota.name}) in {region}"
        if quota.name in usages:
            current, limit = usages[quota.name]
            need = QuotaNeed(where, by_pool, limit - current, "vCPUs")
            if need.short > 0:
                value = int(current + need_total)
                found.append(
                    Finding(
                        ", ".join(by_pool),
                        check,
                        "warning",
                        f"the pools need {need_total} vCPUs of {where} at their max ({shares}); the subscription "
                        f"uses {_n(current)} of its {_n(limit)}: short by {_n(need.short)}",
                        f"{raise_to} --limit-object value={value} (in use {_n(current)} + the pools' {need_total}; "
                        "the `quota` extension, or the portal's Quotas > Compute)",
                    )
                )
            continue
        why = read if isinstance(read, str) else "the subscription's usage list has no such quota in the region"
        found.append(
            Finding(
                ", ".join(by_pool),
                "unread",
                "warning",
                f"the pools need {need_total} vCPUs of {where} at their max ({shares}); the subscription's usage "
                f"and limit could not be read ({why}): `az vm list-usage --location {region} -o table` shows them",
                f"if the limit less the usage is below {need_total}: {raise_to} --limit-object value=<usage + "
                f"{need_total}> (the `quota` extension; or the portal's Quotas > Compute); allow "
                "Microsoft.Compute/locations/usages/read to let the preview read it",
            )
        )
    found += reservation_findings(cfg)
    for size, pools in unknown.items():
        found.append(
            Finding(
                ", ".join(sorted(pools)),
                "unread",
                "warning",
                f"the family quota of {size} is not in the preflight's table (elastic_gpu/azure/quotas.py), so it "
                "was not checked",
                f"az vm list-usage --location {region} -o table shows every family's limit; az vm list-skus "
                f"--location {region} --size {size} --query '[0].family' names its family",
            )
        )
    return found


def _n(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# --- the reserved tier's capacity reservation groups ----------------------------------------------------------

#: The reservation's own instance view (utilizationInfo: currentCapacity, virtualMachinesAllocated): azure-native
#: compute.get_capacity_reservation's `expand` (CapacityReservationInstanceViewTypes "instanceView").
INSTANCE_VIEW = "instanceView"
#: A reservation whose capacity is reserved (ProvisioningState of azure-rest-api-specs ComputeRP capacity
#: reservations: Creating, Updating, Failed, Succeeded, Deleting).
SUCCEEDED = "Succeeded"


@dataclass(frozen=True)
class HeldReservation:
    """One capacity reservation of a group, as azure-native's getCapacityReservation answers."""

    name: str
    vm_size: str
    #: reserved instances: utilizationInfo.currentCapacity (what is reserved and billed), else sku.capacity
    capacity: int
    #: its zone (a zonal reservation serves VMs in that zone only; none: non-zonal deployments only)
    zones: tuple[str, ...]
    state: str
    #: VMs already allocated against it (utilizationInfo.virtualMachinesAllocated)
    allocated: int


def read_group(group: GroupId) -> list[HeldReservation]:
    """The group's reservations, read through azure-native's invokes (compute.get_capacity_reservation_group, then
    compute.get_capacity_reservation per member, API 2024-11-01 in azure-native 3.x)."""
    from pulumi_azure_native import compute

    found = compute.get_capacity_reservation_group(
        resource_group_name=group.resource_group, capacity_reservation_group_name=group.name
    )
    held = []
    for member in found.capacity_reservations or []:
        name = str(member.id).rsplit("/", 1)[-1]
        r = compute.get_capacity_reservation(
            resource_group_name=group.resource_group,
            capacity_reservation_group_name=group.name,
            capacity_reservation_name=name,
            expand=INSTANCE_VIEW,
        )
        usage = r.instance_view.utilization_info if r.instance_view is not None else None
        current = usage.current_capacity if usage is not None else None
        held.append(
            HeldReservation(
                name=name,
                vm_size=r.sku.name or "",
                capacity=int(current if current is not None else r.sku.capacity or 0),
                zones=tuple(r.zones or ()),
                state=r.provisioning_state,
                allocated=len(usage.virtual_machines_allocated or []) if usage is not None else 0,
            )
        )
    return held


def _serves(reservation: HeldReservation, vm_size: str, zones: list[str]) -> bool:
    """A reservation serves an agent pool of `vm_size` in `zones`: the size matches, and a zonal reservation's
    zone is one of the pool's ("If provided, enforces VM/VMSS using this capacity reservation to be in same zone";
    a non-zonal one serves only non-zonal deployments: CapacityReservation.zones, azure-rest-api-specs)."""
    if reservation.vm_size.lower() != vm_size.lower() or reservation.state != SUCCEEDED:
        return False
    return bool(set(reservation.zones) & set(zones)) if zones else not reservation.zones


def reservation_findings(cfg: StackConfig) -> list[Finding]:
    """Each pool's capacity reservation groups, read: a group the account lacks, a size of the pool the group
    reserves nothing of in its zones, a reservation not Succeeded, and reserved capacity below `nodes`."""
    found: list[Finding] = []
    for pool in cfg.gpu_pools:
        r = pool.reservations
        if r is None or cfg.provisioner == NAP:
            continue
        sizes, zones = list(cfg.instance_types(pool)), list(cfg.cluster.zones)
        usable = 0
        for group_id in r.ids:
            group = parse_group_id(group_id)
            if group is None:
                continue  # refused by the config rules
            show = f"az capacity reservation group show -g {group.resource_group} -n {group.name} --instance-view"
            read = attempt(lambda group=group: read_group(group))  # type: ignore[misc]
            if isinstance(read, str):
                missing = "ResourceNotFound" in read or "ResourceGroupNotFound" in read
                found.append(
                    Finding(
                        pool.name,
                        "reservation",
                        "warning",
                        f"the capacity reservation group {group_id} is not in the account"
                        if missing
                        else f"the capacity reservation group {group_id} could not be read ({read.splitlines()[0]})",
                        f"create it and its reservations of {', '.join(sizes)} in zone(s) {', '.join(zones) or '-'} "
                        f"(az capacity reservation group create / az capacity reservation create), or fix "
                        f"reservations.ids; `{show}` shows it"
                        if missing
                        else f"`{show}` shows it; allow Microsoft.Compute/capacityReservationGroups/read and "
                        ".../capacityReservations/read to let the preview read it",
                    )
                )
                continue
            for reservation in read:
                if reservation.state != SUCCEEDED:
                    found.append(
                        Finding(
                            pool.name,
                            "reservation",
                            "warning",
                            f"the capacity reservation {reservation.name} in {group.name} is {reservation.state}, "
                            "not Succeeded: it reserves nothing yet",
                            f"`{show}` shows its state",
                        )
                    )
            for size in sizes:
                serving = [h for h in read if _serves(h, size, zones)]
                if not serving:
                    held = ", ".join(
                        f"{h.name} {h.vm_size} x{h.capacity} zone {','.join(h.zones) or '-'}" for h in read
                    )
                    found.append(
                        Finding(
                            pool.name,
                            "reservation-match",
                            "warning",
                            f"the capacity reservation group {group.name} reserves no {size} in the pool's zone(s) "
                            f"{', '.join(zones) or '(regional)'} (it holds: {held or 'nothing'}): the pool's reserved "
                            f"agent pool of {size} in it gets no reserved VM",
                            f"add a reservation of {size} in those zones to the group (az capacity reservation "
                            f"create -g {group.resource_group} -c {group.name} -n <name> --sku {size} --capacity "
                            f"<n> --zone <zone>), or drop {size} from the pool",
                        )
                    )
                usable += sum(h.capacity for h in serving)
        if usable < r.nodes and not any(f.pool == pool.name and f.check == "reservation" for f in found):
            found.append(
                Finding(
                    pool.name,
                    "reservation-size",
                    "warning",
                    f"reservations.nodes is {r.nodes}, but its groups reserve {usable} VM(s) of its sizes in its "
                    f"zones: the reserved agent pools may grow past what is reserved, and those VMs get no "
                    "capacity guarantee (Azure over-allocates them as on-demand)",
                    f"lower reservations.nodes to {usable}, or raise the reservations' capacity (az capacity "
                    "reservation update ... --capacity <n>)",
                )
            )
    return found
