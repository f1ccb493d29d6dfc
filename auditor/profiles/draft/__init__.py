"""`auditor profile draft`: a first profile written from the exports themselves.

- sample: a bounded sample of each file (its first rows and a reservoir of the rest)
- synonyms (synonyms.toml): the names and words table systems use, as data
- roles: which of the format's columns each export column gives, by name and by cells
- notation: card notation, timestamp format, list syntax
- vocabulary: value maps, each value with its count and proposed target
- build: the draft's sources and keys, each guess with its evidence
- write: the profile as TOML, every guess commented, every undecided key a TODO
"""

from __future__ import annotations
