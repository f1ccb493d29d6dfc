"""Export profiles (export-profiles-v1): a TOML file that says how one facility's own
exports map onto the hand-history format, read with no code.

- model: a profile as read, its sources, columns, value maps and card notation
- load: reading a profile file, every key of every table checked (ProfileError names
  the profile and the key)
- files: which source reads a file (patterns on its base name)
- draft: `auditor profile draft`, a first profile written from a sample of the exports
"""

from __future__ import annotations


class ProfileError(Exception):
    """The profile cannot be used: the message names the profile and the key."""
