"""Wagers: timing, increments, EZ-only wagers, settled exactly once."""
