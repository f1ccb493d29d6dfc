"""Blackjack coups (export-profiles-v1, Layouts, `coups`): one row per round, box and
hand, with the hand's cards and decisions in order and the dealer's cards, laid as the
format's events in the usual order of a deal.

The first deal: one card to each box in seat order, the dealer's up card, a second card
to each box, the hole card. Then each box's hands in hand-number order: a hand's
decisions, each hit or double followed by its card, then any card left on its list; the
dealer's draws; the round's end. A box that split is laid one hand at a time (the few
such boxes are replayed here one by one): a split hand takes the pair's second card
first, and its own next; the hand that split is dealt its next card at once.

Wagers rows find their place by the decision they follow: a double wager after the
hand's double, a split wager after the split that made its hand, a surrendered hand's
settlement at the surrender, insurance after the first deal, its settlement when the
dealer's hand is checked, every other settlement after the dealer's play.
"""

from __future__ import annotations

import polars as pl

from ..ingest import vocabulary as v
from .layouts import (
    FILE,
    ROW,
    SETTLEMENTS,
    SLOT,
    SUB,
    TABLE_ORDER,
    order_values,
    settled_cell,
)

ROUND_KEY = ["table_id", "shoe_id", "round"]
# a blackjack round's places, in order
SHUFFLE, ROUND_START, WAGER, DEAL, INSURANCE, INSURED, PLAY, DEALER, SETTLEMENT, \
    ROUND_END = range(10)
_DEALER_SEAT = 1_000  # the dealer's place in a pass of the first deal: after every box
_STEP = 1_000_000  # a box's play: seat * _STEP + its step
DRAWS = ("hit", "double")


def _text(value) -> pl.Expr:
    return pl.lit(value, pl.String)


def _keep() -> list[str]:
    return ["table_id", "game", "shoe_id", "round", v.LINE, FILE, ROW, TABLE_ORDER, "ts"]


def coup_events(hands: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Events made from blackjack coups rows (`_cards`, `_actions`, `_dealer`: lists of
    text; `seat`, `hand` integers; one TABLE_ORDER per round), and the anchors wagers are
    placed by: (round key, seat, hand, anchor: double / split / surrender, sub)."""
    split_seats = (hands.filter(pl.col("_actions").list.contains("split") | (pl.col("hand") > 1))
                   .select(*ROUND_KEY, "seat").unique())
    plain = hands.join(split_seats, on=[*ROUND_KEY, "seat"], how="anti")
    split = hands.join(split_seats, on=[*ROUND_KEY, "seat"], how="semi")
    events = [_round_events(hands), _first_deal(plain, 0), _first_deal(plain, 1),
              _plain_play(plain)]
    anchors = [_plain_anchors(plain)]
    if split.height:
        made, marks = _split_boxes(split)
        events.append(made)
        anchors.append(marks)
    return (pl.concat(events, how="diagonal_relaxed"),
            pl.concat(anchors, how="diagonal_relaxed"))


def _cents(amount: pl.Expr) -> pl.Expr:
    """An amount's text in whole cents (null where it is not a number)."""
    return (amount.cast(pl.Float64, strict=False) * 100).round().cast(pl.Int64, strict=False)


def _amount_text(cents: pl.Expr) -> pl.Expr:
    """Whole cents as an amount's text: 1250 is 12.50."""
    return pl.format("{}.{}", cents // 100, (cents % 100).cast(pl.String).str.zfill(2))


def net_wagers(hands: pl.DataFrame, anchors: pl.DataFrame, per_hand: bool) -> pl.DataFrame:
    """(1.1, Net results, blackjack) The wagers a blackjack coups source's `amount` and
    `net` give, as rows for `wager_events` (`hands`: coup_events' rows, one per hand;
    `anchors`: its places of the decisions). The main wager is hand 1's amount (the box's
    row's, where a row holds every hand of its box). A hand made by a split has a split
    wager: in rows per hand its row's amount, presumed equal to the main wager where it
    is empty; else presumed. Each double is presumed at the amount of its hand's wager;
    insurance (an action mapped to insurance) at half the main wager, rounded down to the
    cent. A presumed wager carries `reason` presumed (vocabulary.PRESUMED), and is made
    only where the main wager is an amount. The net: each row's, for its hand (`per_hand`:
    the source maps `hand`), else for the box (no hand: its scope is the seat)."""
    keep = _keep()
    hands = hands.with_columns(pl.col("seat", "hand").cast(pl.Int64, strict=False))
    box = [*ROUND_KEY, "seat"]
    first = hands.filter(pl.col("hand") == 1).unique(box, keep="first", maintain_order=True)
    mains = first.filter(pl.col("amount").is_not_null())
    main = mains.select(*box, pl.col("amount").alias("_main"),
                        _cents(pl.col("amount")).alias("_main_cents")).filter(
        pl.col("_main_cents") > 0)
    presumed = pl.lit(v.PRESUMED, pl.String)
    made = [mains.select(*keep, "seat", "hand", _text("main").alias("bet"), "amount",
                         pl.lit(None, pl.String).alias("reason"))]
    # a hand made by a split: its split wager (its own row's amount, in rows per hand)
    own = pl.col("amount").is_not_null() if per_hand else pl.lit(False)
    splits = hands.filter(pl.col("hand") > 1).unique(
        [*box, "hand"], keep="first", maintain_order=True).join(
        main, on=box, how="left").select(
        *keep, "seat", "hand", _text("split").alias("bet"),
        pl.when(own).then("amount").otherwise("_main").alias("amount"),
        pl.when(own).then(pl.lit(None, pl.String)).otherwise(presumed).alias("reason"),
    ).filter(pl.col("amount").is_not_null())
    made.append(splits)
    staked = pl.concat([
        main.select(*box, pl.lit(1, pl.Int64).alias("hand"), pl.col("_main").alias("_stake")),
        splits.select(*box, "hand", pl.col("amount").alias("_stake"))])
    # each double at its hand's wager; the row: the hand's own, else the box's
    doubled = anchors.filter(pl.col("anchor") == "double").select(*box, "hand").unique(
        maintain_order=True)
    rows = hands.unique([*box, "hand"], keep="first", maintain_order=True)
    at_hand = doubled.join(rows.select(*keep, "seat", "hand"), on=[*box, "hand"],
                           how="inner")
    at_box = doubled.join(at_hand.select(*box, "hand"), on=[*box, "hand"], how="anti").join(
        first.select(*keep, "seat"), on=box, how="inner")
    made.append(pl.concat([at_hand, at_box], how="diagonal_relaxed").join(
        staked, on=[*box, "hand"], how="inner").select(
        *keep, "seat", "hand", _text("double").alias("bet"), pl.col("_stake").alias("amount"),
        presumed.alias("reason")))
    insured = hands.filter("_insured").select(box).unique() if "_insured" in hands.columns \
        else hands.clear().select(box)
    made.append(first.join(insured, on=box, how="semi").join(main, on=box, how="inner")
                .select(*keep, "seat", pl.lit(1, pl.Int64).alias("hand"),
                        _text("insurance").alias("bet"),
                        _amount_text(pl.col("_main_cents") // 2).alias("amount"),
                        presumed.alias("reason")))
    nets = (hands if per_hand else first).filter(pl.col("net").is_not_null())
    made.append(nets.select(
        *keep, "seat", pl.col("hand") if per_hand else pl.lit(None, pl.Int64).alias("hand"),
        "net"))
    wagers = pl.concat(made, how="diagonal_relaxed").with_columns(
        pl.col("seat", "hand").cast(pl.String))
    return wagers.with_columns(pl.lit(None, pl.String).alias(c) for c in (
        "settle_order", "amount", "bet", "reason", "net") if c not in wagers.columns)


def _round_events(hands: pl.DataFrame) -> pl.DataFrame:
    """round_start, the dealer's cards and round_end, once per round."""
    # (1.1) a row whose list cell does not parse gives them (its round is withheld, its
    # finding at its line: an event there places it)
    bad = pl.col("_bad").not_() if "_bad" in hands.columns else pl.lit(True)
    rounds = hands.sort(TABLE_ORDER, bad, ROW).group_by(ROUND_KEY, maintain_order=True).first()
    keep = _keep()
    made = [rounds.select(*keep, _text("round_start").alias("event"),
                          pl.lit(ROUND_START).alias(SLOT),
                          *([pl.col("dealer_id")] if "dealer_id" in rounds.columns else []))]
    dealer = rounds.select(*keep, "_dealer").with_columns(
        pl.int_ranges(0, pl.col("_dealer").list.len()).alias("_at")).explode("_dealer", "_at")
    dealer = dealer.filter(pl.col("_dealer").is_not_null()).with_columns(
        _text("card").alias("event"), _text("dealer").alias("target"),
        pl.col("_dealer").alias("card"),
        pl.when(pl.col("_at") < 2).then(pl.lit(DEAL)).otherwise(pl.lit(DEALER)).alias(SLOT),
        pl.when(pl.col("_at") < 2)
        .then(pl.col("_at") * _STEP + _DEALER_SEAT).otherwise(pl.col("_at"))
        .cast(pl.Float64).alias(SUB)).drop("_dealer", "_at")
    made.append(dealer)
    end = pl.coalesce("end_ts", "ts") if "end_ts" in rounds.columns else pl.col("ts")
    made.append(rounds.select(*[c for c in keep if c != "ts"], end.alias("ts"),
                              _text("round_end").alias("event"),
                              pl.lit(ROUND_END).alias(SLOT)))
    return pl.concat(made, how="diagonal_relaxed")


def _card(frame: pl.DataFrame, card: pl.Expr, slot: int, sub: pl.Expr) -> pl.DataFrame:
    return frame.select(*_keep(), "seat", "hand", _text("card").alias("event"),
                        _text("seat").alias("target"), card.alias("card"),
                        pl.lit(slot).alias(SLOT), sub.cast(pl.Float64).alias(SUB))


def _first_deal(plain: pl.DataFrame, at: int) -> pl.DataFrame:
    """Pass `at` (0, 1) of the first deal to the boxes that did not split."""
    dealt = plain.filter(pl.col("_cards").list.len() > at)
    return _card(dealt, pl.col("_cards").list.get(at), DEAL,
                 pl.lit(at * _STEP) + pl.col("seat").cast(pl.Int64))


def _plain_steps(plain: pl.DataFrame) -> pl.DataFrame:
    """Each decision of a box that did not split, with its step and, for a draw, the
    index of the card it drew."""
    steps = plain.select(*_keep(), "seat", "hand", "_actions").with_columns(
        pl.int_ranges(0, pl.col("_actions").list.len()).alias("_i")).explode("_actions", "_i")
    steps = steps.filter(pl.col("_actions").is_not_null())
    draw = pl.col("_actions").is_in(DRAWS)
    return steps.with_columns(
        (pl.col("_i") * 3).alias("_step"),
        pl.when(draw).then(2 + draw.cast(pl.Int64).cum_sum().over(*ROUND_KEY, "seat") - 1)
        .alias("_draws"))


def _plain_play(plain: pl.DataFrame) -> pl.DataFrame:
    steps = _plain_steps(plain)
    sub = pl.col("seat").cast(pl.Int64) * _STEP
    actions = steps.select(*_keep(), "seat", "hand", _text("action").alias("event"),
                           pl.col("_actions").alias("action"), pl.lit(PLAY).alias(SLOT),
                           (sub + pl.col("_step")).cast(pl.Float64).alias(SUB))
    drawn = steps.filter(pl.col("_draws").is_not_null()).join(
        plain.select(*ROUND_KEY, "seat", "_cards"), on=[*ROUND_KEY, "seat"])
    cards = _card(drawn.filter(pl.col("_cards").list.len() > pl.col("_draws")),
                  pl.col("_cards").list.get(pl.col("_draws"), null_on_oob=True), PLAY,
                  sub + pl.col("_step") + 2)
    # cards beyond those the decisions drew: dealt after the hand's last decision
    counts = steps.group_by(*ROUND_KEY, "seat").agg(
        pl.len().alias("_n"), pl.col("_draws").count().alias("_drawn"))
    rest = plain.join(counts, on=[*ROUND_KEY, "seat"], how="left").with_columns(
        pl.col("_n", "_drawn").fill_null(0))
    rest = rest.with_columns(pl.int_ranges(0, pl.col("_cards").list.len()).alias("_at")).explode(
        "_cards", "_at").filter(pl.col("_at") >= 2 + pl.col("_drawn"))
    extra = _card(rest, pl.col("_cards"), PLAY, sub + pl.col("_n") * 3 + pl.col("_at"))
    return pl.concat([actions, cards, extra], how="diagonal_relaxed")


def _plain_anchors(plain: pl.DataFrame) -> pl.DataFrame:
    steps = _plain_steps(plain).filter(pl.col("_actions").is_in(["double", "surrender"]))
    return steps.select(*ROUND_KEY, pl.col("seat").cast(pl.Int64), pl.col("hand").cast(
        pl.Int64), pl.col("_actions").alias("anchor"),
        (pl.col("seat").cast(pl.Int64) * _STEP + pl.col("_step") + 1).cast(
            pl.Float64).alias(SUB))


def _split_boxes(split: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Boxes that split, laid hand by hand (a few per day: replayed one by one)."""
    rows, anchors = [], []
    keep = _keep()
    ordered = split.sort(*ROUND_KEY, "seat", "hand")
    one_row = "_nested" in ordered.columns
    # the rows read once, then taken box by box (a group of rows each: no frame per box)
    columns = list(dict.fromkeys([*keep, "seat", "hand", "_cards", "_actions",
                                  *(["_nested"] if one_row else [])]))
    boxes: dict[tuple, list[dict]] = {}
    for r in ordered.select(columns).iter_rows(named=True):
        boxes.setdefault((*(r[k] for k in ROUND_KEY), r["seat"]), []).append(r)
    for box in boxes.values():
        base = box[0]
        hands = {int(r["hand"]): (list(r["_cards"] or []), list(r["_actions"] or []), r)
                 for r in box}
        requests = one_row and any(r["_nested"] for r in box)
        for step, kind, hand, value, source in _lay_box(hands, requests):
            row = {c: source[c] for c in keep}
            row.update(seat=base["seat"], hand=hand)
            at = int(base["seat"]) * _STEP
            if kind == "deal":
                row.update(event="card", target="seat", card=value, **{SLOT: DEAL,
                           SUB: float(step * _STEP + int(base["seat"]))})
            elif kind == "card":
                row.update(event="card", target="seat", card=value,
                           **{SLOT: PLAY, SUB: float(at + step)})
            elif kind == "action":
                row.update(event="action", action=value, **{SLOT: PLAY, SUB: float(at + step)})
            else:  # an anchor: where a wager of this hand goes
                anchors.append({**{k: base[k] for k in ROUND_KEY}, "seat": int(base["seat"]),
                                "hand": hand, "anchor": kind, SUB: float(at + step)})
                continue
            rows.append(row)
    made = pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()
    schema = {**{k: pl.String for k in ROUND_KEY}, "seat": pl.Int64, "hand": pl.Int64,
              "anchor": pl.String, SUB: pl.Float64}
    return made, pl.DataFrame(anchors, schema=schema)


def _lay_box(hands: dict[int, tuple[list, list, dict]], requests: bool = False):
    """(step, kind, hand, value, row) of a box that split, in the order dealt: `deal`
    (step 0 or 1: the first deal's passes), `card`, `action`, and anchors (`split`:
    the hand a split made; `double`, `surrender`). `requests` (1.1, every hand of the
    box in one row): a `hit` recorded on a one-card hand made or left by a split is the
    request for its second card: it takes that card and is no decision."""
    pointer = {n: 1 for n in hands}
    state = {"next": 2, "step": 0}

    def tick() -> int:
        state["step"] += 1
        return state["step"]

    def cards_of(n: int) -> list:
        return hands[n][0] if n in hands else []

    def request(n: int, at: int) -> bool:
        """Whether hand n's decision `at` is the request for its second card."""
        actions = hands[n][1] if n in hands else []
        return requests and at < len(actions) and actions[at] == "hit"

    def second(n: int, at: int):
        """The card hand n takes as its second: where its next decision (past a request
        for the card) splits, the first card of the hand that split makes; else its
        own next."""
        actions = hands[n][1] if n in hands else []
        if request(n, at):
            at += 1
        if at < len(actions) and actions[at] == "split":
            made = cards_of(state["next"])
            return made[0] if made else None
        listed = cards_of(n)
        value = listed[pointer[n]] if pointer.get(n, 1) < len(listed) else None
        pointer[n] = pointer.get(n, 1) + 1
        return value

    first = hands.get(1)
    if first is not None:
        if first[0]:
            yield 0, "deal", 1, first[0][0], first[2]
        card = second(1, 0)
        if card is not None:
            yield 1, "deal", 1, card, first[2]
    order = [1] if 1 in hands else []
    done: set[int] = set()
    while order:
        n = order.pop(0)
        if n in done or n not in hands:
            continue
        done.add(n)
        listed, actions, row = hands[n]
        skip: set[int] = set()
        if n != 1:
            if request(n, 0):
                skip.add(0)
            card = second(n, 0)
            if card is not None:
                yield tick(), "card", n, card, row
        for at, action in enumerate(actions):
            if at in skip:
                continue
            yield tick(), "action", n, action, row
            if action == "split":
                made = state["next"]
                state["next"] += 1
                order.append(made)
                order.sort()
                yield tick(), "split", made, None, row
                if request(n, at + 1):
                    skip.add(at + 1)
                card = second(n, at + 1)
                if card is not None:
                    yield tick(), "card", n, card, row
            elif action in DRAWS:
                if action == "double":
                    yield tick(), "double", n, None, row
                if pointer[n] < len(listed):
                    yield tick(), "card", n, listed[pointer[n]], row
                    pointer[n] += 1
            elif action == "surrender":
                yield tick(), "surrender", n, None, row
        while pointer[n] < len(listed):
            yield tick(), "card", n, listed[pointer[n]], row
            pointer[n] += 1
    for n in sorted(set(hands) - done):  # a hand no split made: laid after the others
        listed, actions, row = hands[n]
        for card in listed[pointer[n]:]:
            yield tick(), "card", n, card, row


def wager_events(wagers: pl.DataFrame, anchors: pl.DataFrame) -> pl.DataFrame:
    """Joined blackjack wagers rows as events: the main wager before the cards, a double
    or split wager after the decision it follows, insurance after the first deal and its
    settlement at the check for a blackjack, a surrendered hand's settlement at the
    surrender, every other settlement after the dealer's play, in `settle_order`; (1.1)
    a net result (`net`) as one settle_net after the dealer's play, as format 1.3 places
    a net (whatever its bet: a net is the round's outcome, known once it is over)."""
    keep = _keep()
    if "hand" not in wagers.columns:  # a wagers source without hands: hand 1
        wagers = wagers.with_columns(pl.lit("1").alias("hand"))
    wagers = wagers.with_columns(
        pl.col("seat").cast(pl.Int64, strict=False).alias("_seat"),
        (pl.col("hand") if "hand" in wagers.columns else pl.lit("1")).cast(
            pl.Int64, strict=False).fill_null(1).alias("_hand"),
        order_values(pl.col("settle_order")).alias("_settle"))
    for anchor in ("double", "split", "surrender"):
        at = anchors.filter(pl.col("anchor") == anchor).select(
            *ROUND_KEY, pl.col("seat").alias("_seat"), pl.col("hand").alias("_hand"),
            pl.col(SUB).alias(f"_{anchor}")).unique([*ROUND_KEY, "_seat", "_hand"])
        wagers = wagers.join(at, on=[*ROUND_KEY, "_seat", "_hand"], how="left")
    player = ["player_id"] if "player_id" in wagers.columns else []
    bet = pl.col("bet")
    placed = (
        pl.when((bet == "double") & pl.col("_double").is_not_null()).then(pl.lit(PLAY))
        .when((bet == "split") & pl.col("_split").is_not_null()).then(pl.lit(PLAY))
        .when(bet == "insurance").then(pl.lit(INSURANCE)).otherwise(pl.lit(WAGER)))
    at = (pl.when(bet == "double").then(pl.col("_double"))
          .when(bet == "split").then(pl.col("_split"))
          .when(bet == "insurance").then(pl.col("_seat").cast(pl.Float64)))
    # a row without a stake records settlements only (no wager was placed)
    # (1.1) a wager an export's net results presume carries `reason` presumed
    reason = ["reason"] if "reason" in wagers.columns else []
    made = [wagers.filter(pl.col("amount").is_not_null()).select(
        *keep, _text("wager").alias("event"), "seat", "hand", "bet", "amount", *player,
        *reason, placed.alias(SLOT),
        pl.coalesce(at, pl.col(ROW).cast(pl.Float64)).alias(SUB))]
    for kind, name in enumerate(SETTLEMENTS):
        if name not in wagers.columns:
            continue
        settled = wagers.filter(settled_cell(name))
        slot = (pl.when(bet == "insurance").then(pl.lit(INSURED))
                .when(pl.col("_surrender").is_not_null()).then(pl.lit(PLAY))
                .otherwise(pl.lit(SETTLEMENT)))
        sub = (pl.when(bet == "insurance").then(pl.col("_seat").cast(pl.Float64) + kind / 10)
               .when(pl.col("_surrender").is_not_null())
               .then(pl.col("_surrender") + (kind + 1) / 10)
               .otherwise(pl.col("_settle")))
        ordered = (bet != "insurance") & pl.col("_surrender").is_null()
        made.append(settled.select(
            *keep, _text(name).alias("event"), "seat", "hand", "bet",
            pl.col(name).alias("amount"), *player, slot.alias(SLOT), sub.alias(SUB),
            pl.when(ordered).then(pl.lit(kind)).alias("_kind")))
    if "net" in wagers.columns:  # (1.1) a net result: after the dealer's play (format 1.3)
        made.append(wagers.filter(pl.col("net").is_not_null()).select(
            *keep, _text(v.NET_EVENT).alias("event"), "seat", "hand", "bet",
            pl.col("net").alias("amount"), *player, pl.lit(SETTLEMENT).alias(SLOT),
            pl.col("_settle").alias(SUB)))
    return pl.concat(made, how="diagonal_relaxed")
