"""Blackjack rules, 9 NYCRR 5324.10: one module per family, one registered Rule per check."""
