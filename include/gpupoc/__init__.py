"""gpupoc: prove that a GPU scheduling platform on Kubernetes can be governed, with evidence."""

__version__ = "0.1.0"
