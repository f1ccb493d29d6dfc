"""Net results (hand-history-v1 1.3, `settle_net`): where a net's row stands in the log.

A `settle_net` settles the wagers in its scope: the finest of seat, hand, bet and
player_id its row gives (a column it leaves empty covers every value). It replaces the
single settlements (collect, pay, push, vig) of those wagers, so that

- a round that settles one wager both ways (a net and a single settlement in one scope,
  or two nets of different scopes that share a wager) cannot be judged: IN020 at the
  later of the two rows, and the round is withheld, the finding saying why (no IN014);
- a net stands after the dealer's play (blackjack) or the result (baccarat): one before a
  card, action or result row of its round is IN021, a warning at the net. It is recorded
  before the outcome it settles was known; its amount is still judged against the round
  as replayed (the round is not withheld: the replay does not read the net's place).

A scope's vig is the seat's banker wager's: a vig row is in a net's scope where the net
gives no bet or bet banker, whatever its hand and patron. In baccarat, where a wager is a
seat's bet, a net's hand and player_id narrow nothing.
"""

from __future__ import annotations

import polars as pl

from . import vocabulary as v
from .problems import PROBLEM_SCHEMA

IN_SETTLED_BOTH_WAYS = "IN020"
IN_NET_BEFORE_PLAY = "IN021"
# findings on a row that do not withhold its round
NOT_WITHHOLDING = (IN_NET_BEFORE_PLAY,)

# rows whose place after a net shows the net came before the round's play was over
_PLAY = ("card", "action", "result")
_ROW = [v.ROW, v.FILE_ID, v.LINE]


def covers(net: str = "_net") -> pl.Expr:
    """Whether the row (columns seat, hand, bet, player_id, event) is in the scope of the
    net whose columns carry the suffix `net` (joined on round and seat)."""
    hand, bet, player = (pl.col(c + net) for c in ("hand", "bet", "player_id"))
    vig = pl.col("event") == "vig"
    row_bet = pl.when(vig).then(pl.lit("banker")).otherwise(pl.col("bet").cast(pl.String))
    return (
        (hand.is_null() | pl.col("hand").is_null() | (hand == pl.col("hand")))
        & (bet.is_null() | (bet.cast(pl.String) == row_bet))
        & (player.is_null() | vig | (player == pl.col("player_id")))
    ).fill_null(False)


def overlap(net: str = "_net") -> pl.Expr:
    """Whether two nets' scopes (one with the suffix `net`) share a wager: each column
    empty in one of them, or equal."""
    return pl.all_horizontal(
        (pl.col(c).is_null() | pl.col(c + net).is_null()
         | (pl.col(c).cast(pl.String) == pl.col(c + net).cast(pl.String)))
        for c in ("hand", "bet", "player_id")
    ).fill_null(False)


def same_scope(net: str = "_net") -> pl.Expr:
    """Whether two nets have one scope (their rows are summed)."""
    return pl.all_horizontal(
        pl.col(c).cast(pl.String).eq_missing(pl.col(c + net).cast(pl.String))
        for c in ("hand", "bet", "player_id")
    )


def net_problems(ordered: pl.DataFrame) -> pl.DataFrame:
    """IN020 and IN021 (module docstring) over the rows sorted by table and seq, with
    `rid`. A log without any net costs one look at its events."""
    is_net = pl.col("event") == v.NET_EVENT
    if not ordered.select(is_net.any()).item():
        return pl.DataFrame(schema=PROBLEM_SCHEMA)
    columns = [*_ROW, "rid", "game", "round", "seq", "event", "seat", "hand", "bet",
               "player_id"]
    nets = ordered.filter(is_net & pl.col("rid").is_not_null()).select(columns).with_columns(
        *_plain())
    rids = nets.get_column("rid").unique().implode()
    around = (
        ordered.lazy()
        .filter(pl.col("rid").is_in(rids)
                & pl.col("event").is_in([*v.SINGLE_SETTLEMENTS, *_PLAY]))
        .select(columns)
        .collect()
        .with_columns(*_plain())
    )
    return pl.concat([_both_ways(nets, around), _before_play(nets, around)]).cast(
        PROBLEM_SCHEMA)


def _plain() -> list[pl.Expr]:
    """The columns the checks compare, as text; in baccarat, where a wager is a seat's
    bet, a row's hand and patron narrow nothing (left empty)."""
    baccarat = pl.col("game") == "baccarat"
    return [
        pl.col("game", "event", "bet").cast(pl.String),
        pl.when(~baccarat).then(pl.col("hand")).alias("hand"),
        pl.when(~baccarat).then(pl.col("player_id")).alias("player_id"),
    ]


def _later(pairs: pl.DataFrame, what: pl.Expr, observed: pl.Expr) -> pl.DataFrame:
    """IN020 at the later row of each pair: a row (its columns as they are) and a net (its
    columns with the suffix _net) that settle one wager."""
    later = pl.col("seq") > pl.col("seq_net")

    def at(column: str) -> pl.Expr:
        return pl.when(later).then(pl.col(column)).otherwise(pl.col(column + "_net"))

    message = pl.format(
        "Round {} settles a wager of {} both by a settle_net at seq {} and by {} at seq {}: "
        "a net replaces the single settlements of the wagers in its scope, so the round is "
        "withheld and not judged.",
        "round", scope_text("_net"), "seq_net", what, "seq",
    )
    return pairs.select(
        pl.lit(IN_SETTLED_BOTH_WAYS).alias("rule_id"),
        *(at(c).alias(c) for c in _ROW),
        pl.lit("event").alias("field"),
        observed.alias("observed"),
        pl.lit("a settle_net or single settlements for a wager, not both").alias("expected"),
        message.alias("message"),
    ).cast(PROBLEM_SCHEMA)


def scope_text(suffix: str = "", noun: pl.Expr | None = None) -> pl.Expr:
    """"box 3", "box 3 hand 2 main wager of patron P9", "seat 4 banker wager": a net's
    scope in words (its columns with `suffix`; `noun` by default "seat" on a baccarat
    row, by its `game`, else "box")."""
    def col(name: str) -> pl.Expr:
        return pl.col(name + suffix)

    if noun is None:
        noun = pl.when(pl.col("game") == "baccarat").then(pl.lit("seat")).otherwise(
            pl.lit("box"))
    return pl.concat_str(
        pl.format("{} {}", noun, col("seat")),
        pl.when(col("hand").is_not_null()).then(pl.format(" hand {}", col("hand")))
        .otherwise(pl.lit("")),
        pl.when(col("bet").is_not_null()).then(pl.format(" {} wager", col("bet")))
        .otherwise(pl.lit("")),
        pl.when(col("player_id").is_not_null())
        .then(pl.format(" of patron {}", col("player_id"))).otherwise(pl.lit("")),
    )


def _both_ways(nets: pl.DataFrame, around: pl.DataFrame) -> pl.DataFrame:
    """A net and a single settlement in its scope; two nets of scopes that overlap."""
    singles = around.filter(pl.col("event").is_in(v.SINGLE_SETTLEMENTS))
    single = singles.join(nets, on=["rid", "seat"], suffix="_net").with_columns(
        pl.col("seat").alias("seat_net")).filter(covers())
    commission = pl.col("event") == "vig"
    single = _later(
        single,
        pl.format("a {} of {}", "event",
                  pl.when(commission).then(pl.lit("the banker wager's commission"))
                  .otherwise(pl.format("its {} wager", "bet"))),
        pl.format("settle_net at seq {}, {} at seq {}", "seq_net", "event", "seq"),
    )
    twice = nets.join(nets, on=["rid", "seat"], suffix="_net").with_columns(
        pl.col("seat").alias("seat_net")).filter(
        (pl.col("seq") > pl.col("seq_net")) & overlap() & ~same_scope())
    twice = _later(
        twice,
        pl.format("its settle_net of {}, whose scope shares that wager,", scope_text()),
        pl.format("settle_net at seq {} and at seq {}", "seq_net", "seq"),
    )
    return pl.concat([single, twice])


def _before_play(nets: pl.DataFrame, around: pl.DataFrame) -> pl.DataFrame:
    """A net with a card, action or result row of its round after it: IN021 at the net."""
    play = around.filter(pl.col("event").is_in(_PLAY)).group_by("rid").agg(
        pl.col("seq").max().alias("last_play"),
        pl.col("event").sort_by("seq").last().alias("last_event"))
    early = nets.join(play, on="rid", how="inner").filter(pl.col("last_play") > pl.col("seq"))
    return early.select(
        pl.lit(IN_NET_BEFORE_PLAY).alias("rule_id"),
        *_ROW,
        pl.lit("seq").alias("field"),
        pl.format("settle_net at seq {}, {} at seq {}", "seq", "last_event", "last_play")
        .alias("observed"),
        pl.lit("a settle_net after the dealer's play (blackjack) or the result (baccarat)")
        .alias("expected"),
        pl.format(
            "The settle_net of {} at seq {} comes before the {} at seq {} of round {}: a net "
            "is recorded once the round's outcome is known; its amount is judged against "
            "the round as replayed.",
            scope_text(), "seq", "last_event", "last_play", "round",
        ).alias("message"),
    ).cast(PROBLEM_SCHEMA)
