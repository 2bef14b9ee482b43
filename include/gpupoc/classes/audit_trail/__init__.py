"""Audit and operations: who requested, who changed quotas, when tasks ran, artifact hand-over, alerts."""
