"""GCP in the workbench: its mocks, its reader of node pools, their scale-from-zero templates, GKE's
autoscaler's timing, Kueue's admission, the ComputeClass simulation and its part of the policy pack; its tools
provider is `GcpTools` (cloud.py, the `ToolCloud` protocol of elastic_gpu/tools/tool_cloud.py)."""
