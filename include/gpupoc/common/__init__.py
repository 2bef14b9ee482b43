"""Helpers shared by every area of the package."""
