"""A seat's net result (format 1.3 `settle_net`) against what its wagers were owed.

Where a seat (or one bet of it: the net's scope) is settled by a net instead of single
settlements, BA509 judges its wagers together: the sum of what (b)(1), (d) and (i)(4) owe
each (from `settlement.wagers`, as BA501-BA508 read it, a banker win less its commission
at the table's rate) against the recorded net. The rules that judge one settlement or one
commission (BA106, BA404, BA501-BA508, BA601-BA604, BA701-BA703) leave such wagers alone.
A difference is one finding per scope, at its first net row, with the difference as its
amount; it cites the paragraph of the one wager that explains it, else (d).
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games import nets
from ...games.baccarat import nets as baccarat_nets
from ..registry import Rule, register


def net_differs(ctx: GameContext) -> pl.DataFrame:
    return nets.check_rows(baccarat_nets.judged(ctx), "Seat")


NET = register(
    Rule(
        "BA509",
        "net-result-differs-baccarat",
        "Net result of a seat differs from what its wagers were owed",
        baccarat_nets.BOX_PARAGRAPH,
        "error",
        "baccarat",
        "A seat settled by its net result (format 1.3 `settle_net`, summed per scope: the "
        "seat, or one bet of it) whose net is not the sum of what its wagers were owed: a "
        "player wager at 1:1, a banker wager at 1:1 less the commission at the table's rate "
        "(none at EZ baccarat), banker and player wagers returned on a tie (and an EZ banker "
        "wager on a dragon 7), a tie, dragon bonus, dragon 7 or panda 8 wager at its odds, a "
        "losing wager collected, every wager of a void round returned. The amount is the "
        "difference (positive: the patron was underpaid). Where one wager alone, given "
        "another outcome (lost, pushed, won at its odds), makes the net, the finding cites "
        "that wager's paragraph; else (d). Such seats are not judged by the rules of single "
        "settlements and commissions (BA106, BA404, BA501-BA508, BA601-BA604, BA701-BA703).",
        "Seat 1 wagers $100 on banker at a 5% table; banker wins; the seat is settled by a "
        "net of +$100.",
        "Seat 1 wagers $100 on banker at a 5% table; banker wins; the seat is settled by a "
        "net of +$95.",
        check=net_differs,
        needs=("cards", "wagers"),
        also=tuple(p for p in dict.fromkeys(baccarat_nets.PARAGRAPHS.values())
                   if p != baccarat_nets.BOX_PARAGRAPH),
        citation_per_finding=True,
    )
)
