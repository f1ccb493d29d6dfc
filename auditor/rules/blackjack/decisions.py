"""Player decisions: drawing, doubling, splitting (c), (d), (g)(1)."""
