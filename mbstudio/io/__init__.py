"""Exports and imports."""
