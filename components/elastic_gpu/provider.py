"""What a `pulumi up` asks of a cloud: the deploy protocol `CloudProvider`, the top of the core.

A cloud is one class implementing `CloudProvider` (`elastic_gpu/<cloud>/provider.py`, exported by its folder
as `PROVIDER`; `elastic_gpu.clouds` lists them). The library (components, config, validation, compose,
preflight) never branches on a cloud's name and never looks a part up by string. The provider is chosen at the
edges, from a name (a stack's `cloud`: `StackConfig.provider`; a cluster handle's: `cluster_handle.cloud_provider`),
and handed down; tables merged over every cloud read each provider in turn (`clouds.all_clouds()`, in registry
order). The type checker verifies that each provider has every member, with its signature (`PROVIDER:
CloudProvider = ...`), and each record is built by the cloud's own module from its names (`RULES =
ConfigRules(...)` at the end of `<cloud>/config_rules.py`, `BUILDER = PoolBuilder(...)` at the end of
`<cloud>/pools.py`, ...), so a cloud that lacks a member fails the type check, not a run.

Imports run one way (tests/test_layout.py): each layer declares the small protocol of what IT asks of a cloud,
with types of its own layer or below, and `CloudProvider` combines them here, above them all (as Karpenter's
`pkg/cloudprovider/types.go` gathers what its controllers ask). Each member says what it is, when the library
calls it and what it returns. The members, by the layer that asks for them:

- `name`, `facts` (plain, SDK-free data), `owner` ("an AWS"-only setting): `KnownCloud`, and
  `config_rules()` (whose plain part, `CloudLimits`, the validators read): `RuledCloud`, `versions()`:
  `VersionedCloud`, all in elastic_gpu/cloud_facts.py (the registry's `RegisteredCloud` is these three);
- `config_rules()` (the whole `ConfigRules`, with the cloud's checks of a stack config), `ignored_settings()`,
  `stack_builder()` (the composition of a stack): `StackCloud`, elastic_gpu/config.py;
- `pool_builder()` (general and GPU pools): `PoolCloud`, elastic_gpu/pool_args.py;
- `autoscaler_builder()` (the autoscaler or provisioner): `AutoscalerCloud`, elastic_gpu/cluster_autoscaler.py.

A cloud's own settings are its part of the settings (`elastic_gpu/settings/<cloud>.py`), merged into the
sections' models by elastic_gpu/settings/__init__.py.

Capabilities only some clouds have are small protocols a provider implements too, checked with `isinstance`
(never looked up by name), each declared beside what it takes: `AccountPreflight` (elastic_gpu/preflight.py),
`ClusterItems` (AKS's System pool, priced outside the pools; elastic_gpu/config.py), `GpuResolver` (EC2 describes a
type's GPU; elastic_gpu/gpu_catalog.py), `UpgradePath` (GKE's and AKS's own upgrade rules, in the version advice;
elastic_gpu/cloud_facts.py). This module re-exports every record and protocol of the seam, so a cloud (or a
test's fake one) may import them from one place.

The offline tools (elastic_gpu/tools/) ask more of a cloud (its reader of node groups, mocks, timing, policy
pack, replacement rows, simulations): that is their own protocol, `ToolCloud` in elastic_gpu/tools/tool_cloud.py,
which extends this one. Nothing here imports the tools, not even for types: a `pulumi up` loads none of them.

Importing a provider loads no cloud SDK, and nothing above the registry: its module imports `Cloud` (the shape
the three share, elastic_gpu/clouds.py) and its plain facts, and its methods import the cloud's modules when
called, so a stack on one cloud needs only that cloud's extra. They import each module by its full name (`import
elastic_gpu.aws.stack as stack`): the offline runner forgets the modules a program imported between two runs in
one process, and `from elastic_gpu.aws import stack` would hand back the package's attribute, the forgotten module.
"""

from __future__ import annotations

from typing import Protocol

from elastic_gpu.cloud_facts import CloudFacts as CloudFacts
from elastic_gpu.cloud_facts import CloudLimits as CloudLimits
from elastic_gpu.cloud_facts import KnownCloud as KnownCloud
from elastic_gpu.cloud_facts import RegisteredCloud as RegisteredCloud
from elastic_gpu.cloud_facts import RuledCloud as RuledCloud
from elastic_gpu.cloud_facts import UpgradePath as UpgradePath
from elastic_gpu.cloud_facts import UpgradeReach as UpgradeReach
from elastic_gpu.cloud_facts import VersionedCloud as VersionedCloud
from elastic_gpu.cloud_facts import VersionRows as VersionRows
from elastic_gpu.clouds import Cloud as Cloud
from elastic_gpu.cluster_autoscaler import AutoscalerBuilder as AutoscalerBuilder
from elastic_gpu.cluster_autoscaler import AutoscalerCloud
from elastic_gpu.config import ClusterItems as ClusterItems
from elastic_gpu.config import ConfigRules as ConfigRules
from elastic_gpu.config import StackBuilder as StackBuilder
from elastic_gpu.config import StackCloud
from elastic_gpu.gpu_catalog import GpuResolver as GpuResolver
from elastic_gpu.pool_args import PoolBuilder as PoolBuilder
from elastic_gpu.pool_args import PoolCloud
from elastic_gpu.preflight import AccountPreflight as AccountPreflight


class CloudProvider(StackCloud, PoolCloud, AutoscalerCloud, Protocol):
    """One cloud, as a `pulumi up` asks for it: every member each layer asks of a cloud (the module docstring
    lists them, with the layer that declares each). Every method may be called with no cloud SDK installed but
    the one its result needs."""
