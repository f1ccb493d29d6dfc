"""The hand-history-v1 row contract as a pandera schema over the typed frame.

Each check is one named statement of the format with the rule that reports
it. pandera runs them all (`lazy=True`) and hands back every failing row in
`failure_cases`, which maps one-to-one onto input findings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from . import vocabulary as v
from .problems import PROBLEM_SCHEMA, dollars

if TYPE_CHECKING:
    import pandera.polars as pa

IN_FIELD_MISSING = "IN004"
IN_EVENT_UNKNOWN = "IN005"
IN_CARD_INVALID = "IN006"
IN_AMOUNT_INVALID = "IN007"
IN_SEAT_OUT_OF_RANGE = "IN008"
IN_VALUE_INVALID = "IN009"

# Raw column -> parsed column it is checked on.
_PARSED_NAME = {"amount": "amount_cents", "ts": "time"}


@dataclass(frozen=True)
class RowCheck:
    """A statement every row must satisfy; `valid` is True where it holds."""

    name: str
    field: str
    rule_id: str
    expected: str
    valid: Callable[[], pl.Expr]

    @property
    def column(self) -> str:
        return _PARSED_NAME.get(self.field, self.field)


def _is_event(*events: str) -> pl.Expr:
    return pl.col("event").is_in(events)


def _game(name: str) -> pl.Expr:
    return pl.col("game") == name


def _null_or(column: str, ok: pl.Expr) -> pl.Expr:
    return pl.col(column).is_null() | ok


def _required(field: str, applies: pl.Expr, when: str) -> RowCheck:
    return RowCheck(
        name=f"{field} required {when}",
        field=field,
        rule_id=IN_FIELD_MISSING,
        expected=f"a `{field}` value {when}",
        valid=lambda: (
            pl.col(_PARSED_NAME.get(field, field)).is_not_null() | ~applies.fill_null(False)
        ),
    )


def _allowed(field: str, values: tuple[str, ...], rule_id: str = IN_VALUE_INVALID) -> RowCheck:
    return RowCheck(
        name=f"{field} allowed",
        field=field,
        rule_id=rule_id,
        expected="one of " + ", ".join(values),
        valid=lambda: _null_or(field, pl.col(field).is_in(values)),
    )


def _events_needing(field: str) -> tuple[str, ...]:
    """The events before 1.3 that require `field` (settle_net's are checked on their own,
    so that the checks of the other events read as they did)."""
    return tuple(e for e, fields in v.EVENT_FIELDS.items()
                 if field in fields and e != v.NET_EVENT)


def row_checks(baccarat_seats: tuple[int, ...] | None = None) -> list[RowCheck]:
    """Every row-level statement of the format, in reporting order."""
    checks = [_required(c, pl.lit(True), "on every row") for c in v.REQUIRED_COLUMNS]
    # the per-event fields, in column order, as the Events tables require them
    for field in v.COLUMNS:
        events = _events_needing(field)
        if events:
            checks.append(_required(field, _is_event(*events), "on " + "/".join(events) + " rows"))
    # (1.3) settle_net: its seat and amount (hand, bet and player_id narrow its scope)
    checks += [_required(field, _is_event(v.NET_EVENT), f"on {v.NET_EVENT} rows")
               for field in v.EVENT_FIELDS[v.NET_EVENT]]
    blackjack_money = _game("blackjack") & _is_event(*v.MONEY_EVENTS)
    checks += [
        _required("hand", blackjack_money, "on blackjack wager/collect/pay/push rows"),
        _required(
            "seat",
            _game("blackjack") & _is_event("card") & (pl.col("target") == "seat"),
            "on blackjack cards dealt to a seat",
        ),
        _required(
            "hand",
            _game("blackjack") & _is_event("card") & (pl.col("target") == "seat"),
            "on blackjack cards dealt to a seat",
        ),
        # (1.2) card_exposed: `disclosed` in baccarat, `target` for a misdealt card
        _required("disclosed", _game("baccarat") & _is_event("card_exposed"),
                  "on baccarat card_exposed rows"),
        _required("target", _is_event("card_exposed") & (pl.col("exposure") == "misdealt"),
                  "on card_exposed rows of a misdealt card"),
        _allowed("game", v.GAMES),
        _allowed("event", v.EVENTS, IN_EVENT_UNKNOWN),
        RowCheck(
            "card code",
            "card",
            IN_CARD_INVALID,
            "rank A23456789TJQK then suit SHDC, e.g. TD; (1.3) suit * where it was not "
            "recorded (8*), X* a ten-value card",
            lambda: _null_or("card", pl.col("card").is_in(v.CARD_CODES)),
        ),
        RowCheck(
            "amount not negative",
            "amount",
            IN_AMOUNT_INVALID,
            "an amount of 0 or more",
            # (1.3) a net result is signed: a loss is negative
            lambda: _null_or("amount_cents", (pl.col("amount_cents") >= 0)
                             | _is_event(v.NET_EVENT)),
        ),
        RowCheck(
            "seat positive",
            "seat",
            IN_SEAT_OUT_OF_RANGE,
            "a seat number of 1 or more",
            lambda: _null_or("seat", pl.col("seat") >= 1),
        ),
        RowCheck(
            "hand positive",
            "hand",
            IN_VALUE_INVALID,
            "a hand number of 1 or more",
            lambda: _null_or("hand", pl.col("hand") >= 1),
        ),
        RowCheck(
            "round not negative",
            "round",
            IN_VALUE_INVALID,
            "a round number of 0 or more",
            lambda: _null_or("round", pl.col("round") >= 0),
        ),
        RowCheck(
            "decks positive",
            "decks",
            IN_VALUE_INVALID,
            "a deck count of 1 or more",
            lambda: _null_or("decks", pl.col("decks") >= 1),
        ),
        RowCheck(
            "player points 0-9",
            "player_points",
            IN_VALUE_INVALID,
            "a point count 0 to 9",
            lambda: _null_or("player_points", pl.col("player_points").is_between(0, 9)),
        ),
        RowCheck(
            "banker points 0-9",
            "banker_points",
            IN_VALUE_INVALID,
            "a point count 0 to 9",
            lambda: _null_or("banker_points", pl.col("banker_points").is_between(0, 9)),
        ),
        _allowed("target", v.TARGETS),
        _allowed("bet", v.BETS),
        _allowed("action", v.ACTIONS),
        _allowed("mode", v.MODES),
        _allowed("winner", v.WINNERS),
        _allowed("exposure", v.EXPOSURES),
        RowCheck(
            "exposure fits the game",
            "exposure",
            IN_VALUE_INVALID,
            "in baccarat one of " + ", ".join(v.BACCARAT_EXPOSURES) + "; in blackjack "
            + ", ".join(v.BLACKJACK_EXPOSURES),
            lambda: _null_or("exposure", pl.when(_game("baccarat"))
                             .then(pl.col("exposure").is_in(v.BACCARAT_EXPOSURES))
                             .otherwise(pl.col("exposure").is_in(v.BLACKJACK_EXPOSURES))),
        ),
        RowCheck(
            "target fits baccarat",
            "target",
            IN_VALUE_INVALID,
            "player or banker in baccarat",
            lambda: _null_or(
                "target", ~_game("baccarat") | pl.col("target").is_in(["player", "banker"])
            ),
        ),
        RowCheck(
            "target fits blackjack",
            "target",
            IN_VALUE_INVALID,
            "dealer or seat in blackjack",
            lambda: _null_or(
                "target", ~_game("blackjack") | pl.col("target").is_in(["dealer", "seat"])
            ),
        ),
        RowCheck(
            "bet fits baccarat",
            "bet",
            IN_VALUE_INVALID,
            "a baccarat bet: " + ", ".join(v.BACCARAT_BETS),
            lambda: _null_or("bet", ~_game("baccarat") | pl.col("bet").is_in(v.BACCARAT_BETS)),
        ),
        RowCheck(
            "bet fits blackjack",
            "bet",
            IN_VALUE_INVALID,
            "a blackjack bet: " + ", ".join(v.BLACKJACK_BETS),
            lambda: _null_or("bet", ~_game("blackjack") | pl.col("bet").is_in(v.BLACKJACK_BETS)),
        ),
    ]
    if baccarat_seats:
        seats = tuple(baccarat_seats)
        checks.append(
            RowCheck(
                "seat on the baccarat layout",
                "seat",
                IN_SEAT_OUT_OF_RANGE,
                "a seat of the house's baccarat layout: " + ", ".join(map(str, seats)),
                lambda: _null_or("seat", ~_game("baccarat") | pl.col("seat").is_in(seats)),
            )
        )
    return checks


def _pandera_check(check: RowCheck) -> pa.Check:
    import pandera.polars as pa

    def run(data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(check.valid().fill_null(True).alias(data.key))

    # ignore_na=False: a missing required value must reach the check, not be skipped.
    return pa.Check(run, name=check.name, ignore_na=False)


def build_schema(checks: list[RowCheck]) -> pa.DataFrameSchema:
    import pandera.polars as pa

    columns: dict[str, list[pa.Check]] = {}
    for check in checks:
        columns.setdefault(check.column, []).append(_pandera_check(check))
    return pa.DataFrameSchema(
        {name: pa.Column(None, checks=cs, nullable=True) for name, cs in columns.items()},
        strict=False,
        name="hand-history-v1 row",
    )


def validate(frame: pl.DataFrame, checks: list[RowCheck]) -> pl.DataFrame:
    """Problems of every row that breaks a check; `row` is the frame's `row` column.

    The checks are first evaluated together in one pass (polars runs them side by
    side); only a frame with some failing row goes through pandera, which names
    every failure case."""
    if _all_rows_valid(frame, checks):
        return pl.DataFrame(schema=PROBLEM_SCHEMA)
    import pandera.polars as pa  # imported here: a log whose rows all hold never needs it

    try:
        build_schema(checks).validate(frame, lazy=True)
    except pa.errors.SchemaErrors as errors:
        return _problems(frame, errors.failure_cases, checks)
    return pl.DataFrame(schema=PROBLEM_SCHEMA)


def _all_rows_valid(frame: pl.DataFrame, checks: list[RowCheck]) -> bool:
    held = [check.valid().fill_null(True).all().alias(check.name) for check in checks]
    return all(frame.lazy().select(held).collect().row(0))


def _problems(frame: pl.DataFrame, cases: pl.DataFrame, checks: list[RowCheck]) -> pl.DataFrame:
    by_name = pl.DataFrame(
        {
            "check": [c.name for c in checks],
            "rule_id": [c.rule_id for c in checks],
            "field": [c.field for c in checks],
            "expected": [c.expected for c in checks],
        }
    )
    cases = cases.filter(pl.col("index").is_not_null()).select(
        pl.col("check"),
        pl.col("index").cast(pl.Int64),
        # amounts are checked in cents but shown in dollars
        pl.when(pl.col("column") == "amount_cents")
        .then(dollars(pl.col("failure_case").cast(pl.Int64, strict=False)))
        .otherwise(pl.col("failure_case").cast(pl.String))
        .alias("failure_case"),
    )
    located = (
        frame.select(v.ROW, v.FILE_ID, v.LINE)
        .with_row_index("index")
        .with_columns(pl.col("index").cast(pl.Int64))
    )
    return (
        cases.join(by_name, on="check", how="inner")
        .join(located, on="index", how="left")
        .select(
            "rule_id",
            pl.col(v.ROW),
            pl.col(v.FILE_ID).cast(pl.Int32),
            pl.col(v.LINE),
            "field",
            pl.col("failure_case").alias("observed"),
            "expected",
            pl.when(pl.col("failure_case").is_null())
            .then(pl.format("`{}` is missing; the format requires {}.", "field", "expected"))
            .otherwise(
                pl.format(
                    "`{}` is '{}'; the format requires {}.", "field", "failure_case", "expected"
                )
            )
            .alias("message"),
        )
        .cast(PROBLEM_SCHEMA)
    )
