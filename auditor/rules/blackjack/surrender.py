"""Surrender (f)."""
