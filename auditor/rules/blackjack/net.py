"""A box's net result (format 1.3 `settle_net`) against what its wagers were owed.

Where a box (or one hand of it, one bet, one patron's wagers: the net's scope) is settled
by a net instead of single settlements, BJ707 judges its wagers together: the sum of what
(a)(2)(iii), (v), (vi), (e)(3), (e)(4), (f)(1) and (i)(4)(ii) owe each (from
`money.owed`, as BJ303-BJ304, BJ403-BJ404 and BJ701-BJ706 read it) against the recorded
net. Those rules, which judge one settlement, leave such wagers alone. A difference is one
finding per scope, at its first net row, with the difference as its amount; it cites the
paragraph of the one wager that explains it (that wager alone given another outcome makes
the net), else (a)(2)(v). Void rounds and scopes holding a wager whose outcome is not
known are not judged.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games import nets
from ...games.blackjack import nets as blackjack_nets
from ..registry import Rule, register


def net_differs(ctx: GameContext) -> pl.DataFrame:
    return nets.check_rows(blackjack_nets.judged(ctx), "Box")


NET = register(
    Rule(
        "BJ707",
        "net-result-differs",
        "Net result of a box differs from what its wagers were owed",
        blackjack_nets.BOX_PARAGRAPH,
        "error",
        "blackjack",
        "A box settled by its net result (format 1.3 `settle_net`, summed per scope: the "
        "finest of seat, hand, bet and player_id its rows give) whose net is not the sum of "
        "what its wagers were owed: the main wager and each split hand won at 1:1, a natural "
        "at the posted blackjack odds within the payout limit, pushed, collected or "
        "surrendered for half; a double as its hand; insurance at the posted odds or "
        "collected; a dead hand's wagers returned. The amount is the difference (positive: "
        "the patron was underpaid). Where one wager alone, given another outcome (lost, "
        "pushed, won at 1:1 or at the blackjack odds, surrendered, insurance won), makes the "
        "net, the finding cites that wager's paragraph; else (a)(2)(v). A wager whose amount "
        "an export presumed (a double or split at the main wager, insurance at half) may be "
        "any amount the rules allow: a double up to the main wager, a split equal to it, "
        "insurance up to half of it; the net passes where one of them gives it, and the "
        "amount is the least difference. Such boxes are not judged by the rules of single "
        "settlements (BJ303, BJ304, BJ403-BJ405, BJ602, BJ701-BJ706, BJ804, BJ805).",
        "Box 2 wagers $25 and doubles for $25; the hand's 20 beats the dealer's 18; the box "
        "is settled by a net of +$25.",
        "Box 2 wagers $25 and doubles for $25; the hand's 20 beats the dealer's 18; the box "
        "is settled by a net of +$50.",
        check=net_differs,
        needs=("cards", "decisions", "wagers"),
        also=tuple(p for p in dict.fromkeys(blackjack_nets.PARAGRAPHS.values())
                   if p != blackjack_nets.BOX_PARAGRAPH),
        citation_per_finding=True,
    )
)
