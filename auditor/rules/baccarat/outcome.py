"""Outcome: the declared result against the replay (g)(1)."""
