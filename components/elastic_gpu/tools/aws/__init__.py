"""AWS in the workbench: its mocks (pulumi-eks's remote components among them), its reader of node groups, their
scale-from-zero templates, the cluster-autoscaler's and Karpenter's timing, its part of the policy pack; its
tools provider is `AwsTools` (cloud.py, the `ToolCloud` protocol of elastic_gpu/tools/tool_cloud.py)."""
