"""Deal and draw: the order of the cards and the third-card rules (f)(5)-(13)."""
