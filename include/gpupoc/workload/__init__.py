"""The project's workload program: what ``gpupoc/workload:*`` pods run on the simulated cluster.

It trains a small numpy model on the CPU, logs progress, writes an artifact and reports the GPU
utilization and memory it claims through a telemetry file. Modes make it fail, hang, exceed its memory
limit or run long, so a POC can watch the platform handle each case. Run ``python -m gpupoc.workload -h``.
"""
