"""The order of a shoe's cards: what shows that a shuffle did not happen.

A card-reading shoe records every card in the order it left the shoe (burns included).
Two checks read that order, for both games (docs/checked/shoe-order.md gives the
arithmetic):

- **repeated order**: a shoe that repeats, in order, a run of `k` or more consecutive
  cards of another shoe (same table or another, in the log or its context; an earlier run
  through the store, `auditor.store.prints`). Two honest shuffles share such a run by
  chance less than once in a million over a large facility's year of shoes.
- **new-deck order**: a run of `m` or more cards in a manufacturer's new-deck order (each
  suit A to K or K to A, the suits in any order).

Cards are coded as small integers (`codes`): a full card 0-51 (suit x 13 + rank, A to K),
a card known by value only (format 1.3) 52 + its value (`value_of`: A 0, 2-9 1-8, ten-value
cards 9). A shoe of a table whose log holds a card known by value only is compared on values,
with the longer run its smaller alphabet needs. The comparison is on the codes packed into
integers (a run's key is its cards themselves, not a hash of them), so a match is a match
of the cards, never a collision.
"""

from __future__ import annotations

import polars as pl

from ..ingest import vocabulary as v
from ..scope import IN_SCOPE

SHOE = ["table_id", "shoe_id"]
FULL_CARDS = 52  # codes below this are full cards
VALUES = 10  # A, 2-9, ten-value
# The parameter (rulesets' parameters.toml) and its keys
PARAMETER = "order_runs"

# card code (string) -> small integer
_RANK_INDEX = {rank: i for i, rank in enumerate("A23456789TJQK")}
_SUIT_INDEX = {suit: i for i, suit in enumerate(v.SUITS)}


def _value_index(rank: str) -> int:
    return min(_RANK_INDEX.get(rank, 9), 9)


CODES: dict[str, int] = {
    **{rank + suit: _SUIT_INDEX[suit] * 13 + _RANK_INDEX[rank]
       for rank in v.RANKS for suit in v.SUITS},
    **{rank + v.NOT_RECORDED: FULL_CARDS + _value_index(rank)
       for rank in v.RANKS + v.TEN_VALUE},
}


# the same, keyed by a code's two bytes read as one number (every code is two bytes)
_BY_BYTES = {int.from_bytes(name.encode(), "little"): number for name, number in CODES.items()}


def code(card: pl.Expr) -> pl.Expr:
    """Each card's small integer (null for a code that is no card): its two bytes read as
    one number, looked up among 65 numbers, several times faster than hashing strings."""
    two = card.str.len_bytes() == 2
    as_number = pl.when(two).then(card).otherwise(pl.lit("??")).cast(pl.Binary) \
        .bin.reinterpret(dtype=pl.UInt16, endianness="little")
    return pl.when(two).then(
        as_number.replace_strict(_BY_BYTES, default=None, return_dtype=pl.UInt8))


def value_of(codes: pl.Expr) -> pl.Expr:
    """The value index of a coded card (A 0, 2-9 1-8, ten-value 9)."""
    full = pl.min_horizontal(codes % 13, pl.lit(9, pl.UInt8))
    return pl.when(codes < FULL_CARDS).then(full).otherwise(codes - FULL_CARDS) \
        .cast(pl.UInt8)


def runs_of(params: dict) -> dict[str, int]:
    """The run lengths of the ruleset in force: repeated, repeated_by_value, new_deck."""
    runs = params[PARAMETER]
    return {key: int(runs[key]) for key in ("repeated", "repeated_by_value", "new_deck")}


# --- the evidence: every card of every shoe, in order -------------------------------------


def shoe_cards(events: pl.DataFrame, runs: dict[str, int]) -> pl.DataFrame:
    """One row per card and burn row with a card, in seq order within each table: table_id,
    shoe_id, seq, time, `code`, `audited` (the row is audited, not context), file_id and
    line (where a finding of the store points), `by_value` (its table's log holds a card
    known by value only), with the run lengths in force (`k`, `kv`: columns, so that the
    evidence of parts audited apart carries them)."""
    audited = pl.col(IN_SCOPE) if IN_SCOPE in events.columns else pl.lit(True)
    rows = (
        events.lazy()
        .filter(pl.col("event").is_in(["card", "burn"]) & pl.col("card").is_not_null())
        .select(
            pl.col("table_id").cast(pl.String),
            pl.col("shoe_id").cast(pl.String),
            "seq",
            "time",
            code(pl.col("card")).alias("code"),
            audited.alias("audited"),
            "file_id",
            "line",
        )
        .drop_nulls("code")
    )
    by_value = rows.filter(pl.col("code") >= FULL_CARDS).select("table_id").unique()
    return (
        rows.join(by_value.with_columns(pl.lit(True).alias("by_value")), on="table_id",
                  how="left", maintain_order="left")
        .with_columns(
            pl.col("by_value").fill_null(False),
            pl.lit(runs["repeated"], pl.UInt16).alias("k"),
            pl.lit(runs["repeated_by_value"], pl.UInt16).alias("kv"),
        )
        .collect()
    )


def _numbered(cards: pl.DataFrame) -> pl.DataFrame:
    """The cards with `sid` (the shoe's number), `pos` (the card's place in its shoe,
    from 0) and `length` (its shoe's cards). The cards come grouped by table in seq order
    (ctx.events is sorted so, and each part holds whole tables): a shoe is a run of rows
    of one table and shoe id, numbered without sorting the names again (a sort of the
    strings of millions of cards takes seconds); a frame not in that order is sorted."""
    same = (pl.col("table_id") == pl.col("table_id").shift(1)) \
        & (pl.col("shoe_id") == pl.col("shoe_id").shift(1))
    ordered = cards.select((~same | (pl.col("seq") > pl.col("seq").shift(1))).all()).item()
    if not ordered:
        cards = cards.sort([*SHOE, "seq"])
    return cards.with_columns(
        (~same).fill_null(True).cum_sum().cast(pl.Int64).alias("sid"),
    ).with_columns(
        pl.int_range(pl.len()).over("sid").alias("pos"),
        pl.len().over("sid").alias("length"),
    )


def _packed(cards: pl.DataFrame, symbol: pl.Expr, bits: int, k: int) -> list[pl.Expr]:
    """The k-card run starting at each row, packed exactly into 64-bit words of
    `64 // bits` symbols each (the run's key: equal keys are equal runs)."""
    per_word = 64 // bits
    words = []
    for start in range(0, k, per_word):
        word = pl.lit(0, pl.UInt64)
        for i in range(start, min(k, start + per_word)):
            shifted = symbol.shift(-i).cast(pl.UInt64)
            word = word + shifted * pl.lit(1 << ((i - start) * bits), pl.UInt64)
        words.append(word.alias(f"w{start // per_word}"))
    return words


def _matches(cards: pl.DataFrame, symbol: pl.Expr, bits: int, k: int,
             sides: pl.Expr) -> pl.DataFrame:
    """(sid, pos, sid_b, pos_b): places where the k cards from `pos` of shoe `sid` are the
    k cards from `pos_b` of another shoe `sid_b` (sid < sid_b), among the rows where
    `sides` holds. Each place of a key is paired with the place before it (by shoe and
    place) in another shoe, not with every other: a log holding one shoe many times
    gives pairs in proportion to its cards, not to their square, and every shoe that
    repeats another is still paired with one."""
    schema = {"sid": pl.Int64, "pos": pl.Int64, "sid_b": pl.Int64, "pos_b": pl.Int64}
    if cards.height < k:
        return pl.DataFrame(schema=schema)
    words = _packed(cards, symbol, bits, k)
    keys = [f"w{i}" for i in range(len(words))]
    return (
        cards.lazy()
        .with_columns(words)
        .filter((pl.col("pos") + k <= pl.col("length")) & sides)
        .select("sid", "pos", *keys)
        # a run that comes again within its own shoe is no repeat of another shoe: only
        # keys held by two shoes or more are paired. Runs whose first word (10 cards, 16
        # values) comes once are dropped first, on one integer: few are left
        .filter(pl.col(keys[0]).is_duplicated())
        .filter(pl.struct(keys).is_duplicated())
        .filter(pl.col("sid").n_unique().over(keys) > 1)
        .sort(*keys, "sid", "pos")
        .with_columns(pl.col("sid").shift(1).over(keys).alias("before"),
                      pl.col("pos").shift(1).over(keys).alias("before_pos"))
        .filter(pl.col("before").is_not_null() & (pl.col("before") != pl.col("sid")))
        .select(pl.col("before").alias("sid"), pl.col("before_pos").alias("pos"),
                pl.col("sid").alias("sid_b"), pl.col("pos").alias("pos_b"))
        .collect()
        .cast(schema)
    )


def _runs(pairs: pl.DataFrame, k: int) -> pl.DataFrame:
    """Matching places grouped into runs: consecutive places on one alignment of two shoes
    are one run of (last - first) + k cards. The longest run of each pair of shoes."""
    return (
        pairs.with_columns((pl.col("pos_b") - pl.col("pos")).alias("diagonal"))
        .sort("sid", "sid_b", "diagonal", "pos")
        .with_columns(
            (pl.col("pos").diff().over("sid", "sid_b", "diagonal").fill_null(2) != 1)
            .cum_sum().alias("run")
        )
        .group_by("sid", "sid_b", "diagonal", "run")
        .agg(pl.col("pos").min(), pl.col("pos_b").min(), (pl.len() + k - 1).alias("cards"))
        .sort("cards", "pos", descending=[True, False])
        .group_by("sid", "sid_b", maintain_order=True)
        .first()
        .with_columns(pl.lit(k, pl.Int64).alias("k"))
    )


def repeated_runs(cards: pl.DataFrame) -> pl.DataFrame:
    """The longest repeated run of each pair of shoes that share `k` cards or more (`kv`
    values where either shoe is compared on values): one row per pair, the later shoe
    first. Columns: table_id, shoe_id, seq (its run's first card), card (its place in the
    shoe, from 1), and the same of the earlier shoe (`*_b`), `cards` (the run's length),
    `k` and `by_value`."""
    empty = cards.is_empty()
    numbered = _numbered(cards)
    k = int(numbered["k"][0]) if not empty else 14
    kv = int(numbered["kv"][0]) if not empty else 28
    found = [_runs(_matches(numbered, pl.col("code"), 6, k, ~pl.col("by_value")), k)
             .with_columns(pl.lit(False).alias("by_value"))]
    if numbered.select(pl.col("by_value").any()).item():
        # a shoe compared on values is compared with every shoe on values: a pair of two
        # full-card shoes is compared above, on cards
        values = _matches(numbered, value_of(pl.col("code")), 4, kv, pl.lit(True))
        flags = numbered.group_by("sid").agg(pl.col("by_value").first())
        values = (values.join(flags, on="sid").join(flags.rename({"sid": "sid_b",
                  "by_value": "by_value_b"}), on="sid_b")
                  .filter(pl.col("by_value") | pl.col("by_value_b"))
                  .select("sid", "pos", "sid_b", "pos_b"))
        found.append(_runs(values, kv).with_columns(pl.lit(True).alias("by_value")))
    return _placed(numbered, pl.concat(found))


def _placed(numbered: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Each run with both shoes' names, the seq of its first card in each, and the later
    shoe first (by the time of its first card; without times, by table and seq)."""
    # only the shoes of the runs (none, mostly) are looked at
    sids = pl.concat([runs["sid"], runs["sid_b"]]).unique() if runs.height else \
        pl.Series([], dtype=pl.Int64)
    numbered = numbered.filter(pl.col("sid").is_in(sids.implode()))
    at = numbered.select("sid", "pos", *SHOE, "seq", "time")
    first = numbered.group_by("sid").agg(pl.col("time").min().alias("began"),
                                         pl.col("seq").min().alias("first_seq"),
                                         pl.col("table_id").first().alias("tid"))
    a = runs.join(at, on=["sid", "pos"], how="left").join(first, on="sid", how="left")
    renamed = {c: f"{c}_b" for c in ["sid", "pos", *SHOE, "seq", "time"]}
    b_at = at.rename(renamed)
    b_first = first.rename({"sid": "sid_b", "began": "began_b", "first_seq": "first_seq_b",
                            "tid": "tid_b"})
    both = a.join(b_at, on=["sid_b", "pos_b"], how="left").join(b_first, on="sid_b",
                                                                   how="left")
    # the later shoe: began later; where times do not tell, a later seq on one table,
    # else the later table and shoe in order
    b_later = (
        pl.when(pl.col("began").is_not_null() & pl.col("began_b").is_not_null()
                & (pl.col("began") != pl.col("began_b")))
        .then(pl.col("began_b") > pl.col("began"))
        .when(pl.col("tid") == pl.col("tid_b"))
        .then(pl.col("first_seq_b") > pl.col("first_seq"))
        .otherwise(pl.col("sid_b") > pl.col("sid"))
    )
    later = ["table_id", "shoe_id", "seq", "pos"]

    def side(first_is_b: bool) -> list[pl.Expr]:
        mine, other = ("_b", "") if first_is_b else ("", "_b")
        return [
            *(pl.col(c + mine).alias(c) for c in later),
            *(pl.col(c + other).alias(c + "_b") for c in later),
        ]

    # a shoe whose rows come in two runs (another shoe's between) is no repeat of itself
    both = both.filter((pl.col("table_id") != pl.col("table_id_b"))
                       | (pl.col("shoe_id") != pl.col("shoe_id_b")))
    swapped = both.filter(b_later).select(*side(True), "cards", "k", "by_value")
    kept = both.filter(~b_later).select(*side(False), "cards", "k", "by_value")
    return pl.concat([swapped, kept]).with_columns(
        (pl.col("pos") + 1).alias("card"), (pl.col("pos_b") + 1).alias("card_b")
    ).drop("pos", "pos_b").sort("table_id", "shoe_id", "seq")


def repeated_findings(runs: pl.DataFrame, citation_label: str, why: str) -> pl.DataFrame:
    """Check rows of the repeated runs: one per pair of shoes, at the later shoe's first
    card of the run. Runs found through the store (`run_b`: the earlier run, `run_day_b`
    the day it ran) name that run instead of the other shoe's seq."""
    compared = pl.when(pl.col("by_value")).then(pl.lit(" values")).otherwise(pl.lit(" cards"))
    if "run_b" in runs.columns:
        where_b = pl.format("audited by run {} on {}", "run_b", "run_day_b")
        observed_b = pl.format(" of run {}", "run_b")
    else:
        where_b = pl.format("seq {}", "seq_b")
        observed_b = pl.lit("")
    return runs.select(
        "table_id",
        "shoe_id",
        pl.lit(None, pl.Int64).alias("round"),
        "seq",
        pl.format(
            "Shoe {} of table {} repeats, from its card {} (seq {}), {}{} in the order of "
            "shoe {} of table {} from its card {} ({}); {} {}.",
            "shoe_id", "table_id", "card", "seq", "cards", compared, "shoe_id_b",
            "table_id_b", "card_b", where_b, pl.lit(citation_label), pl.lit(why),
        ).alias("message"),
        pl.format("no run of {} or more{} of another shoe's order", "k", compared)
        .alias("expected"),
        pl.format("{}{} in the order of shoe {} (table {}{}) from its card {}", "cards",
                  compared, "shoe_id_b", "table_id_b", observed_b, "card_b")
        .alias("observed"),
    )


# --- new-deck order ------------------------------------------------------------------------

# how each card follows the one before it in a new deck's order: up its suit (A to K), down
# it (K to A), or from the end of a suit to the start of another suit
_UP, _DOWN, _CHANGE, _NONE = 1, 2, 3, 0


def new_deck_runs(cards: pl.DataFrame, m: int) -> pl.DataFrame:
    """Runs of `m` or more full cards in a new deck's order, within each shoe: table_id,
    shoe_id, seq (the run's first card), card (its place in the shoe, from 1), cards (the
    run's length). `cards`: shoe_cards's rows (full cards only are judged)."""
    numbered = _numbered(cards)
    c = pl.col("code").cast(pl.Int16)
    # the next card of the same shoe (a plain shift: rows of a shoe are together)
    nxt = pl.when(pl.col("sid").shift(-1) == pl.col("sid")).then(c.shift(-1))
    rank, suit = c % 13, c // 13
    nrank, nsuit = nxt % 13, nxt // 13
    full = (c < FULL_CARDS) & (nxt < FULL_CARDS)
    link = (
        pl.when(~full | nxt.is_null()).then(pl.lit(_NONE))
        .when((nsuit == suit) & (nrank == rank + 1)).then(pl.lit(_UP))
        .when((nsuit == suit) & (nrank == rank - 1)).then(pl.lit(_DOWN))
        .when((nsuit != suit) & ((rank == 12) | (rank == 0)) & ((nrank == 0) | (nrank == 12)))
        .then(pl.lit(_CHANGE))
        .otherwise(pl.lit(_NONE))
    )
    links = numbered.select("sid", "pos", *SHOE, "seq", link.alias("link"))
    previous = pl.when(pl.col("sid").shift(1) == pl.col("sid")).then(pl.col("link").shift(1))
    # a run of links breaks at a card that does not follow, and where a suit turns from up
    # to down (or back) without a change of suit
    turned = (pl.col("link").is_in([_UP, _DOWN]) & previous.is_in([_UP, _DOWN])
              & (pl.col("link") != previous))
    # a suit of one card between two changes of suit is no deck's order
    twice = (pl.col("link") == _CHANGE) & (previous == _CHANGE)
    broken = (pl.col("link") == _NONE) | turned.fill_null(False) | twice.fill_null(False)
    runs = (
        links.with_columns(broken.alias("broken"))
        # the run of links a card starts: the links from a card up to the next break; a
        # turned link starts a run of its own at the card before it
        # groups numbered over the whole frame: a new shoe's first link follows a break
        # (the last card of a shoe has no link)
        .with_columns(pl.col("broken").cast(pl.Int64).cum_sum().alias("group"))
    )
    # a link of kind _NONE ends its group; a turned link begins a new group from its card
    grouped = (
        runs.filter(pl.col("link") != _NONE)
        .group_by("sid", "group")
        .agg(pl.col("pos").min(), pl.len().alias("links"),
             pl.col("table_id").first(), pl.col("shoe_id").first(), pl.col("seq").first())
        .with_columns((pl.col("links") + 1).alias("cards"))
        .filter(pl.col("cards") >= m)
        .sort("table_id", "shoe_id", "pos")
    )
    return grouped.select("table_id", "shoe_id", "seq", (pl.col("pos") + 1).alias("card"),
                          "cards")


def new_deck_findings(runs: pl.DataFrame, m: int, citation_label: str,
                      why: str) -> pl.DataFrame:
    return runs.select(
        "table_id",
        "shoe_id",
        pl.lit(None, pl.Int64).alias("round"),
        "seq",
        pl.format(
            "Shoe {} of table {} deals {} cards in a new deck's order from its card {} "
            "(seq {}); {} {}.",
            "shoe_id", "table_id", "cards", "card", "seq", pl.lit(citation_label),
            pl.lit(why),
        ).alias("message"),
        pl.lit(f"no run of {m} or more cards in a new deck's order").alias("expected"),
        pl.format("{} cards in a new deck's order from card {}", "cards", "card")
        .alias("observed"),
    )


# --- shared by the rules of both games -----------------------------------------------------


def evidence(ctx) -> pl.DataFrame:
    """The shoes' cards in order (shoe_cards), built once per part for the game's two
    rules."""
    return ctx.derived("shoe_order.cards",
                       lambda c: shoe_cards(c.events, runs_of(c.params)))


# a shoe's cards as lists (packed), and back (unpacked)
LISTED = ["seq", "code", "audited", "file_id", "line"]
PER_SHOE = ["time", "by_value", "k", "kv"]


def packed(cards: pl.DataFrame) -> pl.DataFrame:
    """One row per shoe of shoe_cards's rows: its names once, its first card's time, and its
    cards' columns as lists. The evidence of parts audited in a worker process crosses to
    the audit's process as this: a third of the bytes of a row per card."""
    numbered = _numbered(cards)
    return numbered.group_by("sid", maintain_order=True).agg(
        *(pl.col(c).first() for c in [*SHOE, *PER_SHOE]),
        *(pl.col(c) for c in LISTED),
    ).drop("sid")


def packed_evidence(ctx) -> pl.DataFrame:
    """The part's shoes, their cards in order: the repeated-order rules' evidence (`check`)."""
    return packed(evidence(ctx))


def repeated_in_shoes(shoes: pl.DataFrame) -> pl.DataFrame:
    """repeated_runs over the packed shoes of every part (the rules' `across`)."""
    return repeated_runs(unpacked(shoes))


def unpacked(shoes: pl.DataFrame, more: list[str] | None = None) -> pl.DataFrame:
    """shoe_cards's rows again from packed shoes (and the columns `more` of each shoe)."""
    return shoes.explode(LISTED).select(*SHOE, "seq", "time", "code", "audited", "file_id",
                                        "line", "by_value", "k", "kv", *(more or []))


def new_deck_check(ctx, label: str, why: str) -> pl.DataFrame:
    """The new-deck rule's check rows over the part's shoes of full cards."""
    m = runs_of(ctx.params)["new_deck"]
    cards = evidence(ctx).filter(~pl.col("by_value"))
    return new_deck_findings(new_deck_runs(cards, m), m, label, why)
