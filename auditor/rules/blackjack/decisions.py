"""Player decisions: drawing, doubling, splitting (c), (d), (g)(1).

Every decision is judged on the hand as it stood when it was made
(games/blackjack/decisions.py: the cards the hand held just before the action row, a
split pair's second card counted on the hand the split made). One error, one finding:

* a split is judged by one rule only, in this order: a second split of two aces is
  BJ208's; any other decision on a hand made by splitting aces (hit, double, split) is
  BJ207's, as is a card beyond the one each split ace gets; a fourth split, or a split
  after a double, is BJ206's; any other split not of two cards identical in value is
  BJ204's. The split wager is judged by BJ204 on every split.
* a double not on the first two cards, on a natural, or a second double is BJ202's;
  the cards after a hand's first double are BJ203's (a double BJ202 reports that is
  then dealt two cards broke both paragraphs).
* a hit (or a double on a split hand's two-card 21) at 21 or more is BJ201's, except on
  a split ace (BJ207) or after a double (the extra card is BJ203's).
* the order of split hands (BJ205) is judged on the cards dealt after a box's first
  split. Surrender is (f)'s (BJ4xx), even on a split hand.

Void rounds are not judged.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.blackjack import decisions as play
from ...games.blackjack import engine, missed_cards, replay
from ...games.blackjack import irregularities as irregular
from ...ingest import cards as card_codes
from ..registry import Part, Rule, register

GAME = "blackjack"
HAND = ["rid", "seat", "hand"]
WHERE = ["table_id", "shoe_id", "round"]

action = pl.col("action")
n_cards, total = pl.col("n_cards"), pl.col("total")
seat, hand = pl.col("seat"), pl.col("hand")


def _dollars(cents: pl.Expr) -> pl.Expr:
    """ "$25.00" from integer cents."""
    cents = cents.abs()
    return pl.format("${}.{}", cents // 100, (cents % 100).cast(pl.String).str.zfill(2))


def _ordinal(n: pl.Expr) -> pl.Expr:
    """4th, 2nd (split counts stay small)."""
    suffix = (
        pl.when(n == 1)
        .then(pl.lit("st"))
        .when(n == 2)
        .then(pl.lit("nd"))
        .when(n == 3)
        .then(pl.lit("rd"))
        .otherwise(pl.lit("th"))
    )
    return pl.format("{}{}", n, suffix)


def _cards(col: str = "cards") -> pl.Expr:
    return card_codes.shown_list(pl.col(col))


def _total_text() -> pl.Expr:
    """'soft 21', '21', '24 (busted)'."""
    return (
        pl.when(total > engine.TWENTY_ONE)
        .then(pl.format("{} (busted)", total))
        .when(pl.col("soft"))
        .then(pl.format("soft {}", total))
        .otherwise(total.cast(pl.String))
    )


def _findings(
    frame: pl.DataFrame,
    seq: pl.Expr | str,
    message: pl.Expr,
    expected: pl.Expr,
    observed: pl.Expr,
    amount: pl.Expr | None = None,
) -> pl.DataFrame:
    seq = pl.col(seq) if isinstance(seq, str) else seq
    return frame.select(
        *WHERE,
        seq.alias("seq"),
        message.alias("message"),
        expected.alias("expected"),
        observed.alias("observed"),
        (amount if amount is not None else pl.lit(None, pl.Int64)).alias("amount_cents"),
    )


def _split_owner(ctx: GameContext) -> pl.Expr:
    """The one rule that judges a split action (see the module docstring)."""
    max_splits = int(ctx.params["max_splits"])
    max_ace_splits = int(ctx.params["max_ace_splits"])
    return (
        pl.when(pl.col("aces_pair") & (pl.col("aces_splits_before") >= max_ace_splits))
        .then(pl.lit("BJ208"))
        .when(pl.col("split_ace"))
        .then(pl.lit("BJ207"))
        .when((pl.col("splits_before") >= max_splits) | (pl.col("doubled_before") > 0))
        .then(pl.lit("BJ206"))
        .when(~pl.col("pair"))
        .then(pl.lit("BJ204"))
    )


def _judged(ctx: GameContext, which: pl.Expr) -> pl.DataFrame:
    """The decisions `which` selects, with `owner`: the rule that judges it if it is a
    split."""
    owner = pl.when(action == "split").then(_split_owner(ctx))
    return play.decisions(ctx).filter(which).with_columns(owner.alias("owner"))


def _split_decisions(ctx: GameContext) -> pl.DataFrame:
    return _judged(ctx, action == "split")


# --- BJ201 (g)(1): no draw at 21 or more


def drew_at_21(ctx: GameContext) -> pl.DataFrame:
    """A hit at 21 or more, or a double (a draw of one card, (g)(1)(i)) on a split hand's
    two-card 21. Reported at the action."""
    d = play.decisions(ctx)
    # a double on two cards draws one (g)(1)(i); on other hands or a natural it is BJ202's
    draws = (action == "hit") | ((action == "double") & (n_cards == 2) & ~pl.col("natural"))
    judged = ~pl.col("split_ace") & (pl.col("doubled_before") == 0)
    verb = pl.when(action == "hit").then(pl.lit("hit")).otherwise(pl.lit("doubled down"))
    return _findings(
        play.held_cards(ctx, d.filter(draws & judged & (total >= engine.TWENTY_ONE))),
        "seq",
        pl.format(
            "Box {} hand {} {} at {} ({}); (g)(1) lets a player draw only while the total is "
            "less than 21.",
            seat,
            hand,
            verb,
            _total_text(),
            _cards(),
        ),
        pl.lit("no card drawn at 21 or more"),
        pl.format("{} at {}", verb, _total_text()),
    )


DREW_AT_21 = register(
    Rule(
        "BJ201",
        "player-drew-at-21",
        "Player drew at 21 or more",
        "9 NYCRR 5324.10(g)(1)",
        "error",
        GAME,
        "A `hit` on a hand whose total was already 21 or more, judged on the cards the hand "
        "held just before it (a split pair's second card on the hand the split made); a "
        "double down on a split hand's two-card 21 draws a card at 21 too. A split ace's "
        "decisions are BJ207's, a doubled hand's extra card BJ203's.",
        "box 2 hand 1 holds KS 5H 6D (21) and hits",
        "box 2 hand 1 holds KS 5H 6D (21) and stands",
        check=drew_at_21,
        needs=("cards", "decisions"),
    )
)


# --- BJ202 (d): double down only on the first two cards, never on a natural


def double_not_on_two_cards(ctx: GameContext) -> pl.DataFrame:
    d = play.decisions(ctx)
    again = pl.col("doubled_before") > 0
    bad = (n_cards != 2) | pl.col("natural") | again
    reason = (
        pl.when(again)
        .then(pl.lit("a second time"))
        .when(pl.col("natural"))
        .then(pl.format("on a natural ({})", _cards()))
        .otherwise(pl.format("on {} card(s) ({}, {})", n_cards, _cards(), _total_text()))
    )
    return _findings(
        play.held_cards(ctx, d.filter((action == "double") & ~pl.col("split_ace") & bad)),
        "seq",
        pl.format(
            "Box {} hand {} doubled down {}; (d) allows a double down once, on the first two "
            "cards of a hand or of a split pair, and never on a natural blackjack.",
            seat,
            hand,
            reason,
        ),
        pl.lit("double down on the first two cards only, not on a natural"),
        pl.format("doubled {}", reason),
    )


DOUBLE_NOT_ON_TWO_CARDS = register(
    Rule(
        "BJ202",
        "double-down-not-on-first-two-cards",
        "Double down not on the first two cards, or on a natural",
        "9 NYCRR 5324.10(d)",
        "error",
        GAME,
        "A `double` on a hand that did not hold exactly two cards (the first two of the hand "
        "or of a split pair), on a natural (a two-card 21 on hand 1 of a box not split), or "
        "on a hand that had doubled already. Reported at the double action; the cards dealt "
        "after it are BJ203's. A split ace's double is BJ207's.",
        "box 4 hand 1 holds 5S 3H 2D (10) and doubles down",
        "box 4 hand 1 holds 5S 3H (8) and doubles down",
        check=double_not_on_two_cards,
        needs=("cards", "decisions"),
    )
)


# --- BJ203 (g)(1)(i): a doubled hand gets exactly one card


def _not_one_card_after(ctx: GameContext, doubles: pl.DataFrame) -> pl.DataFrame:
    """The rows of `doubles` (a hand's first double each) whose hand was dealt other than
    one card after it (a split card moved in is not dealt): counted by the hand id alone,
    so that only these few are looked at card by card."""
    hand_id = replay.hand_id(ctx)
    dealt = (
        play.holdings(ctx)
        .lazy()
        .filter(~pl.col("moved_in"))
        .select(hand_id, pl.col("seq").alias("card_seq"))
        .collect(engine="in-memory")
    )
    firsts = doubles.select(hand_id, "seq")
    n_after = (
        play.by_hand_id(firsts)
        .join(play.by_hand_id(dealt), on="hid")
        .filter(pl.col("card_seq") > pl.col("seq"))
        .group_by("hid", "seq")
        .len("n_after")
    )
    counted = firsts.join(n_after, on=["hid", "seq"], how="left", maintain_order="left")
    return doubles.filter(counted["n_after"].fill_null(0) != 1)


def _dead_hand(ctx: GameContext) -> pl.Expr:
    """Whether the row's hand (rid, seat, hand) was declared dead ((i)(3), (i)(4)(ii)):
    a doubled hand whose card was not dealt and that the player chose to call dead holds
    no card after the double, rightly."""
    return replay.hand_in(ctx, missed_cards.dead_hands(ctx))


def _refused_hand(ctx: GameContext) -> pl.Expr:
    """Whether the row's hand (rid, seat, hand) refused an exposed card ((i)(1)): it keeps
    what it holds, a doubled hand without its card."""
    return replay.hand_in(ctx, irregular.refusals(ctx))


def double_card_count_wrong(ctx: GameContext) -> pl.DataFrame:
    """Cards dealt to the hand after its first double, whether or not BJ202 reports the
    double (a later double on the hand is BJ202's; its card counts here): none is
    reported at the double, more than one at the second card."""
    doubles = play.decisions(ctx).filter(
        (action == "double") & ~pl.col("split_ace") & (pl.col("doubled_before") == 0)
    )
    doubles = _not_one_card_after(ctx, doubles)
    dealt = (
        play.holdings(ctx)
        .filter(~pl.col("moved_in") & pl.col("rid").is_in(doubles["rid"].implode()))
        .select(*HAND, pl.col("seq").alias("card_seq"), pl.col("card").alias("drawn"))
    )
    after = (
        doubles.select(*HAND, "seq")
        .join(dealt, on=HAND)
        .filter(pl.col("card_seq") > pl.col("seq"))
        .sort("card_seq")
        .group_by("rid", "seq")
        .agg(
            pl.len().alias("n_after"),
            pl.col("card_seq").get(1, null_on_oob=True).alias("extra_seq"),
            pl.col("drawn"),
        )
    )
    n_after = pl.col("n_after")
    bad = doubles.join(after, on=["rid", "seq"], how="left").with_columns(n_after.fill_null(0))
    kept = _dead_hand(ctx) | _refused_hand(ctx)
    bad = bad.filter((n_after != 1) & ~((n_after == 0) & kept))
    return _findings(
        play.held_cards(ctx, bad),
        pl.when(n_after == 0).then(pl.col("seq")).otherwise(pl.col("extra_seq")),
        pl.format(
            "Box {} hand {} doubled down on {} ({}) and was dealt {}; (g)(1)(i) deals a doubled "
            "hand exactly one additional card.",
            seat,
            hand,
            _cards(),
            _total_text(),
            pl.when(n_after == 0)
            .then(pl.lit("no card"))
            .otherwise(pl.format("{} cards ({})", n_after, _cards("drawn"))),
        ),
        pl.lit("one card after the double down"),
        pl.format("{} card(s) after the double down", n_after),
    )


DOUBLE_CARD_COUNT = register(
    Rule(
        "BJ203",
        "doubled-hand-not-one-card",
        "Doubled hand dealt other than exactly one card",
        "9 NYCRR 5324.10(g)(1)(i)",
        "error",
        GAME,
        "After its first double down (allowed or not: that is BJ202's), a hand is dealt "
        "exactly one card in the round. No card is reported at the double action (but on a "
        "hand declared dead: its card was not dealt, (i)(4)(ii); or on a hand that refused "
        "an exposed card, (i)(1): it keeps what it holds), a second card (after a hit, a "
        "second double, or none) at that card. A split ace's double is BJ207's.",
        "box 1 hand 1 doubles on 6S 5H, gets 3D, then 9C",
        "box 1 hand 1 doubles on 6S 5H and gets 3D",
        check=double_card_count_wrong,
        needs=("cards", "decisions"),
        also=("9 NYCRR 5324.10(d)",),
    )
)


# --- BJ204 (c)(1): split two cards identical in value, with a wager equal to the original


def _split_values_wrong(ctx: GameContext) -> pl.DataFrame:
    bad = play.held_cards(ctx, _split_decisions(ctx).filter(pl.col("owner") == "BJ204"))
    return _findings(
        bad,
        "seq",
        pl.format(
            "Box {} hand {} was split holding {} (values {}); (c)(1) allows a split only of "
            "two cards identical in value.",
            seat,
            hand,
            _cards(),
            pl.col("values").cast(pl.List(pl.String)).list.join(", "),
        ),
        pl.lit("a split of two cards identical in value"),
        pl.format("split {}", _cards()),
    )


def _of_rounds(frame: pl.DataFrame, rids: pl.Series) -> pl.DataFrame:
    """The rows of `frame` in the rounds `rids`: a few rounds (those with a split) picked
    by round id before the rows are compared further."""
    return frame.filter(pl.col("rid").is_in(rids.unique().implode()))


def _split_wagers(ctx: GameContext) -> pl.DataFrame:
    """Each split wager with the split it follows and the patron's original main wager."""
    wagers = replay.wagers(ctx)
    split_wagers = wagers.filter(pl.col("bet") == "split")
    # the original wagers of the boxes with a split wager only
    originals = (
        _of_rounds(wagers, split_wagers["rid"])
        .filter(pl.col("bet") == "main")
        .join(split_wagers.select("rid", "seat").unique(), on=["rid", "seat"], how="semi")
        .group_by("rid", "seat", "player_id")
        .agg(pl.col("amount_cents").sum().alias("original"))
    )
    split_rows = play.splits(ctx).select("rid", "seat", pl.col("seq").alias("split_seq"))
    return (
        split_wagers.sort("seq")
        .join_asof(
            split_rows.sort("split_seq"),
            left_on="seq",
            right_on="split_seq",
            by=["rid", "seat"],
            strategy="backward",
            check_sortedness=False,  # both sorted by seq above; by-groups cannot be checked
        )
        .filter(pl.col("split_seq").is_not_null())
        .join(originals, on=["rid", "seat", "player_id"], how="left", nulls_equal=True)
    )


def _split_wager_wrong(split_wagers: pl.DataFrame) -> pl.DataFrame:
    """A split wager (of `_split_wagers`) not equal to the patron's original wager, at the
    wager row."""
    wagers = split_wagers.filter(
        pl.col("original").is_not_null() & (pl.col("amount_cents") != pl.col("original"))
    )
    patron = (
        pl.when(pl.col("player_id").is_null())
        .then(pl.lit("the seated player"))
        .otherwise(pl.format("patron {}", pl.col("player_id")))
    )
    return _findings(
        wagers,
        "seq",
        pl.format(
            "Box {} split with a wager of {} from {} on an original wager of {}; (c)(1) requires "
            "a split wager equal to the original wager.",
            seat,
            _dollars(pl.col("amount_cents")),
            patron,
            _dollars(pl.col("original")),
        ),
        pl.format("a split wager of {}", _dollars(pl.col("original"))),
        pl.format("a split wager of {}", _dollars(pl.col("amount_cents"))),
        pl.col("amount_cents") - pl.col("original"),
    )


def _split_wager_missing(ctx: GameContext, split_wagers: pl.DataFrame) -> pl.DataFrame:
    """A split without a split wager (of `_split_wagers`) from the seated player (who calls
    the decisions, (h)(2)), at the split action; co-patrons may decline to cover a split
    ((h)(5))."""
    split_boxes = play.splits(ctx).select("rid", "seat").unique()
    seated = (
        _of_rounds(replay.wagers(ctx), split_boxes["rid"])
        .filter((pl.col("bet") == "main") & pl.col("player_id").is_null())
        .join(split_boxes, on=["rid", "seat"], how="semi")
        .group_by("rid", "seat")
        .agg(pl.col("amount_cents").sum().alias("original"))
    )
    covered = (
        split_wagers.filter(pl.col("player_id").is_null())
        .select("rid", "seat", pl.col("split_seq").alias("seq"))
        .unique()
    )
    missing = (
        play.splits(ctx)
        .join(seated, on=["rid", "seat"])
        .join(covered, on=["rid", "seat", "seq"], how="anti")
    )
    return _findings(
        missing,
        "seq",
        pl.format(
            "Box {} hand {} was split with no split wager from the seated player (original "
            "wager {}); (c)(1) requires a wager on the new hand equal to the original wager.",
            seat,
            hand,
            _dollars(pl.col("original")),
        ),
        pl.format("a split wager of {}", _dollars(pl.col("original"))),
        pl.lit("no split wager"),
    )


# The split wager is a check of its own: the split's cards are judged wherever the
# decisions are recorded, its wager only where the wagers are (export-profiles-v1 1.1,
# Coverage)
SPLIT_WAGER = Part(
    "wager", "a split wager equal to the original wager, from the seated player",
    ("wagers", "stakes"),
)


def split_wrong(ctx: GameContext) -> pl.DataFrame:
    split_wagers = _split_wagers(ctx)  # both wager checks read them
    wager = [_split_wager_wrong(split_wagers), _split_wager_missing(ctx, split_wagers)]
    return pl.concat(
        [_split_values_wrong(ctx), *(rows.with_columns(SPLIT_WAGER.where()) for rows in wager)],
        how="diagonal",
    )


SPLIT_WRONG = register(
    Rule(
        "BJ204",
        "split-not-pair-or-wager-unequal",
        "Split of cards not identical in value, or split wager not equal to the original",
        "9 NYCRR 5324.10(c)(1)",
        "error",
        GAME,
        "A split of a hand that did not hold two cards identical in value (a ten and a king "
        "are identical in value), reported at the split, unless the split is BJ206's, BJ207's "
        "or BJ208's; and on every split, a split wager not equal to the same patron's "
        "original wager (at the wager; amount: the split wager minus the original), or no "
        "split wager from the seated player (at the split). A co-patron may leave a split "
        "uncovered ((h)(5)).",
        "box 3 splits 8S 9H; or splits 8S 8H with a $50 split wager on a $25 wager",
        "box 3 splits 8S 8H with a $25 split wager on a $25 wager",
        overcharge=True,
        check=split_wrong,
        needs=("cards", "decisions"),
        parts=(SPLIT_WAGER,),
        also=("9 NYCRR 5324.10(c)(3)",),
    )
)


# --- BJ205 (c)(2): split hands completed in order


def _of_boxes(frame: pl.DataFrame, boxes: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """`columns` of the rows of `frame` on the boxes (rid, seat) of `boxes`. Few rounds
    have a split: their rows are picked by round id first (only the columns wanted), so
    that the two-key semi-join reads few rows."""
    rounds = frame.lazy().filter(pl.col("rid").is_in(boxes["rid"].implode())).select(*columns)
    return rounds.collect(engine="in-memory").join(boxes, on=["rid", "seat"], how="semi")


def _split_hand_spans(ctx: GameContext) -> pl.DataFrame:
    """Hands of boxes that split: when they were made, when play on them ended (`done`:
    their last card or action, or never while they hold fewer than two cards, unless the
    box refused an exposed card: then at the refuse at the latest)."""
    splits = play.splits(ctx)
    first = splits.group_by("rid", "seat").agg(pl.col("seq").min().alias("first_split"))
    created = splits.select(
        "rid", "seat", pl.col("new_hand").alias("hand"), pl.col("seq").alias("created")
    )
    held = _of_boxes(play.holdings(ctx), first, *HAND, "since", "until")
    late = _late_cards_of(ctx, first)
    if late.height:  # a late card (i)(4) is not play going on (a card moved in never is)
        held = held.join(late.rename({"seq": "since"}), on=["rid", "since"], how="anti")
    acted = _of_boxes(play.decisions(ctx), first, *HAND, "seq")
    events = pl.concat(
        [
            held.select(*HAND, pl.col("since").alias("at")),
            acted.select(*HAND, pl.col("seq").alias("at")),
        ]
    )
    n_held = held.filter(pl.col("until").is_null()).group_by(HAND).agg(pl.len().alias("n_held"))
    never = pl.lit(None, pl.Int64)
    return (
        events.group_by(HAND)
        .agg(pl.col("at").max().alias("last_seq"))
        .join(n_held, on=HAND, how="left")
        .join(created, on=HAND, how="left")
        .join(first, on=["rid", "seat"])
        .join(irregular.box_refusals(ctx), on=["rid", "seat"], how="left")
        .with_columns(
            pl.col("n_held").fill_null(0),
            pl.col("created").fill_null(0),
            pl.when(pl.col("n_held") >= 2)
            .then(pl.col("last_seq"))
            # a box that refused an exposed card ((i)(1)) keeps what its hands hold: a
            # split hand of one card is done by then
            .when(pl.col("refuse_seq").is_not_null())
            .then(pl.max_horizontal("last_seq", "refuse_seq"))
            .otherwise(never)
            .alias("done"),
        )
        .drop("refuse_seq")
    )


def _late_cards_of(ctx: GameContext, boxes: pl.DataFrame) -> pl.DataFrame:
    """rid and seq of the requested cards dealt late ((i)(4): after a card or action of a
    later box) to the boxes (rid, seat) of `boxes`: the dealer made up for a missed card,
    and the split-order rule judges neither the card nor the hand as still in play."""
    late = missed_cards.late_cards(ctx)
    if late.is_empty():
        return late.select("rid", "seq")
    return late.join(boxes.select("rid", "seat"), on=["rid", "seat"], how="semi").select(
        "rid", "seq"
    )


PLACEMENTS = ("end", "beside")  # "end" first: on a tie the hand-number reading is named
BESIDE_DIGITS = 9
BESIDE_TOP = 10**BESIDE_DIGITS - 1


def _place_text(number: pl.Expr, root: pl.Expr) -> pl.Expr:
    """One step of a "beside" path: a hand not split from another by its number, a split
    hand by BESIDE_TOP minus it (the last made first), zero-padded to compare as text."""
    number = number.clip(0, BESIDE_TOP)
    step = pl.when(root).then(number).otherwise(BESIDE_TOP - number)
    return step.cast(pl.String).str.zfill(BESIDE_DIGITS)


def _beside_paths(hands: pl.DataFrame, splits: pl.DataFrame) -> pl.DataFrame:
    """`hands` (HAND) with `beside`: the hand's place on the box when each new hand is laid
    beside the hand it came from (see `split_hands_out_of_order`); compared as text within
    a box."""
    # a new hand is made once on its box (numbered by the split that made it)
    parents = splits.select(
        "rid", "seat", pl.col("new_hand").alias("hand"), pl.col("hand").alias("parent")
    )
    ups = parents.rename({"hand": "node", "parent": "up"})
    paths = hands.select(HAND).join(parents, on=HAND, how="left").with_columns(
        _place_text(hand, pl.col("parent").is_null()).alias("beside")
    ).rename({"parent": "node"})
    # a chain of parents is at most the box's splits long (a log may name a parent out of
    # turn, even in a loop: the levels stop there)
    for _ in range(int(splits["split_no"].max() or 0)):
        if paths["node"].is_null().all():
            break
        node = pl.col("node")
        paths = paths.join(ups, on=["rid", "seat", "node"], how="left").with_columns(
            pl.when(node.is_null())
            .then(pl.col("beside"))
            .otherwise(pl.concat_str(_place_text(node, pl.col("up").is_null()), "beside"))
            .alias("beside"),
            pl.col("up").alias("node"),
        ).drop("up")
    return paths.select(*HAND, "beside")


def _placements(ctx: GameContext) -> pl.DataFrame:
    """Per table of the log, `placement`: "beside", "end", or null where the house rules
    leave it unset."""
    tables = ctx.tables
    if "resplit_hand_placement" not in tables.columns:
        return tables.select("table_id", pl.lit(None, pl.String).alias("placement"))
    return tables.select(
        "table_id", pl.col("resplit_hand_placement").cast(pl.String).alias("placement")
    )


# Which hand got a card first is a check of its own: a shoe's coups presume the order of
# the deal and of play across split hands, but a split hand left on one card while play
# went on is in its own row (export-profiles-v1 1.1, Coverage)
SPLIT_TURN = Part(
    "order", "a split hand completed before a card to any hand lying after it",
    ("deal_order", "split_order"),
)


def split_hands_out_of_order(ctx: GameContext) -> pl.DataFrame:
    """A card dealt to a hand after a made and not complete split hand: to a later box, the
    dealer, or a hand of the box lying after it; once a box, at the first such card under
    the table's placement, or unset, at the first card that neither placement allows
    (the later of the two placements' first departures).

    The order of a box's hands. (c)(2): "the dealer shall deal a card to the first
    incomplete hand on the dealer's left before proceeding to deal any cards to any other
    hand". The dealer deals from the dealer's left (box 1) across, and a box's hands the
    same way: they are completed in the order they lie on the layout. The `hand` number is
    the order hands were made; where a split's new hand lies is the house's procedure
    (`blackjack.resplit_hand_placement`, hand-history 1.1):

    * "end": the new hand goes after every hand on the box (on the side of the next box),
      so the layout is the hand numbers in order. 8-8 split (hands 1, 2), hand 1 draws an
      8 and re-splits (hand 3): 1, 2, 3.
    * "beside": the pair is parted where it lies. The hand split keeps its place, so it is
      the first incomplete hand on the dealer's left and gets its second card first, as
      (c)(2) says; the new hand is laid right next to it, on the side of the next box,
      pushing the hands already there one place along. So a hand's split hands lie
      between it and the hands that were beside it, the one made last nearest to it. A
      hand splits only while it is played, and the hands beside it wait untouched until
      it is complete: when it splits again, its earlier split hands still hold their one
      card; a split hand's own split hands are made when it is played, in its turn, and
      land right beside it. The layout is the tree of splits read depth first: a hand,
      then each hand split from it, the last made first, each followed by the hands split
      from it, then the rest. Above: 1, 3, 2; should hand 1 split a third time (hand 4),
      1, 4, 3, 2; should hand 3 split instead, 1, 3, 4, 2.

    Columnar (`_beside_paths`): a hand's place under "beside" is its path from the box's
    first hand through the hands it was split from, written as text (a hand split from
    none by its number, a split hand by BESIDE_TOP minus its number, so that the last
    made comes first): paths compare as the layout reads, a hand before its split hands.
    They are built one level of re-splitting at a time (a join per level, at most the
    box's splits), not per event; "end" compares hand numbers.
    """
    spans = _split_hand_spans(ctx)
    spans = spans.join(_beside_paths(spans, play.splits(ctx)), on=HAND, how="left")
    later = 1_000  # the dealer plays after every box
    # only the cards of the rounds with a split, from the round's first split on
    rounds = spans.group_by("rid").agg(pl.col("first_split").min())
    cards = replay.cards(ctx).lazy().filter(
        pl.col("seq") > replay.by_rid(ctx, rounds, "first_split")  # null: no split
    )
    late = _late_cards_of(ctx, spans.select("rid", "seat").unique())
    if late.height:
        cards = cards.join(late.lazy(), on=["rid", "seq"], how="anti")
    cards = cards.select(
        "rid",
        *WHERE,
        pl.col("seq").alias("at"),
        "card",
        pl.when(pl.col("target") == "dealer").then(later).otherwise(seat).alias("to_seat"),
        hand.fill_null(0).alias("to_hand"),
    ).collect(engine="in-memory")
    receiving = spans.select(
        "rid",
        seat.alias("to_seat"),
        hand.alias("to_hand"),
        pl.col("beside").alias("to_beside"),
    )
    cards = cards.join(receiving, on=["rid", "to_seat", "to_hand"], how="left")
    x_seat, x_hand = pl.col("to_seat"), pl.col("to_hand")
    same_box = x_seat == seat
    lies_after = {
        "end": x_hand > hand,
        "beside": pl.col("to_beside") > pl.col("beside"),
    }
    place = {"end": hand, "beside": pl.col("beside")}
    at = pl.col("at")
    pending = (
        (at > pl.col("first_split"))
        & (at > pl.col("created"))
        & (pl.col("done").is_null() | (at < pl.col("done")))
    )
    after = {p: (x_seat > seat) | (same_box & lies_after[p]).fill_null(False) for p in PLACEMENTS}
    candidates = spans.join(cards, on="rid").filter(pending & (after["end"] | after["beside"]))
    # per placement, the first card dealt out of its order (naming the first hand of the
    # box it left incomplete)
    firsts = pl.concat(
        [
            candidates.filter(after[p])
            .sort("at", place[p])
            .group_by("rid", "seat")
            .agg(pl.all().first())
            .with_columns(pl.lit(p).alias("reading"))
            for p in PLACEMENTS
        ]
    ).join(_placements(ctx), on="table_id", how="left")
    unset = pl.col("placement").is_null()
    reading = pl.col("reading")
    broken_by_both = pl.len().over("rid", "seat") == len(PLACEMENTS)
    wrong = (
        firsts.filter(pl.when(unset).then(broken_by_both).otherwise(reading == pl.col("placement")))
        # unset: the card from which neither order explains the deal, the later of the two
        # first departures ("end"'s on a tie)
        .sort("at", reading == "end")
        .group_by("rid", "seat")
        .agg(pl.all().last())
    )
    orders = spans.group_by("rid", "seat").agg(
        pl.col("hand").sort().cast(pl.String).str.join(", ").alias("end_order"),
        pl.col("hand").sort_by("beside").cast(pl.String).str.join(", ").alias("beside_order"),
    )
    wrong = wrong.join(orders, on=["rid", "seat"], how="left")
    receiver = (
        pl.when(x_seat == later)
        .then(pl.lit("The dealer"))
        .otherwise(pl.format("Box {} hand {}", x_seat, x_hand))
    )
    state = (
        pl.when(pl.col("n_held") < 2)
        .then(pl.lit("never had its second card"))
        .otherwise(pl.lit("was not complete"))
    )
    differ = pl.col("end_order") != pl.col("beside_order")
    beside = reading == "beside"
    laid = (
        pl.when(beside)
        .then(pl.lit("beside the hand it came from"))
        .otherwise(pl.lit("after the box's other hands"))
    )
    order = pl.when(beside).then(pl.col("beside_order")).otherwise(pl.col("end_order"))
    reading_text = (
        pl.when(~differ)
        .then(pl.lit(""))
        .when(unset)
        .then(
            pl.format(
                ", and neither placement of a re-split hand allows it (beside the hand it "
                "came from: hands {}; after the box's other hands: hands {})",
                pl.col("beside_order"),
                pl.col("end_order"),
            )
        )
        .otherwise(
            pl.format(
                ", and this table lays a re-split hand {} (box {}: hands {} from the dealer's "
                "left)",
                laid,
                seat,
                order,
            )
        )
    )
    expected = (
        pl.when(unset & differ)
        .then(
            pl.format(
                "box {} hands completed in the order {} (beside) or {} (end)",
                seat,
                pl.col("beside_order"),
                pl.col("end_order"),
            )
        )
        .otherwise(pl.format("box {} hand {} completed first", seat, hand))
    )
    found = _findings(
        wrong,
        "at",
        pl.format(
            "{} was dealt {} while split hand {} of box {} {}; (c)(2) deals to the first "
            "incomplete hand on the dealer's left before any other hand{}.",
            receiver,
            card_codes.shown(pl.col("card")),
            hand,
            seat,
            state,
            reading_text,
        ),
        expected,
        pl.format("a card to {} first", receiver.str.to_lowercase()),
    )
    # a split hand completed at last was passed over for a while: only the order of the
    # deal shows it. One never completed (fewer than two cards, no refuse) is plain from
    # its own cards, whatever the order: play went on without it
    return found.with_columns(
        wrong.select(SPLIT_TURN.where(pl.col("done").is_not_null())).to_series())


SPLIT_ORDER = register(
    Rule(
        "BJ205",
        "split-hands-out-of-order",
        "Split hands not completed in order",
        "9 NYCRR 5324.10(c)(2)",
        "error",
        GAME,
        "After a box splits, its hands are completed one at a time in the order they lie "
        "from the dealer's left, before any card goes to a later box or the dealer. Where a "
        "re-split hand lies is the house's `blackjack.resplit_hand_placement`: \"end\" (after "
        "the box's hands: hand-number order, 1, 2, 3) or \"beside\" (next to the hand it came "
        "from, the last made nearest: an 8-8 split whose hand 1 re-splits lies 1, 3, 2); "
        "unset, either order is accepted. A card dealt to a later box, the dealer, or a hand "
        "lying after a split hand that has fewer than two cards or still takes cards or "
        "actions afterwards is reported, once a box, at the first such card (unset: at the "
        "first card neither order allows). A requested card dealt late to a split box "
        "((i)(4): after a card or action of a later box, BJ808) is neither such a card nor "
        "play going on. A split hand of fewer than two cards on a box that refused an "
        "exposed card ((i)(1)) keeps what it holds: it is complete from the refuse.",
        "box 2 splits 8S 8H; hand 1 gets 3D, hand 2 gets 9C, then hand 1 hits",
        "box 2 splits 8S 8H; hand 1 gets 3D, hits 9C and stands; then hand 2 gets its card",
        check=split_hands_out_of_order,
        needs=("cards", "decisions"),
        parts=(SPLIT_TURN,),
    )
)


# --- BJ206 (c)(3)(i): no split after the third, or after a double down


def too_many_splits(ctx: GameContext) -> pl.DataFrame:
    max_splits = int(ctx.params["max_splits"])
    bad = play.held_cards(ctx, _split_decisions(ctx).filter(pl.col("owner") == "BJ206"))
    after_double = pl.col("doubled_before") > 0
    nth = pl.col("splits_before") + 1
    reason = (
        pl.when(after_double)
        .then(pl.lit("after a double down on that hand"))
        .otherwise(
            pl.format("for the {} time on the box (making {} hands)", _ordinal(nth), nth + 1)
        )
    )
    return _findings(
        bad,
        "seq",
        pl.format(
            "Box {} hand {} ({}) was split {}; (c)(3)(i) allows no split after the third on a "
            "box (four hands) or after a double down.",
            seat,
            hand,
            _cards(),
            reason,
        ),
        pl.lit(f"at most {max_splits} splits a box, none after a double down"),
        pl.format("split {}", reason),
    )


TOO_MANY_SPLITS = register(
    Rule(
        "BJ206",
        "split-after-third-or-after-double",
        "More than three splits on a box, or a split after a double down",
        "9 NYCRR 5324.10(c)(3)(i)",
        "error",
        GAME,
        "A split action on a box that had split three times already (four hands), or on a "
        "hand that had doubled down. Reported at the split; a second split of aces is "
        "BJ208's and a split of a split ace BJ207's.",
        "box 5 splits 8s a fourth time (five hands)",
        "box 5 splits 8s three times (four hands)",
        check=too_many_splits,
        needs=("decisions",),
    )
)


# --- BJ207 (c)(3)(ii): split aces one card each, no decisions


def split_ace_played(ctx: GameContext) -> pl.DataFrame:
    """Per hand made by splitting aces, the first decision on it (hit, double, or a split
    BJ208 does not report) or the first card beyond its one, whichever came first."""
    decides = action.is_in(["hit", "double"]) | (pl.col("owner") == "BJ207")
    decided = (
        _judged(ctx, pl.col("split_ace"))
        .filter(decides)
        .group_by(HAND)
        .agg(pl.col("seq").min().alias("decision_seq"), pl.col("action").sort_by("seq").first())
    )
    aces = play.ace_hands(ctx)
    held = (
        play.holdings(ctx)
        .filter(pl.col("rid").is_in(aces["rid"].implode()))
        .join(aces.select(HAND), on=HAND, how="semi")
    )
    extra = (
        held.join(aces, on=HAND)
        .filter(pl.col("until").is_null() & (pl.col("seq") > pl.col("aces_seq")))
        .sort("seq")
        .group_by(HAND)
        .agg(pl.col("seq").get(1, null_on_oob=True).alias("extra_seq"), pl.col("card"))
        .filter(pl.col("extra_seq").is_not_null())
    )
    places = replay.rounds(ctx).select("rid", *WHERE)
    where = held.select(*HAND).unique().join(places, on="rid", how="left")
    hands = (
        aces.join(decided, on=HAND, how="left")
        .join(extra, on=HAND, how="left")
        .filter(pl.col("decision_seq").is_not_null() | pl.col("extra_seq").is_not_null())
        .join(where, on=HAND, how="left")
    )
    decision_first = pl.col("decision_seq").is_not_null() & (
        pl.col("extra_seq").is_null() | (pl.col("decision_seq") < pl.col("extra_seq"))
    )
    what = (
        pl.when(decision_first)
        .then(pl.format("took a decision ({})", action))
        .otherwise(pl.format("was dealt {} cards ({})", pl.col("card").list.len(), _cards("card")))
    )
    return _findings(
        hands,
        pl.when(decision_first).then(pl.col("decision_seq")).otherwise(pl.col("extra_seq")),
        pl.format(
            "Box {} hand {}, made by splitting aces, {}; (c)(3)(ii) deals each split ace one "
            "card and allows no further card.",
            seat,
            hand,
            what,
        ),
        pl.lit("one card to each split ace and no decision"),
        what,
    )


SPLIT_ACE_PLAYED = register(
    Rule(
        "BJ207",
        "split-ace-drew-or-decided",
        "Split ace dealt more than one card or took a decision",
        "9 NYCRR 5324.10(c)(3)(ii)",
        "error",
        GAME,
        "A hand made by splitting aces that took a hit, double or split (a second split of "
        "two aces is BJ208's) or was dealt more than the one card after the split; once a "
        "hand, at the first such action or card. A recorded `stand` is not a decision that "
        "draws and is not reported; a surrender is (f)'s.",
        "box 1 splits AS AH; hand 1 gets 5D and hits",
        "box 1 splits AS AH; hand 1 gets 5D, hand 2 gets KC",
        check=split_ace_played,
        needs=("cards", "decisions"),
        also=("9 NYCRR 5324.10(g)(1)(ii)",),
    )
)


# --- BJ208 (c)(3)(iii): aces split only once


def aces_split_again(ctx: GameContext) -> pl.DataFrame:
    bad = play.held_cards(ctx, _split_decisions(ctx).filter(pl.col("owner") == "BJ208"))
    return _findings(
        bad,
        "seq",
        pl.format(
            "Box {} hand {} split aces ({}) again after aces were split on the box; "
            "(c)(3)(iii) allows a pair of aces to be split only once.",
            seat,
            hand,
            _cards(),
        ),
        pl.lit("aces split once"),
        pl.format("aces split {} times", pl.col("aces_splits_before") + 1),
    )


ACES_SPLIT_AGAIN = register(
    Rule(
        "BJ208",
        "aces-split-more-than-once",
        "Aces split more than once",
        "9 NYCRR 5324.10(c)(3)(iii)",
        "error",
        GAME,
        "A split of two aces on a box where a pair of aces was split before in the round. "
        "Reported at the second split (and not by BJ206 or BJ207).",
        "box 6 splits AS AH, hand 1 gets AD and splits again",
        "box 6 splits AS AH, hand 1 gets AD and stands on it",
        check=aces_split_again,
        needs=("cards", "decisions"),
    )
)
