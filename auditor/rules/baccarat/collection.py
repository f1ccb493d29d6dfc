"""Collection order (g)(2)-(3)."""
