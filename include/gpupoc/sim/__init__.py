"""The simulated GPU cluster: a Kubernetes API server, scheduler and kubelet in one asyncio process."""
