"""Player hands as they stood at each decision: splits replayed, cards held at each action.

A pair's second card is recorded (`card` row) with the hand it was dealt to, before
any split; the split makes it the first card of the new hand. So the cards of a hand
are not simply its `card` rows: these frames move each split card to the hand the
split made, from the split on (final_hands.hands and final_hands.hand_facts read the hands'
final cards from here). Built once per audit through `ctx.derived`; void rounds are
left out (they are not judged on their play).

splits(ctx)     one row per split action: rid, table_id, shoe_id, round, seq, seat, hand
                (the hand split), split_no (1, 2, ... on the box), new_hand (split_no + 1:
                the conventions number a new hand one above the hands on the box so
                far), moved_seq (the card that went to the new hand: the latest card
                recorded to the split hand before the split; null when none is left)
holdings(ctx)   one row per card and hand that held it (sorted by rid, seat, hand, seq):
                rid, seat, hand, seq (the card row), card, value (ace 1), since (from when
                the hand held it: the card's seq, or the split's for a moved card), until
                (the split that took it away; null if kept), moved_in (the new hand's first
                card). The round's place (table_id, shoe_id, round) is `replay.rounds`':
                the keys alone are sorted, as the frame is large.
decisions(ctx)  one row per action row (sorted by rid, seq), with the hand as it stood
                just before it: rid, table_id, shoe_id, round, seq, seat, hand, action,
                n_cards, total, soft (over the cards then held), pair (two cards identical
                in value), natural (a two-card 21 on hand 1 of a box not split so far),
                splits_before (splits on the box before it), doubled_before (doubles
                on this hand before it), decision_no (1, 2, ... among the hand's actions,
                a `refuse` not counted),
                aces_pair (two aces held), aces_splits_before (splits of two aces on the
                box before it), split_ace (the hand was made by splitting aces, before
                this action)
held_cards(ctx, rows)  `rows` (rid, seat, hand, seq of an action) with `cards` and
                `values`: the codes and values the hand held just before the action, in
                dealing order. For the few rows a message names: decisions(ctx) carries
                only the counts, as lists for every action would cost more than the rules.
ace_hands(ctx)  one row per hand made by splitting aces: rid, seat, hand, aces_seq (the
                first aces split that made it)
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...series import placed
from .. import runs
from ..sorted_keys import sorted_by
from . import engine, replay

HAND = ["rid", "seat", "hand"]
PLACE = ["rid", "table_id", "shoe_id", "round"]


def _actions(ctx: GameContext) -> pl.DataFrame:
    acts = replay.actions(ctx).filter(pl.col("seat").is_not_null() & pl.col("hand").is_not_null())
    return replay.live(ctx, acts.select(*PLACE, "seq", "seat", "hand", "action"))


def _seat_cards(ctx: GameContext) -> pl.DataFrame:
    seat, hand = pl.col("seat"), pl.col("hand")
    dealt = (pl.col("target") == "seat") & seat.is_not_null() & hand.is_not_null()
    cards = replay.cards(ctx).select("rid", "seq", "target", "seat", "hand", "card", "value")
    return replay.live(ctx, cards.filter(dealt).drop("target"))


# --- splits -----------------------------------------------------------------------


def _numbered_splits(ctx: GameContext, splits: pl.DataFrame) -> pl.DataFrame:
    """`splits` (in seq order) with split_no, 1, 2, ... on the box, and new_hand. Numbered
    as runs of the rows sorted by box: a window over thousands of boxes costs per box."""
    box = ["rid", "seat"]
    numbered = (
        splits.with_row_index("_row")
        .sort(replay.order(ctx, splits, *box, "seq"), maintain_order=True)
        .with_columns(runs.position(box).alias("split_no"))
        .sort("_row")
    )
    return numbered.drop("_row").with_columns((pl.col("split_no") + 1).alias("new_hand"))


def build_splits(ctx: GameContext) -> pl.DataFrame:
    splits = _numbered_splits(ctx, _actions(ctx).filter(pl.col("action") == "split").sort("seq"))
    # only the hands that split can give a card to a new hand
    # (their rounds' cards picked first, by round id: only the keys are copied)
    dealt = replay.cards(ctx).select(*HAND, "seq", "target")
    dealt = dealt.filter(pl.col("rid").is_in(splits["rid"].unique().implode()))
    recorded = (
        dealt.filter(pl.col("target") == "seat")
        .select(*HAND, pl.col("seq").alias("moved_seq"))
        .join(splits.select(HAND), on=HAND, how="semi")
        .sort("moved_seq")
    )
    moved = splits.join_asof(
        recorded,
        left_on="seq",
        right_on="moved_seq",
        by=HAND,
        strategy="backward",
        check_sortedness=False,  # both sorted by seq above; by-groups cannot be checked
    )
    # a card moves once: a second split with no card dealt in between moves nothing
    first_claim = pl.col("seq") == pl.col("seq").min().over("rid", "moved_seq")
    return moved.with_columns(
        pl.when(first_claim).then(pl.col("moved_seq")).alias("moved_seq")
    ).drop("action")


def splits(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.splits", build_splits)


# --- which hand holds which card, and when -----------------------------------------


def _with_moves(ctx: GameContext, cards: pl.DataFrame, moves: pl.DataFrame) -> pl.DataFrame:
    """`cards` with the split_seq and new_hand of the move (if any) of each card (by rid
    and seq). Where (rid, seq) fits one integer and moves have one row per card, the few
    cards moved are found by that key and their moves put in place by row number, rather
    than every card joined."""
    key = replay.order(ctx, pl.concat([cards.select("rid", "seq"), moves.select("rid", "seq")]),
                       "rid", "seq")
    if len(key) > 1 or moves.select(key[0].is_duplicated().any()).item():
        return cards.join(moves, on=["rid", "seq"], how="left", maintain_order="left")
    keyed = moves.select(key[0].alias("key"), "split_seq", "new_hand")
    moved = cards.select(key[0].alias("key")).with_row_index("row")
    moved = moved.filter(pl.col("key").is_in(keyed["key"].implode())).join(keyed, on="key")
    return cards.with_columns(
        placed(moved[name], moved["row"], cards.height) for name in ("split_seq", "new_hand")
    )


def build_holdings(ctx: GameContext) -> pl.DataFrame:
    moves = (
        splits(ctx)
        .filter(pl.col("moved_seq").is_not_null())
        .select(
            "rid", pl.col("moved_seq").alias("seq"), pl.col("seq").alias("split_seq"), "new_hand"
        )
    )
    dealt = _with_moves(ctx, _seat_cards(ctx), moves)
    kept = dealt.select(
        "rid",
        "seat",
        "hand",
        "seq",
        "card",
        "value",
        pl.col("seq").alias("since"),
        pl.col("split_seq").alias("until"),
        pl.lit(False).alias("moved_in"),
    )
    moved_in = dealt.filter(pl.col("split_seq").is_not_null()).select(
        "rid",
        "seat",
        pl.col("new_hand").alias("hand"),
        "seq",
        "card",
        "value",
        pl.col("split_seq").alias("since"),
        pl.lit(None, pl.Int64).alias("until"),
        pl.lit(True).alias("moved_in"),
    )
    held = pl.concat([kept, moved_in])
    return held.sort(replay.order(ctx, held, "rid", "seat", "hand", "seq"), maintain_order=True)


def holdings(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.holdings", build_holdings)


# --- the hand at each decision -------------------------------------------------------


def _held_before(acts: pl.DataFrame, ctx: GameContext) -> pl.DataFrame:
    """One row per action (HAND, `at`: its seq) and card its hand held just before it."""
    held = holdings(ctx).select(*HAND, "seq", "card", "value", "since", "until")
    # only the rounds of `acts` (a few rows where messages need the cards)
    held = held.filter(pl.col("rid").is_in(acts["rid"].unique().implode()))
    return acts.join(held, on=HAND).filter(
        (pl.col("since") < pl.col("at"))
        & (pl.col("until").is_null() | (pl.col("until") >= pl.col("at")))
    )


def by_hand_id(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` sorted by its hand id and marked so, where the ids are integers (never
    null): joined on a sorted key on both sides, the rows are merged, not hashed."""
    hid = frame["hid"]
    if hid.dtype != pl.Int64 or hid.null_count():
        return frame
    return sorted_by(frame, "hid")


def _held_at_actions(ctx: GameContext, acts: pl.DataFrame) -> pl.DataFrame:
    """Per action of `acts` (numbered `aid`): how many cards its hand held just before
    it, their total, and whether they were a pair (of aces). Every action is joined to
    every card of its hand by one integer hand id, cheaper to match than three keys
    (holdings come sorted by it)."""
    hand_id = replay.hand_id(ctx)
    acts = by_hand_id(acts.select("aid", hand_id, pl.col("seq").alias("at")))
    held = by_hand_id(holdings(ctx).select(hand_id, "value", "since", "until"))
    value = pl.col("value").cast(pl.Int32)
    held = acts.join(held, on="hid", maintain_order="left").filter(
        (pl.col("since") < pl.col("at"))
        & (pl.col("until").is_null() | (pl.col("until") >= pl.col("at")))
    )
    # kept in the actions' order, each action's cards are one run of rows: counted at the
    # run's ends. Two values are a pair when equal, n * sum of squares = sum squared (the
    # equality case of Cauchy-Schwarz); aces when every value is an ace.
    counts = runs.totals(
        held,
        ["aid"],
        {
            "hard": value,
            "squares": value * value,
            "n_values": value.is_not_null().cast(pl.Int32),
            "n_aces": (value == engine.ACE).cast(pl.Int32),
            "n_above_ace": (value > engine.ACE).cast(pl.Int32),
        },
    ).rename({"rows": "n_cards"})
    has_ace = pl.col("n_aces") > 0
    all_equal = (pl.col("n_values") > 0) & (
        pl.col("n_values") * pl.col("squares") == pl.col("hard") * pl.col("hard")
    )
    all_aces = has_ace & (pl.col("n_above_ace") == 0)
    # (g)(1) judges the total as it stood when the player decided: the total of the
    # cards the hand held just before the action
    two = pl.col("n_cards") == 2
    return counts.select(
        "aid",
        pl.col("n_cards").cast(pl.Int64),
        engine.total_from(pl.col("hard"), has_ace).alias("total"),
        engine.soft_from(pl.col("hard"), has_ace).alias("soft"),
        (two & all_equal).alias("pair"),
        (two & all_aces).alias("aces_pair"),
    )


def held_cards(ctx: GameContext, rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` with `cards` and `values`: what the hand held just before the action at
    `seq` (module docstring); empty lists where it held none."""
    acts = rows.select(*HAND, pl.col("seq").alias("at")).unique()
    lists = (
        _held_before(acts, ctx)
        .sort("seq")
        .group_by("rid", "at")
        .agg(pl.col("card").alias("cards"), pl.col("value").alias("values"))
        .rename({"at": "seq"})
    )
    return rows.join(lists, on=["rid", "seq"], how="left").with_columns(
        pl.col("cards").fill_null(pl.lit([], pl.List(pl.String))),
        pl.col("values").fill_null(pl.lit([], pl.List(pl.Int8))),
    )


def _per_action(counts: pl.DataFrame, n: int) -> pl.DataFrame:
    """The columns of `counts` (at most one row per `aid`) on rows 0 .. n-1 by aid, null
    where an action has no row: the aids are the actions' row numbers, so each column is
    scattered into place rather than joined."""
    aid = counts["aid"]
    if counts.height == n and aid.is_sorted():  # a row for every action, in order
        return counts.drop("aid")
    return pl.DataFrame([placed(counts[name], aid, n) for name in counts.columns if name != "aid"])


def _running_numbers(ctx: GameContext, acts: pl.DataFrame) -> pl.DataFrame:
    """The counted columns of `decisions` for `acts` (numbered `aid`), in the order the
    frame is sorted into. Only the keys and the action are carried through the sorts:
    the place columns (strings) are gathered once, at the end."""
    narrow = acts.select("aid", *HAND, "seq", "action")
    narrow = narrow.hstack(_per_action(_held_at_actions(ctx, narrow), narrow.height))
    action = pl.col("action")
    narrow = narrow.with_columns(
        pl.col("n_cards").fill_null(0),
        pl.col("total").fill_null(0),
        pl.col("soft", "pair", "aces_pair").fill_null(False),
    )
    split, double = action == "split", action == "double"
    box, aces_split = ["rid", "seat"], split & pl.col("aces_pair")
    narrow = replay.in_order(ctx, narrow, "rid", "seat", "hand", "seq").with_columns(
        runs.sum_before(double.cast(pl.Int64), HAND).alias("doubled_before"),
        # a refuse of an exposed card ((i)(1)) is not counted: it is no first decision
        # of (f)(1), a refused hand only keeps what it holds
        (runs.sum_before((action != "refuse").cast(pl.Int64), HAND) + 1).alias("decision_no"),
    )
    narrow = replay.in_order(ctx, narrow, "rid", "seat", "seq").with_columns(
        runs.sum_before(split.cast(pl.Int64), box).alias("splits_before"),
        runs.sum_before(aces_split.cast(pl.Int64), box).alias("aces_splits_before"),
    )
    aces = _ace_hands_from(narrow, splits(ctx))
    natural = (
        (pl.col("hand") == 1)
        & (pl.col("n_cards") == 2)
        & (pl.col("total") == engine.TWENTY_ONE)
        & (pl.col("splits_before") == 0)
    )
    narrow = narrow.with_columns(
        natural.alias("natural"),
        (pl.col("seq") > _aces_seq(narrow, aces)).fill_null(False).alias("split_ace"),
    )
    return replay.in_order(ctx, narrow, "rid", "seq")


def _aces_seq(acts: pl.DataFrame, aces: pl.DataFrame) -> pl.Series:
    """`aces_seq` of the hand (in `aces`, by HAND) of each row of `acts`, null where it
    has none. Few rounds split aces: only their rows are joined, and the seqs put in
    place by row number."""
    rows = acts.select(*HAND).with_row_index("row")
    rows = rows.filter(pl.col("rid").is_in(aces["rid"].implode()))
    found = rows.join(aces, on=HAND, how="inner")
    return placed(found["aces_seq"], found["row"], acts.height)


def build_decisions(ctx: GameContext) -> pl.DataFrame:
    # numbered, so that the cards held are counted and joined back by one integer
    acts = _actions(ctx).with_row_index("aid")
    counted = _running_numbers(ctx, acts)
    if not counted["aid"].is_sorted():  # the actions were not in round and seq order
        acts = acts[counted["aid"]]
    return acts.drop("aid").hstack(counted.drop("aid", *HAND, "seq", "action"))


def decisions(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.decisions", build_decisions)


def _ace_hands_from(acts: pl.DataFrame, split_rows: pl.DataFrame) -> pl.DataFrame:
    """Both hands of every split of two aces ((c)(3)(ii)), from the first such split."""
    aces = acts.filter((pl.col("action") == "split") & pl.col("aces_pair")).select(*HAND, "seq")
    new = aces.join(split_rows.select("rid", "seq", "new_hand"), on=["rid", "seq"]).select(
        "rid", "seat", pl.col("new_hand").alias("hand"), "seq"
    )
    return pl.concat([aces, new]).group_by(HAND).agg(pl.col("seq").min().alias("aces_seq"))


def ace_hands(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.ace_hands", lambda c: _ace_hands_from(decisions(c), splits(c)))
