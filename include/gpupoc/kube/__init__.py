"""The Kubernetes domain that the simulated cluster and the real-cluster code share: resource names, label and
annotation keys, each scheduler's API groups and kinds, its queue models and the objects they become."""
