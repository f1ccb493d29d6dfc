"""A profile's SQL checked as text before polars sees it: row-wise expressions over the
file's own columns, with the functions listed here, and no more than polars' parser and
evaluator survive.

polars' SQL is a whole query language: an expression can hold a subquery that reads a
file (`a IN (FROM read_parquet('/etc/passwd'))` is run, and its error tells whether the
file exists and what it holds), aggregates and windows that are not row-wise, and a long
enough chain of operators crashes the process (a chain of `||` over about 430 operands
segfaults on polars' threads; of `+`, over about 5,000 in its parser), while a chain of
AND over 1,000 terms takes half a minute. So the text is read into tokens first (quoted
texts, quoted names, numbers, words, operators, parentheses), and refused, naming why,
before `pl.sql_expr` is called: a call (a word followed by `(`) of a function not listed,
a keyword of a query (SELECT, FROM outside the few functions that take it, ...), OVER
after a call (a window), a comment, a character SQL expressions do not need, more than
MAX_TOKENS tokens or more than MAX_DEPTH parentheses one inside another.
"""

from __future__ import annotations

import re

# The most tokens and the deepest nesting of parentheses an expression may have: a chain
# of MAX_TOKENS tokens has at most 128 operands, a third of the shortest chain found to
# crash polars 2.1 (`||`, about 430), and AND over 64 terms takes a fraction of a second.
# polars' parser refuses 50 levels of parentheses by itself (an error, no crash)
MAX_TOKENS = 256
MAX_DEPTH = 32

# The functions profile SQL may call: row-wise, deterministic, each checked to work with
# pl.sql_expr (polars 2.1). Not LPAD, RPAD or REPEAT (a length of a billion would be
# allocated for every row), nor NOW or RANDOM (an audit gives the same findings every run)
FUNCTIONS = {
    # types and empty cells
    "CAST", "TRY_CAST", "COALESCE", "NULLIF", "IFNULL", "IF",
    # text
    "UPPER", "LOWER", "TRIM", "LTRIM", "RTRIM", "SUBSTR", "SUBSTRING", "LENGTH",
    "CHAR_LENGTH", "CONCAT", "CONCAT_WS", "REPLACE", "LEFT", "RIGHT", "STRPOS", "POSITION",
    "STARTS_WITH", "ENDS_WITH", "SPLIT_PART", "REGEXP_LIKE", "REGEXP_REPLACE", "REVERSE",
    "INITCAP",
    # numbers
    "ABS", "ROUND", "FLOOR", "CEIL", "CEILING", "TRUNC", "SIGN", "MOD", "DIV", "GREATEST",
    "LEAST",
    # times
    "STRPTIME", "STRFTIME", "DATE", "DATE_PART", "EXTRACT",
}
# Words of a query, never of a row-wise expression, and the clock (an audit gives the
# same findings every run). polars reads none of them as a column's name (a column of
# such a name is written in double quotes: "Order"), but the clock's, which it reads as
# a call: a column LocalTime would be the time of the audit. The words a query needs
# these for (JOIN, PARTITION, WINDOW, TABLE, FILTER, ...) are column names to polars, as
# in profiles written before this check, and left to be
QUERY_WORDS = {
    "SELECT", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "FETCH",
    "WITH", "UNION", "INTERSECT", "EXCEPT", "VALUES", "EXISTS", "INTO", "LATERAL",
}
CLOCK_WORDS = {"CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "LOCALTIME",
               "LOCALTIMESTAMP"}
# OVER after a call makes it a window (a column Over elsewhere is a column)
_WINDOW = "OVER"
# FROM is a word of these functions' own syntax (EXTRACT(YEAR FROM ts), SUBSTRING(s FROM
# 2 FOR 3), TRIM(LEADING '0' FROM s)) and of IS [NOT] DISTINCT FROM: allowed there only
_FROM_INSIDE = {"EXTRACT", "SUBSTRING", "TRIM"}
# Words after which a parenthesis opens an expression, not a call: a IN (1, 2), x AND (y)
_BEFORE_PARENTHESES = {"AND", "OR", "NOT", "IN", "IS", "CASE", "WHEN", "THEN", "ELSE",
                       "BETWEEN", "LIKE", "ILIKE", "FOR", "ESCAPE", "DISTINCT", "FROM",
                       "INTERVAL"}
_AGGREGATES = {"SUM", "COUNT", "AVG", "MIN", "MAX", "MEDIAN", "FIRST", "LAST", "STDDEV",
               "STDEV", "VARIANCE", "VAR", "ARRAY_AGG", "STRING_AGG", "ANY_VALUE", "MODE",
               "QUANTILE", "QUANTILE_CONT", "QUANTILE_DISC", "CORR", "COVAR"}
_WINDOWS = {"ROW_NUMBER", "RANK", "DENSE_RANK", "LAG", "LEAD", "NTILE", "FIRST_VALUE",
            "LAST_VALUE", "NTH_VALUE", "CUME_DIST", "PERCENT_RANK"}

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>--|/\*)
  | (?P<text>')
  | (?P<name>"(?:[^"]|"")*"|`[^`]*`)
  | (?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\w*)
  | (?P<word>[^\W\d]\w*)
  | (?P<operator><=>|!~\*|\|\||::|//|<=|>=|<>|!=|==|!~|~\*|[-+*/%=<>(),.~&|])
""", re.VERBOSE)


class SqlRefused(ValueError):
    """Profile SQL that is not a row-wise expression this module allows: why."""


def tokens(sql: str) -> list[tuple[str, str]]:
    """The expression's tokens, each (kind, text): text, name, number, word, operator.
    A SqlRefused where the text holds what a row-wise expression does not, or more than
    MAX_TOKENS tokens (read no further)."""
    found: list[tuple[str, str]] = []
    at = 0
    while at < len(sql):
        match = _TOKEN.match(sql, at)
        if match is None:
            raise SqlRefused(f"holds {sql[at]!r} (at character {at + 1}), which is no part "
                             "of a row-wise SQL expression")
        kind, at = match.lastgroup, match.end()
        if kind == "comment":
            raise SqlRefused("holds a comment (-- or /*): write it beside the key in TOML")
        if kind == "text":
            at = _text_end(sql, match.start())
        if kind != "space":
            found.append((kind, sql[match.start():at]))
        if len(found) > MAX_TOKENS:
            raise SqlRefused(f"is longer than {MAX_TOKENS} tokens (names, numbers, texts, "
                             "operators and parentheses), the most profile SQL may have: "
                             "a long table of codes is a [source.values] map")
    return found


def _text_end(sql: str, start: int) -> int:
    """Where a quoted text that opens at `start` ends (after its closing quote). A quote
    is written twice inside it; a backslash before a quote is refused, as SQL dialects
    differ on whether it ends the text."""
    at = start + 1
    while at < len(sql):
        if sql[at] == "\\":
            if sql[at + 1:at + 2] == "'":
                raise SqlRefused("holds \\' in a text: write a quote inside a text as ''")
            at += 2
        elif sql[at] == "'":
            if sql[at + 1:at + 2] != "'":
                return at + 1
            at += 2
        else:
            at += 1
    raise SqlRefused("holds a text in quotes that is not closed")


def check(sql: str) -> None:
    """A SqlRefused saying why `sql` is not a row-wise expression profile SQL allows."""
    found = tokens(sql)
    opened: list[str | None] = []  # per open parenthesis: the function it calls, if any
    for n, (kind, text) in enumerate(found):
        before = found[n - 1][1].upper() if n else ""
        after = found[n + 1][1] if n + 1 < len(found) else ""
        if kind == "name" and after == "(":
            raise SqlRefused(f"calls {text}(...), a function by a quoted name")
        if kind == "word":
            _check_word(text, before, after == "(", opened)
        elif text == "(":
            called = before if n and found[n - 1][0] == "word" and before in FUNCTIONS else None
            opened.append(called)
            if len(opened) > MAX_DEPTH:
                raise SqlRefused(f"nests parentheses more than {MAX_DEPTH} deep, the most "
                                 "profile SQL may")
        elif text == ")" and opened:  # parentheses that do not pair: polars' parser says
            opened.pop()


def _check_word(text: str, before: str, called: bool, opened: list[str | None]) -> None:
    word = text.upper()
    if before in ("AS", "::"):
        return  # a type: CAST(x AS DECIMAL(10, 2)), x::VARCHAR
    if word == "FROM" and (before == "DISTINCT" or (opened and opened[-1] in _FROM_INSIDE)):
        return
    if word == _WINDOW and before == ")":
        raise SqlRefused(f"holds {text} after a call: a window, and profile SQL is row-wise")
    if word in QUERY_WORDS:
        raise SqlRefused(f"holds {text}, a word of a query, not of a row-wise expression "
                         "(a column of that name is written in double quotes)")
    if word in CLOCK_WORDS:
        raise SqlRefused(f"holds {text}, the time the audit runs: its findings would "
                         "change from run to run (a column of that name is written in "
                         "double quotes)")
    if not called or word in _BEFORE_PARENTHESES:
        return  # a column, a keyword (CASE, AND, ...), or an expression in parentheses
    if before == ".":
        raise SqlRefused(f"calls {text}(...) by a qualified name")
    if word not in FUNCTIONS:
        raise SqlRefused(f"calls {text}(...), {_why_not(word)}; the functions profile SQL "
                         "may call are listed in the manual (Export profiles, SQL)")


def _why_not(word: str) -> str:
    if word in _AGGREGATES:
        return "an aggregate: profile SQL is row-wise"
    if word in _WINDOWS:
        return "a window function: profile SQL is row-wise"
    if word.startswith(("READ_", "SCAN_")):
        return "which reads a file: profile SQL reads only the export's own columns"
    return "which is not a function profile SQL may call"
