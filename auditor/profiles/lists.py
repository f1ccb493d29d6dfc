"""List cells (export-profiles-v1, blackjack coups): a list column (JSON, Parquet), one
text cell split at `cards.separator`, or (1.1, `lists = "bracketed"`) one text cell
written as JSON or Python's literal writes a list: `[10, 4]`, `["KS","4H"]`,
`[['P', 'H'], ['S']]`.

Every cell is read as a list of lists (its hands): a flat list is one hand, a list of
lists (1.1) every hand of a box. Each element is the text of one cell of its column,
spaces around it removed (an empty element is none); what an element means (a card by
the notation, a decision by the action map) is for the reader to say.

A bracketed cell is checked against the grammar of such a list first (a regular
expression, every cell at once), then decoded by polars' JSON reader after single
quotes are made double: never split at ", ". A cell that does not parse is a bad value
at its line.
"""

from __future__ import annotations

import polars as pl

HANDS = pl.List(pl.List(pl.String))

# An element: a number, or a text in single or double quotes (without quotes or a
# backslash inside it: cards and decisions have none)
_ELEMENT = r"""(?:-?\d+(?:\.\d+)?|"[^"'\\]*"|'[^"'\\]*')"""
_FLAT = rf"\[\s*(?:{_ELEMENT}(?:\s*,\s*{_ELEMENT})*\s*,?)?\s*\]"
_NESTED = rf"\[\s*(?:{_FLAT}(?:\s*,\s*{_FLAT})*\s*,?)?\s*\]"


def hands_of(cells: pl.Series, lists: str, separator: str) -> pl.DataFrame:
    """Each cell as `hands` (List(List(String)): its elements' text, by hand), `nested`
    (a list of lists: every hand of a box) and `bad` (a text cell that is not a list as
    `lists` reads it). An empty cell is an empty list."""
    dtype = cells.dtype
    if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.List):
        some = cells.is_not_null() & (cells.list.len() > 0)
        hands = pl.DataFrame({"h": _texts(cells, 2), "some": some}).select(
            pl.when("some").then("h").otherwise(pl.lit([[]], HANDS))).to_series()
        return pl.DataFrame({"hands": hands, "nested": some.fill_null(False),
                             "bad": falses(cells.len())})
    if isinstance(dtype, pl.List):
        return _flat(_texts(cells, 1), falses(cells.len()))
    text = cells.cast(pl.String).str.strip_chars()
    text = text.to_frame("t").select(pl.when(pl.col("t") != "").then("t")).to_series()
    if lists != "bracketed":
        items = text.str.split(separator).list.eval(pl.element().str.strip_chars())
        return _flat(_kept(items.fill_null([])), falses(cells.len()))
    return _bracketed(text)


def falses(n: int) -> pl.Series:
    return pl.Series([False] * n, dtype=pl.Boolean)


def _texts(cells: pl.Series, depth: int) -> pl.Series:
    """A list column's elements (at `depth` 1 or 2) as text, spaces removed, the empty
    ones dropped, a null list empty."""
    if depth == 1:
        return _kept(cells.cast(pl.List(pl.String)).fill_null([]))
    return _inner_kept(cells.cast(HANDS).fill_null([]))


def _inner_kept(hands: pl.Series) -> pl.Series:
    return hands.list.eval(pl.element().fill_null([]).list.eval(
        pl.element().str.strip_chars().filter(pl.element().is_not_null()
                                              & (pl.element() != "")))).cast(HANDS)


def _kept(items: pl.Series) -> pl.Series:
    return items.list.eval(pl.element().str.strip_chars().filter(
        pl.element().is_not_null() & (pl.element() != ""))).cast(pl.List(pl.String))


def _flat(items: pl.Series, bad: pl.Series) -> pl.DataFrame:
    """A flat list per cell, as one hand."""
    return pl.DataFrame({"hands": items.list.eval(pl.element().implode()).cast(HANDS),
                         "nested": falses(items.len()), "bad": bad})


def _bracketed(text: pl.Series) -> pl.DataFrame:
    """Each bracketed cell parsed, each distinct cell once (a box's dealer's cards, its
    decisions, repeat from row to row), then put back in its rows."""
    cells = text.rename("t").to_frame()
    distinct = cells.unique(maintain_order=True)
    if distinct.height == cells.height:
        return _parsed(text)
    parsed = pl.concat([distinct, _parsed(distinct.get_column("t"))], how="horizontal")
    return cells.join(parsed, on="t", how="left", nulls_equal=True,
                      maintain_order="left").drop("t")


def _parsed(text: pl.Series) -> pl.DataFrame:
    frame = text.to_frame("t").with_row_index("i").with_columns(
        pl.col("t").str.contains(f"^{_FLAT}$").fill_null(False).alias("flat"),
        pl.col("t").str.contains(f"^{_NESTED}$").fill_null(False).alias("nested"))
    frame = frame.with_columns(
        (pl.col("t").is_not_null() & ~pl.col("flat") & ~pl.col("nested")).alias("bad"),
        pl.col("nested") & ~pl.col("flat"))  # `[]` is flat
    # as JSON: texts in double quotes, no comma before a closing bracket
    json = (pl.col("t").str.replace_all(r"'([^\"'\\]*)'", "\"$1\"")
            .str.replace_all(r",\s*\]", "]"))
    flat = frame.filter("flat").select("i", json.str.json_decode(pl.List(pl.String)))
    flat = flat.select("i", _flat(_kept(flat.get_column("t")),
                                  falses(flat.height)).get_column("hands"))
    nested = frame.filter("nested").select("i", json.str.json_decode(HANDS).alias("hands"))
    nested = nested.with_columns(_inner_kept(nested.get_column("hands")))
    read = frame.select("i", "nested", "bad").join(
        pl.concat([flat, nested]), on="i", how="left", maintain_order="left")
    # an empty cell is one hand of no elements; a cell that does not parse, none
    empty = pl.when(pl.col("bad")).then(pl.lit([], HANDS)).otherwise(pl.lit([[]], HANDS))
    return read.select(pl.coalesce("hands", empty).alias("hands"), "nested", "bad")
