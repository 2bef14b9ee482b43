"""Tenant isolation: no tenant reads or grabs another's pods, logs, secrets, artifacts, quota or GPU memory."""
