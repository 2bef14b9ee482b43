"""The pipeline: probes, observers and evidence builders the DAGs call."""
