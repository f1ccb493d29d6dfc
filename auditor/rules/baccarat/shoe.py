"""Cards and shoe: deck minimum, card counts, point counts, burn, cover card, void rounds."""
