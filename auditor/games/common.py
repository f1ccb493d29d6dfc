"""Wording and checks both games share: decks in a shoe, card copies beyond them, card
values read off the rank."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

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
            "card",
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
