"""Every rule the auditor knows, registered by importing its module."""

from . import exports, input_quality  # noqa: F401 - register the input and house-rules rules
from .baccarat import (  # noqa: F401 - each module registers its rules
    collection,
    commission,
    curator,
    deal,
    outcome,
    payouts,
    shoe,
    wagers,
)
from .blackjack import (  # noqa: F401 - each module registers its rules
    dealer,
    decisions,
    insurance,
    patrons,
    settlement,
    surrender,
    table,
)
from .registry import REGISTRY

__all__ = ["REGISTRY"]
