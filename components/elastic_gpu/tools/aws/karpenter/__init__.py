"""Karpenter on EKS, as the simulation models it: what it does with a pending GPU pod, on a clock (`model`),
and the EC2NodeClass/NodePool reading that feeds it (`simulate`)."""
