"""Cards and shoe: deck minimum, card counts, point counts, burn, cover card, void rounds."""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games import common
from ...games.baccarat import irregularities, replay, settlement
from ...games.baccarat.shoes import SHOE_KEY, shoes
from ...ingest import cards as card_codes
from ..registry import Rule, register

MONEY = ("wager", "push", "pay", "collect")


def _dollars(cents: pl.Expr) -> pl.Expr:
    """$25.00 from 2500 cents, for messages."""
    whole = (cents.abs() // 100).cast(pl.String)
    part = (cents.abs() % 100).cast(pl.String).str.zfill(2)
    return pl.format(
        "{}${}.{}", pl.when(cents < 0).then(pl.lit("-")).otherwise(pl.lit("")), whole, part
    )


# --- BA101 (a)(4): at least six decks


def short_shoes(ctx: GameContext) -> pl.DataFrame:
    least = int(ctx.params["min_decks"])
    return (
        shoes(ctx)
        .filter(pl.col("decks") < least)
        .select(
            *SHOE_KEY,
            pl.col("shuffle_seq").alias("seq"),
            pl.format(
                "Shoe {} was shuffled with {}; (a)(4) requires at least {}.",
                "shoe_id",
                common.decks_text(pl.col("decks")),
                pl.lit(least),
            ).alias("message"),
            pl.lit(f"at least {least} decks").alias("expected"),
            common.decks_text(pl.col("decks")).alias("observed"),
        )
    )


SHOE_BELOW_MIN_DECKS = register(
    Rule(
        "BA101",
        "shoe-below-minimum-decks",
        "Shoe holds fewer than six decks",
        "9 NYCRR 5324.20(a)(4)",
        "error",
        "baccarat",
        "A shuffle whose `decks` is below the regulation's minimum (six decks, `min_decks`).",
        '{"event":"shuffle","decks":5}',
        '{"event":"shuffle","decks":8}',
        check=short_shoes,
        needs=("shuffles",),
    )
)


# --- BA102 (a)(4): no card more often than the decks hold


CARD_SPAN = 2**32


def _shoe_numbers(ctx: GameContext) -> pl.DataFrame:
    """rid, table_id, shoe_id and `shoe`: one integer per (table_id, shoe_id)."""
    return replay.spans(ctx).select(
        "rid", *SHOE_KEY, pl.struct(SHOE_KEY).rank("dense").cast(pl.Int64).alias("shoe")
    )


def _card_codes(cards: pl.Series) -> pl.Series:
    """One integer per distinct card, below 2**32: where every card is two bytes
    ("AS", "TD"), its two bytes read as one number, several times faster than looking
    each up in a categorical's table (its code there, for any other)."""
    length = cards.str.len_bytes()
    if length.min() == length.max() == 2:
        return cards.cast(pl.Binary).bin.reinterpret(dtype=pl.UInt16).cast(pl.Int64)
    return cards.cast(pl.Categorical).to_physical().cast(pl.Int64)


def _cards_beyond_decks(ctx: GameContext) -> pl.DataFrame:
    """The burn and card rows of each card that comes out of its shoe more often than the
    shoe's decks hold: only those can be a copy too many, and there are few.

    The copies are counted per shoe and card as one integer (the shoe's number, and the
    card's code, `_card_codes`): hashing three strings per row costs several times more.
    """
    # each row's place in the events, its shoe and card: the rows' other columns are
    # copied for the few rows that are kept
    rows = (
        ctx.events.lazy()
        .with_row_index("at")
        # card and burn rows, and a card exposed in error that has no later row (1.2)
        .filter(irregularities.takes_a_card(ctx) & pl.col("card").is_not_null())
        .select("at", "rid", "card")
        .collect(engine=replay.ENGINE)
    )
    rows = rows.select("at", "rid", _card_codes(rows.get_column("card")).alias("card_code"))
    numbers = _shoe_numbers(ctx)
    # a card code is below 2**32 (`_card_codes`)
    copy_of = rows.join(
        numbers.select("rid", "shoe"), on="rid", how="left", maintain_order="left"
    ).select("at", (pl.col("shoe") * CARD_SPAN + pl.col("card_code")).alias("copy_of"))
    decks = (
        numbers.unique("shoe")
        .join(shoes(ctx).select(*SHOE_KEY, "decks"), on=SHOE_KEY)
        .select("shoe", "decks")
    )
    too_many = (
        copy_of.group_by("copy_of")
        .len()
        .with_columns((pl.col("copy_of") // CARD_SPAN).alias("shoe"))
        .join(decks, on="shoe")
        .filter(pl.col("len") > pl.col("decks"))
        .get_column("copy_of")
    )
    kept = copy_of.filter(pl.col("copy_of").is_in(too_many.implode())).get_column("at")
    return ctx.events[kept].select(*SHOE_KEY, "round", "seq", "event", "card")


def excess_cards(ctx: GameContext) -> pl.DataFrame:
    return common.excess_cards(_cards_beyond_decks(ctx), shoes(ctx))


CARD_OVER_DECKS = register(
    Rule(
        "BA102",
        "card-more-often-than-decks",
        "A card appears in a shoe more often than its decks allow",
        "9 NYCRR 5324.20(a)(4)",
        "error",
        "baccarat",
        "Counts each rank and suit over the shoe's burn and card rows (and a `card_exposed` "
        "row with no later card or burn row of its card): a shoe of n decks holds "
        "n of each card, so copy n+1 is reported at its row (one finding per card). Not "
        "judged on a table whose log records a card by value only (format 1.3: `8*`, `X*`), "
        "whose suits and ranks are not all known: BA107 counts its cards by value.",
        "an 8-deck shoe in which the ace of spades comes out a 9th time",
        "an 8-deck shoe in which no card comes out more than 8 times",
        check=excess_cards,
        needs=("cards", "suits", "ranks", "shuffles"),
    )
)


# --- BA107 (a)(4): no more cards of one value than the decks hold, where only values are
# known (format 1.3)


def excess_values(ctx: GameContext) -> pl.DataFrame:
    """BA102's count by value, on the tables whose log records a card by value only."""
    columns = [*SHOE_KEY, "round", "seq", "event", "card"]
    tables = common.tables_by_value(ctx.events)
    rows = (
        ctx.events.lazy()
        .filter(irregularities.takes_a_card(ctx) & pl.col("card").is_not_null()
                & pl.col("table_id").cast(pl.String).is_in(tables.implode()))
        .select(columns)
        .collect(engine=replay.ENGINE)
    ) if not tables.is_empty() else ctx.events.clear().select(columns)
    return common.excess_values(rows, shoes(ctx), ctx.params["card_points"])


VALUE_OVER_DECKS = register(
    Rule(
        "BA107",
        "value-more-often-than-decks",
        "More cards of one value in a shoe than its decks hold",
        "9 NYCRR 5324.20(a)(4)",
        "error",
        "baccarat",
        "On a table whose log records some cards by value only (format 1.3: `8*`, `X*`), "
        "counts the cards of each value over the shoe's burn and card rows (and a "
        "`card_exposed` row with no later card or burn row of the same code), full cards "
        "by their value too: a deck holds 4 aces, 4 of each value 2-9 and 16 ten-value "
        "cards (10, J, Q, K: point count 0), so a shoe of n decks holds n x 4 aces, n x 4 "
        "of each of 2-9 and n x 16 ten-value cards (8 decks: 32 and 128). The first card "
        "past that count is reported at its row (one finding per value). Elsewhere BA102 "
        "counts each rank and suit, which this count cannot exceed without one of them "
        "exceeding its own: BA102 reports it there.",
        "an 8-deck shoe whose log records cards by value only, in which a 129th ten-value "
        "card (`X*`) comes out",
        "an 8-deck shoe whose log records cards by value only, in which 128 ten-value cards "
        "come out",
        check=excess_values,
        needs=("cards", "shuffles"),
    )
)


# --- BA103 (a)(4)(ii): declared point counts


def _judged() -> pl.Expr:
    """Rounds with two cards or more in each hand that are not void: the rest are judged
    by the deal-order and void rules only."""
    return ~pl.col("void") & pl.col("dealt")


def wrong_points(ctx: GameContext) -> pl.DataFrame:
    declared = pl.col("declared_player_points"), pl.col("declared_banker_points")
    counted = pl.col("p_points"), pl.col("b_points")
    differs = (declared[0] != counted[0]) | (declared[1] != counted[1])
    return (
        replay.rounds(ctx)
        .filter(_judged() & differs)
        .select(
            *replay.KEY,
            pl.col("result_seq").alias("seq"),
            pl.format(
                "Round {} was declared player {}, banker {}; the cards count player {}, banker {}.",
                "round",
                *declared,
                *counted,
            ).alias("message"),
            pl.format("player {}, banker {}", *counted).alias("expected"),
            pl.format("player {}, banker {}", *declared).alias("observed"),
        )
    )


POINTS_DECLARED_WRONG = register(
    Rule(
        "BA103",
        "declared-points-differ-from-cards",
        "Declared point counts differ from the cards",
        "9 NYCRR 5324.20(a)(4)(ii)",
        "error",
        "baccarat",
        "The `player_points` / `banker_points` of a round's result against the point counts "
        "of the cards dealt to each hand (total of the values, right digit). Void rounds and "
        "rounds with fewer than two cards in a hand are not judged.",
        "player 7S 5H 2D (point count 4) declared as player_points 14 or 5",
        "player 7S 5H 2D declared as player_points 4",
        check=wrong_points,
        needs=("cards",),
        also=(
            "9 NYCRR 5324.20(a)(4)(i)(a)", "9 NYCRR 5324.20(a)(4)(i)(b)",
            "9 NYCRR 5324.20(a)(4)(i)(c)", "9 NYCRR 5324.20(g)(1)",
        ),
    )
)


# --- BA104 (e): the burn


def wrong_burns(ctx: GameContext) -> pl.DataFrame:
    """The first burn is turned face up; its value says how many more are burned. Only
    shoes whose rows before round 1 are auditable are judged (a shoe that began before
    the log is not). Burns beyond the count are judged as soon as they are recorded; too
    few (or none) only once the burns are over in the log (`burns_over`): a log that ends
    during the burn shows only part of it."""
    burned = pl.col("burn_cards").list.len().cast(pl.Int64)
    required = pl.col("burn_required")
    after_first = burned - 1
    judged = shoes(ctx).filter(pl.col("auditable"))
    short = (burned == 0) | (after_first < required)
    bad = (pl.col("burns_over") & short) | (after_first > required)
    # the face-up card shows the count owed; with no burn, the shuffle shows the lack
    seq = pl.coalesce(pl.col("burn_seqs").list.first(), pl.col("shuffle_seq"))
    message = (
        pl.when(burned == 0)
        .then(
            pl.format(
                "Shoe {} burned no card before play; (e) requires the first card face up and as "
                "many more as its value.",
                "shoe_id",
            )
        )
        .otherwise(
            pl.format(
                "Shoe {}'s face-up burn card {} called for {} more burned card(s); {} followed it.",
                "shoe_id",
                card_codes.shown(pl.col("burn_cards").list.first()),
                required,
                after_first,
            )
        )
    )
    return judged.filter(bad).select(
        *SHOE_KEY,
        seq.alias("seq"),
        message.alias("message"),
        pl.when(burned == 0)
        .then(pl.lit("a face-up burn card and as many more burns as its value"))
        .otherwise(pl.format("burns after the face-up card: {}", required))
        .alias("expected"),
        pl.when(burned == 0)
        .then(pl.lit("no burn"))
        .otherwise(pl.format("burns after the face-up card: {}", after_first))
        .alias("observed"),
    )


BURN_COUNT_WRONG = register(
    Rule(
        "BA104",
        "burn-count-wrong",
        "Burn count does not match the face-up burn card",
        "9 NYCRR 5324.20(e)",
        "error",
        "baccarat",
        "After the shuffle, the first `burn` is the card turned face up; the burns before round "
        "1 that follow it must number its value (A=1, 2-9 face value, 10/J/Q/K=10). Reported "
        "at the face-up card; no burn at all is reported at the shuffle. A shoe whose rows "
        "before round 1 were lost, or that began before the log, is not judged; in a log "
        "that ends during the burn (no later row of the shoe), only burns beyond the count "
        "are. The burns of a discard after a card exposed in error ((i)(1)-(3)), and a card "
        "found face up and burned, are not the (e) burn, before round 1 too.",
        "shuffle, burn 7H, then 5 more burns before round 1",
        "shuffle, burn 7H, then 7 more burns; or burn KD, then 10 more",
        check=wrong_burns,
        needs=("shoe_procedure",),
    )
)


# --- BA105 (f)(9): one last hand after the cover card


def _round_starts(ctx: GameContext) -> pl.DataFrame:
    rounds = replay.rounds(ctx)
    blank = irregularities.blank_hands(ctx)
    if blank.height:  # a hand no one wagers on (i)(1)(ii) is not the last hand, nor beyond it
        rounds = rounds.filter(~pl.col("rid").is_in(blank.get_column("rid").implode()))
    return rounds.select(*SHOE_KEY, "round", "start_seq")


def _with_last_hand(ctx: GameContext, judged: pl.DataFrame) -> pl.DataFrame:
    """`judged` (shoes with a cover card) with `last_hand`: the round after the cover
    card's, or after the hands no one wagers on (i)(1)(ii) that follow it in a run."""
    blank = irregularities.blank_hands(ctx)
    if blank.is_empty():
        return judged.with_columns((pl.col("cover_round") + 1).alias("last_hand"))
    # sorted blank hands after the cover card's round: those numbered cover + 1, + 2, ...
    # with none between make a run, and the last hand follows it
    run = (
        judged.select(*SHOE_KEY, "cover_round")
        .join(blank.select(*SHOE_KEY, "round"), on=SHOE_KEY)
        .filter(pl.col("round") > pl.col("cover_round"))
        .sort(*SHOE_KEY, "round")
        .with_columns(pl.int_range(pl.len()).over(SHOE_KEY).alias("k"))
        .filter(pl.col("round") == pl.col("cover_round") + 1 + pl.col("k"))
        .group_by(SHOE_KEY)
        .agg(pl.len().cast(pl.Int64).alias("blank_run"))
    )
    return judged.join(run, on=SHOE_KEY, how="left", maintain_order="left").with_columns(
        (pl.col("cover_round") + 1 + pl.col("blank_run").fill_null(0)).alias("last_hand")
    ).drop("blank_run")


def _beyond_last_hand(ctx: GameContext, judged: pl.DataFrame) -> pl.DataFrame:
    """The first round dealt after the last hand (round cover + 2 or later), with its row."""
    return (
        judged.join(_round_starts(ctx), on=SHOE_KEY, how="inner")
        .filter(pl.col("round") > pl.col("last_hand"))
        .sort("start_seq")
        .group_by(SHOE_KEY, maintain_order=True)
        .agg(pl.all().first())
    )


def cover_card_rounds(ctx: GameContext) -> pl.DataFrame:
    """After the round r in which the cover card came out, exactly round r+1 (the last
    hand), then the shuffle. Too many rounds are judged as soon as they are dealt; too
    few only when the next shuffle is recorded, and no round of the shoe after r was set
    aside (GameContext.gaps: it may have been the last hand). A shoe that ends on a void
    round at or after r is not short: (i)(4) requires the shuffle after a round void for
    want of cards. A cover card in a round set aside is not known, and not judged.
    """
    after = pl.col("last_round") - pl.col("cover_round")
    judged = _with_last_hand(ctx, shoes(ctx).filter(pl.col("cover_round").is_not_null()))
    too_many = _beyond_last_hand(ctx, judged.filter(after >= 2)).select(
        *SHOE_KEY,
        "round",
        pl.col("start_seq").alias("seq"),
        pl.format(
            "The cover card came out in round {} of shoe {}, so round {} was the last hand; "
            "round {} was dealt after it ({} rounds after the cover card in all).",
            "cover_round",
            "shoe_id",
            "last_hand",
            "round",
            after,
        ).alias("message"),
        pl.format("round {} as the last hand, then the shuffle", "last_hand").alias("expected"),
        pl.format("{} rounds after round {}", after, "cover_round").alias("observed"),
    )
    # a round set aside after the cover card's may have been the last hand
    gap_after_cover = (
        pl.col("gap_rounds").list.max().fill_null(0) > pl.col("cover_round")
    )
    ended_early = (
        pl.col("next_shoe_seq").is_not_null()
        & (pl.col("last_round") < pl.col("last_hand"))
        & ~gap_after_cover
    )
    too_few = judged.filter(ended_early & ~pl.col("last_round_void").fill_null(False)).select(
        *SHOE_KEY,
        pl.col("cover_round").alias("round"),
        pl.col("next_shoe_seq").alias("seq"),
        pl.format(
            "The cover card came out in round {} of shoe {}, and the cards were reshuffled "
            "without the last hand (round {}).",
            "cover_round",
            "shoe_id",
            "last_hand",
        ).alias("message"),
        pl.format("round {} as the last hand, then the shuffle", "last_hand").alias("expected"),
        pl.format("the shuffle after round {}", "last_round").alias("observed"),
    )
    return pl.concat([too_many, too_few], how="diagonal_relaxed")


COVER_CARD_LAST_HAND = register(
    Rule(
        "BA105",
        "cover-card-last-hand-wrong",
        "Not exactly one last hand after the cover card",
        "9 NYCRR 5324.20(f)(9)",
        "error",
        "baccarat",
        "When the cover card comes out in round r, round r is completed, round r+1 is the "
        "last hand, and the cards are reshuffled. Reported: a round r+2 or later in the same "
        "shoe, or a new shoe (shuffle) right after round r. A log that ends before the next "
        "shuffle is judged only on rounds already dealt; a shoe with a round after r set "
        "aside (a lost row: it may have been the last hand) only on rounds dealt after r+1, "
        "and a cover card in a round set aside is not known. A hand no one wagers on, dealt "
        "after a card found face up ((i)(1)(ii)), is not counted: neither the last hand nor "
        "one beyond it.",
        "cover_card in round 40, rounds 41 and 42 dealt, then the shuffle",
        "cover_card in round 40, round 41 dealt, then the shuffle",
        check=cover_card_rounds,
        needs=("shoe_procedure",),
    )
)


# --- BA106 (i)(4): a void round returns every wager


def _money_by_wager(ctx: GameContext, void_rounds: pl.DataFrame) -> pl.DataFrame:
    """Per seat and bet of a void round: wagered, pushed, paid and collected cents."""

    def total(event: str) -> pl.Expr:
        return pl.col("amount_cents").filter(pl.col("event") == event).sum().alias(event)

    # one filter: only the rows of the (few) void rounds are copied
    void = pl.col("rid").is_in(void_rounds.get_column("rid").implode())
    return (
        settlement.money_rows(ctx)
        .filter(pl.col("event").is_in(MONEY) & void)
        .group_by("rid", "seat", "bet", maintain_order=True)
        .agg(
            *(total(e) for e in MONEY),
            pl.col("seq").filter(pl.col("event") != "wager").min().alias("settle_seq"),
            (pl.col("event") == "wager").any().alias("wagered"),
        )
        .filter(pl.col("wagered"))
    )


def _unreturned_wagers(ctx: GameContext, void_rounds: pl.DataFrame) -> pl.DataFrame:
    """Wagers not pushed for their amount, or paid or collected.

    Money at stake: the stake owed back less what came back, less winnings paid; a paid
    wager keeps its stake (hand-history-v1 `pay` is the winnings only), a collect takes it.
    """
    wagered, pushed, paid, taken = (pl.col(c) for c in ("wager", "push", "pay", "collect"))
    stake_back = pl.max_horizontal(
        pushed + pl.when(paid > 0).then(wagered).otherwise(0) - taken, pl.lit(0)
    )
    owed = wagered - stake_back - paid
    bad = (pushed != wagered) | (paid > 0) | (taken > 0)
    settled = pl.concat_str(
        [
            pl.when(c > 0).then(pl.format("{} {}", pl.lit(name), _dollars(c)))
            for name, c in (("push", pushed), ("pay", paid), ("collect", taken))
        ],
        separator=", ",
        ignore_nulls=True,
    )
    observed = pl.when(settled == "").then(pl.lit("nothing returned")).otherwise(settled)
    # a wager settled by a net (format 1.3) is BA509's, which owes it its stake back
    netted = settlement.wagers(ctx).filter(pl.col("void") & pl.col("net_sid").is_not_null())
    key = ["rid", "seat", "_bet"]
    return (
        _money_by_wager(ctx, void_rounds)
        .with_columns(pl.col("bet").cast(pl.String).alias("_bet"))
        .join(netted.select("rid", "seat", pl.col("bet").cast(pl.String).alias("_bet")),
              on=key, how="anti", maintain_order="left")
        .drop("_bet")
        .filter(bad)
        .join(void_rounds, on="rid", how="left")
        .select(
            *replay.KEY,
            pl.coalesce("settle_seq", "void_seq").alias("seq"),
            pl.format(
                "Round {} is void, but seat {}'s {} wager of {} {}; (i)(4) returns it.",
                "round",
                "seat",
                "bet",
                _dollars(wagered),
                pl.when(settled == "")
                .then(pl.lit("was not returned"))
                .otherwise(pl.format("was settled as {}", settled)),
            ).alias("message"),
            pl.format("push {}", _dollars(wagered)).alias("expected"),
            observed.alias("observed"),
            pl.when(owed != 0).then(owed).alias("amount_cents"),
        )
    )


def _commission_in_void(ctx: GameContext, void_rounds: pl.DataFrame) -> pl.DataFrame:
    """A commission on a void round: nothing won, nothing owed (vig_settle of earlier marked
    commission is not this round's and may well come before the reshuffle)."""
    return (
        settlement.money_rows(ctx)
        .filter(
            (pl.col("event") == "vig")
            & pl.col("rid").is_in(void_rounds.get_column("rid").implode())
        )
        .select(
            *replay.KEY,
            "seq",
            pl.format(
                "Round {} is void, but a commission of {} was {} from seat {}.",
                "round",
                _dollars(pl.col("amount_cents")),
                "mode",
                "seat",
            ).alias("message"),
            pl.lit("no commission").alias("expected"),
            pl.format("vig {} ({})", _dollars(pl.col("amount_cents")), "mode").alias("observed"),
            pl.col("amount_cents"),
        )
    )


def void_not_returned(ctx: GameContext) -> pl.DataFrame:
    void_rounds = (
        replay.rounds(ctx).filter(pl.col("void")).select("rid", *replay.KEY, "void_seq")
    )
    return pl.concat(
        [_unreturned_wagers(ctx, void_rounds), _commission_in_void(ctx, void_rounds)],
        how="diagonal_relaxed",
    )


VOID_ROUND_SETTLED = register(
    Rule(
        "BA106",
        "void-round-not-returned",
        "Void round whose wagers were not all returned",
        "9 NYCRR 5324.20(i)(4)",
        "error",
        "baccarat",
        "In a round with a `void` event every wager is returned: each seat's wagers on a bet "
        "are pushed for their amount, and nothing is paid, collected or charged commission. "
        "One finding per seat and bet, and one per commission row.",
        "round void; seat 3 wagered banker $25 and the round shows collect $25 (or push $20)",
        "round void; seat 3 wagered banker $25 and the round shows push $25",
        check=void_not_returned,
        needs=("round_events", "wagers", "single_settlements"),
    )
)
