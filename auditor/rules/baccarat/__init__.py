"""Baccarat rules, 9 NYCRR 5324.20: one module per family, one registered Rule per check."""
