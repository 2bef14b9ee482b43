"""What a real cluster must hold for the POC: manifests, identities' kubeconfig, the access table."""
