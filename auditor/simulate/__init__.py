"""Simulated hand histories: realistic logs that obey the rules, and logs with planted faults.

`simulate` (baccarat) returns the events, the table settings and the truth of
every planted fault; `write_events` and `write_house_rules` put them on disk
in any encoding of hand-history-v1 and as a matching house rules file.
"""

from .baccarat import DEFAULT_START, FAULT_KINDS, Simulation, simulate, table_settings
from .writer import ENCODINGS, events_frame, write_events, write_house_rules

__all__ = [
    "DEFAULT_START",
    "ENCODINGS",
    "FAULT_KINDS",
    "Simulation",
    "events_frame",
    "simulate",
    "table_settings",
    "write_events",
    "write_house_rules",
]
