"""A VNet subnet of the user's for an AKS cluster and its pools: plain values (no azure-native import)."""

from __future__ import annotations

from typing import Any

#: An ARM VNet subnet id (AgentPool vnetSubnetID; ManagedClusterAPIServerAccessProfile subnetId).
SUBNET_ID_PATTERN = (
    r"(?i)/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+"
)
#: The built-in role a cluster identity needs on a subnet it does not own (AKS use-managed-identity.md, "Add role
#: assignment"; configure-kubenet.md / api-server-vnet-integration.md grant it on the BYO subnets).
NETWORK_CONTRIBUTOR_ROLE = "4d97b98b-1d4f-4787-a291-c67834d212e7"


def vnet_of(subnet_id: str) -> str:
    """The VNet id of a subnet id (ARM ids compare case-insensitively)."""
    return subnet_id.rsplit("/subnets/", 1)[0].lower()


def subscription_of(subnet_id: str) -> str:
    return subnet_id.split("/")[2]


def pool_subnet(args: Any) -> str | None:
    """The pool's own subnet, else the cluster's (AksClusterArgs.subnet_id), else None (AKS's VNet)."""
    if isinstance(args.subnet_ids, str):
        return args.subnet_ids
    return getattr(args.cluster, "vnet_subnet_id", None)  # optional handle attribute


# --- the cluster's own address ranges (ContainerServiceNetworkProfile) ----------------------------------------

#: AKS's ranges when the network profile names none (configure-kubenet.md: --service-cidr "The default value is
#: 10.0.0.0/16", --dns-service-ip "The default value is 10.0.0.10", --pod-cidr "The default value is
#: 10.244.0.0/16"; azure-cni-overlay.md: the same pod CIDR for Azure CNI Overlay).
AKS_DEFAULT_SERVICE_CIDR = "10.0.0.0/16"
AKS_DEFAULT_DNS_SERVICE_IP = "10.0.0.10"
AKS_DEFAULT_POD_CIDR = "10.244.0.0/16"
#: The address `az network vnet create` gives a subnet unless told otherwise (--subnet-prefixes 10.0.0.0/24 in a
#: VNet of 10.0.0.0/16): the offline answer for a subnet the mocks know only by its id.
AZ_DEFAULT_SUBNET_PREFIX = "10.0.0.0/24"
#: The AKS error for a service range that overlaps a subnet of the cluster's VNet (Azure/AKS#1117).
SERVICE_CIDR_OVERLAP = "ServiceCidrOverlapExistingSubnetsCidr"


def dns_ip_for(service_cidr: str) -> str:
    """The DNS service IP the AKS docs recommend in a service range: its `.10` address (configure-kubenet.md)."""
    import ipaddress

    return str(ipaddress.ip_network(service_cidr, strict=False).network_address + 10)


def network_profile_problems(
    where: str, service_cidr: str | None, dns_service_ip: str | None, pod_cidr: str | None
) -> list[str]:
    """The ranges are IPv4 ranges, the DNS service IP lies in the service range past its first addresses (the
    network address and the API server's `.1` Service), and the service and pod ranges do not overlap."""
    import ipaddress

    problems: list[str] = []
    nets: dict[str, ipaddress.IPv4Network] = {}
    for name, value in (("service_cidr", service_cidr), ("pod_cidr", pod_cidr)):
        if value is None:
            continue
        try:
            net = ipaddress.ip_network(value)
        except ValueError:
            net = None
        if not isinstance(net, ipaddress.IPv4Network):
            problems.append(f"{where}{name}: {value!r} is not an IPv4 range such as 10.96.0.0/16")
        else:
            nets[name] = net
    service = nets.get("service_cidr") or ipaddress.IPv4Network(AKS_DEFAULT_SERVICE_CIDR)
    if dns_service_ip is not None:
        try:
            ip = ipaddress.ip_address(dns_service_ip)
        except ValueError:
            problems.append(f"{where}dns_service_ip: {dns_service_ip!r} is not an IPv4 address")
        else:
            if ip not in service or int(ip) - int(service.network_address) < 2:
                problems.append(
                    f"{where}dns_service_ip: {dns_service_ip} must be an address of the service range {service} "
                    f"past its first two (AKS's kube-dns Service; the docs use its .10: {dns_ip_for(str(service))})"
                )
    pods = nets.get("pod_cidr") or ipaddress.IPv4Network(AKS_DEFAULT_POD_CIDR)
    if (service_cidr or pod_cidr) and service.overlaps(pods) and not problems:
        problems.append(
            f"{where}service_cidr: the service range {service} overlaps the pod range {pods}; allowed: two "
            "ranges apart (and apart from the VNet's)"
        )
    return problems


def default_range_finding(
    service_cidr: str | None, pod_cidr: str | None, uses_pod_cidr: bool, subnet_prefixes: list[str] | None
) -> str | None:
    """A brought subnet with the cluster's ranges left at AKS's defaults: what overlaps it (or, when its range
    could not be read, what to check); None when nothing is left at a default or nothing overlaps."""
    import ipaddress

    defaults = []
    if service_cidr in (None, AKS_DEFAULT_SERVICE_CIDR):
        defaults.append(("service_cidr", AKS_DEFAULT_SERVICE_CIDR))
    if uses_pod_cidr and pod_cidr in (None, AKS_DEFAULT_POD_CIDR):
        defaults.append(("pod_cidr", AKS_DEFAULT_POD_CIDR))
    if not defaults:
        return None
    fix = (
        "set service_cidr (and dns_service_ip, its .10) and pod_cidr to ranges outside the VNet's address space, "
        'e.g. service_cidr="10.96.0.0/16", dns_service_ip="10.96.0.10", pod_cidr="10.240.0.0/16"'
    )
    if subnet_prefixes is None:
        left = ", ".join(f"{name} {cidr}" for name, cidr in defaults)
        return (
            f"the cluster joins a subnet of yours with {left} left at AKS's defaults, and the subnet's range could "
            f"not be read at preview: AKS refuses the cluster ({SERVICE_CIDR_OVERLAP}) when a range overlaps a "
            "subnet of the VNet, as in the common 10.0.0.0/16 VNet; check `az network vnet show --ids <vnet id> "
            f"--query addressSpace`, or {fix}"
        )
    subnets = [ipaddress.ip_network(p, strict=False) for p in subnet_prefixes]
    hits = [
        f"{name} {cidr} (AKS's default) overlaps the subnet's {subnet}"
        for name, cidr in defaults
        for subnet in subnets
        if ipaddress.ip_network(cidr).overlaps(subnet)
    ]
    if not hits:
        return None
    return f"{'; '.join(hits)}: AKS refuses to create the cluster ({SERVICE_CIDR_OVERLAP}); {fix}"


def subnet_parts(subnet_id: str) -> tuple[str, str, str] | None:
    """(resource group, VNet, subnet) of an ARM subnet id, or None for anything else."""
    import re

    if not re.fullmatch(SUBNET_ID_PATTERN, subnet_id):
        return None
    parts = subnet_id.split("/")
    return parts[4], parts[8], parts[10]
