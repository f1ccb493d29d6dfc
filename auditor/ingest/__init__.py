"""Reading hand histories (hand-history-v1) into one typed, validated event frame."""
