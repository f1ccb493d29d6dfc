"""Payouts per wager type (d), (b)(1)."""
