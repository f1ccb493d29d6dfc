"""Insurance (e)."""
