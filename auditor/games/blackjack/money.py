"""Every blackjack wager with what it was owed and how it was settled: the money frame.

Built once per audit (through `ctx.derived`) from the hands as they ended
(`final_hands.hand_facts`: a split pair's second card counted on the hand the split
made) and their surrenders, the dealer's hand (`replay.rounds`) and the table's
house settings, so that the insurance, surrender, several-patron and settlement
rules all judge the same numbers. Money is integer cents throughout; odds such as
"3:2" are read as two integers, so $25 at 3:2 pays 2500 * 3 // 2 = 3750 cents and
at 6:5 3000.

`owed(ctx)`: one row per wager, keyed rid, seat, hand, bet, player_id (null:
the seated player); a patron's several rows on one key are one wager (summed).
Sorted by rid, seat, hand, player_id, wager_seq.
  wid           the wager's row number in the frame
  table_id shoe_id round
  staked_cents wager_seq wager_rows   the stake, its first row, how many rows
  judged        the outcome can be replayed: the round is not void, the dealer has
                two cards and (but for insurance) the hand has two cards
  outcome       main, double, split: win / natural / push / lose / bust / surrendered /
                dead (the hand was declared dead, (i)(3), (i)(4)(ii): owed a push);
                insurance: win (the dealer has blackjack) / lose; null where not judged
  dead          a main, double or split wager on a hand declared dead
  total n_cards natural busted surrendered surrender_seq next_seq   from the hand:
                next_seq is the first card or action of the round after the surrender
  up hole dealer_total dealer_blackjack dealer_busted play_seq   from the dealer:
                play_seq is the first action, or card after the hole card, of the round
  odds          the pay odds ("1:1", the table's blackjack_pays or insurance_pays)
  expected_kind pay / push / collect / surrender (half collected, half returned)
  due_cents     a pay's winnings at the odds, before the payout limit
  room_cents    what the table's payout_limit leaves the wager: the limit per hand and
                wager-holder less the winnings owed on that holder's earlier wagers on
                the hand ((a)(2)(vi)); null for insurance and for wagers not paid
  expected_cents      pay: the winnings at the odds within the room; push, collect: the
                      stake; surrender: the half collected (stake // 2)
  expected_max_cents  the same, rounded up where the odds or the half give a part cent
  expected_net  the patron's result: +winnings, 0, -stake, -half
  n_settled n_pay n_push n_collect pay_cents push_cents collect_cents   the recorded
                collect / pay / push rows with the wager's key
  settled_kind settled_cents settled_seq last_settled_seq   the first row, the last seq
  settled_net   the patron's recorded result: pay - collect where there is either, else
                push - stake; 0 with no row (the chips stay where they were)
  settled_once  the rows are one settlement (surrender: at most one collect and one push)
  settled_right that settlement is the one owed (kind and amount)
  amount_cents  expected_net - settled_net: positive when the patron was underpaid or
                overcharged
  net_sid       the `nets.scopes` row of the settle_net (format 1.3) that settles the
                wager, null where none does: the single-settlement rules leave such a
                wager to BJ707

`with_words(ctx, frame)`: rows of `owed` with words for messages: who, outcome_text,
expected_text, observed_text (the recorded rows: "paid $20.00, pushed $5.00", or
"never settled") and odds ("3:2"). Rules find their wagers on `owed` and put words
to those only; `wagers(ctx)` is `owed` with the words on every row (for the report).

`settlements(ctx)`: one row per collect / pay / push row of a round, sorted by rid,
seq: the replay columns plus `matched` (a wager has its key), `judged` (that
wager's), `void` (the round's), `hand_wagered` (the patron has a wager on that
hand), `nth` (1, 2, ... among the wager's rows; null with no wager), `extra` (a
row beyond the wager's one settlement: a second row, or for a surrender a second
collect or push or a third row) and `row_net` (what the row moved towards the
patron: pay and push +amount, collect -amount).
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...series import placed
from .. import nets, runs
from ..sorted_keys import marked_sorted
from . import engine, final_hands, irregularities, missed_cards, replay

KEY = ["rid", "seat", "hand", "bet", "player_id"]
HAND = ["rid", "seat", "hand"]
HOLDER = ["rid", "seat", "hand", "player_id"]
ROUND = ["table_id", "shoe_id", "round"]
HAND_BETS = ("main", "double", "split")
CHIP_UNIT_CENTS = 100  # the conventions' chip unit: $1 ((e)(2) "the next unit")

VERB = {"pay": "paid", "push": "pushed", "collect": "collected"}
# While `owed` is built, outcome and expected_kind are numbers: the index of their word
# here (cheaper to compare and to choose between than strings); the words replace them
# at the end.
OUTCOMES = ("win", "natural", "push", "lose", "bust", "surrendered", "dead")
KINDS = ("pay", "push", "collect", "surrender")
KIND_ORDER = {"collect": 0, "pay": 1, "push": 2}  # as their names sort


def dollars(cents: pl.Expr) -> pl.Expr:
    """"$25.00" from integer cents (the absolute value: signs are said in words)."""
    cents = cents.abs()
    return pl.format("${}.{}", cents // 100, (cents % 100).cast(pl.String).str.zfill(2))


def insurance_limit(main: pl.Expr) -> pl.Expr:
    """The most insurance (e)(2) allows on an initial wager of `main` cents: half of it,
    or up to the next chip unit where half cannot be bet ($25 -> $13, $20 -> $10)."""
    unit = CHIP_UNIT_CENTS
    return (main + 2 * unit - 1) // (2 * unit) * unit


def card_name(value: pl.Expr) -> pl.Expr:
    """"an ace", "a ten-value card", "an 8", "a 6": a card value (ace 1) in words."""
    return (
        pl.when(value == 1)
        .then(pl.lit("an ace"))
        .when(value == 10)
        .then(pl.lit("a ten-value card"))
        .when(value == 8)
        .then(pl.lit("an 8"))
        .otherwise(pl.format("a {}", value))
    )


def _odds_part(column: str, part: int) -> pl.Expr:
    """The numerator (1) or denominator (2) of odds written "N:M"."""
    return pl.col(column).str.extract(r"^(\d+):(\d+)$", part).cast(pl.Int64)


# --- the round: dealer, odds, limit, when play began ---------------------------


def _play_rows(ctx: GameContext, rids: pl.Series) -> pl.DataFrame:
    """The card and action rows of the rounds `rids`: what marks play going on."""
    rounds = pl.col("rid").is_in(rids.unique().implode())
    play = (replay.cards(ctx), replay.actions(ctx))
    return pl.concat([frame.select("rid", "seq").filter(rounds) for frame in play])


def _play_seq(ctx: GameContext) -> pl.DataFrame:
    """First action, or card after the hole card, of each round with dealer cards: the
    check is over by then. Where a box's second card came after the hole card ((i)(3),
    dealt late), the first card after it: play goes on from the first card after every
    box and the dealer hold two cards (hand-history-v1 1.2)."""
    hole = replay.dealer(ctx).select(
        "rid", pl.col("dealer_seqs").list.get(1, null_on_oob=True).alias("hole_seq")
    )
    hole = _after_late_second_cards(ctx, hole)
    acts = replay.actions(ctx).select("rid", "seq")
    firsts = [replay.least_by_rid(acts), _card_after_hole(ctx, hole)]
    play = hole.select("rid", pl.min_horizontal(replay.by_rid(ctx, f, "seq") for f in firsts))
    return play.rename({"seq": "play_seq"}).filter(pl.col("play_seq").is_not_null())


def _after_late_second_cards(ctx: GameContext, hole: pl.DataFrame) -> pl.DataFrame:
    """`hole` (rid, hole_seq) with hole_seq moved on to the last box's second card of the
    round where one came after the hole card: a few rounds, found by one comparison per
    box."""
    seconds = irregularities.box_second_cards(ctx)
    late = seconds.filter(pl.col("seq") > replay.by_rid(ctx, hole, "hole_seq"))
    if late.is_empty():
        return hole
    last = late.group_by("rid").agg(pl.col("seq").max().alias("late_seq"))
    return hole.join(last, on="rid", how="left", maintain_order="left").select(
        "rid", pl.max_horizontal("hole_seq", "late_seq").alias("hole_seq")
    )


def _card_after_hole(ctx: GameContext, hole: pl.DataFrame) -> pl.DataFrame:
    """rid and seq of the first card after the hole card (`hole_seq`) of each round that
    has one."""
    holes = hole.filter(pl.col("hole_seq").is_not_null()).rename({"hole_seq": "seq"})
    after = replay.next_seq(ctx, replay.cards(ctx), holes)
    if after is not None:
        return holes.with_columns(after).filter(pl.col("seq").is_not_null())
    cards = replay.cards(ctx).select("rid", "seq")
    return replay.least_by_rid(cards.filter(pl.col("seq") > replay.by_rid(ctx, hole, "hole_seq")))


def _table_odds(ctx: GameContext) -> pl.DataFrame:
    """Each table's pay odds as integers and its payout limit in cents: read once per
    table rather than once per round."""
    limit = (pl.col("payout_limit").cast(pl.Float64) * 100).round().cast(pl.Int64)
    return ctx.tables.select(
        "table_id",
        limit.alias("limit_cents"),
        _odds_part("blackjack_pays", 1).alias("bj_num"),
        _odds_part("blackjack_pays", 2).alias("bj_den"),
        _odds_part("insurance_pays", 1).alias("ins_num"),
        _odds_part("insurance_pays", 2).alias("ins_den"),
    )


def _rounds(ctx: GameContext) -> pl.DataFrame:
    return (
        replay.rounds(ctx)
        .select(
            "rid", *ROUND, "void", "up", "hole", "dealer_n_cards", "dealer_total",
            "dealer_blackjack", "dealer_busted",
        )
        .join(_table_odds(ctx), on="table_id", how="left")
        .join(_play_seq(ctx), on="rid", how="left")
        .with_columns(
            (~pl.col("void") & (pl.col("dealer_n_cards").fill_null(0) >= 2)).alias("dealt"),
        )
    )


# --- the hand: outcome facts and the surrender -----------------------------------


def _hands(ctx: GameContext) -> pl.DataFrame:
    """Each hand at the end of play (`final_hands.hand_facts`: a split pair's second card on
    the hand the split made) and when play went on after its surrender."""
    n_cards = pl.col("n_cards")
    facts = final_hands.hand_facts(ctx).with_columns(replay.hand_id(ctx))
    # (a)(2)(iii): a two-card 21 on hand 1 of a box with no other hand that holds cards
    split_box = replay.per_box(ctx, facts, pl.when(n_cards > 0).then(pl.col("hand")).max()) > 1
    hands = facts.select(
        *HAND, "total", n_cards.cast(pl.Int64), "busted", "surrendered", "surrender_seq",
        ((n_cards == 2) & (pl.col("total") == engine.TWENTY_ONE) & ~split_box).alias("natural"),
        "hid",
    )
    surrenders = hands.filter("surrendered").select("hid", "rid", "surrender_seq")
    # joined by the hand id (null ids, of hands without a seat or hand, match nothing)
    return hands.join(_play_after(ctx, surrenders), on="hid", how="left", maintain_order="left")


def _play_after(ctx: GameContext, surrenders: pl.DataFrame) -> pl.DataFrame:
    """Per surrendered hand (hid, rid, surrender_seq): `next_seq`, the first card or action
    of the round after it ((f)(1)(i) "collect immediately": before play goes on)."""
    asked = surrenders.select("rid", pl.col("surrender_seq").alias("seq"))
    play = (replay.cards(ctx), replay.actions(ctx))
    nexts = [replay.next_seq(ctx, frame, asked) for frame in play]
    if all(found is not None for found in nexts):
        after = surrenders.select("hid", pl.min_horizontal(nexts).alias("next_seq"))
        return after.filter(pl.col("next_seq").is_not_null())
    return (
        _play_rows(ctx, surrenders["rid"])
        .join(surrenders, on="rid", how="inner")
        .filter(pl.col("seq") > pl.col("surrender_seq"))
        .group_by("hid")
        .agg(pl.col("seq").min().alias("next_seq"))
    )


# --- what was placed and what was recorded ------------------------------------


def _numbered(frame: pl.DataFrame, column: str) -> tuple[pl.Expr, int]:
    """`column` as a number and how many numbers there are: 0 for null, then 1, 2, ...
    in the order of the values of `frame`, so that sorting by the number sorts as by the
    values (nulls first). A value `frame` does not hold has no number (null)."""
    values = frame[column].drop_nulls().unique().sort()
    number = pl.col(column).replace_strict(
        values, pl.Series(range(1, values.len() + 1)), default=None, return_dtype=pl.Int64
    )
    return pl.when(pl.col(column).is_null()).then(0).otherwise(number), values.len() + 1


def _build_placed(ctx: GameContext) -> pl.DataFrame:
    # sorted by hand, holder, bet and seq, each wager's rows are a run: its sums are read
    # off the run's ends (most wagers are one row: a group-by would cost per wager), and
    # the holder and bet are numbered, as integers sort and compare cheaper than strings
    wagers = replay.wagers(ctx).select(*KEY, "amount_cents", "seq")
    (player, players), (bet, bets) = _numbered(wagers, "player_id"), _numbered(wagers, "bet")
    wagers = wagers.with_columns(player.alias("_player"), bet.alias("_bet"))  # numbered once
    player, bet = (pl.col("_player"), players), (pl.col("_bet"), bets)
    rows = wagers.sort(
        replay.order(ctx, wagers, "rid", "seat", "hand", player, bet, "seq"), maintain_order=True
    )
    wager = ["rid", "seat", "hand", "_player", "_bet"]
    wagered = runs.totals(
        rows, wager, {"staked_cents": pl.col("amount_cents")}, kept=["bet", "player_id", "seq"]
    ).select(
        *KEY,
        "staked_cents",
        "seq",  # the wager's first row
        pl.col("rows").cast(pl.Int64).alias("wager_rows"),
        "_player",
    )
    by_holder = replay.order(ctx, wagered, "rid", "seat", "hand", player, "seq")
    wagered = wagered.sort(by_holder, maintain_order=True).rename({"seq": "wager_seq"})
    return wagered.drop("_player").with_row_index("wid")


def _placed(ctx: GameContext) -> pl.DataFrame:
    """One row per wager (KEY), numbered `wid` in holder and wager_seq order."""
    return ctx.derived("blackjack.money.placed", _build_placed)


def _build_settlement_rows(ctx: GameContext) -> pl.DataFrame:
    wagered = _placed(ctx)
    wids = wagered.select(*KEY, "wid")
    rows = replay.in_order(ctx, replay.settlements(ctx), "rid", "seq")
    # the key as one integer (the hand, the holder's number among the wagers' and the
    # bet's code), where no part of it is null and it fits
    both = pl.concat([wids.select(*HAND, "bet"), rows.select(*HAND, "bet")])
    player = _numbered(wagered, "player_id")
    key = replay.order(ctx, both, *HAND, player, _bet_code(both))
    if len(key) > 1:
        return rows.join(wids, on=KEY, how="left", nulls_equal=True, maintain_order="left")
    # keys are unique among the wagers: one wid per row, joined on the key alone
    keyed = wids.select(key[0].alias("key"), "wid")
    wid = rows.select(key[0].alias("key")).join(keyed, on="key", how="left", maintain_order="left")
    return rows.with_columns(wid["wid"])


def _bet_code(frame: pl.DataFrame) -> tuple[pl.Expr, int]:
    """The bet as a number for matching bets, not for ordering them: its categorical code
    plus one, 0 for null (as `_numbered`, the number of numbers beside it). The bets of
    wagers and settlements are cut from the events' one column, so equal bets have equal
    codes, and reading a code costs nothing (bets not categorical are numbered)."""
    if not isinstance(frame.schema["bet"], pl.Categorical):
        return _numbered(frame, "bet")
    code = pl.col("bet").to_physical().cast(pl.Int64) + 1
    return code.fill_null(0), int(frame.select(code.max()).item() or 0) + 1


def _settlement_rows(ctx: GameContext) -> pl.DataFrame:
    """The collect / pay / push rows (sorted by rid, seq), each with the `wid` of the wager
    with its key (null: none): matched once by key, then by the integer."""
    return ctx.derived("blackjack.money.settlement_rows", _build_settlement_rows)


def _row_text(event: pl.Expr, cents: pl.Expr) -> pl.Expr:
    return pl.format("{} {}", event.replace_strict(VERB, default=event), dollars(cents))


def _settled(ctx: GameContext) -> pl.DataFrame:
    """Per wager (by wid, sorted) its recorded rows: counts, sums, the first and last.
    Nearly every wager has one row: those are read off it, and only the others grouped
    (by a column marked sorted: read as runs, not hashed). The sort is stable, so each
    wager's rows stay in seq order."""
    rows = _settlement_rows(ctx).select("wid", "event", "amount_cents", "seq")
    rows = rows.filter(pl.col("wid").is_not_null()).sort("wid", maintain_order=True)
    rows = rows.with_columns(pl.col("wid").set_sorted())
    first = runs.starts(["wid"])
    marks = rows.select(first.alias("first"), (first & runs.ends(["wid"])).alias("alone"))
    settled = rows.filter(marks["first"]).select("wid", *_one_row_settled())
    # the wagers of several rows: grouped, and their numbers put in place (both in wid order)
    several = rows.filter(~marks["alone"]).group_by("wid", maintain_order=True)
    several = several.agg(*_rows_settled())
    at = (~marks["alone"]).filter(marks["first"]).arg_true()
    return settled.with_columns(
        settled[name].scatter(at, several[name]) for name in several.columns if name != "wid"
    ).with_columns(pl.col("wid").set_sorted())


def _rows_settled() -> list[pl.Expr]:
    """The columns of `_settled` as aggregations over a wager's rows."""
    event, cents = pl.col("event"), pl.col("amount_cents")
    return [
        pl.len().cast(pl.Int64).alias("n_settled"),
        *((event == kind).sum().cast(pl.Int64).alias(f"n_{kind}") for kind in VERB),
        *(
            pl.when(event == kind).then(cents).otherwise(0).sum().alias(f"{kind}_cents")
            for kind in VERB
        ),
        event.first().alias("settled_kind"),
        cents.first().alias("settled_cents"),
        pl.col("seq").first().alias("settled_seq"),
        pl.col("seq").last().alias("last_settled_seq"),
    ]


def _one_row_settled() -> list[pl.Expr]:
    """`_rows_settled` for a wager of one row, on its row (a sum of nothing is 0)."""
    event, cents = pl.col("event"), pl.col("amount_cents")
    return [
        pl.lit(1, pl.Int64).alias("n_settled"),
        *(
            (event == kind).fill_null(False).cast(pl.Int64).alias(f"n_{kind}")
            for kind in VERB
        ),
        *(
            pl.when(event == kind).then(cents).otherwise(0).fill_null(0).alias(f"{kind}_cents")
            for kind in VERB
        ),
        event.alias("settled_kind"),
        cents.alias("settled_cents"),
        pl.col("seq").alias("settled_seq"),
        pl.col("seq").alias("last_settled_seq"),
    ]


def _observed_text(ctx: GameContext, frame: pl.DataFrame) -> pl.DataFrame:
    """The recorded rows of the wagers of `frame` in words: "paid $20.00, pushed $5.00"."""
    rows = _settlement_rows(ctx).filter(pl.col("wid").is_in(frame["wid"].implode()))
    return rows.group_by("wid").agg(
        _row_text(pl.col("event"), pl.col("amount_cents")).str.join(", ").alias("observed_text")
    )


# --- what each wager was owed ---------------------------------------------------


def _code(words: tuple[str, ...], word: str) -> pl.Expr:
    """The number that stands for `word` among `words` (see OUTCOMES)."""
    return pl.lit(words.index(word), pl.UInt8)


def _is(column: str, words: tuple[str, ...], *among: str) -> pl.Expr:
    """Whether the numbered column `column` holds one of the words `among`."""
    return pl.col(column).is_in([words.index(word) for word in among])


def _words(column: str, words: tuple[str, ...]) -> pl.Expr:
    """The numbered column `column` as its words (null stays null)."""
    return pl.lit(pl.Series(words, dtype=pl.String)).gather(pl.col(column)).alias(column)


def _outcome() -> pl.Expr:
    """The wager's result: insurance by the hole card (e)(1), a hand by (a)(2)(iii), (v),
    (f); as its number in OUTCOMES."""
    dealer_bj, natural, total = pl.col("dealer_blackjack"), pl.col("natural"), pl.col("total")

    def said(word: str) -> pl.Expr:
        return _code(OUTCOMES, word)

    hand = (
        pl.when(pl.col("dead"))
        .then(said("dead"))
        .when(pl.col("surrendered"))
        .then(said("surrendered"))
        .when(pl.col("busted"))  # a bust loses even when the dealer busts too
        .then(said("bust"))
        .when(dealer_bj)
        .then(pl.when(natural).then(said("push")).otherwise(said("lose")))
        .when(natural)
        .then(said("natural"))
        .when(pl.col("dealer_busted") | (total > pl.col("dealer_total")))
        .then(said("win"))
        .when(total == pl.col("dealer_total"))
        .then(said("push"))
        .otherwise(said("lose"))
    )
    insurance = pl.when(dealer_bj).then(said("win")).otherwise(said("lose"))
    return (
        pl.when(~pl.col("judged"))
        .then(pl.lit(None, pl.UInt8))
        .when(pl.col("bet") == "insurance")
        .then(insurance)
        .otherwise(hand)
    )


def _expected_kind() -> pl.Expr:
    """What the outcome is owed, as its number in KINDS."""
    surrendered = _is("outcome", OUTCOMES, "surrendered")
    return (
        pl.when(_is("outcome", OUTCOMES, "win", "natural"))
        .then(_code(KINDS, "pay"))
        # (i)(3), (i)(4)(ii): a dead hand's wagers are returned
        .when(_is("outcome", OUTCOMES, "push", "dead"))
        .then(_code(KINDS, "push"))
        .when(_is("outcome", OUTCOMES, "lose", "bust"))
        .then(_code(KINDS, "collect"))
        # (f)(1)(ii): the whole wager is collected when the dealer has blackjack
        .when(surrendered & pl.col("dealer_blackjack"))
        .then(_code(KINDS, "collect"))
        .when(surrendered)
        .then(_code(KINDS, "surrender"))
    )


def _odds() -> list[pl.Expr]:
    bet, natural = pl.col("bet"), _is("outcome", OUTCOMES, "natural")
    num = (
        pl.when(bet == "insurance")
        .then(pl.col("ins_num"))
        .when(natural)
        .then(pl.col("bj_num"))
        .otherwise(pl.lit(1, pl.Int64))  # (a)(2)(v): any other win is paid even money
    )
    den = (
        pl.when(bet == "insurance")
        .then(pl.col("ins_den"))
        .when(natural)
        .then(pl.col("bj_den"))
        .otherwise(pl.lit(1, pl.Int64))
    )
    return [num.alias("odds_num"), den.alias("odds_den")]


def _payout_room() -> pl.Expr:
    """Winnings the limit still allows this wager: the limit per hand and wager-holder
    ((a)(2)(vi)) less what the holder's earlier wagers on the hand were owed. The frame
    is sorted by holder and wager_seq."""
    limited = pl.col("bet").is_in(HAND_BETS) & _is("expected_kind", KINDS, "pay")
    due = pl.when(limited).then(pl.col("due_cents")).otherwise(0)
    before = runs.sum_before(due, HOLDER)
    room = (pl.col("limit_cents") - before).clip(lower_bound=0)
    return pl.when(limited).then(room)


def _expected_amounts() -> list[pl.Expr]:
    stake, room = pl.col("staked_cents"), pl.col("room_cents")
    pay, push, collect, surrender = (_is("expected_kind", KINDS, kind) for kind in KINDS)
    exact, den = stake * pl.col("odds_num"), pl.col("odds_den")
    low = pl.min_horizontal(exact // den, room)  # min ignores a null room (insurance)
    high = pl.min_horizontal((exact + den - 1) // den, room)
    cents = (
        pl.when(pay).then(low).when(surrender).then(stake // 2)
        .when(pl.col("expected_kind").is_not_null()).then(stake)
    )
    most = pl.when(pay).then(high).when(surrender).then((stake + 1) // 2).otherwise(cents)
    net = (
        pl.when(pay).then(pl.col("expected_cents")).when(push).then(0)
        .when(collect).then(-stake)
        .when(surrender).then(-pl.col("expected_cents"))
    )
    return [cents.alias("expected_cents"), most.alias("expected_max_cents"), net]


def _settled_checks() -> list[pl.Expr]:
    n, kind, cents = pl.col("n_settled"), pl.col("settled_kind"), pl.col("settled_cents")
    stake = pl.col("staked_cents")
    pay, push, collect, surrender = (_is("expected_kind", KINDS, kind) for kind in KINDS)
    low, high = pl.col("expected_cents"), pl.col("expected_max_cents")
    surrendered = _is("outcome", OUTCOMES, "surrendered")
    once = (
        pl.when(surrendered)
        .then(
            n.is_between(1, 2)
            & (pl.col("n_collect") <= 1) & (pl.col("n_push") <= 1) & (pl.col("n_pay") <= 1)
        )
        .otherwise(n == 1)
    )
    one = n == 1
    right = (
        pl.when(pay)
        .then(
            one & (kind == "pay") & cents.is_between(low, high)
            # a pay the limit leaves nothing for returns the stake: a push is as right
            | one & (high == 0) & (kind == "push") & (cents == stake)
        )
        .when(push)
        .then(one & (kind == "push") & (cents == stake))
        .when(collect)
        .then(one & (kind == "collect") & (cents == stake))
        .when(surrender)
        .then(
            (n == 2) & (pl.col("n_collect") == 1) & (pl.col("n_push") == 1)
            & pl.col("collect_cents").is_between(low, high)
            & (pl.col("collect_cents") + pl.col("push_cents") == stake)
        )
    )
    net = (
        pl.when(n == 0)
        .then(0)
        .when(pl.col("n_pay") + pl.col("n_collect") > 0)
        .then(pl.col("pay_cents") - pl.col("collect_cents"))
        .otherwise(pl.col("push_cents") - stake)
    )
    return [once.alias("settled_once"), right.alias("settled_right"), net.alias("settled_net")]


# --- words ------------------------------------------------------------------------


def _who() -> pl.Expr:
    patron = (
        pl.when(pl.col("player_id").is_not_null())
        .then(pl.format(" of patron {}", "player_id"))
        .otherwise(pl.lit(""))
    )
    stake = dollars(pl.col("staked_cents"))
    return pl.format("Box {} hand {} {} wager{} of {}", "seat", "hand", "bet", patron, stake)


def _outcome_text() -> pl.Expr:
    outcome, total, dealer = pl.col("outcome"), pl.col("total"), pl.col("dealer_total")
    dealer_bj = pl.col("dealer_blackjack")
    return (
        pl.when(pl.col("bet") == "insurance")
        .then(
            pl.when(dealer_bj)
            .then(pl.lit("the dealer had blackjack"))
            .otherwise(
                pl.format("the dealer's hole card was {}, not a ten", card_name(pl.col("hole")))
            )
        )
        .when(outcome == "dead")
        .then(pl.lit("the hand was declared dead"))
        .when(outcome == "surrendered")
        .then(
            pl.format(
                "it was surrendered against {}{}", card_name(pl.col("up")),
                pl.when(dealer_bj)
                .then(pl.lit(" and the dealer had blackjack"))
                .otherwise(pl.lit("")),
            )
        )
        .when(outcome == "bust")
        .then(
            pl.format(
                "the hand busted with {}{}", total,
                pl.when(pl.col("dealer_busted"))
                .then(pl.format(" (the dealer busted too, with {})", dealer))
                .otherwise(pl.lit("")),
            )
        )
        .when(dealer_bj & pl.col("natural"))
        .then(pl.lit("a natural against the dealer's blackjack"))
        .when(dealer_bj)
        .then(pl.format("the hand's {} lost to the dealer's blackjack", total))
        .when(outcome == "natural")
        .then(pl.lit("the hand was a natural"))
        .when(pl.col("dealer_busted") & (outcome == "win"))
        .then(pl.format("the hand's {} won when the dealer busted with {}", total, dealer))
        .when(outcome == "win")
        .then(pl.format("the hand's {} beat the dealer's {}", total, dealer))
        .when(outcome == "push")
        .then(pl.format("the hand tied the dealer at {}", total))
        .when(outcome == "lose")
        .then(pl.format("the hand's {} lost to the dealer's {}", total, dealer))
    )


def _expected_text() -> pl.Expr:
    kind, cents = pl.col("expected_kind"), pl.col("expected_cents")
    capped = pl.col("room_cents").is_not_null() & (pl.col("room_cents") < pl.col("due_cents"))
    pay = pl.format(
        "paid {} ({}:{}{})", dollars(cents), "odds_num", "odds_den",
        pl.when(capped)
        .then(pl.format(", capped at the {} payout limit", dollars(pl.col("limit_cents"))))
        .otherwise(pl.lit("")),
    )
    return (
        pl.when(kind == "pay")
        .then(pay)
        .when(kind == "surrender")
        .then(
            pl.format(
                "collected {}, pushed {}", dollars(cents),
                dollars(pl.col("staked_cents") - cents),
            )
        )
        .when(kind.is_not_null())
        .then(_row_text(kind, pl.col("staked_cents")))
    )


# --- the frames -------------------------------------------------------------------


def build_owed(ctx: GameContext) -> pl.DataFrame:
    hand_id = replay.hand_id(ctx)
    hands = marked_sorted(_hands(ctx).drop(HAND), "hid")
    rounds = marked_sorted(replay.in_order(ctx, _rounds(ctx), "rid"), "rid")
    frame = (
        marked_sorted(_placed(ctx), "rid")
        .join(rounds, on="rid", how="left", maintain_order="left")
        .with_columns(hand_id)
    )
    frame = (
        marked_sorted(frame, "hid")
        .join(hands, on="hid", how="left", maintain_order="left")
        .with_columns(_on_dead_hand(ctx))
        .drop("hid")
        .join(_settled(ctx), on="wid", how="left", maintain_order="left")
    )
    hand_known = (pl.col("bet") == "insurance") | (pl.col("n_cards").fill_null(0) >= 2)
    counts = ["n_settled", "n_pay", "n_push", "n_collect", "pay_cents", "push_cents",
              "collect_cents"]
    # one query: the steps below are planned together rather than each copied out
    frame = frame.lazy().with_columns(
        (pl.col("dealt").fill_null(False) & hand_known).alias("judged"),
        pl.col("surrendered").fill_null(False),
        pl.col(counts).fill_null(0),
    )
    frame = frame.with_columns(_outcome().alias("outcome"))
    frame = frame.with_columns(_expected_kind().alias("expected_kind"), *_odds())
    frame = frame.with_columns(
        pl.when(_is("expected_kind", KINDS, "pay"))
        .then(pl.col("staked_cents") * pl.col("odds_num") // pl.col("odds_den"))
        .alias("due_cents"),
    )
    frame = frame.with_columns(_payout_room().alias("room_cents"))
    cents, most, net = _expected_amounts()
    frame = frame.with_columns(cents, most).with_columns(net.alias("expected_net"))
    frame = frame.with_columns(_settled_checks())
    frame = frame.with_columns(
        (pl.col("expected_net") - pl.col("settled_net")).alias("amount_cents"),
        _words("outcome", OUTCOMES),
        _words("expected_kind", KINDS),
    ).collect(engine="in-memory")
    # (1.3) the net that settles the wager, where one does (its single-settlement rules
    # leave it to BJ707)
    return frame.with_columns(nets.scope_ids(ctx, frame))


def _on_dead_hand(ctx: GameContext) -> pl.Expr:
    """`dead`: the row is a main, double or split wager on a hand declared dead (by its
    hand id `hid`). Dead hands are rare: most logs have none, and no lookup is made."""
    dead = missed_cards.dead_hand_ids(ctx)
    if dead.is_empty():
        return pl.lit(False).alias("dead")
    on_dead = pl.col("hid").is_in(dead.implode()) & pl.col("bet").is_in(HAND_BETS)
    return on_dead.fill_null(False).alias("dead")


def owed(ctx: GameContext) -> pl.DataFrame:
    """Every wager with its outcome, what it was owed and how it was settled, in numbers
    (module docstring)."""
    return ctx.derived("blackjack.money.owed", build_owed)


def with_words(ctx: GameContext, frame: pl.DataFrame) -> pl.DataFrame:
    """Rows of `owed` with the words their messages use (module docstring): made for the
    wagers a rule reports, not for every wager."""
    observed = _observed_text(ctx, frame)
    frame = frame.join(observed, on="wid", how="left", maintain_order="left")
    return frame.with_columns(
        _who().alias("who"),
        _outcome_text().alias("outcome_text"),
        _expected_text().alias("expected_text"),
        pl.col("observed_text").fill_null("never settled"),
        pl.format("{}:{}", "odds_num", "odds_den").alias("odds"),
    )


# --- (f)(2): insurance and surrender settled together -------------------------------


def build_netted(ctx: GameContext) -> pl.DataFrame:
    """Per holder (HOLDER) with both an insurance wager and a surrendered hand (judged):
    the two settled together, not each by its own rule. Each is settled as owed, or not;
    where not, the pair's rows taken as one pot (the pays and pushes of both, less both
    stakes; nothing where no row moved at all) come to what the two were owed together:
    the insurance's result netted against or merged with the surrender's."""
    # a wager settled by a net (format 1.3) is BJ707's: it has no settlement of its own
    wagered = owed(ctx).filter(pl.col("net_sid").is_null())
    judged = wagered.filter(pl.col("judged") & (pl.col("outcome") == "surrendered"))
    insured = wagered.filter(pl.col("judged") & (pl.col("bet") == "insurance"))
    pair = pl.concat([judged, insured.join(judged.select(HOLDER).unique(), on=HOLDER,
                                           how="semi", nulls_equal=True)])
    if insured.is_empty() or judged.is_empty():
        return pair.select(*HOLDER, *ROUND).clear().with_columns(
            pl.lit(None, pl.Int64).alias("seq")
        )
    right = pl.col("settled_once") & pl.col("settled_right")
    pot = pl.col("pay_cents") + pl.col("push_cents") - pl.col("staked_cents")
    pairs = pair.group_by(HOLDER).agg(
        pl.col(ROUND).first(),
        (pl.col("bet") == "insurance").any().alias("insured"),
        (pl.col("bet") != "insurance").any().alias("surrendered"),
        right.all().alias("apart"),
        pl.col("expected_net").sum().alias("owed_net"),
        pl.col("n_settled").sum().alias("rows"),
        pot.sum().alias("pot_net"),
        pl.coalesce(pl.col("settled_seq").min(), pl.col("wager_seq").max()).alias("seq"),
    )
    together = pl.when(pl.col("rows") > 0).then(pl.col("pot_net")).otherwise(0)
    return pairs.filter(
        pl.col("insured") & pl.col("surrendered") & ~pl.col("apart")
        & (together == pl.col("owed_net"))
    ).select(*HOLDER, *ROUND, "seq")


def netted(ctx: GameContext) -> pl.DataFrame:
    """The holders (HOLDER, with table_id, shoe_id, round, seq: the pair's first
    settlement row) whose insurance and surrender were settled together (`build_netted`):
    BJ405's, (f)(2), and no other settlement rule's."""
    return ctx.derived("blackjack.money.netted", build_netted)


def apart(ctx: GameContext, frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` (rows with HOLDER columns) without the rows of holders whose insurance and
    surrender were settled together: those are BJ405's."""
    together = netted(ctx)
    if together.is_empty():
        return frame
    return frame.join(together.select(HOLDER), on=HOLDER, how="anti", nulls_equal=True)


def wagers(ctx: GameContext) -> pl.DataFrame:
    """`owed` with words on every wager, sorted by rid, wager_seq: for the report."""
    return ctx.derived(
        "blackjack.money.wagers", lambda c: with_words(c, owed(c)).sort("rid", "wager_seq")
    )


def _by_wid(wagered: pl.DataFrame, value: pl.Expr) -> pl.Expr:
    """`value` of the wager (a row of `owed`, numbered by wid) for each row's `wid`: owed's
    rows are in wid order, so the row's wid is the position to read."""
    return pl.lit(wagered.select(value).to_series()).gather(pl.col("wid"))


def _kind_order(event: pl.Expr) -> pl.Expr:
    """KIND_ORDER of a collect / pay / push row's event, compared as it is (categorical)
    rather than cast to strings."""
    order = pl.lit(KIND_ORDER["push"], pl.Int64)
    for name in ("pay", "collect"):
        order = pl.when(event == name).then(pl.lit(KIND_ORDER[name], pl.Int64)).otherwise(order)
    return order


def build_settlements(ctx: GameContext) -> pl.DataFrame:
    wagered = owed(ctx)
    amount = pl.col("amount_cents")
    rows = _settlement_rows(ctx).with_columns(
        replay.by_rid(ctx, replay.rounds(ctx), "void").fill_null(False).alias("void"),
        pl.when(pl.col("event") == "collect").then(-amount).otherwise(amount).alias("row_net"),
    )
    # each wager's rows in order, then each kind of row (collect, pay, push) in order
    wid = (pl.col("wid").cast(pl.Int64), wagered.height)
    kind = (_kind_order(pl.col("event")), len(KIND_ORDER))
    owned = rows.filter(pl.col("wid").is_not_null()).with_columns(
        _by_wid(wagered, pl.col("judged")),
        _by_wid(wagered, pl.col("outcome") == "surrendered").alias("_surr"),
        _by_wid(wagered, pl.col("outcome") == "dead").alias("_dead"),
    )
    # counted on the keys alone, then every column gathered once into the last order
    narrow = owned.select(pl.int_range(pl.len(), dtype=pl.Int64).alias("_row"), "wid", "seq",
                          "event")
    narrow = (
        narrow.sort(replay.order(ctx, owned, wid, "seq"), maintain_order=True)
        .with_columns(runs.position(["wid"]).alias("nth"))
        .sort(replay.order(ctx, owned, wid, kind, "seq"), maintain_order=True)
        .with_columns(runs.position(["wid", "event"]).alias("nth_kind"))
    )
    # each row its own round and seq: the frame ends in the rows' order, and the numbers
    # are put in place rather than the rows gathered into the numbering order and back
    in_place = _one_row_per_seq(ctx, rows)
    if in_place:
        owned = owned.with_columns(
            placed(narrow[name], narrow["_row"], owned.height) for name in ("nth", "nth_kind")
        )
    else:
        owned = owned[narrow["_row"]].hstack(narrow.select("nth", "nth_kind"))
    nth, nth_kind = pl.col("nth"), pl.col("nth_kind")
    # a dead hand's collect or pay is BJ804's or BJ805's (owed a push): only a push
    # beyond its first is a settlement too many
    pushed_again = (pl.col("event") == "push") & (nth_kind > 1)
    extra = (
        pl.when(pl.col("_surr")).then((nth > 2) | (nth_kind > 1))
        .when(pl.col("_dead")).then(pushed_again)
        .otherwise(nth > 1)
    )
    owned = owned.with_columns(
        pl.lit(True).alias("matched"),
        pl.col("judged").fill_null(False),
        pl.lit(True).alias("hand_wagered"),  # the wager itself is on the hand
        extra.fill_null(False).alias("extra"),
    ).drop("_surr", "_dead", "nth_kind")
    # rows with no wager of their key: is there another wager of the patron on the hand?
    orphans = rows.filter(pl.col("wid").is_null())
    if in_place and orphans.is_empty():
        return owned.drop("wid")
    on_hand = (
        wagered.filter(pl.col("rid").is_in(orphans["rid"].unique().implode()))
        .select(*HOLDER)
        .unique()
        .with_columns(pl.lit(True).alias("hand_wagered"))
    )
    orphans = (
        orphans.join(on_hand, on=HOLDER, how="left", nulls_equal=True)
        .with_columns(
            pl.lit(False).alias("matched"),
            pl.lit(False).alias("judged"),
            pl.col("hand_wagered").fill_null(False),
            pl.lit(None, pl.Int64).alias("nth"),
            pl.lit(False).alias("extra"),
        )
    )
    columns = owned.columns
    rows = pl.concat([owned, orphans.select(columns)]).drop("wid")
    return rows.sort(replay.order(ctx, rows, "rid", "seq"), maintain_order=True)


def _one_row_per_seq(ctx: GameContext, rows: pl.DataFrame) -> bool:
    """Whether `rows` are in (rid, seq) order with no two rows on one: then the order is
    theirs whatever rows are set beside each other."""
    key = replay.order(ctx, rows, "rid", "seq")
    return len(key) == 1 and rows.select((key[0].diff() > 0).all()).item()


def settlements(ctx: GameContext) -> pl.DataFrame:
    """Every collect / pay / push row, matched to the wagers (module docstring)."""
    return ctx.derived("blackjack.money.settlements", build_settlements)


# --- what the rules report ---------------------------------------------------------


def misjudged_message() -> pl.Expr:
    """"Box 3 hand 1 main wager of $25.00: the hand's 20 beat the dealer's 18; it was paid
    $20.00, where it should have been paid $25.00 (1:1)."."""
    return pl.format(
        "{}: {}; it was {}, where it should have been {}.",
        "who", "outcome_text", "observed_text", "expected_text",
    )


def late_or_misjudged(settled: str, went_on: str, late: str) -> tuple[pl.Expr, pl.Expr]:
    """For money to be settled before play goes on ((e)(4), (f)(1)(i)): which rows are
    findings (settled wrong, or right but only at `settled`, after play went on at
    `went_on`: of the findings, `settled_right` holds on the late ones alone) and their
    message. `late` words the late case, its two {} the two seqs: "it was collected only
    at seq {}, after play had gone on at seq {}, where ..."."""
    right = pl.col("settled_right")
    after = right & (pl.col(settled) > pl.col(went_on)).fill_null(False)
    message = (
        pl.when(right)
        .then(pl.format("{}: {}; " + late + ".", "who", "outcome_text", settled, went_on))
        .otherwise(misjudged_message())
    )
    return ~right | after, message


def findings(
    ctx: GameContext,
    frame: pl.DataFrame,
    message: pl.Expr | None = None,
    seq: pl.Expr | None = None,
    part: pl.Expr | None = None,
) -> pl.DataFrame:
    """Check rows (registry.CHECK_COLUMNS) for the wagers of `frame` (rows of `owed`)
    settled otherwise than owed: at the wager's first settlement row, with the money at
    stake (null when none). `part`: the check column naming the rule's part of each row
    (a rule with parts: registry.Part.where)."""
    amount = pl.col("amount_cents")
    return with_words(ctx, frame).select(
        *ROUND,
        (pl.col("settled_seq") if seq is None else seq).alias("seq"),
        (misjudged_message() if message is None else message).alias("message"),
        pl.col("expected_text").alias("expected"),
        pl.col("observed_text").alias("observed"),
        pl.when(amount != 0).then(amount).alias("amount_cents"),
        *([] if part is None else [part]),
    )
