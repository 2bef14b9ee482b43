"""The fidelity suite: one scripted scenario run through a kubeconfig on the simulated cluster and on a real
control plane, what a client sees recorded as typed observations, and the differences compared against the
accepted list (``accepted.yaml``)."""
