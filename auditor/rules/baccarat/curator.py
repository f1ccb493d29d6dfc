"""Curator: offering and passing the shoe on big tables (f)(1), (h)."""
