"""Wording and checks both games share: decks in a shoe, card copies beyond them (by rank
and suit, or by value where the log records cards by value only), card values read off
the rank."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from ..ingest import cards as card_codes

SHOE_KEY = ["table_id", "shoe_id"]


def ordinal(n: pl.Expr) -> pl.Expr:
    """7th, 21st, 12th."""
    suffix = (
        pl.when((n % 100).is_between(11, 13))
        .then(pl.lit("th"))
        .when(n % 10 == 1)
        .then(pl.lit("st"))
        .when(n % 10 == 2)
        .then(pl.lit("nd"))
        .when(n % 10 == 3)
        .then(pl.lit("rd"))
        .otherwise(pl.lit("th"))
    )
    return pl.format("{}{}", n, suffix)


def decks_text(n: pl.Expr) -> pl.Expr:
    return pl.format("{} {}", n, pl.when(n == 1).then(pl.lit("deck")).otherwise(pl.lit("decks")))


def rank_byte_values(cards: pl.Series, values: Mapping[str, int]) -> pl.Expr | None:
    """The value of each card's rank (`values`, by rank), as an expression over the
    `cards` column, where every code is two bytes (rank then suit, "TD") and every rank
    one ASCII character: the code's first byte read as a number and looked up in a
    table of the 256 byte values, several times faster than the rank cut from every
    code and matched as text. None where that does not hold (then match the text)."""
    if any(len(rank) != 1 or not rank.isascii() for rank in values):
        return None
    if not (cards.str.len_bytes() == 2).all():
        return None
    table: list[int | None] = [None] * 256
    for rank, value in values.items():
        table[ord(rank)] = value
    code = pl.col(cards.name).cast(pl.Binary).bin.reinterpret(dtype=pl.UInt16, endianness="little")
    return pl.lit(pl.Series(table, dtype=pl.Int8)).gather(code & 0xFF)


def excess_cards(events: pl.DataFrame, shoes: pl.DataFrame) -> pl.DataFrame:
    """The first card of each rank+suit beyond the shoe's `decks` copies, over its burn
    and card rows (baccarat (a)(4), blackjack (b)(1)), and the card_exposed rows the
    caller counts (1.2: those with no later row); `shoes` holds table_id, shoe_id
    and decks; shoes without a known deck count (their shuffle lost) are skipped."""
    decks = shoes.filter(pl.col("decks").is_not_null()).select(*SHOE_KEY, "decks")
    copy_key = [*SHOE_KEY, "card"]
    counted = pl.col("event").is_in(["burn", "card", "card_exposed"])
    cards = (
        events.filter(counted & pl.col("card").is_not_null())
        .select(*SHOE_KEY, "round", "seq", "event", "card")
        .join(decks, on=SHOE_KEY, how="inner")
        .with_columns(
            pl.int_range(1, pl.len() + 1).over(copy_key, order_by="seq").alias("copy"),
            pl.len().over(copy_key).alias("copies"),
        )
    )
    return cards.filter(pl.col("copy") == pl.col("decks") + 1).select(
        *SHOE_KEY,
        pl.when(pl.col("round") > 0).then(pl.col("round")).alias("round"),
        "seq",
        pl.format(
            "Card {} came out of shoe {} ({}) for the {} time ({} at seq {}), more than the "
            "{} copies the shoe holds; {} in all.",
            card_codes.shown(pl.col("card")),
            "shoe_id",
            decks_text(pl.col("decks")),
            ordinal(pl.col("copy")),
            "event",
            "seq",
            "decks",
            "copies",
        ).alias("message"),
        pl.format("at most {} {}", "decks", "card").alias("expected"),
        pl.format("{} {}", "copies", "card").alias("observed"),
    )


# --- counted by value (format 1.3, Cards known by value) --------------------------------

SUITS_A_DECK = 4
_NUMBERS = {"A": "ace", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six",
            "7": "seven", "8": "eight", "9": "nine"}


def value_classes(values: Mapping) -> pl.DataFrame:
    """The cards of a deck grouped by their value in a game (`values`: the ruleset's table
    by rank): per value, the cards a deck holds of it (4 a rank: 16 ten-value cards, 4 of
    each other value) and its name ("ace", "six", "ten-value card") and plural ("sixes")."""
    ranks: dict[int, list[str]] = {}
    for rank, value in values.items():
        ranks.setdefault(int(value), []).append(str(rank))
    rows = []
    for value, held in sorted(ranks.items()):
        name = (_NUMBERS[held[0]] if len(held) == 1 and held[0] in _NUMBERS
                else "ten-value card")
        rows.append((value, SUITS_A_DECK * len(held), name,
                     name + ("es" if name.endswith("x") else "s")))
    return pl.DataFrame(rows, schema={"value": pl.Int64, "a_deck": pl.Int64, "name": pl.String,
                                      "names": pl.String}, orient="row")


def tables_by_value(events: pl.DataFrame) -> pl.Series:
    """The tables whose rows hold a card known by value only (1.3): their suits, or their
    ranks, are not recorded, so their cards are counted by value."""
    return (events.lazy().filter(card_codes.value_only(pl.col("card")))
            .select(pl.col("table_id").cast(pl.String).unique()).collect().to_series())


def excess_values(rows: pl.DataFrame, shoes: pl.DataFrame, values: Mapping) -> pl.DataFrame:
    """The first card of each value beyond what the shoe's decks hold of it (`decks` x 4
    of an ace or of each of 2-9, `decks` x 16 ten-value cards), over `rows` (table_id,
    shoe_id, round, seq, event, card: the rows that take a card out of the shoe, of the
    tables whose cards are counted by value); `shoes` holds table_id, shoe_id and decks;
    shoes without a known deck count are skipped. A full card counts by its value too."""
    decks = shoes.filter(pl.col("decks").is_not_null()).select(*SHOE_KEY, "decks")
    key = [*SHOE_KEY, "value"]
    counted = (
        rows.filter(pl.col("card").is_not_null())
        .select(*SHOE_KEY, "round", "seq", pl.col("event").cast(pl.String), "card",
                card_codes.value(pl.col("card"), values, pl.Int64).alias("value"))
        .drop_nulls("value")
        .join(decks, on=SHOE_KEY, how="inner")
        .join(value_classes(values), on="value", how="inner")
        .with_columns((pl.col("decks") * pl.col("a_deck")).alias("holds"))
        .with_columns(pl.len().over(key).alias("copies"))
        .filter(pl.col("copies") > pl.col("holds"))
        .with_columns(pl.int_range(1, pl.len() + 1).over(key, order_by="seq").alias("copy"))
    )
    plural = pl.col("names")
    return counted.filter(pl.col("copy") == pl.col("holds") + 1).select(
        *SHOE_KEY,
        pl.when(pl.col("round") > 0).then(pl.col("round")).alias("round"),
        "seq",
        pl.format(
            "Card {} came out of shoe {} ({}) as the {} {} ({} at seq {}), more than the {} {} "
            "the shoe holds ({} a deck); {} in all.",
            card_codes.shown(pl.col("card"), explain=False),  # "as the 97th ten-value card"
            "shoe_id",
            decks_text(pl.col("decks")),
            ordinal(pl.col("copy")),
            "name",
            "event",
            "seq",
            "holds",
            plural,
            "a_deck",
            "copies",
        ).alias("message"),
        pl.format("at most {} {} ({} x {})", "holds", plural, decks_text(pl.col("decks")),
                  "a_deck").alias("expected"),
        pl.format("{} {}", "copies", plural).alias("observed"),
    )
