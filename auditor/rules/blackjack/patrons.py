"""Several patrons on one box (h).

A co-patron's rows carry `player_id`; the seated player's have none. BJ601
counts the patrons wagering on a box, BJ602 and BJ603 what a co-patron may do
after the deciding player's split or double, BJ604 who called the decisions (an
`action` row's `player_id`, hand-history-v1 1.2). The split with the settlement
rules: a co-patron's settlement row on a split hand the co-patron did not cover
is BJ602's (BJ706 leaves it); a co-patron's double wager placed alone is
BJ603's, and is otherwise settled with the hand like any other. Void rounds are
not judged.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.blackjack import final_hands, money, replay
from ..registry import Rule, register
from .settlement import patron_split_phantom

BOX = ["rid", "seat"]
HAND = ["rid", "seat", "hand"]


def _live_wagers(ctx: GameContext) -> pl.DataFrame:
    # void rounds are few: a lookup in their ids costs less than an anti-join
    void = replay.rounds(ctx).filter(pl.col("void"))["rid"]
    return replay.wagers(ctx).filter(~pl.col("rid").is_in(void.implode()))


def _patron(player_id: pl.Expr) -> pl.Expr:
    return (
        pl.when(player_id.is_null())
        .then(pl.lit("the seated player"))
        .otherwise(pl.format("patron {}", player_id))
    )


# --- BJ601 (h)(1): one to three people on a box -------------------------------------------


def _crowded(wagers: pl.DataFrame, most: int) -> pl.DataFrame:
    """The boxes (BOX) of `wagers` with `most` or more co-patrons (player_ids)."""
    co_patrons = wagers.lazy().filter(pl.col("player_id").is_not_null())
    boxes = co_patrons.select(*BOX, "player_id").unique().group_by(BOX).len()
    return boxes.filter(pl.col("len") >= most).select(BOX).collect(engine="in-memory")


def too_many_patrons(ctx: GameContext) -> pl.DataFrame:
    most = int(ctx.params["max_patrons_per_box"])
    wagers = _live_wagers(ctx)
    if most >= 1:
        # the seated player is one patron at most: only the boxes where `most` co-patrons
        # or more wagered can pass the limit, and only they are counted
        wagers = wagers.join(_crowded(wagers, most), on=BOX, how="semi")
    # each patron's first wager on the box, in the order they joined it
    joined = (
        wagers.group_by(*BOX, "player_id")
        .agg(pl.col("table_id", "shoe_id", "round").first(), pl.col("seq").min())
        .with_columns(
            pl.col("seq").rank("ordinal").over(BOX).alias("nth"),
            pl.len().over(BOX).alias("patrons"),
        )
    )
    over = joined.filter(pl.col("nth") == most + 1)
    return over.select(
        *money.ROUND,
        "seq",
        pl.format(
            "{} patrons wagered on box {}; {} became patron {} at seq {}, where at most {} "
            "may wager on one box.",
            "patrons",
            "seat",
            _patron(pl.col("player_id")),
            "nth",
            "seq",
            pl.lit(most),
        ).alias("message"),
        pl.lit(f"at most {most} patrons on a box").alias("expected"),
        pl.format("{} patrons", "patrons").alias("observed"),
    )


# --- BJ602 (h)(5): a split not covered leaves the co-patron on the first hand ---------------


def uncovered_split_settled(ctx: GameContext) -> pl.DataFrame:
    rows = money.settlements(ctx).filter(
        ~pl.col("void") & ~pl.col("matched") & patron_split_phantom()
    )
    verb = (
        pl.col("event")
        .cast(pl.String)
        .replace_strict(money.VERB, default=pl.col("event").cast(pl.String))
    )
    row = pl.format("{} {}", verb, money.dollars(pl.col("amount_cents")))
    return rows.select(
        *money.ROUND,
        "seq",
        pl.format(
            "Patron {} was {} on box {} hand {} ({} wager) without a wager on that hand; a "
            "co-patron who does not cover a split has a wager on the first hand only.",
            "player_id",
            row,
            "seat",
            "hand",
            "bet",
        ).alias("message"),
        pl.format("no settlement for patron {} on hand {}", "player_id", "hand").alias("expected"),
        row.alias("observed"),
        # the row moved money on no wager: a pay or push overpaid, a collect overcharged
        (-pl.col("row_net")).alias("amount_cents"),
    )


# --- BJ603 (h)(4): a co-patron doubles only with the deciding player ---------------------


def _deciders(wagers: pl.DataFrame) -> pl.DataFrame:
    """Who calls the box's decisions (h)(2): the seated player (no player_id), or without
    one the patron with the highest initial wager (the earliest on a tie)."""
    mains = wagers.filter((pl.col("bet") == "main") & (pl.col("hand") == 1))
    return (
        mains.group_by(*BOX, "player_id")
        .agg(pl.col("amount_cents").sum(), pl.col("seq").min())
        .sort(
            pl.col("player_id").is_not_null(),
            pl.col("amount_cents"),
            pl.col("seq"),
            descending=[False, True, False],
        )
        .group_by(BOX, maintain_order=True)
        .agg(pl.col("player_id").first().alias("decider"))
    )


def co_patron_doubled_alone(ctx: GameContext) -> pl.DataFrame:
    wagers = _live_wagers(ctx)
    doubled = final_hands.hand_facts(ctx).filter("doubled").select(*HAND, "doubled")
    co_doubles = wagers.filter((pl.col("bet") == "double") & pl.col("player_id").is_not_null())
    # the deciders of the boxes where a co-patron doubled (a box's decider is read from
    # its own wagers only)
    boxes = wagers.join(co_doubles.select(BOX).unique(), on=BOX, how="semi")
    alone = (
        co_doubles.join(_deciders(boxes), on=BOX, how="left")
        .join(doubled, on=HAND, how="left")
        .filter(
            pl.col("doubled").is_null()
            & (pl.col("decider").is_null() | (pl.col("player_id") != pl.col("decider")))
        )
    )
    return alone.select(
        *money.ROUND,
        "seq",
        pl.format(
            "Patron {} placed a double wager of {} on box {} hand {}, where the player calling "
            "the decisions did not double that hand.",
            "player_id",
            money.dollars(pl.col("amount_cents")),
            "seat",
            "hand",
        ).alias("message"),
        pl.lit("a co-patron doubles only when the deciding player doubles").alias("expected"),
        pl.lit("co-patron double without a double decision").alias("observed"),
    )


# --- BJ604 (h)(2): the seated player, or else the highest wager, calls the decisions -------


def _called_by_patrons(ctx: GameContext) -> pl.DataFrame:
    """The action rows that name the patron who called them (a `player_id`), of rounds not
    void: few, and none in a log of 1.1 or before."""
    called = (pl.col("event") == "action") & pl.col("player_id").is_not_null()
    calls = replay.in_rounds(
        ctx, called, "rid", *money.ROUND, "seq", "seat", "hand", "action", "player_id"
    ).filter(pl.col("seat").is_not_null())
    return replay.live(ctx, calls)


def _boxes_of(wagers: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per box (BOX) of `wagers`: patrons (the seated player, with no player_id, counted
    once), seated (a wager without player_id), and the patrons whose main wager on hand 1
    is the highest on the box among those with an id (`deciders`, a list) and that
    highest amount (`top`); and per patron with an id on a box, that patron's main wager
    on hand 1 (`caller`, `caller_cents`)."""
    boxes = wagers.group_by(BOX).agg(
        pl.col("player_id").n_unique().alias("patrons"),  # null (the seated player) counts
        pl.col("player_id").is_null().any().alias("seated"),
    )
    mains = (
        wagers.filter((pl.col("bet") == "main") & (pl.col("hand") == 1))
        .group_by(*BOX, "player_id")
        .agg(pl.col("amount_cents").sum())
    )
    highest = pl.col("amount_cents") == pl.col("amount_cents").max().over(BOX)
    deciders = (
        mains.filter(highest & pl.col("player_id").is_not_null())
        .sort("player_id")
        .group_by(BOX)
        .agg(pl.col("player_id").alias("deciders"), pl.col("amount_cents").first().alias("top"))
    )
    stakes = mains.select(*BOX, pl.col("player_id").alias("caller"),
                          pl.col("amount_cents").alias("caller_cents"))
    return boxes.join(deciders, on=BOX, how="left"), stakes


def decision_called_by_wrong_patron(ctx: GameContext) -> pl.DataFrame:
    calls = _called_by_patrons(ctx)
    wagers = _live_wagers(ctx).filter(pl.col("rid").is_in(calls["rid"].unique().implode()))
    boxes, stakes = _boxes_of(wagers)
    judged = calls.join(boxes.filter(pl.col("patrons") >= 2), on=BOX, how="inner")
    # a seated player decides (any other patron's call is the breach); with none, a
    # patron of the highest main wager on hand 1 (any of those tied)
    wrong = judged.filter(
        pl.col("seated")
        | (pl.col("deciders").is_not_null()
           & ~pl.col("player_id").is_in(pl.col("deciders")))
    ).join(
        stakes, left_on=[*BOX, "player_id"], right_on=[*BOX, "caller"], how="left"
    )
    deciders = pl.col("deciders").list.join(", ")
    caller_stake = (
        pl.when(pl.col("caller_cents").is_not_null())
        .then(pl.format("{} wagered {}", "player_id", money.dollars(pl.col("caller_cents"))))
        .otherwise(pl.format("{} has no main wager on hand 1", "player_id"))
    )
    message = (
        pl.when(pl.col("seated"))
        .then(
            pl.format(
                "Patron {} called the {} on box {} hand {} at seq {}, where the player seated "
                "at the box (whose rows carry no player_id) has the exclusive right to call "
                "the decisions when several patrons wager on it.",
                "player_id", "action", "seat", "hand", "seq",
            )
        )
        .otherwise(
            pl.format(
                "Patron {} called the {} on box {} hand {} at seq {}, where with no player "
                "seated the patron with the highest wager on the box, {} ({}; {}), has the "
                "right to call the decisions.",
                "player_id", "action", "seat", "hand", "seq", deciders,
                money.dollars(pl.col("top")), caller_stake,
            )
        )
    )
    return wrong.select(
        *money.ROUND,
        "seq",
        message.alias("message"),
        pl.when(pl.col("seated"))
        .then(pl.lit("decisions called by the seated player"))
        .otherwise(pl.format("decisions called by patron {}", deciders))
        .alias("expected"),
        pl.format("{} called by patron {}", "action", "player_id").alias("observed"),
    )


MANY = register(
    Rule(
        "BJ601",
        "too-many-patrons-on-box",
        "More than three patrons wagering on a box",
        "9 NYCRR 5324.10(h)(1)",
        "error",
        "blackjack",
        "More people wagering on one box in a round than (h)(1) allows (three): the seated "
        "player and each distinct player_id with a wager row on the box. One finding per box "
        "and round, at the first wager of the first patron over the limit.",
        "Box 2 holds wagers of the seated player and patrons P1, P2 and P3.",
        "Box 2 holds wagers of the seated player and patrons P1 and P2.",
        check=too_many_patrons,
        needs=("wagers",),
    )
)
UNCOVERED = register(
    Rule(
        "BJ602",
        "uncovered-split-settled",
        "Co-patron settled on a split hand not covered",
        "9 NYCRR 5324.10(h)(5)",
        "error",
        "blackjack",
        "When the deciding player splits, a co-patron who places no wager on a split hand has "
        "a wager on the first hand only (h)(5): a collect, pay or push for that co-patron on "
        "a later hand of the box without a wager of theirs on it is reported at the row "
        "(amount: what the row moved; positive for a collect). Every other settlement row "
        "without a wager is BJ706's.",
        "Box 4 splits 8s; patron P7 does not cover; P7 is paid $25 on hand 2.",
        "Box 4 splits 8s; patron P7 does not cover; P7 is settled on hand 1 only.",
        check=uncovered_split_settled,
        needs=("decisions", "wagers", "single_settlements"),
    )
)
CALLED_WRONG = register(
    Rule(
        "BJ604",
        "decision-called-by-wrong-patron",
        "Decision called by a patron without the right to call it",
        "9 NYCRR 5324.10(h)(2)",
        "error",
        "blackjack",
        "Judged on boxes wagered on by two or more patrons (the seated player, whose rows "
        "carry no player_id, and each player_id): an `action` (a `refuse` too) carrying a "
        "player_id names the patron who called it. Where a wager on the box has no "
        "player_id, someone is seated and has the exclusive right: an action carrying a "
        "player_id is reported. Where every wager carries one, no one is seated and the "
        "highest wager calls: an action must carry the id of a patron whose main wager on "
        "hand 1 (a patron's rows summed) is the highest on the box, any of those tied; an "
        "action without player_id there is not judged. Reported at the action. Void rounds "
        "are not judged.",
        "Box 3: the seated player wagers $25, patron P2 $10; an action names P2.",
        "Box 3: patrons P1 ($50) and P2 ($10) wager and no one is seated; the actions name "
        "P1.",
        check=decision_called_by_wrong_patron,
        needs=("decisions", "deciders", "wagers"),
    )
)
DOUBLED_ALONE = register(
    Rule(
        "BJ603",
        "co-patron-doubled-alone",
        "Co-patron doubled when the deciding player did not",
        "9 NYCRR 5324.10(h)(4)",
        "error",
        "blackjack",
        "A co-patron's double wager on a hand where the player calling the decisions (the "
        "seated player, or without one the highest initial wager, (h)(2)) took no double "
        "action: (h)(4) lets the others double only when that player does. Reported at the "
        "double wager; it is settled with the hand as any other wager.",
        "Box 1's seated player hits 13; patron P2 places a double wager.",
        "Box 1's seated player doubles on 11; patron P2 doubles too.",
        check=co_patron_doubled_alone,
        needs=("decisions", "wagers"),
    )
)
