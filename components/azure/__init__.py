"""Azure (AKS) implementations behind the cloud-neutral components."""
