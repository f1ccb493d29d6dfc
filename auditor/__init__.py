"""auditor: replays casino table-game hand histories against 9 NYCRR Part 5324."""

__version__ = "0.1.0"
