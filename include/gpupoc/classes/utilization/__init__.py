"""Utilization: GPU use and memory by team, task type, pool and time, allocated against used."""
