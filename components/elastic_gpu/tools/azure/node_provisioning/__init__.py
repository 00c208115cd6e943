"""AKS node auto-provisioning, as the simulation models it (`simulation`)."""
