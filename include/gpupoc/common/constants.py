"""Names the pipeline, the pod builder and the probes share (the GPU resource names: ``gpupoc.kube.resources``)."""

from pathlib import Path

# The scheduling gate the pipeline owns: pods are created held by it, the release task lifts it for all.
PIPELINE_GATE = "gpupoc.io/wave-release"
# Annotation the release task writes on each pod: when its gate was lifted (kept across task reruns).
RELEASED_AT = "gpupoc.io/released-at"
# Where ``gpupoc sim serve`` keeps its state unless told otherwise (kubeconfigs, sim.json, audit log), and what
# a data directory it has used holds (sim.json only while it runs): a plan's kubeconfig there appears later.
SIM_DATA_DIR = Path("var/sim")
SIM_STATE_ENTRIES = ("sim.json", "pki")
