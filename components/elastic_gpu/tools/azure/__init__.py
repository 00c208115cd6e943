"""Azure in the workbench: its mocks, its reader of agent pools, their scale-from-zero templates, AKS's
managed autoscaler's timing, node auto-provisioning's simulation and its part of the policy pack; its tools
provider is `AzureTools` (cloud.py, the `ToolCloud` protocol of elastic_gpu/tools/tool_cloud.py)."""
