"""Every rule the auditor knows, registered by importing its module."""

from . import exports, input_quality  # noqa: F401 - register the input and house-rules rules
from .baccarat import (  # noqa: F401 - each module registers its rules
    collection,
    commission,
    curator,
    deal,
    irregularities,
    net,
    outcome,
    payouts,
    shoe,
    shoe_order,
    wagers,
)
from .blackjack import (  # noqa: F401 - each module registers its rules
    dead_hands,
    dealer,
    decisions,
    insurance,
    patrons,
    settlement,
    surrender,
    table,
)
from .blackjack import (  # noqa: F401 - named apart from the baccarat modules of those names
    irregularities as blackjack_irregularities,
)
from .blackjack import (  # noqa: F401
    net as blackjack_net,
)
from .blackjack import (  # noqa: F401
    shoe_order as blackjack_shoe_order,
)
from .registry import REGISTRY

__all__ = ["REGISTRY"]
