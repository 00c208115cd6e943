"""GKE node pool auto-creation, as the simulation models it: ComputeClasses as the groups GKE would create
(`simulation`)."""
