"""AWS mapping of the cloud-neutral components (EKS managed node groups, IRSA)."""
