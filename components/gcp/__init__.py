"""GCP (GKE) mapping of the cloud-neutral components: pools, autoscaler, rules, stack."""
