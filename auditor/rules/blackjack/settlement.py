"""Settlement: even money, blackjack, pushes, busts, payout limit, once per wager (a)(2)."""
