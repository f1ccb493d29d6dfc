"""The rounds behind the findings, replayed, for the report: what a person needs to
verify each exception by hand.

`round_details(result, per_rule_cap)` gives one row per round (table_id, shoe_id,
round) that has a finding; `round` is 0 for a shoe's events before round 1 and
null for a finding about a shoe or table as a whole. Columns:

  table_id shoe_id round game
  time      when the round (else the shoe, else the table) began: for the
            report's findings-over-time chart
  detailed  whether one of the round's findings is among those shown in detail
            (`shown`: at most `per_rule_cap` per rule)
  detail    JSON of the replayed round, for the detailed rounds of an audited
            game (null otherwise, e.g. for a round reported as not auditable):

  baccarat  player_cards banker_cards (codes, in dealing order), order ("PBPBP"),
            p_two b_two (two-card points), p_points b_points (final), p_natural
            b_natural, player_must_draw player_drew banker_must_draw banker_drew,
            winner (replayed), declared_winner declared_player_points
            declared_banker_points, dragon7 panda8, ez, variant, commission_percent,
            void, wagers (seat, bet, staked_cents, expected_kind, odds,
            expected_cents, settled_kind, settled_cents, n_settled, expected_net,
            settled_net, wager_seq, settled_seq), settlements (every collect,
            pay, push, vig and vig_settle row: seq, event, seat, bet,
            amount_cents, mode), commission (seat, won_cents, expected_vig_cents,
            vig_cents)
  blackjack dealer_cards dealer_total dealer_soft dealer_blackjack dealer_busted,
            void, house settings (dealer_hits_soft_17, blackjack_pays, ...),
            expected_known, boxes (seat; hands: hand, cards, actions, total, soft,
            busted, natural; wagers: hand, bet, player_id, staked_cents, wager_seq and,
            where the blackjack money frame exists (expected_known), outcome,
            expected_text, observed_text, settled_right, amount_cents, settled_seq;
            settlements, every recorded collect/pay/push row: hand, bet, player_id,
            event, amount_cents, seq)
  both      nets (only where the game's rows hold a settle_net, format 1.3): each
            scope's seq, seat, hand, bet, player_id, net_cents, and what it was owed
            (owed_low, owed_high) and the difference (amount_cents) where judged; the
            wagers then carry net_sid (the scope that settles them, null: none)
            irregular: the round's rows of format 1.2 (card_exposed, dead_hand,
            hole_card_check, a refuse action) and its burns after round 1 began (a
            discard): seq, event, card, exposure, disclosed, target, seat, hand, action,
            player_id, reason

Everything comes from the frames the audit already built (`result.contexts`),
filtered to the few detailed rounds with semi-joins; the JSON is encoded by polars.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from .audit import AuditResult
from .audit_context import GameContext
from .ingest import vocabulary as v

DETAIL_PER_RULE = 50
KEY = ["table_id", "shoe_id", "round"]
FILE = "round_details.parquet"
SCHEMA: dict[str, pl.DataType] = {
    "table_id": pl.String(),
    "shoe_id": pl.String(),
    "round": pl.Int64(),
    "game": pl.String(),
    "time": pl.Datetime("us"),
    "detailed": pl.Boolean(),
    "detail": pl.String(),
}


def mark_shown(findings: pl.DataFrame, per_rule_cap: int) -> pl.DataFrame:
    """`findings` with `shown`: at most `per_rule_cap` findings per rule, taken in turn
    from each table (the 1st of every table, then the 2nd, ...), each table's in file
    order, so a capped rule still shows every table it was found at."""
    if findings.is_empty():
        return findings.with_columns(pl.lit(False).alias("shown"))
    ranked = findings.with_row_index("_i").with_columns(
        pl.int_range(pl.len()).over("rule_id", "table_id", order_by="_i").alias("_k")
    )
    turn = pl.int_range(pl.len()).over("rule_id", order_by=["_k", "_i"])
    return ranked.with_columns((turn < max(per_rule_cap, 0)).alias("shown")).drop("_i", "_k")


def _empty() -> pl.DataFrame:
    return pl.DataFrame(schema=SCHEMA)


def _times(events: pl.DataFrame, table_first: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """When each round began; for a null round its shoe, for a null shoe its table.
    `events` holds (at least) every row of the shoes in `keys`; `table_first` each
    table's first time."""
    ev = events.select(*KEY, "time")
    by_round = (
        ev.join(keys.filter(pl.col("round").is_not_null()), on=KEY, how="semi")
        .group_by(KEY)
        .agg(pl.col("time").min().alias("t_round"))
    )
    shoes = keys.select("table_id", "shoe_id").unique()
    by_shoe = (
        ev.join(shoes, on=["table_id", "shoe_id"], how="semi")
        .group_by("table_id", "shoe_id")
        .agg(pl.col("time").min().alias("t_shoe"))
    )
    tables = keys.select("table_id").unique()
    by_table = (
        table_first.join(tables, on="table_id", how="semi")
        .group_by("table_id")
        .agg(pl.col("first").min().alias("t_table"))
    )
    return (
        keys.join(by_round, on=KEY, how="left", nulls_equal=True)
        .join(by_shoe, on=["table_id", "shoe_id"], how="left", nulls_equal=True)
        .join(by_table, on="table_id", how="left")
        .with_columns(
            pl.coalesce("t_round", "t_shoe", "t_table").cast(pl.Datetime("us")).alias("time")
        )
        .drop("t_round", "t_shoe", "t_table")
    )


def _in(frame: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    return frame.join(keys, on=KEY, how="semi")


def _listed(
    frame: pl.DataFrame, by: list[str], name: str, columns: list[str], order: str
) -> pl.DataFrame:
    """One row per `by`, the rows of `frame` as a list of structs, in `order`."""
    return (
        frame.sort(order, nulls_last=True)
        .group_by(by, maintain_order=True)
        .agg(pl.struct(columns).alias(name))
    )


IRREGULAR_COLUMNS = ["seq", "event", "card", "exposure", "disclosed", "target", "seat", "hand",
                     "action", "player_id", "reason"]


def _irregular(ctx: GameContext, keys: pl.DataFrame) -> pl.DataFrame:
    """KEY and `irregular`: each round's 1.2 rows and discards, in seq order (few rows:
    the events are filtered first)."""
    event = pl.col("event")
    astray = (event.is_in(v.EVENTS_1_2) | pl.col("action").is_in(v.ACTIONS_1_2)
              | ((event == "burn") & (pl.col("round") > 0)))
    rows = _in(ctx.events.filter(astray), keys).with_columns(
        pl.col("event", "exposure", "action").cast(pl.String))
    return _listed(rows, KEY, "irregular", IRREGULAR_COLUMNS, "seq")


NET_COLUMNS = ["seq", "seat", "hand", "bet", "player_id", "net_cents", "owed_low",
               "owed_high", "amount_cents"]


def _nets(ctx: GameContext, keys: pl.DataFrame) -> pl.DataFrame | None:
    """KEY and `nets`: each round's net results (format 1.3) by scope, with what they
    were owed where the net rule judged them; None where the game's rows hold no net (the
    replays of a log without nets are as they were)."""
    from .games import nets
    from .games.baccarat import nets as baccarat_nets
    from .games.blackjack import nets as blackjack_nets

    found = nets.scopes(ctx)
    if found.is_empty():
        return None
    judged = {"baccarat": baccarat_nets, "blackjack": blackjack_nets}[ctx.game].judged(ctx)
    rows = _in(found, keys).join(
        judged.select("sid", "owed_low", "owed_high", "amount_cents"), on="sid", how="left")
    return _listed(rows, KEY, "nets", NET_COLUMNS, "seq")


def _baccarat(ctx: GameContext, keys: pl.DataFrame) -> pl.DataFrame:
    from .games.baccarat import replay, settlement

    rounds = _in(replay.rounds(ctx), keys)
    card = (pl.col("event") == "card") & (pl.col("round") > 0)
    cards = (
        _in(ctx.events.filter(card), keys)
        .sort("table_id", "seq")
        .group_by(KEY)
        .agg(
            pl.col("card").filter(pl.col("target") == "player").alias("player_cards"),
            pl.col("card").filter(pl.col("target") == "banker").alias("banker_cards"),
        )
    )
    wager_columns = [
        "seat",
        "bet",
        "staked_cents",
        "expected_kind",
        "odds",
        "expected_cents",
        "settled_kind",
        "settled_cents",
        "n_settled",
        "expected_net",
        "settled_net",
        "wager_seq",
        "settled_seq",
    ]
    netted = _nets(ctx, keys)
    if netted is not None:
        wager_columns.append("net_sid")
    wagers = _listed(_in(settlement.wagers(ctx), keys), KEY, "wagers", wager_columns, "wager_seq")
    rows = _listed(
        _in(settlement.settlements(ctx), keys),
        KEY,
        "settlements",
        ["seq", "event", "seat", "bet", "amount_cents", "mode"],
        "seq",
    )
    commission = _listed(
        _in(settlement.seat_commission(ctx), keys),
        KEY,
        "commission",
        ["seat", "won_cents", "expected_vig_cents", "vig_cents"],
        "seat",
    )
    frame = (
        rounds.join(cards, on=KEY, how="left")
        .join(wagers, on=KEY, how="left")
        .join(rows, on=KEY, how="left")
        .join(commission, on=KEY, how="left")
        .join(_irregular(ctx, keys), on=KEY, how="left")
        .join(netted if netted is not None else keys.clear(), on=KEY, how="left")
        .with_columns(
            (pl.col("n_player") > 2).alias("player_drew"),
            (pl.col("n_banker") > 2).alias("banker_drew"),
        )
    )
    optional = [c for c in ("variant", "ez", "commission_percent") if c in frame.columns]
    detail = pl.struct(
        "player_cards",
        "banker_cards",
        "order",
        "p_two",
        "b_two",
        "p_points",
        "b_points",
        "p_natural",
        "b_natural",
        "player_must_draw",
        "player_drew",
        "banker_must_draw",
        "banker_drew",
        "winner",
        "declared_winner",
        "declared_player_points",
        "declared_banker_points",
        "dragon7",
        "panda8",
        "void",
        *optional,
        "wagers",
        "settlements",
        "commission",
        "irregular",
        *(["nets"] if netted is not None else []),
    ).struct.json_encode()
    return frame.select(*KEY, detail.alias("detail"))


MONEY_COLUMNS = [
    "rid",
    "seat",
    "hand",
    "bet",
    "player_id",
    "staked_cents",
    "outcome",
    "expected_text",
    "observed_text",
    "settled_right",
    "amount_cents",
    "wager_seq",
    "settled_seq",
]


def _blackjack_money(ctx: GameContext, rids: pl.DataFrame,
                     netted: bool = False) -> pl.DataFrame | None:
    """Each wager of the rounds with what it was owed and how it was settled, from the
    blackjack money frame (`games/blackjack/money.py`); None where that frame is missing
    or lacks a column shown here, and the report then shows the recorded settlements only.
    """
    try:
        from .games.blackjack import money
    except ImportError:
        return None
    try:
        frame = money.wagers(ctx)
    except Exception:  # a frame still being written must not cost the report its replays
        return None
    columns = [*MONEY_COLUMNS, *(["net_sid"] if netted else [])]
    if not set(columns) <= set(frame.columns):
        return None
    return frame.join(rids, on="rid", how="semi").select(columns)


def _blackjack(ctx: GameContext, keys: pl.DataFrame) -> pl.DataFrame:
    from .games.blackjack import final_hands, replay

    rounds = _in(replay.rounds(ctx), keys)
    rids = rounds.select("rid")
    cards = replay.cards(ctx).join(rids, on="rid", how="semi").sort("rid", "k")
    codes = (
        cards.filter(pl.col("target") == "seat")
        .group_by("rid", "seat", "hand")
        .agg(pl.col("card").alias("cards"))
    )
    dealer_codes = (
        cards.filter(pl.col("target") == "dealer")
        .group_by("rid")
        .agg(pl.col("card").alias("dealer_cards"))
    )
    hands = (
        final_hands.hands(ctx)
        .join(rids, on="rid", how="semi")
        .join(codes, on=["rid", "seat", "hand"], how="left")
        .with_columns(pl.col("cards").fill_null(pl.lit([], pl.List(pl.String))))
    )
    hand_columns = ["hand", "cards", "actions", "total", "soft", "busted", "natural"]
    box = ["rid", "seat"]
    boxes = _listed(hands, box, "hands", hand_columns, "hand")
    netted = _nets(ctx, keys)
    owed = _blackjack_money(ctx, rids, netted is not None)
    if owed is None:
        placed = (
            replay.wagers(ctx)
            .join(rids, on="rid", how="semi")
            .rename({"amount_cents": "staked_cents", "seq": "wager_seq"})
        )
        wager_columns = ["hand", "bet", "player_id", "staked_cents", "wager_seq"]
    else:
        placed = owed
        wager_columns = [c for c in owed.columns if c not in box]
    wagers = _listed(placed, box, "wagers", wager_columns, "wager_seq")
    rows = _listed(
        replay.settlements(ctx).join(rids, on="rid", how="semi"),
        box,
        "settlements",
        ["hand", "bet", "player_id", "event", "amount_cents", "seq"],
        "seq",
    )
    boxes = (
        boxes.join(wagers, on=box, how="full", coalesce=True)
        .join(rows, on=box, how="full", coalesce=True)
        .filter(pl.col("seat").is_not_null())
    )
    per_round = _listed(boxes, ["rid"], "boxes", ["seat", "hands", "wagers", "settlements"], "seat")
    frame = (rounds.join(dealer_codes, on="rid", how="left").join(per_round, on="rid", how="left")
             .join(_irregular(ctx, keys), on=KEY, how="left")
             .join(netted if netted is not None else keys.clear(), on=KEY, how="left"))
    house = [
        c
        for c in (
            "dealer_hits_soft_17",
            "blackjack_pays",
            "insurance_pays",
            "surrender",
            "payout_limit",
            "decks",
            "dealt_from",
        )
        if c in frame.columns
    ]
    detail = pl.struct(
        "dealer_cards",
        "dealer_total",
        "dealer_soft",
        "dealer_blackjack",
        "dealer_busted",
        "void",
        *house,
        "boxes",
        "irregular",
        *(["nets"] if netted is not None else []),
        pl.lit(owed is not None).alias("expected_known"),
    ).struct.json_encode()
    return frame.select(*KEY, detail.alias("detail"))


BUILDERS = {"baccarat": _baccarat, "blackjack": _blackjack}


def round_details(result: AuditResult, per_rule_cap: int = DETAIL_PER_RULE) -> pl.DataFrame:
    """One row per round with a finding; the replay of those shown in detail (see above)."""
    findings = mark_shown(result.findings, per_rule_cap).filter(pl.col("table_id").is_not_null())
    if findings.is_empty():
        return _empty()
    rounds = findings.group_by(KEY).agg(
        pl.col("game").drop_nulls().first(), pl.col("shown").any().alias("detailed")
    )
    rounds = _times(result.totals.kept, result.totals.tables, rounds)
    wanted = pl.col("detailed") & (pl.col("round") > 0)
    parts = []
    for game, ctx in result.contexts.items():
        keys = rounds.filter(wanted & (pl.col("game") == game)).select(KEY)
        if game in BUILDERS and not keys.is_empty():
            parts.append(BUILDERS[game](ctx, keys))
    if parts:
        detail = pl.concat(parts)
        rounds = rounds.join(detail, on=KEY, how="left")
    else:
        rounds = rounds.with_columns(pl.lit(None, pl.String).alias("detail"))
    return rounds.select(list(SCHEMA)).cast(SCHEMA).sort(KEY, nulls_last=True)


def write(details: pl.DataFrame, out: Path, per_rule_cap: int = DETAIL_PER_RULE) -> Path:
    """OUT/round_details.parquet; the cap it was built with is kept in the file's metadata."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / FILE
    details.write_parquet(path, metadata={"detail_per_rule": str(per_rule_cap)})
    return path


def read(out: Path) -> tuple[pl.DataFrame, int | None]:
    """The details and the cap they were built with (None: no file, or no cap recorded)."""
    path = out / FILE
    if not path.exists():
        return _empty(), None
    cap = pl.read_parquet_metadata(path).get("detail_per_rule")
    return pl.read_parquet(path), int(cap) if cap and cap.isdigit() else None
