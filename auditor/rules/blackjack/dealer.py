"""Dealer play (g)(2)-(3)."""
