"""Commission: amount, EZ, lammers settled before the shuffle, one rate for big tables (d)(2)-(3)."""
