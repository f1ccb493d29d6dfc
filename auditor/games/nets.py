"""Boxes settled by their net result (hand-history-v1 1.3, `settle_net`), for both games.

A net settles the wagers in its scope, the finest of seat, hand, bet and player_id its
rows give (in baccarat, where a wager is a seat's bet: seat and bet); the rows of one
scope in a round are summed. The rules that judge one settlement leave those wagers to
the net rules (BJ707, BA509), which compare the net with what the replay owes: the sum
over the scope's wagers of what each game's settlement frames say each is owed.

`scopes(ctx)`: one row per round and scope, numbered `sid` (0, 1, ... in round and seat
order): rid, table_id, shoe_id, round, seat, hand, bet, player_id (null where the rows
leave them out), net_cents (the rows summed), seq (the first row), rows.

`scope_ids(ctx, frame)`: the sid of the scope that covers each row of `frame` (rid,
seat, and hand, bet, player_id where it has them), null for a row no net covers (one
scope at most: two that share a wager withhold the round, ingest.nets).

`judge(scopes, wagers, alternatives, words)`: each scope against what its wagers were owed.
Each game gives, per wager in a scope (`wagers`): sid, w (a number of its own), judged
(its outcome is known: else the scope is not judged), low and high (the least and most
net the rules owe it: a part cent may round either way), step (0 for an amount recorded;
for one presumed, the step its net moves by as its amount moves by a cent over the
amounts the rules allow, low to high) and paragraph (the paragraph of its owed outcome);
per wager the other outcomes the rules allow it (`alternatives`: w, low, high, label:
"lost", "won at 3:2", ...); and `words`, which gives the wagers `w` of the scopes that
differ their words: w, name (the wager: "hand 1 main wager of $25.00") and text (the
wager and what it was owed).

A scope passes where its net is one the wagers can be owed: between the sums of low and
high, and (with presumed wagers) on the steps their amounts allow: the least `step` of
its presumed wagers where the others' steps are its multiples (else a cent), less the
widths of the recorded wagers' part cents. Elsewhere the finding's amount is the least
difference from such a net (positive: the patron was underpaid; an even split goes to
the patron). The difference is explained by one wager where that wager alone, given one
of its other outcomes, makes the net one the scope could be owed (the others anywhere in
their range): it cites that wager's paragraph, and where none or more than one does,
the rule's own (the box's payout paragraph).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from ..audit_context import GameContext
from ..ingest import nets as ingest_nets
from ..ingest import vocabulary as v
from ..series import placed

SCOPE = ["rid", "seat", "hand", "bet", "player_id"]
ROUND = ["table_id", "shoe_id", "round"]
SCOPE_SCHEMA = {
    "sid": pl.Int64, "rid": pl.Int64, "table_id": pl.String, "shoe_id": pl.String,
    "round": pl.Int64, "seat": pl.Int64, "hand": pl.Int64, "bet": pl.String,
    "player_id": pl.String, "net_cents": pl.Int64, "seq": pl.Int64, "rows": pl.Int64,
}
WAGERS = {"sid": pl.Int64, "w": pl.Int64, "judged": pl.Boolean, "low": pl.Int64,
          "high": pl.Int64, "step": pl.Int64, "paragraph": pl.String}
WORDS = {"w": pl.Int64, "name": pl.String, "text": pl.String}
ALTERNATIVES = {"w": pl.Int64, "low": pl.Int64, "high": pl.Int64, "label": pl.String}


def signed(cents: pl.Expr) -> pl.Expr:
    """"+$25.00", "-$12.50", "$0.00": a net in dollars with its sign."""
    magnitude = cents.abs()
    text = pl.format("${}.{}", magnitude // 100, (magnitude % 100).cast(pl.String).str.zfill(2))
    return (pl.when(cents > 0).then(pl.lit("+")).when(cents < 0).then(pl.lit("-"))
            .otherwise(pl.lit("")) + text)


def _build_scopes(ctx: GameContext) -> pl.DataFrame:
    rows = (
        ctx.events.lazy()
        .filter((pl.col("event") == v.NET_EVENT) & (pl.col("round") > 0))
        .select("rid", *ROUND, "seq", "seat", "hand", pl.col("bet").cast(pl.String),
                "player_id", "amount_cents")
        .collect()
    )
    if rows.is_empty():
        return pl.DataFrame(schema=SCOPE_SCHEMA)
    if ctx.game == "baccarat":  # a seat's bet is the wager: hand and patron narrow nothing
        rows = rows.with_columns(pl.lit(None, pl.Int64).alias("hand"),
                                 pl.lit(None, pl.String).alias("player_id"))
    return (
        rows.group_by(SCOPE, maintain_order=True)
        .agg(pl.col(ROUND).first(), pl.col("amount_cents").sum().alias("net_cents"),
             pl.col("seq").min(), pl.len().alias("rows"))
        .sort("rid", "seat", "seq")
        .with_row_index("sid")
        .cast(SCOPE_SCHEMA)
        .select(list(SCOPE_SCHEMA))
    )


def scopes(ctx: GameContext) -> pl.DataFrame:
    """The nets' scopes of the rounds (module docstring)."""
    return ctx.derived("nets.scopes", _build_scopes)


def scope_ids(ctx: GameContext, frame: pl.DataFrame) -> pl.Series:
    """The sid of the scope covering each row of `frame` (module docstring)."""
    found = scopes(ctx)
    if found.is_empty() or frame.is_empty():
        return pl.Series("net_sid", [], dtype=pl.Int64).extend_constant(None, frame.height)

    def column(name: str, dtype: pl.DataType) -> pl.Expr:
        return (pl.col(name).cast(dtype) if name in frame.columns
                else pl.lit(None, dtype)).alias(name)

    rows = frame.select(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("_i"), "rid", "seat",
        column("hand", pl.Int64), column("bet", pl.String), column("player_id", pl.String),
        pl.lit("wager").alias("event"),
    ).filter(pl.col("rid").is_in(found.get_column("rid").unique().implode()))
    nets = found.select("sid", "rid", "seat", *(pl.col(c).alias(c + "_net")
                                                for c in ("hand", "bet", "player_id")))
    hit = (rows.join(nets, on=["rid", "seat"]).filter(ingest_nets.covers())
           .group_by("_i").agg(pl.col("sid").first()))
    return placed(hit["sid"].alias("net_sid"), hit["_i"], frame.height)


def judge(found: pl.DataFrame, wagers: pl.DataFrame, alternatives: pl.DataFrame,
          words: Callable[[pl.Series], pl.DataFrame]) -> pl.DataFrame:
    """The scopes of `found` (scopes) that can be judged, each against the nets its wagers
    can be owed (module docstring): the scope's columns, owed_low, owed_high, amount_cents
    (0: the net passes), owed_text (each wager and what it was owed; null where the net
    passes), explained (one
    wager explains the difference), paragraph, wager_text and alternative (that wager,
    and the outcome that gives the net)."""
    wagers = wagers.cast(WAGERS).select(list(WAGERS))
    step = pl.col("step")
    steps = step.filter(step > 0)
    least = steps.min()
    per = wagers.group_by("sid").agg(
        pl.col("judged").all(),
        pl.col("low").sum().alias("owed_low"),
        pl.col("high").sum().alias("owed_high"),
        (pl.col("high") - pl.col("low")).filter(step == 0).sum().alias("width"),
        # the presumed wagers' least step, where the others' are its multiples
        pl.when(least.is_not_null() & (steps % least == 0).all()).then(least)
        .otherwise(pl.lit(1, pl.Int64)).alias("g"),
    )
    scored = found.join(per, on="sid", how="left").with_columns(
        pl.col("judged").fill_null(True),
        pl.col("owed_low", "owed_high", "width").fill_null(0),
        pl.col("g").fill_null(1),
    ).filter("judged")
    net, low, high, g = (pl.col(c) for c in ("net_cents", "owed_low", "owed_high", "g"))
    off = ((net - low) % g + g) % g  # how far the net lies past a step of the owed nets
    width = pl.col("width")
    amount = (
        pl.when(net < low).then(low - net)
        .when(net > high).then(high - net)
        .when(off <= width).then(pl.lit(0, pl.Int64))
        # between two steps: the nearer owed net (above it: the patron underpaid)
        .when(g - off <= off - width).then(g - off)
        .otherwise(width - off)
    )
    scored = scored.with_columns(amount.alias("amount_cents"))
    wrong = scored.filter(pl.col("amount_cents") != 0)
    # words for the wagers of the scopes that differ only (most pass)
    wagers = wagers.filter(pl.col("sid").is_in(wrong.get_column("sid").implode()))
    wagers = wagers.join(words(wagers.get_column("w")).cast(WORDS), on="w", how="left")
    texts = (wagers.sort("sid", "w").group_by("sid", maintain_order=True)
             .agg(pl.col("text").str.join("; ").alias("owed_text")))
    wrong = _explained(
        wrong.join(texts, on="sid", how="left").with_columns(pl.col("owed_text").fill_null("")),
        wagers, alternatives.cast(ALTERNATIVES))
    right = scored.filter(pl.col("amount_cents") == 0).with_columns(
        pl.lit(False).alias("explained"), *(pl.lit(None, pl.String).alias(c) for c in
                                            ("owed_text", "paragraph", "wager_text",
                                             "alternative")))
    return pl.concat([wrong, right], how="diagonal").sort("sid")


def _explained(wrong: pl.DataFrame, wagers: pl.DataFrame,
               alternatives: pl.DataFrame) -> pl.DataFrame:
    """`wrong` with the one wager (if one) whose other outcome alone gives the net."""
    if wrong.is_empty():
        return wrong.with_columns(
            pl.lit(False).alias("explained"), pl.lit(None, pl.String).alias("paragraph"),
            pl.lit(None, pl.String).alias("wager_text"),
            pl.lit(None, pl.String).alias("alternative"))
    mine = wagers.join(wrong.select("sid", "net_cents", "owed_low", "owed_high"), on="sid")
    tried = mine.join(alternatives.rename({"low": "alt_low", "high": "alt_high"}), on="w")
    # the others anywhere in their range, this wager at the other outcome
    least = pl.col("owed_low") - pl.col("low") + pl.col("alt_low")
    most = pl.col("owed_high") - pl.col("high") + pl.col("alt_high")
    fits = tried.filter(pl.col("net_cents").is_between(least, most)).sort("sid", "w")
    per = fits.group_by("sid", maintain_order=True).agg(
        pl.col("w").n_unique().alias("_wagers"),
        pl.col("paragraph").first(),
        pl.col("name").first().alias("wager_text"),
        pl.col("label").first().alias("alternative"),
    )
    one = pl.col("_wagers") == 1
    return wrong.join(per, on="sid", how="left").with_columns(
        one.fill_null(False).alias("explained"),
        *(pl.when(one).then(pl.col(c)).alias(c)
          for c in ("paragraph", "wager_text", "alternative")),
    ).drop("_wagers")


def check_rows(judged: pl.DataFrame, noun: str) -> pl.DataFrame:
    """The net rules' check rows from `judge`'s scopes that differ: at the scope's first
    net row, its
    difference as the amount, citing the explaining wager's paragraph where one does (null:
    the rule's own). `noun`: "Box" or "Seat"."""
    scope = ingest_nets.scope_text(noun=pl.lit(noun))
    low, high = pl.col("owed_low"), pl.col("owed_high")
    owed = (pl.when(low == high).then(signed(low))
            .otherwise(pl.format("between {} and {}", signed(low), signed(high))))
    presumed = pl.when(low == high).then(pl.lit("")).otherwise(
        pl.lit(" for the amounts the rules allow its presumed wagers"))
    none = pl.col("owed_text") == ""
    what = (pl.when(none).then(pl.lit("it holds no wager in the round"))
            .otherwise(pl.format("its wagers were owed {}{} ({})", owed, presumed,
                                 "owed_text")))
    why = (
        pl.when(pl.col("explained"))
        .then(pl.format("the difference is explained by the {} alone, settled as though "
                        "it had {}", "wager_text", "alternative"))
        .when(none).then(pl.lit("nothing was owed"))
        .otherwise(pl.lit("no one wager's outcome explains the difference"))
    )
    return judged.filter(pl.col("amount_cents") != 0).select(
        *ROUND,
        "seq",
        pl.format("{} was settled by a net of {} at seq {}, where {}; {}.", scope,
                  signed(pl.col("net_cents")), "seq", what, why).alias("message"),
        pl.format("net {}", owed).alias("expected"),
        pl.format("net {}", signed(pl.col("net_cents"))).alias("observed"),
        "amount_cents",
        pl.when(pl.col("explained")).then(pl.col("paragraph")).alias("citation"),
    )
