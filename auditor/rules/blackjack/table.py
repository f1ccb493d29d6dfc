"""Table and shoe: boxes, deck minimum, card counts, cover card (a)(2)(ii), (b)(1), (j)."""
