"""Several patrons on one box (h)."""
