"""Fault recovery: failing tasks, missing images and node failures, each recorded from trigger to recovery."""
